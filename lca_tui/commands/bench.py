"""``lca-tui bench`` (a synthetic store's latency, throughput and storage figures) and
``lca-tui calibrate`` (the distribution of S on this store, for the similarity floor)."""

from __future__ import annotations

import argparse
from pathlib import Path

from lca_tui.output import add_json_flag, console, err_console, print_json, store_from


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bench", parents=parents,
                       help="build a synthetic store and print latency and storage figures "
                       "(it always builds its own store: --store is refused, --keep DIR "
                       "keeps it)")
    p.add_argument("--chunks", type=int, default=50_000, help="store size (default 50,000)")
    p.add_argument("--queries", type=int, default=60, help="recalls to time (at least 50)")
    p.add_argument("--sample", type=int, default=2000,
                   help="entries written through the normal write path with the embedder "
                   "(the throughput figure); the rest are bulk-written")
    p.add_argument("--embedder", choices=("auto", "model", "fallback"), default="model",
                   help="model (default): the real all-MiniLM-L6-v2; fallback: quick, "
                   "degraded")
    p.add_argument("--keep", metavar="DIR", help="build the store in DIR and keep it")
    add_json_flag(p)
    p.set_defaults(func=run_bench_cmd)

    p = sub.add_parser("calibrate", parents=parents,
                       help="distribution of S on this store, to choose the similarity floor")
    p.add_argument("--limit", type=int, default=200, help="user turns used as cues")
    add_json_flag(p)
    p.set_defaults(func=run_calibrate)


def run_bench_cmd(args: argparse.Namespace) -> int:
    from store.bench import run_bench

    if getattr(args, "store", None):
        raise ValueError("bench always builds its own synthetic store and never touches "
                         "another: --store is not accepted (use --keep DIR to build it in DIR "
                         "and keep it)")
    if args.queries < 50:
        raise ValueError("--queries must be at least 50 for meaningful percentiles")
    if args.chunks < 1:
        raise ValueError("--chunks must be positive")

    def progress(stage: str, done: int, total: int) -> None:
        if args.json:
            return
        if done == total or done % max(1, total // 10) == 0:
            err_console.print(f"{stage}: {done:,}/{total:,}", markup=False)

    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    result = run_bench(args.chunks, args.queries, args.sample, args.embedder,
                       progress=progress, keep=keep)
    if args.json:
        print_json(result.to_json())
        return 0
    out = console()
    r = result
    out.print(f"store: {r.chunks:,} chunks ({r.method})", markup=False)
    out.print(f"embedder: {r.model}{' DEGRADED' if r.degraded else ''}", markup=False)
    out.print(f"recall latency over {r.queries} queries (query embedding and trace write "
              f"included): p50 {r.recall_ms['p50']} ms, p95 {r.recall_ms['p95']} ms, max "
              f"{r.recall_ms['max']} ms  (target p95 ≤ 50 ms)", markup=False)
    out.print(f"  measured warm (store open, model loaded, vectors in memory); the first recall "
              f"after opening the store took {r.first_recall_ms} ms (it loads the vectors)",
              markup=False)
    out.print(f"  of which query embedding: p50 {r.embed_query_ms['p50']} ms, p95 "
              f"{r.embed_query_ms['p95']} ms; items injected per recall: {r.injected_mean}",
              markup=False)
    out.print(f"ingest + embed (normal write path, {r.sample_chunks:,} chunks): "
              f"{r.ingest_per_s:,} chunks/s ({r.ingest_entries_per_s:,} entries/s); whole "
              f"build {r.build_s} s", markup=False)
    out.print(f"storage (main file after a WAL checkpoint, measured before the recalls): "
              f"{r.bytes_total:,} bytes, {r.bytes_per_1k_chunks:,.0f} bytes per "
              f"1,000 chunks; index {r.index_bytes:,} bytes / raw transcript "
              f"{r.raw_transcript_bytes:,} bytes = {r.index_to_raw}", markup=False)
    out.print(f"  the bench's {r.queries} recall traces, apart: {r.trace_bytes:,} bytes",
              markup=False)
    if r.health_scan_ms:
        h = r.health_scan_ms
        out.print(f"health scan (every signal, nothing stored): first {h['first']} ms, then "
                  f"p50 {h['p50']} ms (CPU {h['cpu_p50']} ms), max {h['max']} ms  (target ≤ 1 s "
                  "at 50,000 chunks); "
                  f"status {r.health_status}", markup=False)
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    from store.recall.calibrate import calibrate

    with store_from(args) as store:
        result = calibrate(store, args.limit)
    if args.json:
        print_json(result)
        return 0
    out = console()
    out.print(f"model {result['model']}{' (DEGRADED)' if result['degraded'] else ''}; "
              f"{result['cues']} user turns with an answer used as cues; answer in the pool "
              f"for {result['answers_in_pool']}", markup=False)
    for name in ("answer_S", "answer_cos", "other_S"):
        p = result[name]
        out.print(f"{name:>10}: " + ", ".join(f"{k} {v}" for k, v in p.items()), markup=False)
    out.print(f"suggested floor {result['suggested_floor']} (p25 of answers' S, rounded down); "
              f"{result['others_above_floor']} of other candidates clear it; current floor "
              f"{result['current_floor']}", markup=False)
    return 0
