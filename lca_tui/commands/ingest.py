"""``lca-tui ingest PATH...``: import transcripts and memory directories; ``ingest --problems``
and ``imports [RUN]``: the batches recorded and the problems each met, shown again later."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lca_tui.output import add_json_flag, console, fail, print_json, store_from, table
from store.core.textsafe import one_line


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    from store.ingest import formats

    p = sub.add_parser("ingest", parents=parents, help="import files or directories",
                       description="Import Claude Code sessions, memory directories and the "
                       "other supported formats; idempotent and incremental. Every problem "
                       "(file, line, field, reason) is stored with the import: `ingest "
                       "--problems` shows the last import's again.")
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--format", choices=formats(), help="force a format instead of detecting it")
    p.add_argument("--problems", nargs="?", const=0, type=int, metavar="RUN",
                   help="show the problems of the last import (or of import RUN) instead of "
                   "importing")
    add_json_flag(p)
    p.set_defaults(func=run)

    p = sub.add_parser("imports", parents=parents, help="import runs, newest first; with RUN, "
                       "that run's problems")
    p.add_argument("run_id", nargs="?", type=int, metavar="RUN")
    p.add_argument("--limit", type=int, default=50)
    add_json_flag(p)
    p.set_defaults(func=imports)


def run(args: argparse.Namespace) -> int:
    if args.problems is not None:
        if args.paths:
            return fail("--problems shows a recorded import: give no PATH with it")
        return _show_run(args, args.problems or None)
    if not args.paths:
        return fail("give at least one PATH to import (or --problems to show the last "
                    "import's problems)")
    from rich.markup import escape
    from rich.progress import Progress

    with store_from(args) as store:
        if args.json:
            report = store.ingest([Path(p) for p in args.paths], args.format)
            print_json(report.to_json())
            return 0
        with Progress(console=console(), transient=True) as bar:
            task = bar.add_task("ingest", total=None)

            def progress(label: str, done: int, total: int) -> None:
                # the description is markup in Rich's progress: a file name is escaped
                bar.update(task, description=escape(one_line(label, 60)), completed=done,
                           total=total)

            report = store.ingest([Path(p) for p in args.paths], args.format, progress)
    out = console()
    out.print(f"sessions added {report.sessions_added}, entries added {report.entries_added}, "
              f"memories added {report.memories_added} (updated {report.memories_updated}), "
              f"checkpoints {report.checkpoints_added}, chunks {report.chunks} "
              f"(failed {report.chunks_failed}), skipped by design {report.skipped_by_design}, "
              f"files {report.files}; import {report.run_id}")
    for label, counts in (("skipped by design", report.skipped_by_type),
                          ("skipped, type unknown", report.skipped_unknown)):
        if counts:
            listed = ", ".join(f"{one_line(what, 60)} {n:,}" for what, n in sorted(
                counts.items(), key=lambda kv: (-kv[1], kv[0])))
            out.print(f"{label}: {listed}")
    for note in report.notes:
        out.print(f"note: {note}")
    _problem_table(report.errors)
    return 0


def _problem_table(issues: list[Any]) -> None:
    if not issues:
        return
    t = table("file", "line", "field", "reason", title=f"{len(issues)} problems")
    for e in issues:
        t.add_row(e.path, "" if e.line is None else str(e.line), e.field or "", e.reason)
    console().print(t)


def _show_run(args: argparse.Namespace, run_id: int | None) -> int:
    with store_from(args) as store:
        info = store.import_run(run_id)
    if args.json:
        print_json(info.to_json())
        return 0
    out = console()
    ended = info.finished_at or "not finished"
    out.print(f"import {info.id} {info.status}: started {info.started_at}, ended {ended}, "
              f"paths {', '.join(info.paths)}")
    if info.error:
        out.print(f"stopped by: {info.error}")
    counts = info.counts
    if counts:
        out.print(f"sessions added {counts.get('sessions_added', 0)}, entries added "
                  f"{counts.get('entries_added', 0)}, memories added "
                  f"{counts.get('memories_added', 0)}, files {counts.get('files', 0)}")
    for note in info.notes:
        out.print(f"note: {note}")
    if not info.issues:
        out.print("no problems recorded")
    _problem_table(info.issues)
    return 0


def imports(args: argparse.Namespace) -> int:
    if args.run_id is not None:
        return _show_run(args, args.run_id)
    with store_from(args) as store:
        found = store.import_runs(args.limit)
    if args.json:
        print_json([r.to_json() for r in found])
        return 0
    t = table("run", "started", "status", "paths", "sessions", "entries", "memories",
              "problems")
    for r in found:
        c = r.counts
        t.add_row(str(r.id), r.started_at, r.status, ", ".join(r.paths),
                  str(c.get("sessions_added", "")), str(c.get("entries_added", "")),
                  str(c.get("memories_added", "")), str(r.problems))
    console().print(t)
    return 0
