"""``lca-tui eval locomo FILE``: evidence recall on LoCoMo, through the real recall."""

from __future__ import annotations

import argparse
from pathlib import Path

from lca_tui.output import (Listing, add_json_flag, col, console, fail, print_json,
                            progress_on_stderr, settings_from)


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("eval", parents=parents,
                       help="measure recall on a public benchmark (scratch stores only)")
    which = p.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    loc = which.add_parser(
        "locomo", parents=parents,
        help="evidence Recall@1/5/10/20 on LoCoMo's labelled questions",
        description="Import each LoCoMo conversation into a scratch store (never yours), ask "
                    "every labelled question of categories 1-4 through the real recall, and "
                    "print R@1/5/10/20 (a question is found at k when one of its evidence "
                    "turns is among the first k candidates) and the recall latencies. The "
                    "data is not shipped: get data/locomo10.json from the snap-research/LoCoMo "
                    "repository on GitHub (CC BY-NC 4.0).")
    loc.add_argument("file", type=Path, help="LoCoMo's locomo10.json")
    loc.add_argument("--conversations", metavar="IDS",
                     help="comma-separated sample ids (default: every conversation in FILE)")
    loc.add_argument("--per-conversation", type=int, metavar="N",
                     help="ask at most N questions of each conversation")
    add_json_flag(loc)
    loc.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from store import LOCOMO_CATEGORIES, LOCOMO_KS, run_locomo

    if args.per_conversation is not None and args.per_conversation < 1:
        return fail("--per-conversation must be at least 1")
    ids = [c.strip() for c in (args.conversations or "").split(",") if c.strip()] or None
    with progress_on_stderr("eval") as progress:
        report = run_locomo(args.file, ids, args.per_conversation,
                            settings=settings_from(args),
                            progress=lambda conv, i, n: progress(f"{conv} questions", i, n))
    if args.json:
        print_json(report.to_json())
        return 0
    out = console()
    out.print(f"LoCoMo evidence recall, {len(report.asked):,} questions "
              f"(model {report.model}, {report.started})", markup=False, style="bold")
    t = Listing(col("conversation", whole=True), col("questions", whole=True, right=True),
                *(col(f"R@{k}", whole=True, right=True) for k in LOCOMO_KS))
    for c in report.conversations:
        t.add_row(c.id, f"{len(c.asked):,}", *(f"{c.recall_at(k):.3f}" for k in LOCOMO_KS))
    t.add_row("all", f"{len(report.asked):,}", *(f"{report.recall_at(k):.3f}"
                                                 for k in LOCOMO_KS))
    t.print(out)
    cats = Listing(col("category", whole=True), col("questions", whole=True, right=True),
                   *(col(f"R@{k}", whole=True, right=True) for k in LOCOMO_KS))
    for cat, row in report.by_category().items():
        cats.add_row(LOCOMO_CATEGORIES[cat], f"{int(row['questions']):,}",
                     *(f"{row[f'R@{k}']:.3f}" for k in LOCOMO_KS))
    cats.print(out)
    lat = report.latency()
    out.print(f"recall latency (trace): p50 {lat['p50']:.1f} ms · p95 {lat['p95']:.1f} ms · "
              f"max {lat['max']:.1f} ms", markup=False)
    return 0
