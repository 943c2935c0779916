"""What HNSW costs against exact search on a PostgreSQL store (docs/postgres.md).

    python -m store.evals.hnsw postgresql://user@host/scratch_db 20000

Inserts N synthetic unit vectors (384 dimensions, in N/100 clusters) into an EMPTY scratch
store's ``chunk_vec``, then for 100 queries near stored points compares the HNSW top 10
(``store.core.pg.knn``) with the exact top 10 (``pg.exact_knn``, index scans off) at
hnsw.ef_search 40, 100 and 200: the mean and worst overlap, and both latencies.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from store.core.settings import Settings
from store.core.vocab import percentiles
from store.facade import open_store
from store.core import pg


def main(url: str, n: int) -> None:
    s = open_store(url, Settings.load({"embed.backend": "fallback"}))
    if s.stats(with_embedder=False).vectors:
        raise SystemExit("the store holds vectors already: name an empty scratch database")
    rng = np.random.default_rng(25)
    centers = rng.standard_normal((max(50, n // 100), 384)).astype(np.float32)
    points = centers[rng.integers(0, len(centers), n)] + 0.6 * rng.standard_normal(
        (n, 384)).astype(np.float32)
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    started = time.perf_counter()
    with s.write() as conn:
        pg.insert_vectors(conn, [(i + 1, points[i]) for i in range(n)])
    print(f"{n} vectors inserted (HNSW built as they go) in "
          f"{time.perf_counter() - started:.1f} s")
    queries = points[rng.integers(0, n, 100)] + 0.3 * rng.standard_normal(
        (100, 384)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    for ef in (40, 100, 200):
        overlap, approx_ms, exact_ms = [], [], []
        with s.read() as conn:
            pg.set_ef_search(conn, ef)
            for q in queries:
                t = time.perf_counter()
                approx = [c for c, _ in pg.knn(conn, q, 10)]
                approx_ms.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                exact = [c for c, _ in pg.exact_knn(conn, q, 10)]
                exact_ms.append((time.perf_counter() - t) * 1000)
                overlap.append(len(set(approx) & set(exact)))
        approx_p, exact_p = percentiles(approx_ms), percentiles(exact_ms)
        print(f"ef_search={ef}: top-10 overlap mean {np.mean(overlap):.2f}/10 (worst "
              f"{min(overlap)}), hnsw p50 {approx_p['p50']:.1f} ms p95 "
              f"{approx_p['p95']:.1f} ms, exact p50 {exact_p['p50']:.1f} ms")
    s.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
