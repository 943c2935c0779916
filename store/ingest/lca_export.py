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

from sqlalchemy import Connection
from sqlalchemy.exc import StatementError
from sqlmodel import select

from store.core import memories
from store.governance.chains import sync_links
from store.core.db import orm
from store.core.models import Entry
from store.core.timeutil import now_iso
from store.core.erasure import erased_session
from store.core.writes import NewSession, upsert_session
from store.export.extra import restore_checkpoints, restore_traces
from store.export.verify import check_files
from store.ingest import fields
from store.ingest.base import SHAPE_ERRORS, ImportContext, file_problem
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


TRANSCRIPTS = "transcripts"
_PROBE_BYTES = 1 << 20


def partial_export_problem(folder: Path) -> str | None:
    """Why ``folder`` is an export that was never finished, or None: a ``transcripts/`` of
    export lines (their ``metadata.lca``) without a readable ``manifest.json`` (the writer
    writes the manifest last, so an export killed between two files leaves exactly this)."""
    if is_export_dir(folder) or not (folder / TRANSCRIPTS).is_dir():
        return None
    tmp = (folder / (MANIFEST + ".tmp")).exists()
    if not tmp and not any(_is_export_transcript(p) for p in
                           sorted((folder / TRANSCRIPTS).glob("*.jsonl"))[:5]):
        return None
    state = "is not readable" if (folder / MANIFEST).exists() else "is missing"
    return (f"an lca-tui export whose {MANIFEST} {state}: its writing was interrupted (or the "
            "manifest removed), so it is incomplete; its finished transcripts are imported, "
            "its memories, evidence, checkpoints and traces (in the manifest) are not")


def _is_export_transcript(path: Path) -> bool:
    """Is the first line of ``path`` a line ``lca-tui export`` wrote (``metadata.lca``)?"""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as fh:
            obj = json.loads(fh.readline(_PROBE_BYTES))
    except (OSError, ValueError, RecursionError):
        return False
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return isinstance(meta, dict) and isinstance(meta.get("lca"), dict)


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
          action: Callable[[int, dict[str, Any]], None]) -> None:
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
    if erased_session(conn, session.id):  # erased: its row is not created again
        ctx.report.notes.append(f"{where}: session {session.id[:8]} was erased earlier: "
                                "not imported")
        return
    new = upsert_session(conn, session, ctx.store.writer, ctx.store.writer_version)
    if new and session.id not in ctx.sessions_seen:
        ctx.report.sessions_added += 1
    ctx.sessions_seen.add(session.id)


def _memories(ctx: ImportContext, conn: Connection, manifest: dict[str, Any],
              erased_refs: set[int] | None = None) -> dict[int, int]:
    """Restore every memory through ``store.core.memories`` (found again by source file,
    else by name and content hash); returns manifest ref → memory id in this store. A record
    with a bad field is reported with it and skipped. The refs of memories erased here
    earlier (not restored) are added to ``erased_refs``."""
    refs: dict[int, int] = {}

    def one(i: int, record: dict[str, Any]) -> None:
        where = f"memories[{i}]"
        fields.text(record, "name", f"{where}.name", required=True, empty_ok=False)
        fields.text(record, "body", f"{where}.body", required=True)
        ref = _ref(record, "ref", where)
        row = {k: v for k, v in record.items() if k in memories.COLUMNS}
        for key in ("tags", "projects"):
            if isinstance(row.get(key), list):
                if not all(isinstance(t, str) for t in row[key]):
                    raise fields.FieldProblem(f"{where}.{key}", "not a list of strings")
                row[key] = json.dumps(row[key])
        for key in row:
            _scalar(row, key, where)
        written = memories.upsert(conn, ctx.store, row)
        ctx.report.count_memory(written)
        if written.action == "erased":
            if erased_refs is not None:
                erased_refs.add(ref)
            return
        refs[ref] = written.memory_id

    _each(ctx, conn, manifest, "memories", one)
    return refs


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
        entry_id = None
        note = item.get("note")
        pointer = item.get("entry")
        if isinstance(pointer, dict):
            with orm(conn) as session:
                entry_id = session.exec(select(Entry.id).where(
                    Entry.idem_key == fields.text(pointer, "idem_key",
                                                  f"{where}.entry.idem_key"))).first()
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

    _each(ctx, conn, manifest, "evidence", one)
    return added


def _lineage(ctx: ImportContext, conn: Connection, manifest: dict[str, Any],
             refs: dict[int, int]) -> None:
    def one(i: int, link: dict[str, Any]) -> None:
        newer = refs.get(_ref(link, "memory", f"lineage[{i}]"))
        older = refs.get(_ref(link, "supersedes", f"lineage[{i}]"))
        if newer is not None and older is not None:
            memories.supersede(conn, newer, older)

    _each(ctx, conn, manifest, "lineage", one)


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
    incomplete = check_files(folder, manifest)
    for rel, why in incomplete.items():
        there = (folder / rel).is_file()
        ctx.report.error(str(folder / rel), None, why + (
            "; its complete lines are imported, each checked against its own content hash"
            if there else ""), "files")
        if not there:
            ctx.handled.add((folder / rel).resolve())
    with ctx.store.write() as conn:
        _sessions(ctx, conn, manifest)
    listed = manifest.get("sessions")
    for s in listed if isinstance(listed, list) else []:
        named = s.get("file") if isinstance(s, dict) else None
        if not named or not isinstance(named, str):
            continue
        rel = named
        transcript = folder / rel
        if folder.resolve() not in transcript.resolve().parents:
            ctx.report.error(str(path), None, f"transcript {rel!r} is outside the export "
                             "folder: not read", "sessions.file")
            continue
        if rel in incomplete and not transcript.is_file():
            continue  # reported above
        problem = file_problem(transcript)
        if problem:
            ctx.report.error(str(transcript), None, problem)
            continue
        ctx.handled.add(transcript.resolve())
        MindStoneImporter().import_file(ctx, transcript)
    with ctx.store.write() as conn:
        erased_refs: set[int] = set()
        refs = _memories(ctx, conn, manifest, erased_refs)
        evidence = _evidence(ctx, conn, manifest, refs)
        _lineage(ctx, conn, manifest, refs)
        sync_links(conn, ctx.store)
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
                traces = restore_traces(conn, _list(ctx, manifest, "recall_traces"), refs, who,
                                        erased_refs)
        except SHAPE_ERRORS + (StatementError,) as exc:
            ctx.report.error(str(path), None, "recall traces not imported: "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}",
                             "recall_traces")
        ctx.store.audit_in(conn, "import-export", "export", [],
                           {"memories": len(refs), "evidence_added": evidence,
                         "checkpoints_added": checkpoints, "recall_traces_added": traces})
    if checkpoints or traces:
        ctx.report.notes.append(f"{folder}: {checkpoints} checkpoints and {traces} recall "
                                "traces restored")
