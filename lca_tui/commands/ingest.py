"""``lca-tui ingest PATH...``: import transcripts and memory directories."""

from __future__ import annotations

import argparse
from pathlib import Path

from lca_tui.output import (
    Listing,
    add_json_flag,
    col,
    console,
    fail,
    print_json,
    progress_on_stderr,
    store_from,
)
from store.core.textsafe import one_line, visible
from widgets.fmt import plural


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    from store.ingest import formats

    p = sub.add_parser("ingest", parents=parents, help="import files or directories",
                       description="Import Claude Code sessions, memory directories and the "
                       "other supported formats; idempotent and incremental.")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--format", choices=formats(), help="force a format instead of detecting it")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from store.ingest.base import file_problem

    paths = [Path(p) for p in args.paths]
    for path in paths:  # a path that is not there is a typo: import nothing, say which
        problem = file_problem(path)
        if problem in ("no such file or directory", "dangling symlink", "symlink loop"):
            return fail(f"{visible(str(path))}: {problem}; nothing was imported")
    with store_from(args) as store, progress_on_stderr("ingest") as progress:
        report = store.ingest(paths, args.format, progress)
    if args.json:
        print_json(report.to_json())
        return 0
    out = console()
    out.print(f"added {plural(report.sessions_added, 'session')}, "
              f"{plural(report.entries_added, 'entry', 'entries')}, "
              f"{plural(report.memories_added, 'memory', 'memories')} "
              f"({report.memories_updated:,} updated), "
              f"{plural(report.checkpoints_added, 'checkpoint')}, "
              f"{plural(report.chunks, 'chunk')} ({report.chunks_failed:,} failed); "
              f"{plural(report.skipped_by_design, 'line')} skipped by design; "
              f"{plural(report.files, 'file')} read", markup=False, soft_wrap=True)
    for label, counts in (("skipped by design", report.skipped_by_type),
                          ("skipped, type unknown", report.skipped_unknown)):
        if counts:
            listed = ", ".join(f"{one_line(what, 60)} {n:,}" for what, n in sorted(
                counts.items(), key=lambda kv: (-kv[1], kv[0])))
            out.print(f"{label}: {listed}", markup=False, soft_wrap=True)
    for note in report.notes:
        out.print(f"note: {visible(note)}", markup=False, soft_wrap=True)
    if report.errors:
        problems_table(report.errors, plural(len(report.errors), "problem")).print(out)
    return 0


def problems_table(errors: list, title: str) -> Listing:  # type: ignore[type-arg]
    """File, line and reason of each problem met; the path is never cut."""
    t = Listing(col("file", whole=True), col("line", whole=True, right=True),
                col("reason", min_width=30), title=title)
    for e in errors:
        t.add_row(visible(e.path), "" if e.line is None else str(e.line), visible(e.reason))
    return t
