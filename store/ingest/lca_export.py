"""Importing a directory written by ``lca-tui export`` (its ``manifest.json`` says
``"format": "lca-export"``).

Order: the manifest's sessions, then every transcript it lists (MindStone-Agent NDJSON whose
``metadata.lca`` restores each entry exactly, idempotency key included), then memories,
their evidence and their supersession lineage, then checkpoints and lca-tui's recall traces
(``store.export.extra``; what the derivers rebuild from entries is derived again, not
restored). Evidence that pointed at an entry is re-linked
through that entry's idempotency key, which the export kept; evidence whose entry is not in
the store is kept without the link and reported. Everything is idempotent: a memory is found
again by its source file (else by name and content hash), evidence by all its fields.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, text

from store.core.erasure import erased
from store.export.extra import restore_checkpoints, restore_traces
from store.core.index import Source, drop_chunks_of
from store.ingest.base import ImportContext, file_problem
from store.ingest.memory_dir import memory_index_text
from store.ingest.mindstone import MindStoneImporter
from store.core.timeutil import now_iso
from store.core.writes import NewSession, upsert_session

MANIFEST = "manifest.json"
EXPORT_FORMAT = "lca-export"


def read_manifest(folder: Path) -> dict[str, Any] | None:
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == EXPORT_FORMAT else None


def is_export_dir(folder: Path) -> bool:
    return read_manifest(folder) is not None


def _sessions(ctx: ImportContext, conn: Connection, manifest: dict[str, Any]) -> None:
    for s in manifest.get("sessions") or []:
        if not isinstance(s, dict) or not isinstance(s.get("id"), str):
            continue
        session = NewSession(
            id=s["id"], format=str(s.get("format") or "mindstone"), agent=s.get("agent"),
            surface=s.get("surface"), project=s.get("project"), title=s.get("title"),
            started_at=s.get("started_at"), ended_at=s.get("ended_at"), source=s.get("source"),
            meta=dict(s["meta"]) if isinstance(s.get("meta"), dict) else {})
        new = upsert_session(conn, session, ctx.store.writer, ctx.store.writer_version)
        if new and session.id not in ctx.sessions_seen:
            ctx.report.sessions_added += 1
        ctx.sessions_seen.add(session.id)


def _find_memory(conn: Connection, record: dict[str, Any]) -> tuple[int, str] | None:
    if record.get("source_file"):
        row = conn.execute(text("SELECT id, content_hash FROM memory WHERE source_file = :f"),
                           {"f": record["source_file"]}).first()
    else:
        row = conn.execute(text(
            "SELECT id, content_hash FROM memory WHERE source_file IS NULL AND name = :n AND "
            "content_hash = :h ORDER BY id LIMIT 1"),
            {"n": record.get("name"), "h": record.get("content_hash")}).first()
    return (int(row[0]), str(row[1])) if row else None


def _memories(ctx: ImportContext, conn: Connection, manifest: dict[str, Any],
              erased_refs: set[int] | None = None) -> dict[int, int]:
    """Restore every memory; returns manifest ref → memory id in this store. The refs of
    memories erased here earlier (not restored) are added to ``erased_refs``."""
    store, report = ctx.store, ctx.report
    columns = {r[1] for r in conn.exec_driver_sql("PRAGMA table_info(memory)")} - {
        "id", "supersedes_id", "superseded_by_id", "writer", "writer_version", "created_at"}
    refs: dict[int, int] = {}
    for record in manifest.get("memories") or []:
        if not isinstance(record, dict) or not record.get("name") or record.get("body") is None:
            report.error(str(ctx_path(manifest)), None, "a manifest memory without name or "
                         "body: skipped")
            continue
        row = {k: v for k, v in record.items() if k in columns}
        for key in ("tags", "projects"):
            if isinstance(row.get(key), list):
                row[key] = json.dumps(row[key])
        now = now_iso()
        row.setdefault("content_hash", "")
        row.setdefault("updated_at", now)
        row.update(writer=store.writer, writer_version=store.writer_version)
        if erased(conn, "memory", [str(row["content_hash"])]):
            report.erased_earlier += 1  # erased or redacted here earlier: not brought back
            if erased_refs is not None and record.get("ref") is not None:
                erased_refs.add(int(record["ref"]))
            continue
        found = _find_memory(conn, record)
        if found is not None and found[1] == row["content_hash"]:
            refs[int(record["ref"])] = found[0]
            continue
        if found is None:
            params = dict(row, created_at=now)
            memory_id = int(conn.execute(text(
                f"INSERT INTO memory ({', '.join(params)}) VALUES "
                f"({', '.join(':' + k for k in params)}) RETURNING id"), params).scalar_one())
            report.memories_added += 1
        else:
            memory_id = found[0]
            conn.execute(text(f"UPDATE memory SET {', '.join(f'{k} = :{k}' for k in row)} "
                              "WHERE id = :id"), dict(row, id=memory_id))
            drop_chunks_of(conn, "memory", memory_id)
            report.memories_updated += 1
        refs[int(record["ref"])] = memory_id
        result = store.indexer().index(conn, [Source(
            "memory", memory_id, memory_index_text(record["name"], record.get("description"),
                                                   record["body"], record.get("invariant")),
            row["content_hash"])])
        report.chunks += result.chunks
        report.chunks_failed += result.failed
    return refs


def ctx_path(manifest: dict[str, Any]) -> str:
    return str(manifest.get("_path", MANIFEST))


def _evidence(ctx: ImportContext, conn: Connection, manifest: dict[str, Any],
              refs: dict[int, int]) -> int:
    added = 0
    for item in manifest.get("evidence") or []:
        memory_id = refs.get(int(item.get("memory", -1))) if isinstance(item, dict) else None
        if memory_id is None:
            continue
        entry_id = None
        note = item.get("note")
        pointer = item.get("entry")
        if isinstance(pointer, dict):
            row = conn.execute(text("SELECT id FROM entry WHERE idem_key = :k"),
                               {"k": pointer.get("idem_key")}).first()
            if row is None:
                ctx.report.error(ctx_path(manifest), None, f"evidence of memory "
                                 f"{item.get('memory')} points at entry {pointer.get('seq')} of "
                                 f"session {pointer.get('session')}, which is not in the "
                                 "store: kept without the link")
                note = f"{note or ''} [entry not in store: session {pointer.get('session')} " \
                       f"seq {pointer.get('seq')}]".strip()
            else:
                entry_id = int(row[0])
        params = {"m": memory_id, "e": entry_id, "ss": item.get("span_start"),
                  "se": item.get("span_end"), "f": item.get("file_path"), "n": note}
        exists = conn.execute(text(
            "SELECT 1 FROM evidence WHERE memory_id = :m AND entry_id IS :e AND span_start IS "
            ":ss AND span_end IS :se AND file_path IS :f AND note IS :n"), params).first()
        if exists:
            continue
        conn.execute(text(
            "INSERT INTO evidence (memory_id, entry_id, span_start, span_end, file_path, note, "
            "writer, writer_version, created_at) VALUES (:m, :e, :ss, :se, :f, :n, :w, :wv, "
            ":c)"), dict(params, w=ctx.store.writer, wv=ctx.store.writer_version,
                         c=now_iso()))
        added += 1
    return added


def _lineage(conn: Connection, manifest: dict[str, Any], refs: dict[int, int]) -> None:
    for link in manifest.get("lineage") or []:
        newer = refs.get(int(link.get("memory", -1)))
        older = refs.get(int(link.get("supersedes", -1)))
        if newer is None or older is None:
            continue
        conn.execute(text("UPDATE memory SET supersedes_id = :o WHERE id = :n"),
                     {"o": older, "n": newer})
        conn.execute(text("UPDATE memory SET superseded_by_id = :n WHERE id = :o"),
                     {"o": older, "n": newer})


def import_export_dir(ctx: ImportContext, folder: Path) -> None:
    """Import an export directory (sessions, transcripts, memories, evidence, lineage)."""
    manifest = read_manifest(folder)
    path = folder / MANIFEST
    if manifest is None:
        ctx.report.files += 1
        ctx.report.error(str(path), None, "not an lca-tui export manifest (no readable "
                         "manifest.json with \"format\": \"lca-export\")")
        return
    manifest["_path"] = str(path)
    with ctx.store.write() as conn:
        _sessions(ctx, conn, manifest)
    for s in manifest.get("sessions") or []:
        rel = s.get("file") if isinstance(s, dict) else None
        if not rel:
            continue
        transcript = folder / str(rel)
        problem = file_problem(transcript)
        if problem:
            ctx.report.error(str(transcript), None, problem)
            continue
        MindStoneImporter().import_file(ctx, transcript)
    with ctx.store.write() as conn:
        erased_refs: set[int] = set()
        refs = _memories(ctx, conn, manifest, erased_refs)
        evidence = _evidence(ctx, conn, manifest, refs)
        _lineage(conn, manifest, refs)
        who = (ctx.store.writer, ctx.store.writer_version, now_iso())
        checkpoints = restore_checkpoints(conn, manifest.get("checkpoints") or [], who)
        traces = restore_traces(conn, manifest.get("recall_traces") or [], refs, who,
                                erased_refs)
        ctx.store.audit(conn, "import-export", "export", [],
                        {"memories": len(refs), "evidence_added": evidence,
                         "checkpoints_added": checkpoints, "recall_traces_added": traces})
    if checkpoints or traces:
        ctx.report.notes.append(f"{folder}: {checkpoints} checkpoints and {traces} recall "
                                "traces restored")
