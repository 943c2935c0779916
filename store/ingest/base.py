"""What every importer shares: the report, batching, and streaming a line-oriented file."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.ingest.lines import LineReader, Position, load_position, resume_point, save_position
from store.core.records import IngestReport
from store.core.writes import NewEntry, NewSession, embed_new, upsert_session, write_entries

if TYPE_CHECKING:
    from store.core.base import Progress
    from store.core.base import StoreBase as Store

BATCH_LINES = 400
MAX_ERRORS_PER_FILE = 100
BOM = b"\xef\xbb\xbf"
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
# What a line of the wrong shape raises inside a converter: reported, never fatal.
SHAPE_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError,
                RecursionError)


def has_lone_surrogate(raw: bytes, obj: Any) -> bool:
    """True when a JSON line escapes half of a surrogate pair: valid JSON, invalid Unicode."""
    if not _SURROGATE_ESCAPE.search(raw):
        return False
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


@dataclass
class ImportContext:
    store: Store
    report: IngestReport
    progress: Progress | None = None
    sessions_seen: set[str] = field(default_factory=set)
    defer: bool = False  # store entries without embedding them (queued: see writes)

    def tick(self, label: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(label, done, total)


def file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as a file at all, or None."""
    if path.is_symlink() and not path.exists():
        try:
            path.resolve(strict=True)
        except RuntimeError:
            return "symlink loop"
        except OSError as exc:
            if "loop" in str(exc).lower():
                return "symlink loop"
        return "dangling symlink"
    if not path.exists():
        return "no such file or directory"
    if path.is_dir():
        return None
    if not path.is_file():
        return "not a regular file (a FIFO, socket or device): not read"
    return None


class LineImporter:
    """Base for JSON-lines formats: subclasses turn one parsed line into entries."""

    format = "jsonl"

    def source_key(self, obj: dict[str, Any]) -> str:
        raise NotImplementedError

    def convert(self, ctx: ImportContext, path: Path, line_no: int, offset: int,
                obj: dict[str, Any]) -> tuple[NewSession | None, list[NewEntry]] | str | None:
        raise NotImplementedError

    def import_file(self, ctx: ImportContext, path: Path) -> None:
        store, report = ctx.store, ctx.report
        resolved = path.resolve()
        if resolved.stat().st_size == 0:
            report.error(str(path), None, "empty file: nothing to import")
            return
        with store.read() as conn:
            saved = load_position(conn, resolved)
        start, rewritten = resume_point(resolved, saved)
        if rewritten:
            report.notes.append(f"{path}: changed before the last imported position since the "
                                "last import; read again from the start (lines already stored "
                                "are not added twice)")
        reader = LineReader(resolved, start)
        size = resolved.stat().st_size
        errors_here = 0
        pending_sessions: dict[str, NewSession] = {}
        pending: dict[str, list[NewEntry]] = {}
        lines_in_batch = 0
        source_key: str | None = None

        def error(line: int | None, reason: str) -> None:
            nonlocal errors_here
            errors_here += 1
            if errors_here <= MAX_ERRORS_PER_FILE:  # the rest are counted, reported after
                report.error(str(path), line, reason)

        def flush(position: Position) -> None:
            nonlocal lines_in_batch
            indexer = None if ctx.defer else store.indexer(ctx.progress)
            prepared = None
            if indexer is not None:
                with store.read() as conn:  # embed before taking the write lock
                    prepared = embed_new(conn, [e for es in pending.values() for e in es],
                                         indexer)
            with store.write() as conn:
                for sid, session in pending_sessions.items():
                    if upsert_session(conn, session, store.writer, store.writer_version):
                        if sid not in ctx.sessions_seen:
                            report.sessions_added += 1
                    ctx.sessions_seen.add(sid)
                for sid, entries in pending.items():
                    result = write_entries(conn, sid, entries, indexer, store.writer,
                                           store.writer_version, prepared, defer=ctx.defer)
                    report.entries_added += len(result.entry_ids)
                    report.entries_waiting += result.queued
                    report.chunks += result.chunks
                    report.chunks_failed += result.chunks_failed
                    for err in result.errors:
                        report.error(str(path), None, f"embedding failed: {err}")
                save_position(conn, resolved, self.format, source_key, position, size,
                              store.writer, store.writer_version)
            pending_sessions.clear()
            pending.clear()
            lines_in_batch = 0

        for line in reader:
            lines_in_batch += 1
            raw = line.raw[len(BOM):] if line.offset == 0 and line.raw.startswith(BOM) else line.raw
            if not raw.strip():
                continue
            try:
                decoded = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                error(line.number, f"not UTF-8 (byte {exc.start}): line skipped")
                continue
            try:
                obj = json.loads(decoded)
            except json.JSONDecodeError as exc:
                error(line.number, f"invalid JSON: {exc.msg} at column {exc.colno}")
                continue
            except RecursionError:
                error(line.number, "JSON nested too deeply to read: line skipped")
                continue
            if not isinstance(obj, dict):
                error(line.number, f"a JSON {type(obj).__name__}, not an object")
                continue
            if has_lone_surrogate(raw, obj):
                error(line.number, "contains a lone UTF-16 surrogate escape (not valid "
                      "Unicode): line skipped")
                continue
            try:
                outcome = self.convert(ctx, path, line.number, line.offset, obj)
            except SHAPE_ERRORS as exc:
                outcome = f"line has an unexpected shape ({type(exc).__name__}: {exc})"[:300]
            if outcome is None:
                report.skipped_by_design += 1
            elif isinstance(outcome, str):
                error(line.number, outcome)
            else:
                session, entries = outcome
                if session is not None:
                    known = pending_sessions.get(session.id)
                    if known is None:
                        pending_sessions[session.id] = session
                    else:
                        known.started_at = min(filter(None, [known.started_at,
                                                             session.started_at]), default=None)
                        known.ended_at = max(filter(None, [known.ended_at, session.ended_at]),
                                             default=None)
                        known.source = known.source or session.source
                    source_key = source_key or self.source_key(obj)
                    pending.setdefault(session.id, []).extend(entries)
            if lines_in_batch >= BATCH_LINES:
                flush(reader.position)
                ctx.tick(str(path.name), reader.position.offset, size)
        if lines_in_batch or reader.position.offset != start.offset or saved is None:
            flush(reader.position)
        if errors_here > MAX_ERRORS_PER_FILE:
            report.error(str(path), None, f"{errors_here - MAX_ERRORS_PER_FILE} more bad lines "
                         "in this file were not listed")
        if reader.pending_tail:
            report.notes.append(f"{path}: line {reader.position.lines + 1} has no newline and "
                                "is not complete JSON: left for the next import")
        ctx.tick(str(path.name), size, size)
