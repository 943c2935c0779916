"""``lca-tui ingest PATH...``: import transcripts and memory directories."""

from __future__ import annotations

import argparse
from pathlib import Path

from lca_tui.output import (add_json_flag, console, print_json, progress_reporter, store_from,
                            table)
from store.core.textsafe import one_line


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
    with store_from(args) as store:
        if args.json:
            report = store.ingest([Path(p) for p in args.paths], args.format)
            print_json(report.to_json())
            return 0
        with progress_reporter() as progress:  # model load, files read, chunks embedded
            report = store.ingest([Path(p) for p in args.paths], args.format, progress)
    out = console()
    out.print(f"sessions added {report.sessions_added}, entries added {report.entries_added}, "
              f"memories added {report.memories_added} (updated {report.memories_updated}), "
              f"checkpoints {report.checkpoints_added}, chunks {report.chunks} "
              f"(failed {report.chunks_failed}), skipped by design {report.skipped_by_design}, "
              f"files {report.files}", markup=False)
    for label, counts in (("skipped by design", report.skipped_by_type),
                          ("skipped, type unknown", report.skipped_unknown)):
        if counts:
            listed = ", ".join(f"{one_line(what, 60)} {n:,}" for what, n in sorted(
                counts.items(), key=lambda kv: (-kv[1], kv[0])))
            out.print(f"{label}: {listed}", markup=False)
    for note in report.notes:
        out.print(f"note: {note}", markup=False)
    if report.errors:
        t = table("file", "line", "reason", title=f"{len(report.errors)} problems")
        for e in report.errors:
            t.add_row(e.path, "" if e.line is None else str(e.line), e.reason)
        out.print(t)
    return 0
