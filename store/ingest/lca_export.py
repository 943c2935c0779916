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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.exc import StatementError

from store.export.extra import restore_checkpoints, restore_traces
from store.core.index import Source, drop_chunks_of
from store.ingest import fields
from store.ingest.base import SHAPE_ERRORS, ImportContext, file_problem
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


def _list(ctx: ImportContext, manifest: dict[str, Any], key: str) -> list[Any]:
    """``manifest[key]`` as a list (absent: empty; another type: reported, empty)."""
    value = manifest.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        ctx.report.error(ctx_path(manifest), None, f"a JSON {fields.kind(value)}, not an "
                         "array: none of it imported", key)
        return []
    return value


def _scalar(record: dict[str, Any], key: str, where: str) -> Any:
    """A value stored in one column: text, a finite number fitting 64 bits, a boolean or
    null."""
    value = record.get(key)
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        return fields.number(value, f"{where}.{key}", low=-fields.MAX_INT,
                             high=fields.MAX_INT, integral=isinstance(value, int))
    raise fields.FieldProblem(f"{where}.{key}", f"a JSON {fields.kind(value)}, not a single "
                              "value")


def _ref(record: dict[str, Any], key: str, where: str) -> int:
    value = fields.number(record.get(key), f"{where}.{key}", low=-fields.MAX_INT,
                          high=fields.MAX_INT)
    if value is None:
        raise fields.FieldProblem(f"{where}.{key}", "missing")
    return int(value)


def _each(ctx: ImportContext, conn: Connection, manifest: dict[str, Any], key: str,
          action: Callable[[int, Any], None]) -> None:
    """``action(i, record)`` for each record of ``manifest[key]`` in a savepoint of its own:
    a record with a bad field is reported (manifest, field, reason) and the others land."""
    for i, record in enumerate(_list(ctx, manifest, key)):
        try:
            with conn.begin_nested():
                if not isinstance(record, dict):
                    raise fields.FieldProblem(f"{key}[{i}]", f"a JSON {fields.kind(record)}, "
                                              "not an object")
                action(i, record)
        except fields.FieldProblem as exc:
            ctx.report.error(ctx_path(manifest), None, f"{exc.reason}: record not imported",
                             exc.field)
        except SHAPE_ERRORS + (StatementError,) as exc:
            ctx.report.error(ctx_path(manifest), None, f"record not imported: "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}",
                             f"{key}[{i}]")


def _sessions(ctx: ImportContext, conn: Connection, manifest: dict[str, Any]) -> None:
    _each(ctx, conn, manifest, "sessions", lambda i, s: _session(ctx, conn, i, s))


def _session(ctx: ImportContext, conn: Connection, i: int, s: dict[str, Any]) -> None:
    where = f"sessions[{i}]"
    fields.text(s, "id", f"{where}.id", required=True, empty_ok=False)
    for key in ("format", "agent", "surface", "project", "title", "started_at", "ended_at",
                "source", "file"):
        fields.text(s, key, f"{where}.{key}")
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


def _memories(ctx: ImportContext, conn: Connection, manifest: dict[str, Any]
              ) -> dict[int, int]:
    """Restore every memory; returns manifest ref → memory id in this store."""
    columns = {r[1] for r in conn.exec_driver_sql("PRAGMA table_info(memory)")} - {
        "id", "supersedes_id", "superseded_by_id", "writer", "writer_version", "created_at"}
    refs: dict[int, int] = {}

    def one(i: int, record: dict[str, Any]) -> None:
        where = f"memories[{i}]"
        fields.text(record, "name", f"{where}.name", required=True, empty_ok=False)
        fields.text(record, "body", f"{where}.body", required=True)
        ref = _ref(record, "ref", where)
        row = {k: v for k, v in record.items() if k in columns}
        for key in ("tags", "projects"):
            if isinstance(row.get(key), list):
                if not all(isinstance(t, str) for t in row[key]):
                    raise fields.FieldProblem(f"{where}.{key}", "not a list of strings")
                row[key] = json.dumps(row[key])
        for key in row:
            _scalar(row, key, where)
        _memory(ctx, conn, record, row, ref, refs)

    _each(ctx, conn, manifest, "memories", one)
    return refs


def _memory(ctx: ImportContext, conn: Connection, record: dict[str, Any], row: dict[str, Any],
            ref: int, refs: dict[int, int]) -> None:
    store, report = ctx.store, ctx.report
    now = now_iso()
    row.setdefault("content_hash", "")
    row.setdefault("updated_at", now)
    row.update(writer=store.writer, writer_version=store.writer_version)
    found = _find_memory(conn, record)
    if found is not None and found[1] == row["content_hash"]:
        refs[ref] = found[0]
        return
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
    refs[ref] = memory_id
    result = store.indexer().index(conn, [Source(
        "memory", memory_id, memory_index_text(
            record["name"], _text_or_none(record.get("description")), record["body"],
            _text_or_none(record.get("invariant"))), str(row["content_hash"]))])
    report.chunks += result.chunks
    report.chunks_failed += result.failed


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def ctx_path(manifest: dict[str, Any]) -> str:
    return str(manifest.get("_path", MANIFEST))


def _evidence(ctx: ImportContext, conn: Connection, manifest: dict[str, Any],
              refs: dict[int, int]) -> int:
    added = 0

    def one(i: int, item: dict[str, Any]) -> None:
        nonlocal added
        where = f"evidence[{i}]"
        memory_id = refs.get(_ref(item, "memory", where))
        if memory_id is None:
            return
        for key in ("span_start", "span_end", "file_path", "note"):
            _scalar(item, key, where)
        added += _one_evidence(ctx, conn, manifest, item, memory_id)

    _each(ctx, conn, manifest, "evidence", one)
    return added


def _one_evidence(ctx: ImportContext, conn: Connection, manifest: dict[str, Any],
                  item: dict[str, Any], memory_id: int) -> int:
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
        return 0
    conn.execute(text(
        "INSERT INTO evidence (memory_id, entry_id, span_start, span_end, file_path, note, "
        "writer, writer_version, created_at) VALUES (:m, :e, :ss, :se, :f, :n, :w, :wv, "
        ":c)"), dict(params, w=ctx.store.writer, wv=ctx.store.writer_version,
                     c=now_iso()))
    return 1


def _lineage(ctx: ImportContext, conn: Connection, manifest: dict[str, Any],
             refs: dict[int, int]) -> None:
    _each(ctx, conn, manifest, "lineage",
          lambda i, link: _link(conn, refs.get(_ref(link, "memory", f"lineage[{i}]")),
                                refs.get(_ref(link, "supersedes", f"lineage[{i}]"))))


def _link(conn: Connection, newer: int | None, older: int | None) -> None:
    if newer is None or older is None:
        return
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
    listed = manifest.get("sessions")
    for s in listed if isinstance(listed, list) else []:
        rel = s.get("file") if isinstance(s, dict) else None
        if not rel or not isinstance(rel, str):
            continue
        transcript = folder / rel
        if folder.resolve() not in transcript.resolve().parents:
            ctx.report.error(str(path), None, f"transcript {rel!r} is outside the export "
                             "folder: not read", "sessions.file")
            continue
        problem = file_problem(transcript)
        if problem:
            ctx.report.error(str(transcript), None, problem)
            continue
        MindStoneImporter().import_file(ctx, transcript)
    with ctx.store.write() as conn:
        refs = _memories(ctx, conn, manifest)
        evidence = _evidence(ctx, conn, manifest, refs)
        _lineage(ctx, conn, manifest, refs)
        who = (ctx.store.writer, ctx.store.writer_version, now_iso())
        checkpoints = traces = 0

        def checkpoint(i: int, record: dict[str, Any]) -> None:
            nonlocal checkpoints
            for key in record:
                _scalar(record, key, f"checkpoints[{i}]")
            checkpoints += restore_checkpoints(conn, [record], who)

        _each(ctx, conn, manifest, "checkpoints", checkpoint)
        try:
            with conn.begin_nested():
                traces = restore_traces(conn, _list(ctx, manifest, "recall_traces"), refs, who)
        except SHAPE_ERRORS + (StatementError,) as exc:
            ctx.report.error(str(path), None, "recall traces not imported: "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}",
                             "recall_traces")
        ctx.store.audit(conn, "import-export", "export", [],
                        {"memories": len(refs), "evidence_added": evidence,
                         "checkpoints_added": checkpoints, "recall_traces_added": traces})
    if checkpoints or traces:
        ctx.report.notes.append(f"{folder}: {checkpoints} checkpoints and {traces} recall "
                                "traces restored")
