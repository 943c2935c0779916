"""Recall's own cost on a kept bench store (docs/performance.md, issue 28).

    lca-tui bench --keep DIR --hook-runs 0          # builds DIR/bench.db (50,000 chunks)
    OMP_NUM_THREADS=1 python -m store.bench_recall DIR/bench.db [--keep N] [--profile]

Opens the store with the real model (``--keep N``: connections kept between transactions,
4 as ``lca-tui serve`` keeps; default 0, as a one-shot command), times the first recall
(it loads the vectors) and 60 recalls of the bench's synthetic queries (query embedding and
the trace write included), wall and CPU; ``--profile`` prints the functions that took the
most time of their own (cProfile) over the 60.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time

from store import Settings, open_store, percentiles, synthetic_query
from store.recall.run import recall


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("store")
    p.add_argument("--keep", type=int, default=0)
    p.add_argument("--profile", action="store_true")
    a = p.parse_args()
    s = open_store(a.store, Settings.load({"embed.backend": "model",
                                           "store.keep_connections": a.keep}))
    try:
        s.data_version()  # one connection held, as the app and `serve` hold it
        s.embedder.embed(["warm up"])
        t, c = time.perf_counter(), time.process_time()
        recall(s, "warm up the recall path", probe=True)
        print(f"first recall: {(time.perf_counter() - t) * 1000:.1f} ms, CPU "
              f"{(time.process_time() - c) * 1000:.1f} ms")
        rng = random.Random(3)
        queries = [synthetic_query(rng) for _ in range(60)]
        wall, cpu = [], []
        prof = cProfile.Profile()
        for q in queries:
            t, c = time.perf_counter(), time.process_time()
            if a.profile:
                prof.enable()
            recall(s, q)
            if a.profile:
                prof.disable()
            wall.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        print(f"60 recalls (keep {a.keep}): wall {percentiles(wall)}, CPU {percentiles(cpu)}")
        if a.profile:
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    finally:
        s.close()


if __name__ == "__main__":
    main()
