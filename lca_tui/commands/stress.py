"""``lca-tui stress``: the concurrency scenario (a harness writing through the API, an ingest
writer, CLI recalls and searches, a reindex, and the app open) on a scratch store, with its
figures: writes per second, errors surfaced, entries lost, app input latency p50 / p95."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lca_tui.output import add_json_flag, console, err_console, print_json
from store import visible

if TYPE_CHECKING:
    from lca_tui.stress import StressResult


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("stress", parents=parents,
                       help="run the store under concurrent load and print its figures "
                       "(it builds its own scratch store: --store is refused)")
    p.add_argument("--seconds", type=float, default=20.0,
                   help="how long the load runs (default 20; setup and checks come on top)")
    p.add_argument("--embedder", choices=("auto", "model", "fallback"), default="fallback",
                   help="fallback (default): the quick hashing embedder, so the figures are "
                   "the store's own; model: the real all-MiniLM-L6-v2 in every process")
    p.add_argument("--keep", metavar="DIR", help="build the scratch store in DIR and keep it")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lca_tui.stress import run_stress, scratch_folder

    if getattr(args, "store", None):
        raise ValueError("stress always builds its own scratch store and never loads "
                         "another: --store is not accepted (use --keep DIR to keep it)")
    if not 1 <= args.seconds <= 3600:
        raise ValueError("--seconds must be from 1 to 3600")
    overrides = {"embed.backend": args.embedder}
    folder, holder = scratch_folder(args.keep)

    def progress(message: str) -> None:
        if not args.json:
            err_console.print(message)

    try:
        result = run_stress(folder, args.seconds, overrides, progress)
    finally:
        if holder is not None:
            holder.cleanup()
    if args.json:
        print_json(result.to_json())
        return exit_code(result)
    out = console()
    r = result
    out.print(f"{r.seconds:g} s of load on a demo store ({args.embedder} embedder):")
    out.print(f"  harness writes through the API: {r.harness_writes:,} "
              f"({r.harness_writes_per_s:,} writes/s sustained; each p50 "
              f"{r.harness_write_ms_p50} ms, p95 {r.harness_write_ms_p95} ms)")
    out.print(f"  ingest writer: {r.ingest_lines:,} transcript lines in {r.ingest_runs} "
              f"imports; CLI: {r.cli_runs} recall/search runs; reindex: "
              f"{'-' if r.reindex_s is None else f'{r.reindex_s} s'}")
    out.print(f"  app input latency over {r.app_keys} keys: p50 {r.app_latency_ms_p50} ms, "
              f"p95 {r.app_latency_ms_p95} ms")
    out.print(f"  errors surfaced: {len(r.errors)}; entries lost: {r.entries_lost}")
    for e in r.errors[:20]:
        out.print(f"    {visible(e)}", markup=False)
    return exit_code(r)


def exit_code(result: StressResult) -> int:
    """Non-zero when the scenario surfaced an error or lost an entry: a run with errors is a
    failed run, whatever its figures."""
    return 1 if result.errors or result.entries_lost else 0
