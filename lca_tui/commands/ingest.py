"""``lca-tui ingest PATH...``: import transcripts and memory directories; ``ingest --problems``
and ``imports [RUN]``: the batches recorded and the problems each met, shown again later."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from lca_tui.output import (sql_int,
    Listing,
    add_json_flag,
    col,
    console,
    fail,
    print_json,
    progress_on_stderr,
    store_from,
)
from store import one_line, visible
from store import plural, when


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    from store import FORMAT_NAMES

    p = sub.add_parser("ingest", parents=parents, help="import files or directories",
                       description="Import Claude Code sessions, memory directories and the "
                       "other supported formats; idempotent and incremental. Every problem "
                       "(file, line, field, reason) is stored with the import: `ingest "
                       "--problems` shows the last import's again.")
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--format", choices=FORMAT_NAMES, help="force a format instead of detecting it")
    p.add_argument("--problems", nargs="?", const=0, type=sql_int, metavar="RUN",
                   help="show the problems of the last import (or of import RUN) instead of "
                   "importing")
    add_json_flag(p)
    p.set_defaults(func=run)

    p = sub.add_parser("imports", parents=parents, help="import runs, newest first; with RUN, "
                       "that run's problems")
    p.add_argument("run_id", nargs="?", type=sql_int, metavar="RUN")
    p.add_argument("--limit", type=sql_int, default=50)
    add_json_flag(p)
    p.set_defaults(func=imports)


def run(args: argparse.Namespace) -> int:
    from store import file_problem

    if args.problems is not None:
        if args.paths:
            return fail("--problems shows a recorded import: give no PATH with it")
        return _show_run(args, args.problems or None)
    if not args.paths:
        return fail("give at least one PATH to import (or --problems to show the last "
                    "import's problems)")
    paths = [Path(p) for p in args.paths]
    for path in paths:  # a path that is not there is a typo: import nothing, say which
        problem = file_problem(path)
        if problem in ("no such file or directory", "dangling symlink", "symlink loop"):
            return fail(f"{visible(str(path))}: {problem}; nothing was imported")
    started = time.monotonic()
    with store_from(args) as store, progress_on_stderr("ingest") as progress:
        report = store.ingest(paths, args.format, progress)
    took = time.monotonic() - started
    if args.json:
        print_json({**report.to_json(), "seconds": round(took, 3)})
        return 0
    out = console()
    out.print(f"added {plural(report.sessions_added, 'session')}, "
              f"{plural(report.entries_added, 'entry', 'entries')}, "
              f"{plural(report.memories_added, 'memory', 'memories')} "
              f"({report.memories_updated:,} updated), "
              f"{plural(report.checkpoints_added, 'checkpoint')}, "
              f"{plural(report.chunks, 'chunk')} ({report.chunks_failed:,} failed); "
              f"{plural(report.skipped_by_design, 'line')} skipped by design; "
              f"{plural(report.files, 'file')} read in {took:,.1f} s; import {report.run_id}",
              markup=False,
              soft_wrap=True)
    for label, counts in (("lines skipped by design", report.skipped_by_type),
                          ("lines skipped, type unknown", report.skipped_unknown),
                          ("content blocks of imported lines skipped by design",
                           report.blocks_skipped_by_type),
                          ("content blocks of imported lines skipped, type unknown",
                           report.blocks_skipped_unknown)):
        if counts:
            listed = ", ".join(f"{one_line(what, 60)} {n:,}" for what, n in sorted(
                counts.items(), key=lambda kv: (-kv[1], kv[0])))
            out.print(f"{label}: {listed}", markup=False, soft_wrap=True)
    for note in report.notes:
        out.print(f"note: {visible(note)}", markup=False, soft_wrap=True)
    if report.errors:
        problems_table(report.errors, plural(len(report.errors), "problem")).print(out)
    return 0


def problems_table(errors: list[Any], title: str) -> Listing:
    """File, line, field and reason of each problem met; the path is never cut."""
    t = Listing(col("file", whole=True), col("line", whole=True, right=True),
                col("field", drop=1), col("reason", min_width=30), title=title)
    for e in errors:
        t.add_row(visible(e.path), "" if e.line is None else str(e.line),
                  visible(getattr(e, "field", None) or ""), visible(e.reason))
    return t


def _show_run(args: argparse.Namespace, run_id: int | None) -> int:
    with store_from(args) as store:
        info = store.import_run(run_id)
    if args.json:
        print_json(info.to_json())
        return 0
    out = console()
    ended = when(info.finished_at, with_seconds=True) if info.finished_at else "not finished"
    out.print(f"import {info.id} {info.status}: started "
              f"{when(info.started_at, with_seconds=True)}, ended {ended}, paths "
              f"{', '.join(visible(p) for p in info.paths)}", markup=False, soft_wrap=True)
    if info.error:
        out.print(f"stopped by: {visible(info.error)}", markup=False, soft_wrap=True)
    counts = info.counts
    if counts:
        out.print(f"sessions added {counts.get('sessions_added', 0)}, entries added "
                  f"{counts.get('entries_added', 0)}, memories added "
                  f"{counts.get('memories_added', 0)}, files {counts.get('files', 0)}",
                  markup=False, soft_wrap=True)
    for note in info.notes:
        out.print(f"note: {visible(note)}", markup=False, soft_wrap=True)
    if not info.issues:
        out.print("no problems recorded")
        return 0
    problems_table(info.issues, plural(len(info.issues), "problem")).print(out)
    return 0


def imports(args: argparse.Namespace) -> int:
    if args.run_id is not None:
        return _show_run(args, args.run_id)
    with store_from(args) as store:
        found = store.import_runs(args.limit)
    if args.json:
        print_json([r.to_json() for r in found])
        return 0
    t = Listing(col("run", whole=True, right=True), col("started", whole=True),
                col("status", whole=True), col("paths", min_width=20),
                col("sessions", whole=True, right=True, drop=3),
                col("entries", whole=True, right=True, drop=2),
                col("memories", whole=True, right=True, drop=4),
                col("problems", whole=True, right=True))
    for r in found:
        c = r.counts
        t.add_row(str(r.id), when(r.started_at, with_seconds=True), r.status,
                  ", ".join(visible(p) for p in r.paths), str(c.get("sessions_added", "")),
                  str(c.get("entries_added", "")), str(c.get("memories_added", "")),
                  str(r.problems))
    t.print()
    return 0
