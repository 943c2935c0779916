"""``lca-tui bench --store URL``: the same synthetic store on both backends, side by side.

One run builds the same store twice — a SQLite file in a temporary folder and the PostgreSQL
database at ``URL`` (which must hold no records) — and measures on each, in turn:

- **recall** p50 / p95 / max over the same queries (embedded by the store's embedder each time,
  trace write included) at every size asked for (default 50,000 and 200,000 chunks): the store
  grows from one size to the next;
- **ingest with two writers at once**: two processes, each appending its own session's
  entries through the normal write path (chunking, the embedder, neighbours, index), timed from
  the first writer's first write to the last one's end; then every entry is looked for and
  must be there exactly once;
- **erase with verification**: one bulk session erased (``Store.erase``), its closure deleted
  and every probe run; the time, and how many probes passed, failed, or could not run.

How the store is built is the plain bench's way (``store.bench``): a sample through the normal
write path with the embedder, the rest through the same write path with synthetic texts whose
vectors are the sample's plus noise. The nearest-neighbour step of that write path is answered
from the vectors this process already wrote (``Store.neighbour_finder``, as the daemon does),
the same on both backends, so neither backend pays a full scan per batch.
"""

from __future__ import annotations

import multiprocessing
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Connection, func, select
from sqlmodel import col

from store.bench import KINDS, TOPICS, synthetic_batch, synthetic_query, synthetic_text
from store.core import vec
from store.core.errors import StoreError
from store.core.models import Chunk, Entry
from store.core.timeutil import now_iso
from store.core.vocab import Progress, percentiles
from store.core.writes import NewEntry, NewSession

SIZES = (50_000, 200_000)
BULK_BATCH = 2000


@dataclass
class SizeFigures:
    chunks: int
    recall_ms: dict[str, float]
    build_s: float  # building up to this size from the previous one


@dataclass
class BackendFigures:
    backend: str  # what ranks: sqlite-vec+fts5 / pgvector+tsvector
    store: str  # the file, or the URL with its password masked
    sizes: list[SizeFigures] = field(default_factory=list)
    writers: int = 0
    writer_entries: int = 0
    ingest_entries_per_s: float = 0.0
    ingest_chunks_per_s: float = 0.0
    entries_found_once: bool = False
    entries_missing: int = 0
    entries_doubled: int = 0
    erase_entries: int = 0
    erase_ms: float = 0.0
    erase_passed: bool = False
    probes_passed: int = 0
    probes_failed: list[str] = field(default_factory=list)
    erase_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["sizes"] = [s.__dict__ for s in self.sizes]
        return out


@dataclass
class SideBySide:
    method: str
    embedder: str
    queries: int
    backends: list[BackendFigures]

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "embedder": self.embedder, "queries": self.queries,
                "backends": [b.to_json() for b in self.backends]}


class _HeldVectors:
    """Every vector this process wrote, as the neighbour step's answer (``NeighbourFinder``)."""

    def __init__(self) -> None:
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, 384), dtype=np.float32)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        self.ids = np.concatenate([self.ids, ids.astype(np.int64)])
        self.matrix = np.concatenate([self.matrix, vectors.astype(np.float32)])

    def __call__(self, _conn: Connection, vectors: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray] | None:
        if not len(self.ids):
            return None
        best = np.full(len(vectors), -np.inf, dtype=np.float32)
        ref = np.zeros(len(vectors), dtype=np.int64)
        for a in range(0, len(self.ids), 20_000):
            sims = vectors @ self.matrix[a:a + 20_000].T
            j = sims.argmax(axis=1)
            top = sims[np.arange(len(vectors)), j]
            better = top > best
            best[better], ref[better] = top[better], self.ids[a + j[better]]
        return ref, best


def _new_chunks(store: Any, after: int) -> tuple[np.ndarray, np.ndarray]:
    with store.read() as conn:
        ids = [int(i) for i in conn.execute(select(col(Chunk.id)).where(col(Chunk.id) > after)
                                            .order_by(col(Chunk.id))).scalars()]
        found = vec.vectors_of(conn, ids)
    kept = [i for i in ids if i in found]
    if not kept:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 384), dtype=np.float32)
    return np.asarray(kept, dtype=np.int64), np.stack([found[i] for i in kept])


def _max_chunk(store: Any) -> int:
    with store.read() as conn:
        return int(conn.execute(select(func.max(Chunk.id))).scalar() or 0)

def _write_sample(store: Any, rng: random.Random, sample: int, held: _HeldVectors
                  ) -> list[tuple[str, np.ndarray]]:
    """Write the ``sample`` synthetic entries through the normal write path, 500 to a
    session, keeping their vectors in ``held``; per vector, its topic and base vector for
    the bulk batches. (The caller warms the embedder first: its load is
    not the sample's time.)"""
    topics = list(TOPICS)
    texts = [(topics[i % len(topics)], synthetic_text(rng, topics[i % len(topics)]))
             for i in range(sample)]
    for s in range(0, sample, 500):
        part = texts[s:s + 500]
        session = NewSession(id=f"bench-sample-{s // 500:04d}", format="bench",
                             project=f"/work/{part[0][0]}", started_at=now_iso())
        top = _max_chunk(store)
        store.append_entries(session, [
            NewEntry(KINDS[i % len(KINDS)], body, session.id, source_offset=s + i,
                     ts=now_iso()) for i, (_t, body) in enumerate(part)])
        held.add(*_new_chunks(store, top))
    return [(texts[i % len(texts)][0], held.matrix[i]) for i in range(len(held.ids))]



def _bulk(store: Any, rng: random.Random, count: int, base: list[tuple[str, np.ndarray]],
          held: _HeldVectors, first_session: int, progress: Progress | None,
          label: str) -> int:
    """``count`` synthetic entries through the write path; the sessions made (numbered on
    from ``first_session``)."""
    from store.core.writes import upsert_session, write_entries

    sigma = 0.0247  # per-dimension noise: cosine to the base vector ≈ 0.9
    indexer = store.indexer()
    done, session_no = 0, first_session
    while done < count:
        n = min(BULK_BATCH, count - done)
        created = now_iso()
        session = NewSession(f"bench-bulk-{session_no:04d}", "bench", agent="bench",
                             project=f"/work/{rng.choice(list(TOPICS))}", started_at=created)
        session_no += 1
        entries, prepared = synthetic_batch(rng, base, sigma, n, session.id, created)
        top = _max_chunk(store)
        with store.write() as conn:
            upsert_session(conn, session, "lca-tui:bench", store.writer_version)
            write_entries(conn, session.id, entries, indexer, "lca-tui:bench",
                          store.writer_version, prepared)
        held.add(*_new_chunks(store, top))
        done += n
        if progress:
            progress(f"{label}: bulk", done, count)
    return session_no - first_session


def _writer(target: str, session_id: str, n: int, embedder: str, seed: int,
            out: Any) -> None:
    """One writer process: ``n`` entries of its own session, 25 a transaction, through
    ``append_entries`` (the normal write path); puts (start, end) of its writing."""
    from store.core.settings import Settings
    from store.facade import open_store

    rng = random.Random(seed)
    store = open_store(target, Settings.load({"embed.backend": embedder}))
    try:
        store.embedder.embed(["warm up"])
        topics = list(TOPICS)
        session = NewSession(id=session_id, format="bench", started_at=now_iso())
        t0 = time.time()
        for start in range(0, n, 25):
            store.append_entries(session, [
                NewEntry(KINDS[i % len(KINDS)], synthetic_text(rng, topics[i % len(topics)]),
                         session_id, source_offset=i, ts=now_iso())
                for i in range(start, min(n, start + 25))])
        out.put((session_id, t0, time.time(), None))
    except Exception as exc:  # noqa: BLE001 - the parent reports it
        out.put((session_id, 0.0, 0.0, f"{type(exc).__name__}: {exc}"))
    finally:
        store.close()


def _two_writers(store: Any, target: str, figures: BackendFigures, n: int, embedder: str,
                 tag: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    names = [f"bench-writer-{tag}-{k}" for k in range(2)]
    procs = [ctx.Process(target=_writer, args=(target, name, n, embedder, 100 + k, out))
             for k, name in enumerate(names)]
    before = _max_chunk(store)
    for p in procs:
        p.start()
    results = [out.get(timeout=3600) for _ in procs]
    for p in procs:
        p.join()
    errors = [r[3] for r in results if r[3]]
    if errors:
        raise StoreError(f"a writer failed on {figures.store}: {errors[0]}")
    start, end = min(r[1] for r in results), max(r[2] for r in results)
    with store.read() as conn:
        rows = conn.execute(select(col(Entry.session_id), col(Entry.source_offset))
                            .where(col(Entry.session_id).in_(names))).all()
        chunks = int(conn.execute(select(func.count()).select_from(Chunk)
                                  .where(col(Chunk.id) > before)).scalar_one())
    seen: dict[tuple[str, int], int] = {}
    for sid, offset in rows:
        seen[(sid, offset)] = seen.get((sid, offset), 0) + 1
    wanted = {(name, i) for name in names for i in range(n)}
    figures.writers, figures.writer_entries = 2, n
    figures.entries_missing = len(wanted - set(seen))
    figures.entries_doubled = sum(1 for c in seen.values() if c > 1)
    figures.entries_found_once = not figures.entries_missing and not figures.entries_doubled \
        and set(seen) == wanted
    wall = max(1e-9, end - start)
    figures.ingest_entries_per_s = round(2 * n / wall, 1)
    figures.ingest_chunks_per_s = round(chunks / wall, 1)


def _erase(store: Any, figures: BackendFigures, session_id: str) -> None:
    with store.read() as conn:
        figures.erase_entries = int(conn.execute(select(func.count()).select_from(Entry).where(
            col(Entry.session_id) == session_id)).scalar_one())
    t0 = time.perf_counter()
    try:
        result = store.erase(session=session_id, reason="bench: erase with verification")
    except Exception as exc:  # noqa: BLE001 - a backend that cannot erase: said, not hidden
        figures.erase_error = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        return
    figures.erase_ms = round((time.perf_counter() - t0) * 1000, 1)
    figures.erase_passed = bool(result.verification.passed)
    figures.probes_passed = sum(1 for p in result.verification.probes if p.passed)
    figures.probes_failed = [p.name for p in result.verification.probes if not p.passed]


def _one_backend(target: str, shown: str, sizes: list[int], queries: int, sample: int,
                 embedder: str, writer_entries: int, seed: int,
                 progress: Progress | None) -> BackendFigures:
    from store.core.settings import Settings
    from store.facade import open_store
    from store.recall.run import recall

    store = open_store(target, Settings.load({"embed.backend": embedder}))
    try:
        with store.read() as conn:
            figures = BackendFigures(vec.backend(conn), shown)
        held = _HeldVectors()
        store.neighbour_finder = held
        rng = random.Random(seed)
        store.embedder.embed(["warm up"])
        t0 = time.perf_counter()
        base = _write_sample(store, rng, sample, held)
        built = len(held.ids)
        sessions = 0
        qrng = random.Random(seed + 1)  # the same queries on both backends
        questions = [synthetic_query(qrng) for _ in range(queries)]
        for size in sorted(sizes):
            t_size = time.perf_counter()
            if size > built:
                sessions += _bulk(store, rng, size - built, base, held, sessions, progress,
                                  figures.backend)
                built = size
            build_s = time.perf_counter() - (t0 if not figures.sizes else t_size)
            recall(store, "warm up the recall path", probe=True)
            latencies = []
            for i, q in enumerate(questions):
                r0 = time.perf_counter()
                recall(store, q)
                latencies.append((time.perf_counter() - r0) * 1000)
                if progress:
                    progress(f"{figures.backend}: recall at {size:,}", i + 1, len(questions))
            figures.sizes.append(SizeFigures(size, percentiles(latencies), round(build_s, 1)))
        if writer_entries > 0:
            if progress:
                progress(f"{figures.backend}: two writers", 0, 2 * writer_entries)
            _two_writers(store, target, figures, writer_entries, embedder, str(seed))
        if sessions:
            if progress:
                progress(f"{figures.backend}: erase", 0, 1)
            _erase(store, figures, "bench-bulk-0000")
        return figures
    finally:
        store.close()


@dataclass
class BudgetFigures:
    """``bench --store URL --build-budget SECONDS``: how large a PostgreSQL store grew within
    the budget, and recall there."""

    backend: str
    store: str
    budget_s: float
    chunks: int = 0  # the store's size when the budget was spent (the last batch finished)
    entries: int = 0
    build_s: float = 0.0  # the sample and every bulk batch, up to the last one's end
    sample_s: float = 0.0  # the sample through the write path with the embedder
    batches: int = 0
    chunks_per_s_last: float = 0.0  # the bulk rate over the last tenth of the batches
    database_bytes: int | None = None  # the database's size on the server (tables, indexes)
    recall_ms: dict[str, float] = field(default_factory=dict)
    growth: list[tuple[float, int]] = field(default_factory=list)  # (seconds, chunks) per batch

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def run_build_budget(url: str, shown: str, budget_s: float, queries: int = 60,
                     sample: int = 2000, embedder: str = "model", seed: int = 7,
                     progress: Progress | None = None,
                     batch: int = BULK_BATCH) -> BudgetFigures:
    """Grow the synthetic store on the PostgreSQL database at ``url`` (empty) batch by batch
    until ``budget_s`` seconds are spent — the sample through the normal write path with the
    embedder, then bulk batches of ``batch`` synthetic entries — and time ``queries``
    recalls at the size reached. A batch under way when the budget runs out is finished (the
    figure says when it ended). The nearest-neighbour step of each batch is asked of the
    server's HNSW index, as any writer on a server store does (holding every vector in this
    process, as the side-by-side run does, would cost more than the index at this size)."""
    from store.core.db import database_size
    from store.core.settings import Settings
    from store.facade import open_store
    from store.recall.run import recall
    from store.core.writes import upsert_session, write_entries

    if budget_s <= 0:
        raise ValueError("--build-budget must be a positive number of seconds")
    _refuse_non_empty(url, shown, embedder)
    store = open_store(url, Settings.load({"embed.backend": embedder}))
    try:
        with store.read() as conn:
            figures = BudgetFigures(vec.backend(conn), shown, budget_s)
        rng = random.Random(seed)
        store.embedder.embed(["warm up"])
        held = _HeldVectors()  # the sample's vectors: the bulk texts' bases
        t0 = time.perf_counter()
        base = _write_sample(store, rng, sample, held)
        topics = list(TOPICS)
        figures.sample_s = round(time.perf_counter() - t0, 1)
        chunks, entries = len(held.ids), sample
        figures.growth.append((figures.sample_s, chunks))
        indexer = store.indexer()
        sigma = 0.0247  # as the side-by-side bulk: cosine to the base vector ≈ 0.9
        session_no = 0
        while time.perf_counter() - t0 < budget_s:
            created = now_iso()
            session = NewSession(f"bench-bulk-{session_no:04d}", "bench", agent="bench",
                                 project=f"/work/{rng.choice(topics)}", started_at=created)
            session_no += 1
            made, prepared = synthetic_batch(rng, base, sigma, batch, session.id, created)
            with store.write() as conn:
                upsert_session(conn, session, "lca-tui:bench", store.writer_version)
                report = write_entries(conn, session.id, made, indexer, "lca-tui:bench",
                                       store.writer_version, prepared)
            chunks += report.chunks
            entries += len(report.entry_ids)
            figures.batches += 1
            figures.growth.append((round(time.perf_counter() - t0, 1), chunks))
            if progress:
                progress(f"{figures.backend}: bulk ({time.perf_counter() - t0:,.0f} of "
                         f"{budget_s:,.0f} s)", chunks, chunks)
        figures.build_s = round(time.perf_counter() - t0, 1)
        figures.chunks, figures.entries = chunks, entries
        tail = figures.growth[-max(2, len(figures.growth) // 10):]
        if len(tail) >= 2 and tail[-1][0] > tail[0][0]:
            figures.chunks_per_s_last = round((tail[-1][1] - tail[0][1])
                                              / (tail[-1][0] - tail[0][0]), 1)
        with store.read() as conn:
            figures.database_bytes = database_size(conn)
        qrng = random.Random(seed + 1)  # the side-by-side run's queries
        questions = [synthetic_query(qrng) for _ in range(queries)]
        recall(store, "warm up the recall path", probe=True)
        latencies = []
        for i, q in enumerate(questions):
            r0 = time.perf_counter()
            recall(store, q)
            latencies.append((time.perf_counter() - r0) * 1000)
            if progress:
                progress(f"{figures.backend}: recall at {chunks:,}", i + 1, len(questions))
        figures.recall_ms = percentiles(latencies)
        return figures
    finally:
        store.close()


def _refuse_non_empty(target: str, shown: str, embedder: str) -> None:
    from store.core.settings import Settings
    from store.facade import open_store

    store = open_store(target, Settings.load({"embed.backend": embedder}))
    try:
        with store.read() as conn:
            if int(conn.execute(select(func.count()).select_from(Entry)).scalar_one()):
                raise StoreError(f"{shown} already holds entries: bench --store builds its "
                                 "synthetic store in an empty database")
    finally:
        store.close()


def run_side_by_side(url: str, shown: str, sizes: list[int] | None = None, queries: int = 60,
                     sample: int = 2000, embedder: str = "model", writer_entries: int = 200,
                     seed: int = 7, progress: Progress | None = None,
                     folder: Path | None = None) -> SideBySide:
    """Build and measure the synthetic store on a SQLite file (in ``folder``, else a
    temporary one) and on the PostgreSQL database at ``url``; the figures side by side."""
    sizes = sorted(set(sizes or SIZES))
    if not sizes or sizes[0] < sample:
        raise ValueError(f"every size must be at least the sample ({sample:,} chunks)")
    _refuse_non_empty(url, shown, embedder)  # before the SQLite half takes its minutes
    made = folder is None
    where = Path(tempfile.mkdtemp(prefix="lca-bench-")) if folder is None else folder
    try:
        sqlite = _one_backend(str(where / "bench.db"), str(where / "bench.db"), sizes,
                              queries, sample, embedder, writer_entries, seed, progress)
        server = _one_backend(url, shown, sizes, queries, sample, embedder, writer_entries,
                              seed, progress)
    finally:
        if made:
            shutil.rmtree(where, ignore_errors=True)
    method = (f"the same synthetic store on both: {sample:,} entries through the normal write "
              "path with the embedder, the rest through the same write path with synthetic "
              "texts whose vectors are the sample's plus noise (cosine ≈ 0.9); neighbours "
              "from the vectors this process wrote; the same queries on both")
    return SideBySide(method, embedder, queries, [sqlite, server])
