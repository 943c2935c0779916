"""``lca-tui ingest``: find what the paths hold, detect each format, import it.

Formats register in ``FILE_FORMATS`` (line-oriented files, detected from their first JSON
objects) and ``DIR_FORMATS`` (folders with a layout of their own). Bad input never aborts the
batch: each problem is reported with its file, line and reason, and everything else lands.

This package owns every importer and ``reindex``. Memories are written through
``store.core.memories`` only; ACP reuses ``memory_dir``'s public file import. May import:
``store.core``; the export
importer also uses ``store.export.extra``'s public restore functions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.ingest.acp import import_acp_dir, is_acp_dir, is_acp_journal
from store.ingest.acp_journal import import_journal_dir
from store.ingest.base import ImportContext, LineImporter, file_problem
from store.ingest.claude_code import ClaudeCodeImporter
from store.ingest.claude_code import looks_like as looks_like_claude_code
from store.ingest.lca_export import import_export_dir, is_export_dir
from store.ingest.memory_dir import import_memory_dir, is_memory_dir
from store.ingest.mindstone import MindStoneImporter
from store.ingest.mindstone import looks_like as looks_like_mindstone
from store.core.records import IngestReport

if TYPE_CHECKING:
    from store.core.base import Progress
    from store.core.base import StoreBase as Store

LINE_SUFFIXES = (".jsonl", ".ndjson")
DETECT_LINES = 50

# name → (looks like it?, importer factory)
FILE_FORMATS: dict[str, tuple[Callable[[dict[str, Any]], bool], Callable[[], LineImporter]]] = {
    "claude-code": (looks_like_claude_code, ClaudeCodeImporter),
    "mindstone": (looks_like_mindstone, MindStoneImporter),
}
# name → (is this folder in that layout?, import the folder); checked in order
DIR_FORMATS: dict[str, tuple[Callable[[Path], bool], Callable[[ImportContext, Path], None]]] = {
    "lca-export": (is_export_dir, import_export_dir),
    "acp": (is_acp_dir, import_acp_dir),
    "acp-journal": (is_acp_journal, import_journal_dir),
    "memory-dir": (is_memory_dir, import_memory_dir),
}


def formats() -> list[str]:
    return [*FILE_FORMATS, *DIR_FORMATS]


def detect_file(path: Path) -> str | None:
    """The format of a line-oriented file from its first parseable JSON objects."""
    with path.open("rb") as fh:
        for _, raw in zip(range(DETECT_LINES), fh, strict=False):
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                for name, (looks_like, _) in FILE_FORMATS.items():
                    if looks_like(obj):
                        return name
    return None


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
    name = fmt or detect_file(path)
    if name is None:
        report.error(str(path), None, "unrecognised format: no line looks like any of "
                     f"{', '.join(FILE_FORMATS)} (use --format to force one)")
        return
    if name not in FILE_FORMATS:
        report.error(str(path), None, f"--format {name} does not apply to a single file")
        return
    FILE_FORMATS[name][1]().import_file(ctx, path)


def _walk(ctx: ImportContext, folder: Path, fmt: str | None, seen: set[Path]) -> None:
    """Import a folder: its own layout if it has one, its line files, then its sub-folders
    (symlinked ones too, each real folder once)."""
    real = folder.resolve()
    if real in seen:
        return
    seen.add(real)
    for name, (matches, importer) in DIR_FORMATS.items():
        if fmt == name or (fmt is None and matches(folder)):
            importer(ctx, folder)
            break
    children = sorted(folder.iterdir(), key=lambda p: p.name)
    for child in children:
        if child.name.startswith("."):
            continue
        problem = file_problem(child)
        if problem:
            if child.suffix in LINE_SUFFIXES or (child.is_symlink() and child.suffix != ".md"):
                ctx.report.files += 1
                ctx.report.error(str(child), None, problem)
            continue
        if child.is_dir():
            continue
        if child.suffix in LINE_SUFFIXES:
            _import_file(ctx, child, fmt if fmt in FILE_FORMATS else None)
    for child in children:
        if child.is_dir() and not child.name.startswith("."):
            _walk(ctx, child, fmt if fmt in FILE_FORMATS else None, seen)


def ingest(store: Store, paths: list[Path], fmt: str | None = None,
           progress: Progress | None = None, defer: bool = False,
           audit: bool = True) -> IngestReport:
    """Import every path; returns what was added and every problem met.

    ``defer`` stores transcript entries without embedding them (queued; searchable by FTS at
    once): what a hook before every prompt does. Memory files are always embedded.
    ``audit=False`` skips the audit event, for a caller that records the import itself (a
    hook run, in ``hook_run``; an audit event per prompt would also make every warm process
    reload its vector copy, which an audit event signals)."""
    if fmt is not None and fmt not in formats():
        raise ValueError(f"unknown format {fmt!r}: one of {', '.join(formats())}")
    report = IngestReport()
    ctx = ImportContext(store, report, progress, defer=defer)
    seen: set[Path] = set()
    for path in paths:
        problem = file_problem(path)
        if problem:
            report.files += 1
            report.error(str(path), None, problem)
        elif path.is_dir():
            _walk(ctx, path, fmt, seen)
        elif fmt in DIR_FORMATS:
            report.error(str(path), None, f"--format {fmt} needs a directory")
        else:
            _import_file(ctx, path, fmt)
    if not audit:
        return report
    with store.write() as conn:
        store.audit(conn, "ingest", "import", [],
                    {"sessions_added": report.sessions_added,
                     "entries_added": report.entries_added,
                     "memories_added": report.memories_added, "errors": len(report.errors)})
    return report
