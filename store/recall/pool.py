"""The candidate pool of a recall: vector KNN and FTS5 BM25 hits, with S's two parts.

The pool is at most ``recall.pool`` sources (50 by default), taken from the two rankings in
turn — best cosine, best BM25, next cosine, next BM25, ... — skipping a chunk already taken,
until ``pool`` distinct sources (an entry or a memory) are in it. A further chunk of a source
already in the pool is kept (recall keeps a source's best chunk by S) but does not count. A
chunk's ``lex`` is its BM25 / the best BM25 of the query; ``cos`` is its cosine to the query.

Only vectors the current embedder made are compared: the in-memory copy holds the vectors of
chunks whose ``chunk.model`` is the embedder's name, so KNN never returns another embedder's
vector, and a BM25 hit from another embedder keeps ``cos`` None (S from ``lex`` alone) and is
named in ``Pool.foreign`` so recall can say why.

Vector KNN here is exact (brute-force cosine, as sqlite-vec's ``vec0`` does) but runs on an
in-memory copy of the vectors, loaded from ``vec0`` once per open store and kept in step with
it: at 50,000 chunks a ``vec0`` scan costs ~40 ms on 2 cores and a matrix product ~5–10 ms,
which is what lets a recall meet its 50 ms budget in a warm process (the app, ``serve``). The
copy is checked on every recall — new chunks are added, and it is reloaded after a reindex,
an erasure or any deletion — and a candidate the copy names that no longer exists is dropped
when its row is read, so the copy can make a recall miss nothing and can never resurrect a
deleted chunk.

The pool is filled after the channel rule (``terms.channel_denies``, given the recall's
channel): a source the channel holds back — secret, or private in a public channel — never takes
one of the ``pool`` slots, so it cannot crowd out what the channel may see (Anamnesis §6.6,
scope closure). Up to ``pool`` such sources are kept beside the others, so the operator's trace
shows them (masked); further ones are skipped.

The lexical query drops common English stop words (``vec.fts_query``), as every search does.

Entries stored but not embedded yet (waiting in ``embed_queue``: a hook stores a live session's
new lines at once and leaves the embedding for later) are a third ranking, their own FTS5
index (``vec.waiting_search``), taken in turn with the other two. They have no vector: their
``cos`` is None and S comes from ``lex`` alone, as for any chunk without a vector; their
``lex`` is their BM25 over the best BM25 of the query in either index. They are named in
``Pool.waiting`` by entry id.

A one-shot process (a hook run without the daemon) sets ``recall.vector_cache`` off: loading
every vector to answer one query costs more than one ``vec0`` KNN scan, so KNN then runs in
``vec0`` (filtered to the current embedder's chunks).

``live`` excludes the live window of the session asking — the main agent's entries after its
last compaction — because they are already in the model's context: injecting them back would
spend recall's few slots on what the agent is reading anyway.

Hand-written SQL, on purpose: this module runs on every recall, inside its latency budget.
Measured on a 20,000-chunk bench store (median of 200 calls, 2 busy cores): the pool's chunk
lookup for 100 ids takes 0.10 ms written by hand vs 0.37 ms as a Core ``select`` over the
``Chunk`` model, and the cache stamp 0.02 ms vs 0.24 ms. The statements read only ``chunk``
and ``audit_event`` columns the models declare (``tests/store/test_schema.py`` checks them).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import Connection, Engine, func
from sqlalchemy import select as sa_select
from sqlmodel import col, select

from store.core import vec
from store.core.models import AuditEvent, Chunk, Entry
from store.recall import vecfile
from store.recall.terms import channel_denies

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store


# Audit actions that change no vector in place and no chunk's sensitivity: what they add
# (an ingest's or an approval's new chunks) shows in the count and the highest id, what they
# remove in the count. Every other action (reindex, erase, redact, a mark, a fix, an approval,
# one added later) reloads the copy.
UNTOUCHING_ACTIONS = ("proposal_submitted", "proposal_rechecked", "proposal_edited",
                      "proposal_rejected", "proposal_failed", "export", "export-failed",
                      "delete-exports", "ingest", "reveal-secret", "memory_file_conflict")
UNTOUCHING_PREFIXES = ("recall_feedback", "import-")

# (chunks, highest chunk id, latest audit event id that may touch vectors), in one statement
_STAMP = sa_select(
    sa_select(func.count()).select_from(Chunk).scalar_subquery(),
    sa_select(func.coalesce(func.max(Chunk.id), 0)).scalar_subquery(),
    sa_select(func.coalesce(func.max(AuditEvent.id), 0))
    .where(col(AuditEvent.action).not_in(UNTOUCHING_ACTIONS),
           *(col(AuditEvent.action).not_like(f"{p}%") for p in UNTOUCHING_PREFIXES))
    .scalar_subquery())


class VectorCache:
    """An in-memory copy of ``chunk_vec`` for exact KNN by matrix product."""

    def __init__(self, file: Path | None = None, engine: Engine | None = None,
                 writable: bool = False) -> None:
        # the copy's file beside the store (``vecfile``): mapped by the first sync instead of
        # reading every vector when it is still the store's; written after a full load
        # (``writable``: not for a read-only store); ``engine`` reads the stamp afresh
        # before the file replaces the old one
        self.file, self.engine, self.writable = file, engine, writable
        self.maps = 0
        # (stamp, denied levels) → the chunks of those levels: the FTS search ranks its
        # held-back rows among them only (``vec.fts_search``'s ``denied_ids``)
        self._denied: tuple[tuple[tuple[int, int, int], tuple[str, ...]], list[int]] | None = \
            None
        self._unwritten = 0  # vectors added since the file was written (rewritten past a few)
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, 384), dtype=np.float32)
        # each chunk's source sensitivity (index into vec.SENSITIVITIES), so a KNN with the
        # channel rule skips the chunks it denies. A change of sensitivity (mark, an applied
        # proposal) leaves an audit event, which reloads the copy; the rule itself is still
        # applied to every candidate from the store (``_sources``): a stale mask could only
        # leave an allowed chunk to the FTS search, never serve a denied one.
        self.sens = np.zeros(0, dtype=np.int8)
        self.stamp: tuple[int, int, int] | None = None
        self.model: str | None = None
        self.lock = threading.Lock()
        self.reloads = 0
        # the last query's similarities (its vector's bytes, sims, sims rounded): a recall asks
        # the same vector two to four times (the allowed and held-back searches, a deeper
        # read), one matrix product at 50,000 chunks is ≈ 8 ms of CPU; any change of the
        # matrix forgets it (``_forget``)
        self._last: tuple[bytes, np.ndarray, np.ndarray] | None = None

    @staticmethod
    def _stamp(conn: Connection) -> tuple[int, int, int]:
        """(chunks, highest chunk id, latest audit event id that may touch vectors): a
        reindex, an erasure, a redaction or a mark leaves such an event, so any of them forces
        a reload; an ingest, a proposal or an export does not (``UNTOUCHING_ACTIONS``)."""
        # Core: 0.021 ms against 0.017 ms raw (median of 300, cc store, 1,298 chunks)
        row = conn.execute(_STAMP).one()
        return int(row[0]), int(row[1]), int(row[2])

    def sync(self, conn: Connection, model: str) -> None:
        """Bring the copy up to date with the store (cheap when nothing changed); it holds
        only the vectors of chunks ``model`` embedded."""
        stamp = self._stamp(conn)
        old = self.stamp if self.model == model else None
        if stamp == old:
            return
        if old is None and self.file is not None and self._map(conn, model, stamp):
            old = self.stamp
            if stamp == old:
                return
        if old is not None and stamp[2] == old[2] and stamp[1] > old[1] and stamp[0] > old[0]:
            rows = conn.execute(select(Chunk.id, Chunk.status, Chunk.model)
                                .where(col(Chunk.id) > old[1]).order_by(col(Chunk.id))).all()
            if len(rows) == stamp[0] - old[0]:  # only additions since the last sync
                new: list[tuple[int, np.ndarray]] = []
                for r in rows:
                    v = vec.vector_of(conn, int(r[0])) \
                        if r[1] == "ok" and r[2] == model else None
                    if v is not None:
                        new.append((int(r[0]), v))
                if new:
                    self._last = None
                    added = [i for i, _ in new]
                    self.ids = np.concatenate([self.ids, np.array(added, dtype=np.int64)])
                    self.matrix = np.vstack([self.matrix, np.stack([v for _, v in new])])
                    self.sens = np.concatenate([self.sens, _codes(
                        vec.chunk_sensitivities(conn, added), added)])
                    self._unwritten += len(new)
                self.stamp = stamp
                if self._unwritten > max(256, len(self.ids) // 20):
                    self._save(stamp, model)
                return
        ids, matrix = vec.all_vectors(conn)
        same = np.fromiter((int(r[0]) for r in conn.execute(
            select(Chunk.id).where(col(Chunk.model) == model)).all()), dtype=np.int64)
        keep = np.isin(ids, same)
        ids, matrix = ids[keep], matrix[keep]
        order = np.argsort(ids, kind="stable")
        self._last = None
        self.ids = ids[order]
        self.matrix = np.ascontiguousarray(matrix[order], dtype=np.float32)
        self.sens = _codes(vec.chunk_sensitivities(conn), [int(i) for i in self.ids])
        self.stamp, self.model = stamp, model
        self.reloads += 1
        self._save(stamp, model)

    def _map(self, conn: Connection, model: str, stamp: tuple[int, int, int]) -> bool:
        """Take the vectors from the file beside the store when it is still the store's (its
        stamp is now's, or only chunks were added since) and its sampled vectors are the
        ones ``chunk_vec`` holds; the additions are then read by the caller."""
        assert self.file is not None
        m = vecfile.read(self.file)
        if m is None or m.model != model or m.matrix.shape[1] != self.matrix.shape[1]:
            return False
        same = m.stamp == stamp
        grown = m.stamp[2] == stamp[2] and stamp[1] > m.stamp[1] and stamp[0] > m.stamp[0]
        if not (same or grown) or not vecfile.agrees(
                _content_hashes(conn, vecfile.sampled_ids(m.ids)), m):
            return False
        self._last = None
        self.ids, self.sens, self.matrix = m.ids, m.sens, m.matrix
        self.stamp, self.model = m.stamp, model
        self._unwritten = 0
        self.maps += 1
        return True

    def _save(self, stamp: tuple[int, int, int], model: str) -> None:
        """Write the copy to the file beside the store, unless the store changed meanwhile."""
        if self.file is None or not self.writable or not len(self.ids):
            return

        hashes: dict[int, str] = {}

        def still() -> bool:  # read afresh: the store as it is now, not this snapshot
            if self.engine is None:
                return True
            with self.engine.connect() as fresh:
                hashes.update(_content_hashes(fresh, vecfile.sampled_ids(self.ids)))
                return self._stamp(fresh) == stamp

        if not still():
            return
        if vecfile.write(self.file, stamp, model, self.ids, self.sens, self.matrix, hashes,
                         still):
            self._unwritten = 0

    def denied_chunks(self, conn: Connection, deny: tuple[str, ...],
                      stamp: tuple[int, int, int]) -> list[int]:
        """The chunks whose source has one of the ``deny`` levels, read once per stamp (a new
        chunk moves it, and so does a change of sensitivity: it leaves an audit event)."""
        key = (stamp, deny)
        if self._denied is None or self._denied[0] != key:
            self._denied = (key, vec.chunks_of_levels(conn, deny))
        return self._denied[1]

    def knn(self, qvec: np.ndarray, k: int, deny: tuple[str, ...] = (),
            denied: bool = False) -> list[tuple[int, float]]:
        """The ``k`` nearest chunks; ``deny``: chunks of those sensitivities are skipped (the
        channel rule inside the search), ``denied=True``: only they are searched."""
        if not len(self.ids):
            return []
        q = np.ascontiguousarray(qvec, dtype=np.float32)
        key = q.tobytes()
        if self._last is not None and self._last[0] == key \
                and len(self._last[1]) == len(self.ids):
            sims, keyed = self._last[1], self._last[2].copy()
        else:
            # einsum runs one SIMD loop: steadier than a multi-threaded BLAS gemv on 2 busy
            # cores
            sims = np.einsum("ij,j->i", self.matrix, q)
            # near-ties (identical texts; last-bit noise from the SIMD path) rank by chunk id
            keyed = np.round(sims.astype(np.float64), 6)
            self._last = (key, sims, keyed.copy())
        if deny:
            out = np.isin(self.sens, [vec.SENSITIVITIES.index(lv) for lv in deny])
            if not denied:
                out = ~out
            keep = int(out.sum())
            if not keep:
                return []
            keyed[~out] = -np.inf
            k = min(k, keep)
        k = min(k, len(sims))
        kth = -np.partition(-keyed, k - 1)[k - 1]
        top = np.flatnonzero(keyed >= kth)  # the k best and everything tied with the k-th
        top = top[np.lexsort((self.ids[top], -keyed[top]))][:k]
        return [(int(self.ids[j]), float(sims[j])) for j in top]

    def vector(self, chunk_id: int) -> np.ndarray | None:
        j = np.searchsorted(self.ids, chunk_id)
        if j < len(self.ids) and self.ids[j] == chunk_id:
            return self.matrix[j]
        return None


def _content_hashes(conn: Connection, ids: list[int]) -> dict[int, str]:
    """chunk id → its content hash, for the sampled chunks a vector file is checked by."""
    if not ids:
        return {}
    # Core: one lookup of 16 ids by primary key
    return {int(r[0]): str(r[1]) for r in conn.execute(
        select(Chunk.id, Chunk.content_hash).where(col(Chunk.id).in_(ids))).all()}


def _codes(levels: dict[int, str], ids: list[int]) -> np.ndarray:
    return np.array([vec.SENSITIVITIES.index(levels.get(i, "public")) for i in ids],
                    dtype=np.int8)


_CACHES: weakref.WeakKeyDictionary[Store, VectorCache] = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def cache_for(store: Store) -> VectorCache:
    with _GUARD:
        cache = _CACHES.get(store)
        if cache is None:
            # a SQLite file's copy is kept in a file beside it too (``vecfile``); a server's
            # HNSW index answers its KNN, no file is kept for it
            file = None if store.on_server or not store.settings.get("recall.vector_file", True) \
                else vecfile.path_for(store.path)
            cache = _CACHES[store] = VectorCache(file, store.engine, not store.read_only)
        return cache


def drop_cache(store: Store) -> bool:
    """Forget this process's in-memory vector copy of ``store`` and delete its file beside a
    SQLite store (an erasure asks it: both may hold vectors of erased chunks); the next
    recall loads it again. True if a copy or a file existed."""
    with _GUARD:
        had = _CACHES.pop(store, None) is not None
    if not store.on_server:
        had = bool(vecfile.remove(store.path)) or had
    return had


@dataclass(frozen=True)
class LiveWindow:
    """The entries a session's model has in context: ``session_id``'s main-agent entries
    with ``seq`` above ``after_seq`` (its last compaction; -1 when it never compacted)."""

    session_id: str
    after_seq: int = -1

    def holds(self, session_id: str | None, agent: str | None, seq: int | None) -> bool:
        return (session_id == self.session_id and agent == "main" and seq is not None
                and seq > self.after_seq)


def live_window(conn: Connection, session_id: str) -> LiveWindow:
    """The live window of ``session_id``: after its main agent's last compaction entry."""
    seq = conn.execute(select(func.max(col(Entry.seq))).where(
        col(Entry.session_id) == session_id, col(Entry.agent) == "main",
        col(Entry.kind) == "compaction")).scalar()
    return LiveWindow(session_id, -1 if seq is None else int(seq))


Source = tuple[tuple[str, int], str]

# The rankings are read deeper (twice as deep each time) until the pool is full, down to at
# most this many hits per source of the pool: held-back sources do not fill the pool, and a
# store whose best hits are nearly all held back must not make a recall read its whole index.
FETCH_CEILING = 64


def _sources(conn: Connection, ids: list[int], live: LiveWindow | None = None,
             channel: str | None = None, denied: set[int] | None = None
             ) -> dict[int, Source]:
    """chunk id → ((source type, source id), model) for ``ids``, leaving out chunks of
    entries in the ``live`` window. With ``channel``, the chunks whose source the channel
    rule holds back (``terms.channel_denies``) are added to ``denied``."""
    if not ids:
        return {}
    marks = ", ".join(str(int(i)) for i in ids)
    # raw SQL: recall hot path, every recall: 0.16 ms raw vs 0.55 ms as Core for 100 chunk ids
    # (median of 300, cc store; p95 3-8 ms vs 11-13 ms on the shared 2 cores)
    rows = conn.exec_driver_sql(
        "SELECT c.id, c.source_type, c.source_id, c.model, e.session_id, e.agent, e.seq, "
        "COALESCE(e.sensitivity, m.sensitivity) "
        "FROM chunk c LEFT JOIN entry e ON c.source_type = 'entry' AND e.id = c.source_id "
        "LEFT JOIN memory m ON c.source_type = 'memory' AND m.id = c.source_id "
        f"WHERE c.id IN ({marks})").all()
    out = {}
    for r in rows:
        if live is not None and live.holds(r[4], r[5], r[6]):
            continue
        out[int(r[0])] = ((str(r[1]), int(r[2])), str(r[3]))
        if channel is not None and denied is not None \
                and channel_denies(r[7] or "public", channel):
            denied.add(int(r[0]))
    return out


def _waiting_sources(conn: Connection, entry_ids: list[int], live: LiveWindow | None,
                     channel: str | None = None, denied: set[int] | None = None
                     ) -> dict[int, Source]:
    """For waiting entries: -entry id → (("entry", id), "") (negative keys keep them apart
    from chunk ids in one interleaving), leaving out the ``live`` window; held back by the
    channel rule: added to ``denied`` (by their negative key)."""
    if not entry_ids:
        return {}
    marks = ", ".join(str(int(i)) for i in entry_ids)
    # raw SQL: recall hot path (waiting entries found by FTS): 0.064 ms raw vs 0.24 ms as Core
    # for 50 ids (median of 300, cc store), as the chunk lookup above
    rows = conn.exec_driver_sql(
        f"SELECT id, session_id, agent, seq, sensitivity FROM entry WHERE id IN ({marks})"
    ).all()
    out = {}
    for r in rows:
        if live is not None and live.holds(r[1], r[2], r[3]):
            continue
        out[-int(r[0])] = (("entry", int(r[0])), "")
        if channel is not None and denied is not None \
                and channel_denies(r[4] or "public", channel):
            denied.add(-int(r[0]))
    return out


@dataclass
class Pool:
    """The candidate pool: chunk id → (cos, lex), the chunks whose vector another
    embedder made (chunk id → that embedder's name; their cos is None), and the entries
    waiting for embedding (entry id → lex)."""

    found: dict[int, tuple[float | None, float]] = field(default_factory=dict)
    foreign: dict[int, str] = field(default_factory=dict)
    waiting: dict[int, float] = field(default_factory=dict)
    sources: int = 0
    lex_of: dict[int, float] = field(default_factory=dict)  # every FTS hit fetched: its lex
    source: dict[int, tuple[str, int]] = field(default_factory=dict)  # found: its source


def _interleave(knn: list[tuple[int, float]], fts: list[tuple[int, float]],
                source_of: dict[int, Source], size: int,
                extra: tuple[list[tuple[int, float]], ...] = (),
                denied: set[int] | frozenset[int] = frozenset()
                ) -> tuple[list[int], int, bool]:
    """Chunk ids taken alternately from the KNN and FTS rankings (best cosine, best BM25,
    next cosine, ...; then any ``extra`` ranking in the same turn), skipping ones already
    taken, until ``size`` distinct sources; a further chunk of a source already in the pool
    is kept (it may be that source's best chunk by S) but does not count. A chunk the
    channel rule holds back (``denied``) never takes one of the ``size`` slots: up to
    ``size`` such sources are kept beside them (the operator's trace shows them masked),
    further ones are skipped. Returns (chunk ids, allowed sources, whether ``size`` was
    reached)."""
    rankings = (knn, fts, *extra)
    taken: list[int] = []
    seen_chunks: set[int] = set()
    seen_sources: set[tuple[str, int]] = set()
    held: set[tuple[str, int]] = set()
    for i in range(max(len(r) for r in rankings)):
        for ranking in rankings:
            if i >= len(ranking):
                continue
            cid = ranking[i][0]
            known = source_of.get(cid)
            if cid in seen_chunks or known is None:
                continue  # taken already, or gone since the index was read
            if cid in denied:
                if known[0] not in held:
                    if len(held) >= size:
                        continue
                    held.add(known[0])
            elif known[0] not in seen_sources:
                if len(seen_sources) >= size:
                    return taken, len(seen_sources), True
                seen_sources.add(known[0])
            seen_chunks.add(cid)
            taken.append(cid)
    return taken, len(seen_sources), len(seen_sources) >= size


def pool(store: Store, conn: Connection, query: str,
         qvec: np.ndarray | Callable[[], np.ndarray], size: int,
         live: LiveWindow | None = None, channel: str | None = None) -> Pool:
    """The candidate pool of at most ``size`` sources (see the module docstring), with S's
    two parts as ``search.candidates`` computes them (``lex`` = BM25 / best BM25).
    ``channel``: the pool is filled after the channel rule — a source it holds back never
    takes one of the ``size`` slots (Anamnesis §6.6 scope closure).
    ``qvec`` may be a function giving the query's vector: it is called only once the
    lexical searches are done (a hook embeds the query meanwhile, in another thread)."""
    vector_of_query = qvec if callable(qvec) else (lambda: qvec)
    cache = cache_for(store)
    model = store.embedder.name
    # on a server the HNSW index answers: no process copies every vector
    warm = bool(store.settings.get("recall.vector_cache", True)) and not store.on_server
    lexical = query
    fetch = max(1, size) * 2
    with cache.lock:
        if warm:
            cache.sync(conn, model)
        # the channel rule inside the searches: the sensitivities it denies are left out of
        # the FTS queries and the warm KNN, so held-back records are never fetched in place of
        # allowed ones; the best ``size`` of them are fetched apart, for the operator's trace
        # (masked). The cold KNN (vec0) cannot filter: there the rankings are read deeper.
        deny = tuple(lv for lv in vec.SENSITIVITIES if channel_denies(lv, channel)) \
            if channel is not None else ()
        held: tuple[list[tuple[int, float]], ...] | None = None
        # on a file, the chunks of the denied levels, known once per stamp: the FTS search
        # then reads the plain BM25 ranking instead of joining every match to its source
        denied_ids = None
        if deny and not store.on_server:
            stamp = cache.stamp if warm and cache.stamp is not None and cache.model == model \
                else VectorCache._stamp(conn)
            denied_ids = cache.denied_chunks(conn, deny, stamp)
        # what a deeper read (below) need not do again: a lexical ranking shorter than its
        # depth is all there is (read once), and a chunk or entry is looked up once (the
        # pool's rows: one read transaction on a file). On the demo store a pool is read 3-4
        # times deeper (most entries have several chunks): 4 ms of a 21 ms hook.
        fts_read: tuple[int, list[tuple[int, float]]] | None = None
        waiting_read: tuple[int, list[tuple[int, float]]] | None = None
        source_of: dict[int, Source] = {}  # every id of the rankings read so far
        looked: set[int] = set()  # looked up, kept or not (the live window is left out)
        denied: set[int] = set()
        while True:
            if fts_read is None or len(fts_read[1]) >= fts_read[0]:
                fts_read = (fetch, vec.fts_search(conn, lexical, fetch, deny,
                                                  denied_ids=denied_ids))
            if waiting_read is None or len(waiting_read[1]) >= waiting_read[0]:
                waiting_read = (fetch, vec.waiting_search(conn, lexical, fetch, deny))
            fts, waiting = fts_read[1], waiting_read[1]
            q = vector_of_query()
            knn = cache.knn(q, fetch, deny) if warm else vec.knn(conn, q, fetch)
            exhausted = len(knn) < fetch and len(fts) < fetch and len(waiting) < fetch
            if deny:
                if held is None:
                    n = max(1, size)
                    held = (vec.fts_search(conn, lexical, n, deny, denied=True,
                                           denied_ids=denied_ids),
                            vec.waiting_search(conn, lexical, n, deny, denied=True),
                            cache.knn(q, n, deny, denied=True) if warm else [])
                fts = sorted(fts + held[0], key=lambda h: -h[1])
                waiting = sorted(waiting + held[1], key=lambda h: -h[1])
                knn = sorted(knn + held[2], key=lambda h: (-round(h[1], 6), h[0]))
            new = sorted(({c for c, _ in knn} | {c for c, _ in fts}) - looked)
            looked.update(new)
            source_of.update(_sources(conn, new, live, channel, denied))
            new = sorted({-e for e, _ in waiting} - looked)
            looked.update(new)
            source_of.update(_waiting_sources(conn, [-e for e in new], live, channel,
                                              denied))
            if not warm:  # vec0 holds every embedder's vectors: compare ours only
                knn = [(c, s) for c, s in knn if c in source_of and source_of[c][1] == model]
            taken, sources, full = _interleave(knn, fts, source_of, size,
                                               ([(-e, s) for e, s in waiting],), denied)
            if full or exhausted or fetch >= FETCH_CEILING * max(1, size):
                break
            fetch *= 2
        best = max((s for _, s in fts + waiting), default=0.0)
        lex = {cid: (s / best if best > 0 else 0.0) for cid, s in fts}
        waiting_lex = {e: (s / best if best > 0 else 0.0) for e, s in waiting}
        cos = dict(knn)
        out = Pool(sources=sources, lex_of=lex)
        # the vectors of lexical-only finds, read at once (one round trip on a server)
        fetched = {} if warm else vec.vectors_of(conn, [
            cid for cid in taken if cid > 0 and cid not in cos and source_of[cid][1] == model])
        for cid in taken:
            if cid < 0:
                out.waiting[-cid] = waiting_lex.get(-cid, 0.0)
                continue
            if cid not in cos:
                chunk_model = source_of[cid][1]
                if chunk_model != model:
                    out.foreign[cid] = chunk_model
                else:
                    v = cache.vector(cid) if warm else fetched.get(cid)
                    if v is not None:
                        cos[cid] = float(v @ q)
            out.found[cid] = (cos.get(cid), lex.get(cid, 0.0))
            out.source[cid] = source_of[cid][0]
    return out
