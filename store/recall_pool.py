"""The candidate pool of a recall: exact vector KNN ∪ FTS5 BM25 hits, with S's two parts.

Vector KNN here is exact (brute-force cosine, as sqlite-vec's ``vec0`` does) but runs on an
in-memory copy of the vectors, loaded from ``vec0`` once per open store and kept in step with
it: at 50,000 chunks a ``vec0`` scan costs ~40 ms on 2 cores and a matrix product ~5–10 ms,
which is what lets a recall meet its 50 ms budget in a warm process (the app, ``serve``). The
copy is checked on every recall — new chunks are added, and it is reloaded after a reindex,
an erasure or any deletion — and a candidate the copy names that no longer exists is dropped
when its row is read, so the copy can make a recall miss nothing and can never resurrect a
deleted chunk.

The lexical query drops common English stop words: an OR over "the", "we", "and" matches
nearly every chunk, costs tens of milliseconds and adds no signal to BM25.
"""

from __future__ import annotations

import re
import threading
import weakref
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import Connection, text

from store import vec

if TYPE_CHECKING:
    from store.facade import Store

STOP_WORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "so", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "us", "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would", "you", "your"])
_WORD = re.compile(r"\w+", re.UNICODE)


def lexical_query(query: str) -> str:
    """The query's words without stop words (all of them if nothing else is left)."""
    words = _WORD.findall(query)
    kept = [w for w in words if w.lower() not in STOP_WORDS]
    return " ".join(kept or words)


class VectorCache:
    """An in-memory copy of ``chunk_vec`` for exact KNN by matrix product."""

    def __init__(self) -> None:
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, 384), dtype=np.float32)
        self.stamp: tuple[int, int, int] | None = None
        self.lock = threading.Lock()
        self.reloads = 0

    @staticmethod
    def _stamp(conn: Connection) -> tuple[int, int, int]:
        """(chunks, highest chunk id, latest audit event id): a reindex, an erasure or a
        redaction leaves an audit event, so any of them forces a reload."""
        row = conn.exec_driver_sql(
            "SELECT (SELECT COUNT(*) FROM chunk), (SELECT COALESCE(MAX(id), 0) FROM chunk), "
            "(SELECT COALESCE(MAX(id), 0) FROM audit_event WHERE action NOT LIKE "
            "'recall_feedback%')").one()
        return int(row[0]), int(row[1]), int(row[2])

    def sync(self, conn: Connection) -> None:
        """Bring the copy up to date with the store (cheap when nothing changed)."""
        stamp = self._stamp(conn)
        old = self.stamp
        if stamp == old:
            return
        if old is not None and stamp[2] == old[2] and stamp[1] > old[1] and stamp[0] > old[0]:
            rows = conn.execute(text("SELECT id, status FROM chunk WHERE id > :m ORDER BY id"),
                                {"m": old[1]}).all()
            if len(rows) == stamp[0] - old[0]:  # only additions since the last sync
                new: list[tuple[int, np.ndarray]] = []
                for r in rows:
                    v = vec.vector_of(conn, int(r[0])) if r[1] == "ok" else None
                    if v is not None:
                        new.append((int(r[0]), v))
                if new:
                    self.ids = np.concatenate([self.ids, np.array([i for i, _ in new],
                                                                  dtype=np.int64)])
                    self.matrix = np.vstack([self.matrix, np.stack([v for _, v in new])])
                self.stamp = stamp
                return
        ids, matrix = vec.all_vectors(conn)
        order = np.argsort(ids, kind="stable")
        self.ids = ids[order]
        self.matrix = np.ascontiguousarray(matrix[order], dtype=np.float32)
        self.stamp = stamp
        self.reloads += 1

    def knn(self, qvec: np.ndarray, k: int) -> list[tuple[int, float]]:
        if not len(self.ids):
            return []
        # einsum runs one SIMD loop: steadier than a multi-threaded BLAS gemv on 2 busy cores
        sims = np.einsum("ij,j->i", self.matrix, qvec.astype(np.float32))
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.lexsort((self.ids[top], -sims[top]))]
        return [(int(self.ids[j]), float(sims[j])) for j in top]

    def vector(self, chunk_id: int) -> np.ndarray | None:
        j = np.searchsorted(self.ids, chunk_id)
        if j < len(self.ids) and self.ids[j] == chunk_id:
            return self.matrix[j]
        return None


_CACHES: weakref.WeakKeyDictionary[Store, VectorCache] = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def cache_for(store: Store) -> VectorCache:
    with _GUARD:
        cache = _CACHES.get(store)
        if cache is None:
            cache = _CACHES[store] = VectorCache()
        return cache


def pool(store: Store, conn: Connection, query: str, qvec: np.ndarray, size: int
         ) -> tuple[dict[int, tuple[float | None, float]], VectorCache]:
    """chunk id → (cos, lex) for the union of KNN and FTS hits, as ``search.candidates``
    computes it (``lex`` = BM25 / best BM25 in the pool), with the cache's vectors."""
    cache = cache_for(store)
    with cache.lock:
        cache.sync(conn)
        cos = dict(cache.knn(qvec, size))
        fts = vec.fts_search(conn, lexical_query(query), size)
        best = max((s for _, s in fts), default=0.0)
        lex = {cid: (s / best if best > 0 else 0.0) for cid, s in fts}
        for cid in lex:
            if cid not in cos:
                v = cache.vector(cid)
                if v is None:
                    v = vec.vector_of(conn, cid)
                if v is not None:
                    cos[cid] = float(v @ qvec)
    return {cid: (cos.get(cid), lex.get(cid, 0.0)) for cid in set(cos) | set(lex)}, cache
