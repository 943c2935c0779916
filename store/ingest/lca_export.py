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

from sqlalchemy import Connection
from sqlmodel import select

from store.core import memories
from store.core.db import orm
from store.core.models import Entry
from store.core.timeutil import now_iso
from store.core.writes import NewSession, upsert_session
from store.export.extra import restore_checkpoints, restore_traces
from store.ingest.base import ImportContext, file_problem
from store.ingest.mindstone import MindStoneImporter

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


def _memories(ctx: ImportContext, conn: Connection, manifest: dict[str, Any]
              ) -> dict[int, int]:
    """Restore every memory through ``store.core.memories`` (found again by source file,
    else by name and content hash); returns manifest ref → memory id in this store."""
    refs: dict[int, int] = {}
    for record in manifest.get("memories") or []:
        if not isinstance(record, dict) or not record.get("name") or record.get("body") is None:
            ctx.report.error(str(ctx_path(manifest)), None, "a manifest memory without name "
                             "or body: skipped")
            continue
        row = {k: v for k, v in record.items() if k in memories.COLUMNS}
        for key in ("tags", "projects"):
            if isinstance(row.get(key), list):
                row[key] = json.dumps(row[key])
        written = memories.upsert(conn, ctx.store, row)
        ctx.report.count_memory(written)
        refs[int(record["ref"])] = written.memory_id
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
            with orm(conn) as session:
                entry_id = session.exec(select(Entry.id).where(
                    Entry.idem_key == pointer.get("idem_key"))).first()
            if entry_id is None:
                ctx.report.error(ctx_path(manifest), None, f"evidence of memory "
                                 f"{item.get('memory')} points at entry {pointer.get('seq')} of "
                                 f"session {pointer.get('session')}, which is not in the "
                                 "store: kept without the link")
                note = f"{note or ''} [entry not in store: session {pointer.get('session')} " \
                       f"seq {pointer.get('seq')}]".strip()
        if memories.add_evidence(
                conn, ctx.store, memory_id, entry_id=entry_id,
                span_start=item.get("span_start"), span_end=item.get("span_end"),
                file_path=item.get("file_path"), note=note, once=True) is not None:
            added += 1
    return added


def _lineage(conn: Connection, manifest: dict[str, Any], refs: dict[int, int]) -> None:
    for link in manifest.get("lineage") or []:
        newer = refs.get(int(link.get("memory", -1)))
        older = refs.get(int(link.get("supersedes", -1)))
        if newer is None or older is None:
            continue
        memories.supersede(conn, newer, older)


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
        refs = _memories(ctx, conn, manifest)
        evidence = _evidence(ctx, conn, manifest, refs)
        _lineage(conn, manifest, refs)
        who = (ctx.store.writer, ctx.store.writer_version, now_iso())
        checkpoints = restore_checkpoints(conn, manifest.get("checkpoints") or [], who)
        traces = restore_traces(conn, manifest.get("recall_traces") or [], refs, who)
        ctx.store.audit(conn, "import-export", "export", [],
                        {"memories": len(refs), "evidence_added": evidence,
                         "checkpoints_added": checkpoints, "recall_traces_added": traces})
    if checkpoints or traces:
        ctx.report.notes.append(f"{folder}: {checkpoints} checkpoints and {traces} recall "
                                "traces restored")
