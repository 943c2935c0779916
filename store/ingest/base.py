"""What every importer shares: the report, batching, and streaming a line-oriented file."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection
from sqlmodel import col, delete

from store.core.db import upsert
from store.core.records import BLOCK_PREFIX, IngestReport
from store.core.textsafe import storable
from store.core.timeutil import now_iso
from store.ingest.fields import FieldProblem, loads, non_finite
from store.core.secrets import Detector
from store.core.writes import (
    NewEntry,
    NewSession,
    drop_erased,
    embed_new,
    upsert_session,
    write_entries,
)
from store.ingest.lines import (
    Line,
    MAX_LINE_BYTES,
    LineReader,
    Position,
    load_position,
    resume_point,
    save_position,
)
from store.ingest.models import BY_DESIGN, UNKNOWN, ImportSkip
from store.core.vocab import plural

if TYPE_CHECKING:
    from store.core.base import Progress
    from store.core.base import StoreBase as Store

T = TypeVar("T")
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


@dataclass(frozen=True)
class Skip:
    """A line (or, with ``block``, one content block of a line that was imported) left out:
    known housekeeping (by design), or of a type not known here (a note, not an error).
    ``what`` names the type: ``progress``, ``attachment/hook_success``; a block's type
    (``thinking (empty)``)."""

    what: str
    unknown: bool = False
    block: bool = False


@dataclass
class ImportContext:
    store: Store
    report: IngestReport
    progress: Progress | None = None
    sessions_seen: set[str] = field(default_factory=set)
    # Problems and notes of the report already stored with the run (see ``persist``).
    saved_errors: int = 0
    saved_notes: int = 0
    # skips of the file being imported not yet written to ``import_skip``: (what, unknown,
    # block) → n
    pending_skips: Counter[tuple[str, bool, bool]] = field(default_factory=Counter)
    defer: bool = False  # store entries without embedding them (queued: see writes)
    # files a folder importer already dealt with (imported or refused): the walk skips them
    handled: set[Path] = field(default_factory=set)
    # folders the walk left out as never holding sessions (``walk_rules``): kind → n
    skipped_dirs: Counter[str] = field(default_factory=Counter)
    # the folders named on the command line (any layout is taken there; below them, only
    # the memory-directory layouts ``walk_rules`` knows)
    roots: set[Path] = field(default_factory=set)
    # the secrets detector entries go through (``Store.detector()``), set when first asked
    _detector: Detector | None = None

    @property
    def detector(self) -> Detector:
        if self._detector is None:
            self._detector = self.store.detector()
        return self._detector

    def tick(self, label: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(label, done, total)

    def persist(self, conn: Connection) -> None:
        """Store the problems and notes reported since the last call with the import run,
        in the caller's transaction (a file's problems commit with its import position, so an
        aborted batch keeps the report of every file it committed)."""
        run_id = self.report.run_id
        if run_id is None:
            return
        from store.ingest.runs import save_problems

        save_problems(self.store, conn, run_id, self.report.errors[self.saved_errors:],
                      self.report.notes[self.saved_notes:])
        self.saved_errors = len(self.report.errors)
        self.saved_notes = len(self.report.notes)

    def optional(self, path: Path, line: int, check: Callable[..., T], *args: Any,
                 **kwargs: Any) -> T | None:
        """``check(*args)`` for a field the line can be stored without: a ``FieldProblem``
        is reported (file, line, field, reason) and the value left out (None)."""
        try:
            return check(*args, **kwargs)
        except FieldProblem as exc:
            self.report.error(str(path), line, f"{exc.reason}: left out, the line is stored",
                              exc.field)
            return None

    def persist_now(self) -> None:
        """``persist`` in a short transaction of its own."""
        if self.report.run_id is None or (len(self.report.errors) == self.saved_errors
                                          and len(self.report.notes) == self.saved_notes):
            return
        with self.store.write() as conn:
            self.persist(conn)

    def skip(self, what: str, unknown: bool = False, block: bool = False) -> None:
        """Count a line (or a content block) of the current file left out, in the report and
        the store."""
        self.report.skip(what, unknown, block=block)
        self.pending_skips[(what, unknown, block)] += 1


def record_skips(conn: Connection, path: Path, skips: Counter[tuple[str, bool, bool]],
                 from_start: bool, writer: str, version: str) -> None:
    """Add a file's skip counts to ``import_skip`` (replacing its rows when it was read again
    from its start); a content block's type is stored as ``block/<type>``. One upsert on the
    table's (path, line type, reason) key, not a read and an ORM write per count: every
    hook's import adds counts (a prompt's ~1 ms)."""
    name = storable(str(path))  # a file name that is not valid UTF-8 is stored as \xNN text
    if from_start:
        conn.execute(delete(ImportSkip)  # type: ignore[call-overload]
                     .where(col(ImportSkip.path) == name))
    now = now_iso()
    counts: Counter[tuple[str, str]] = Counter()  # one row per key (a server refuses two)
    for (kind, unknown, block), n in sorted(skips.items()):
        counts[(BLOCK_PREFIX + kind if block else kind, UNKNOWN if unknown else BY_DESIGN)] += n
    rows = [{"path": name, "line_type": what, "reason": reason, "count": n, "updated_at": now,
             "writer": writer, "writer_version": version, "created_at": now}
            for (what, reason), n in counts.items()]
    if not rows:
        return
    insert = upsert(conn, ImportSkip)
    table = ImportSkip.__table__  # type: ignore[attr-defined]
    conn.execute(insert.on_conflict_do_update(
        index_elements=["path", "line_type", "reason"],
        set_={"count": table.c.count + insert.excluded.count,
              "updated_at": insert.excluded.updated_at, "writer": insert.excluded.writer,
              "writer_version": insert.excluded.writer_version}), rows)


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
    start = Position()  # where the current import of a file began reading

    def source_key(self, obj: dict[str, Any]) -> str:
        raise NotImplementedError

    def convert(self, ctx: ImportContext, path: Path, line_no: int, offset: int,
                obj: dict[str, Any]
                ) -> tuple[NewSession | None, list[NewEntry]] | str | Skip | None:
        """Entries of one line; a string is an error reason; a ``Skip`` (or None) is a line
        left out. A ``FieldProblem`` raised here is reported with its field and the line is
        not stored."""
        raise NotImplementedError

    def on_flush(self, ctx: ImportContext, conn: Connection, path: Path, from_start: bool,
                 batch: dict[str, list[NewEntry]]) -> None:
        """Write what a format keeps besides entries, in the batch's transaction (``batch``:
        session id → the entries just written; ``from_start``: the file is read from byte 0)."""

    def on_end(self, ctx: ImportContext, path: Path, with_session: int, skipped: int) -> None:
        """After the file: how many lines gave entries and how many were left out this time."""

    def import_file(self, ctx: ImportContext, path: Path) -> None:
        """Import ``path`` from where the last import of it stopped (see ``FileImport``)."""
        FileImport(self, ctx, path).run()


class _NotStored:
    """``FileImport.outcome`` of a line already reported as not stored."""


NOT_STORED = _NotStored()
Outcome = tuple[NewSession | None, list[NewEntry]] | str | Skip | None


class FileImport:
    """One import of one line-oriented file by one ``LineImporter``: ``decode`` a line,
    take the importer's ``outcome`` of it, ``accept`` that outcome into the pending batch,
    ``flush`` the batch every ``BATCH_LINES`` lines (entries, sessions, skips, the read
    position and the file's problems commit together), and ``finish`` the file."""

    def __init__(self, importer: LineImporter, ctx: ImportContext, path: Path) -> None:
        self.importer, self.ctx, self.path = importer, ctx, path
        self.store, self.report = ctx.store, ctx.report
        self.resolved = path.resolve()
        self.file_skips: Counter[tuple[str, bool, bool]] = Counter()
        self.with_session = 0
        self.errors_here = 0
        self.pending_sessions: dict[str, NewSession] = {}
        self.pending: dict[str, list[NewEntry]] = {}
        self.lines_in_batch = 0
        self.source_key: str | None = None

    def run(self) -> None:
        if self.resolved.stat().st_size == 0:
            self.report.error(str(self.path), None, "empty file: nothing to import")
            return
        self.open()
        for line in self.reader:
            self.lines_in_batch += 1
            obj = self.decode(line)
            if obj is None:
                continue
            outcome = self.outcome(line, obj)
            if isinstance(outcome, _NotStored):
                continue
            self.accept(line, obj, outcome)
            if self.lines_in_batch >= BATCH_LINES:
                self.flush(self.reader.position)
                self.ctx.tick(storable(self.path.name), self.reader.position.offset, self.size)
        self.finish()

    def open(self) -> None:
        """Where to read from: the saved position, or the start of a file rewritten since."""
        with self.store.read() as conn:
            self.saved = load_position(conn, self.resolved)
        self.start, rewritten = resume_point(self.resolved, self.saved)
        if rewritten:
            self.report.notes.append(f"{storable(str(self.path))}: changed before the last "
                                     "imported position since the last import; read again "
                                     "from the start (lines already stored are not added "
                                     "twice)")
        self.reader = LineReader(self.resolved, self.start)
        self.importer.start = self.start
        self.size = self.resolved.stat().st_size
        self.from_start = self.start.offset == 0  # the file's earlier skip counts are replaced
        self.ctx.pending_skips.clear()

    def error(self, line: int | None, reason: str, field_name: str | None = None) -> None:
        """A problem of this file; past ``MAX_ERRORS_PER_FILE`` only counted (see ``finish``)."""
        self.errors_here += 1
        if self.errors_here <= MAX_ERRORS_PER_FILE:
            self.report.error(str(self.path), line, reason, field_name)

    def decode(self, line: Line) -> dict[str, Any] | None:
        """The JSON object of one line, or None: blank, or reported (not UTF-8, not JSON, not
        an object, a lone surrogate). Non-finite numbers are reported and become null."""
        raw = line.raw[len(BOM):] if line.offset == 0 and line.raw.startswith(BOM) else line.raw
        if not raw.strip():
            return None
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.error(line.number, f"not UTF-8 (byte {exc.start}): line skipped")
            return None
        try:
            obj, odd_numbers = loads(decoded)
        except json.JSONDecodeError as exc:
            self.error(line.number, f"invalid JSON: {exc.msg} at column {exc.colno}")
            return None
        except RecursionError:
            self.error(line.number, "JSON nested too deeply to read: line skipped")
            return None
        if not isinstance(obj, dict):
            self.error(line.number, f"a JSON {type(obj).__name__}, not an object")
            return None
        if has_lone_surrogate(raw, obj):
            self.error(line.number, "contains a lone UTF-16 surrogate escape (not valid "
                       "Unicode): line skipped")
            return None
        if odd_numbers:  # NaN, Infinity, 1e400: each reported, stored as null
            obj, fields = non_finite(obj)
            for name in fields:
                self.error(line.number, "not a finite number: stored as null", name)
        return obj

    def outcome(self, line: Line, obj: dict[str, Any]) -> Outcome | _NotStored:
        """The importer's ``convert`` of the line; a line of the wrong shape becomes an error
        reason, a ``FieldProblem`` is reported at once (``NOT_STORED``)."""
        try:
            return self.importer.convert(self.ctx, self.path, line.number, line.offset, obj)
        except FieldProblem as exc:
            self.error(line.number, f"{exc.reason}: line not stored", exc.field)
            return NOT_STORED
        except SHAPE_ERRORS as exc:
            return f"line has an unexpected shape ({type(exc).__name__}: {exc})"[:300]

    def accept(self, line: Line, obj: dict[str, Any], outcome: Outcome) -> None:
        """Count a skip, report an error, or add the line's session and entries to the batch
        (a session met again widens its start and end)."""
        if outcome is None:
            self.ctx.skip(f"{self.importer.format} line")
        elif isinstance(outcome, Skip):
            self.ctx.skip(outcome.what, outcome.unknown, outcome.block)
        elif isinstance(outcome, str):
            self.error(line.number, outcome)
        else:
            session, entries = outcome
            if session is None:
                return
            self.with_session += 1
            known = self.pending_sessions.get(session.id)
            if known is None:
                self.pending_sessions[session.id] = session
            else:
                known.started_at = min(filter(None, [known.started_at, session.started_at]),
                                       default=None)
                known.ended_at = max(filter(None, [known.ended_at, session.ended_at]),
                                     default=None)
                known.source = known.source or session.source
            self.source_key = self.source_key or self.importer.source_key(obj)
            self.pending.setdefault(session.id, []).extend(entries)

    def flush(self, position: Position) -> None:
        """Write the batch in one transaction (embedded first, outside the write lock, unless
        deferred), with the importer's extras, the skip counts, the read position and the
        problems reported so far."""
        ctx, store, report, pending = self.ctx, self.store, self.report, self.pending
        indexer = None if ctx.defer else store.indexer()
        prepared = None
        if indexer is not None:
            with store.read() as conn:  # embed before taking the write lock
                prepared = embed_new(
                    conn, [e for es in pending.values() for e in es], indexer,
                    lambda done, total: ctx.tick(f"{self.path.name}: embedding chunks", done,
                                                 total))
        with store.write() as conn:
            for sid in list(pending):
                kept, refused = drop_erased(conn, pending[sid])
                report.erased_earlier += refused
                pending[sid] = kept
                if refused and not kept:  # all of it erased earlier: no session again
                    self.pending_sessions.pop(sid, None)
            for sid, session in self.pending_sessions.items():
                if upsert_session(conn, session, store.writer, store.writer_version):
                    if sid not in ctx.sessions_seen:
                        report.sessions_added += 1
                ctx.sessions_seen.add(sid)
            for sid, entries in pending.items():
                result = write_entries(conn, sid, entries, indexer, store.writer,
                                       store.writer_version, prepared, defer=ctx.defer,
                                       detector=ctx.detector)
                report.entries_added += len(result.entry_ids)
                report.entries_secret += len(result.secret)
                report.private_spans += result.private_spans
                report.entries_waiting += result.queued
                report.chunks += result.chunks
                report.chunks_failed += result.chunks_failed
                for err in result.errors:
                    report.error(str(self.path), None, f"embedding failed: {err}")
            self.importer.on_flush(ctx, conn, self.resolved, self.from_start, pending)
            if ctx.pending_skips or self.from_start:
                record_skips(conn, self.resolved, ctx.pending_skips, self.from_start,
                             store.writer, store.writer_version)
            save_position(conn, self.resolved, self.importer.format, self.source_key, position,
                          self.size, store.writer, store.writer_version)
            ctx.persist(conn)  # this file's problems so far commit with its position
        self.file_skips.update(ctx.pending_skips)
        ctx.pending_skips.clear()
        self.from_start = False
        self.pending_sessions.clear()
        pending.clear()
        self.lines_in_batch = 0

    def finish(self) -> None:
        """The last batch (the file's whole report commits with its position), the count of
        problems not listed, an incomplete last line, and the notes on unknown types."""
        report, path, reader = self.report, self.path, self.reader
        for number in reader.oversized:
            self.error(number, f"longer than {MAX_LINE_BYTES >> 20} MiB: line skipped")
        if self.errors_here > MAX_ERRORS_PER_FILE:
            report.error(str(path), None, f"{self.errors_here - MAX_ERRORS_PER_FILE} more bad "
                         "lines in this file were not listed")
        if reader.pending_tail:
            report.notes.append(f"{storable(str(path))}: line {reader.position.lines + 1} has "
                                "no newline and is not complete JSON: left for the next import")
        if (self.lines_in_batch or reader.position.offset != self.start.offset
                or self.saved is None):
            self.flush(reader.position)
        for (what, unknown, block), n in sorted(self.file_skips.items()):
            if unknown and block:
                report.notes.append(f"{storable(str(path))}: "
                                    f"{plural(n, 'content block')} of a type not known here "
                                    f"({what}) skipped; "
                                    f"{'its line was' if n == 1 else 'the lines holding them were'}"
                                    " imported")
            elif unknown:
                report.notes.append(f"{storable(str(path))}: {plural(n, 'line')} "
                                    f"of a type not known here ({what}) skipped")
        self.importer.on_end(self.ctx, path, self.with_session,
                             sum(n for (_, _, block), n in self.file_skips.items() if not block))
        self.ctx.tick(storable(path.name), self.size, self.size)
