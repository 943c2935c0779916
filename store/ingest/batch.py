"""One ``ingest`` call: every path walked (folders in their layout, line files to their
importer), each file's failure reported without ending the batch, the run recorded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import DatabaseError, IntegrityError, OperationalError, SQLAlchemyError

from store.core.errors import NotFound, StoreError, StoreUnavailable
from store.core.records import IngestReport
from store.core.vocab import plural
from store.ingest.base import ImportContext, file_problem
from store.ingest.lca_export import partial_export_problem
from store.ingest.memory_dir import import_memory_dir, is_bound_dir
from store.ingest.registry import (
    DIR_FORMATS,
    FILE_FORMATS,
    LINE_SUFFIXES,
    detect_file,
    formats,
)
from store.ingest.runs import finish_run, start_run
from store.ingest.walk_rules import known_memory_layout, never_holds_sessions, skipped_note
from store.ingest.detect import first_keys, refused_format_of
from store.ingest.gemini import import_chat_file, is_chat_file

if TYPE_CHECKING:
    from store.core.base import Progress
    from store.core.base import StoreBase as Store

TEMP_SUFFIX = ".tmp"


def _store_failure(exc: BaseException) -> bool:
    """An error of the store itself (busy past every retry, read-only, full, corrupt, newer):
    every later file would meet it too, so it ends the batch instead of being one file's."""
    unavailable = isinstance(exc, StoreUnavailable)
    if isinstance(exc, StoreError) and not isinstance(exc, NotFound) and not unavailable:
        return True
    if unavailable or (isinstance(exc, OperationalError | DatabaseError)
                       and not isinstance(exc, IntegrityError)):
        reason = (exc.reason if isinstance(exc, StoreUnavailable)
                  else str(getattr(exc, "orig", exc))).lower()
        return any(w in reason for w in ("locked", "busy", "readonly", "read-only", "disk",
                                         "full", "i/o", "malformed", "corrupt", "no such table"))
    return False


def _guarded(ctx: ImportContext, where: Path, action: Callable[..., None], *args: Any) -> None:
    """Run one file's (or folder's) import: whatever goes wrong with it is that file's
    problem, reported, and the batch goes on; its problems are stored with the run."""
    try:
        action(*args)
    except Exception as exc:  # noqa: BLE001 - any failure of one file is reported, never fatal
        if _store_failure(exc):
            raise
        first = (str(exc).splitlines() or [""])[0][:300]
        ctx.report.error(str(where), None, f"could not be imported: {type(exc).__name__}: "
                         f"{first}")
    ctx.persist_now()


def _import_file(ctx: ImportContext, path: Path, fmt: str | None) -> None:
    report = ctx.report
    report.files += 1
    problem = file_problem(path)
    if problem:
        report.error(str(path), None, problem)
        return
    if path.stat().st_size == 0:
        report.error(str(path), None, "empty file: nothing to import")
        return
    if fmt is None and path.suffix == ".json" and import_chat_file(ctx, path):
        return
    name = fmt or detect_file(path)
    if name is None:
        report.error(str(path), None, refused_format_of(path) or "unrecognised format: no "
                     f"line looks like any of {', '.join(FILE_FORMATS)} (its first keys: "
                     f"{first_keys(path)}; use --format to force one)")
        return
    if name not in FILE_FORMATS:
        report.error(str(path), None, f"--format {name} does not apply to a single file")
        return
    FILE_FORMATS[name][1]().import_file(ctx, path)


def _is_temporary(path: Path) -> bool:
    """A ``*.jsonl.tmp`` (or ``.ndjson.tmp``, ``manifest.json.tmp``): what an interrupted
    atomic write (``lca-tui export`` killed mid-write) leaves behind."""
    return path.name.endswith(TEMP_SUFFIX) and (
        path.name[: -len(TEMP_SUFFIX)].endswith((*LINE_SUFFIXES, ".json")))


def _dir_format(ctx: ImportContext, folder: Path, fmt: str | None
                ) -> tuple[str, Callable[[ImportContext, Path], None]] | None:
    """The folder's layout: ``fmt`` when given, else the first that matches. The bound
    memory directory (``memory.dir``) is always a memory directory, whatever the format
    asked or detected: its files go through the gate, never around it."""
    if is_bound_dir(ctx.store, folder):
        if fmt is not None and fmt != "memory-dir":
            ctx.report.notes.append(f"{folder} is the bound memory directory (memory.dir): "
                                    f"imported as memory-dir, not {fmt}, so its files go "
                                    "through the gate")
        return "memory-dir", import_memory_dir
    if fmt is None and folder.resolve() in ctx.handled:
        return None  # a folder a layout above it already imported (Claude Code memory)
    for name, (matches, importer) in DIR_FORMATS.items():
        if fmt == name or (fmt is None and matches(folder)):
            if fmt is None and name == "memory-dir" and not known_memory_layout(ctx, folder):
                return None  # Markdown of no known memory layout, found by the walk
            return name, importer
    return None


def _walk(ctx: ImportContext, folder: Path, fmt: str | None, seen: set[Path],
          fence: Path | None = None) -> None:
    """Import a folder: its own layout if it has one, its line files, then its sub-folders
    (symlinked ones too, each real folder once). Only regular files are ever opened. Inside
    a memory directory (the bound one or any other), ``fence`` is its real path: a sub-folder
    whose real path lies outside it is reported, never followed."""
    real = folder.resolve()
    if real in seen:
        return
    seen.add(real)
    found = _dir_format(ctx, folder, fmt)
    if found is not None and found[0] == "memory-dir" and fence is None:
        fence = real
    partial = partial_export_problem(folder) if found is None else None
    if partial:
        ctx.report.error(str(folder), None, partial)
    if found is not None:
        _guarded(ctx, folder, found[1], ctx, folder)
    children = sorted(folder.iterdir(), key=lambda p: p.name)
    for child in children:
        if child.name.startswith("."):
            continue
        _guarded(ctx, child, _visit, ctx, child, fmt)
    for child in children:
        if child.is_dir():
            why = never_holds_sessions(child)
            if why is not None:
                ctx.skipped_dirs[why] += 1
                continue
            if fence is not None and not child.resolve().is_relative_to(fence):
                ctx.report.error(str(child), None, "a link out of the memory directory "
                                 f"{fence}: not followed")
                continue
            _guarded(ctx, child, _walk, ctx, child, fmt if fmt in FILE_FORMATS else None,
                     seen, fence)


def _visit(ctx: ImportContext, child: Path, fmt: str | None) -> None:
    """One entry of a folder: a line file is imported, a leftover temporary file reported."""
    problem = file_problem(child)
    if problem:
        if child.suffix in LINE_SUFFIXES or (child.is_symlink() and child.suffix != ".md"):
            ctx.report.files += 1
            ctx.report.error(str(child), None, problem)
        return
    if child.is_dir() or child.resolve() in ctx.handled:
        return  # a folder, or a file its folder's importer already imported or refused
    if _is_temporary(child):
        ctx.report.files += 1
        ctx.report.error(str(child), None, "a temporary file left by an interrupted write (an "
                         "`lca-tui export` or another writer stopped before it finished): not "
                         "imported; the finished file has the name without .tmp")
    elif child.suffix in LINE_SUFFIXES:
        _import_file(ctx, child, fmt if fmt in FILE_FORMATS else None)
    elif fmt is None and is_chat_file(child):
        _import_file(ctx, child, None)


def ingest(store: Store, paths: list[Path], fmt: str | None = None,
           progress: Progress | None = None, defer: bool = False,
           record: bool = True) -> IngestReport:
    """Import every path; returns what was added and every problem met.

    The run and each problem are stored as they happen (``store.ingest.runs``), so
    ``lca-tui imports`` shows them again, even for a batch that was aborted.

    ``defer`` stores transcript entries without embedding them (queued; searchable by FTS at
    once): what a hook before every prompt does. Memory files are always embedded.
    ``record=False`` records neither the run nor an audit event, for a caller that records
    the import itself: a hook run (``hook_run``), before every prompt — a run and an audit
    event per prompt would bury the real imports, and an audit event makes every warm
    process reload its vector copy."""
    if fmt is not None and fmt not in formats():
        raise ValueError(f"unknown format {fmt!r}: one of {', '.join(formats())}")
    report = IngestReport()
    ctx = ImportContext(store, report, progress, defer=defer)
    if str(store.settings["memory.dir"] or "").strip() and not defer:
        from store.core import filejournal

        filejournal.finish(store)  # a killed write's bound files, settled before reading them
    if record:
        report.run_id = start_run(store, [str(p) for p in paths], fmt)
    if progress is not None and not defer:  # the model takes seconds to load: say so
        store.load_embedder(progress)
    seen: set[Path] = set()
    ctx.roots = {p.resolve() for p in paths if p.is_dir()}
    failure: str | None = None
    try:
        for path in paths:
            _guarded(ctx, path, _one_path, ctx, path, fmt, seen)
        if ctx.skipped_dirs:
            report.notes.append(skipped_note(ctx))
        if report.erased_earlier:
            report.notes.append(f"{report.erased_earlier} entries or memories were erased or "
                                "redacted earlier and were not imported again (erased earlier)")
        if report.entries_secret:
            report.notes.append(f"{plural(report.entries_secret, 'entry', 'entries')} held a "
                                "secret (a key, a token, a password): stored secret, masked, "
                                "never injected; `lca-tui scan-secrets --list` names the "
                                "kinds found")
        if report.private_spans:
            report.notes.append(f"{plural(report.private_spans, '<private> span')} stored "
                                "redacted")
        if record:
            with store.write() as conn:
                store.audit_in(conn, "ingest", "import", [report.run_id],
                               {"sessions_added": report.sessions_added,
                             "entries_added": report.entries_added,
                             "memories_added": report.memories_added,
                             "errors": len(report.errors),
                             "erased_earlier": report.erased_earlier,
                             "entries_secret": report.entries_secret,
                             "private_spans": report.private_spans})
    except BaseException as exc:
        failure = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
        raise
    finally:
        if record:
            _close(ctx, failure)
    return report


def _close(ctx: ImportContext, failure: str | None) -> None:
    """Store what is left of the report and close the run. When the batch is already failing
    (the store itself may be what failed), a failure to record that is not allowed to hide
    the original error."""
    try:
        ctx.persist_now()
        finish_run(ctx.store, ctx.report.run_id or 0, ctx.report, failure)
    except (StoreError, SQLAlchemyError):
        if failure is None:
            raise


def _one_path(ctx: ImportContext, path: Path, fmt: str | None, seen: set[Path]) -> None:
    report = ctx.report
    problem = file_problem(path)
    if problem:
        report.files += 1
        report.error(str(path), None, problem)
    elif path.is_dir():
        _walk(ctx, path, fmt, seen)
    elif fmt in DIR_FORMATS:
        report.error(str(path), None, f"--format {fmt} needs a directory")
    elif _is_temporary(path):
        _visit(ctx, path, fmt)
    else:
        _import_file(ctx, path, fmt)
