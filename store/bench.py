"""``lca-tui bench``: a synthetic store of N chunks, and the figures DESIGN "Performance" asks
for — recall latency percentiles (query embedding and trace write included), ingest + embed
throughput, store size per 1,000 chunks and the ratio of index to raw transcript.

How the store is built, stated in the output too: a *sample* of entries goes through the
normal write path (``Store.append_entries``: chunking, embedding with the store's embedder,
nearest-neighbour similarity, FTS) and gives the throughput figure; the rest goes through the
same write path (``write_entries``) with synthetic texts of the same topics whose vectors are
not computed by the embedder but are the sample's vectors (made by the store's embedder: the
model, or the fallback when asked for) plus small noise (cosine ≈ 0.9 to their base), because
embedding 50,000 texts with the model on 2 cores takes minutes of no interest to the latency
figures. The recall queries are embedded by the real embedder, each time. The health scan
(every signal, as ``lca-tui health`` runs it, nothing stored) is timed on the same store.

Storage is measured once the store is built and before any recall: the WAL is checkpointed
(``PRAGMA wal_checkpoint(TRUNCATE)``, on its own connection, outside any transaction) and the
main database file alone is counted, so neither the WAL nor the bench's own recall traces
inflate it; the traces' size is reported apart (``trace_bytes``).
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import LargeBinary, cast, func
from sqlmodel import col, select

from store.core import vec
from store.core.models import Chunk, Entry
from store.core.chunker import count_tokens
from store.core.index import Prepared, sha256_text
from store.core.timeutil import now_iso
from store.core.writes import NewEntry, NewSession
from store.core.vocab import Progress, percentiles

TOPICS: dict[str, list[str]] = {
    "database": ["schema", "migration", "index", "query", "sqlite", "table", "column", "foreign",
        "key", "transaction", "vacuum", "wal", "journal", "rollback", "primary", "constraint"],
    "testing": ["pytest", "fixture", "snapshot", "assertion", "flaky", "mock", "coverage",
        "regression", "suite", "parametrize", "failure", "timeout", "runner", "isolated"],
    "deploy": ["deploy", "release", "pipeline", "docker", "container", "image", "tag", "rollout",
        "canary", "staging", "production", "kubernetes", "helm", "secret"],
    "memory": ["recall", "embedding", "vector", "similarity", "chunk", "memory", "consolidation",
        "supersede", "evidence", "trace", "decay", "salience", "authority"],
    "frontend": ["button", "layout", "css", "component", "render", "state", "props", "modal",
        "keyboard", "focus", "screen", "widget", "theme", "palette"],
    "network": ["socket", "timeout", "retry", "latency", "proxy", "tls", "certificate", "dns",
        "packet", "bandwidth", "handshake", "gateway", "route", "firewall"],
    "billing": ["invoice", "payment", "refund", "subscription", "tax", "currency", "ledger",
        "receipt", "customer", "charge", "discount", "plan", "trial"],
    "planning": ["roadmap", "milestone", "estimate", "priority", "backlog", "sprint", "deadline",
        "scope", "risk", "dependency", "owner", "review", "goal"],
}
COMMON = ["the", "a", "we", "should", "then", "because", "this", "that", "it", "and", "but", "so",
    "when", "after", "before", "with", "for", "on", "in", "of", "to", "is", "was", "fix", "check",
    "update", "add", "remove", "change", "run", "see"]
KINDS = ("user", "assistant", "tool_result", "assistant")



_SYLLABLES = ["ka", "ri", "to", "me", "lo", "sa", "vu", "ne", "chi", "da", "po", "ren", "tal",
    "mor", "vik", "sen", "bru", "gel", "fa", "zo", "qui", "pla", "stre"]


def _pseudo_words(topic: str, n: int = 240) -> list[str]:
    """A topic's long tail: deterministic made-up words (identifiers, names, jargon)."""
    rng = random.Random(topic)
    return ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(n)]


TAILS = {topic: _pseudo_words(topic) for topic in TOPICS}


def synthetic_text(rng: random.Random, topic: str, words: int = 40) -> str:
    """A sentence-ish text: common words, some of ``topic``'s words, its long tail (Zipf-ish:
    a few tail words are frequent, most rare) and a stray word of another topic."""
    vocab, tail = TOPICS[topic], TAILS[topic]
    other = TOPICS[rng.choice(list(TOPICS))]
    out = []
    for _ in range(words):
        r = rng.random()
        if r < 0.45:
            out.append(rng.choice(COMMON))
        elif r < 0.65:
            out.append(rng.choice(vocab))
        elif r < 0.95:
            out.append(tail[min(len(tail) - 1, int(rng.paretovariate(1.0)) - 1)
                            if rng.random() < 0.3 else rng.randrange(len(tail))])
        else:
            out.append(rng.choice(other))
    return " ".join(out).capitalize() + f" (ref {rng.randrange(10**6)})."


def synthetic_query(rng: random.Random) -> str:
    """A question in the store's language: one topic word and two of its tail words."""
    topic = rng.choice(list(TOPICS))
    word = rng.choice(TOPICS[topic])
    a, b = rng.sample(TAILS[topic], 2)
    return f"how did we handle the {word} problem with {a} and {b}"


@dataclass
class BenchResult:
    chunks: int
    sample_chunks: int
    bulk_chunks: int
    model: str
    degraded: bool
    ingest_per_s: float
    ingest_entries_per_s: float
    build_s: float
    queries: int
    recall_ms: dict[str, float]
    embed_query_ms: dict[str, float]
    bytes_total: int
    bytes_per_1k_chunks: float
    raw_transcript_bytes: int
    index_bytes: int
    index_to_raw: float
    injected_mean: float
    method: str
    first_recall_ms: float = 0.0
    recall_cpu_ms: dict[str, float] | None = None
    """The process's CPU time over each timed recall (the figure a busy machine keeps)."""
    first_recall_cpu_ms: float = 0.0
    """The first recall after opening the store again (it maps the vector file)."""
    first_recall_load_ms: float = 0.0
    first_recall_load_cpu_ms: float = 0.0
    """The first recall with no vector file yet (every vector read from chunk_vec)."""
    trace_bytes: int = 0
    health_scan_ms: dict[str, float] | None = None
    health_status: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _bulk(store: Any, rng: random.Random, count: int, base: list[tuple[str, np.ndarray]],
          progress: Progress | None) -> None:
    """``count`` synthetic entries through the normal write path (``write_entries``: entries,
    chunks, nearest neighbours, vectors, FTS), their vectors taken from the sample's model
    vectors plus noise instead of from the model."""
    from store.core.writes import upsert_session, write_entries

    sigma = 0.0247  # per-dimension noise: cosine to the base vector ≈ 0.9
    batch = 2000
    done = 0
    session_no = 0
    indexer = store.indexer()
    while done < count:
        n = min(batch, count - done)
        created = now_iso()
        session = NewSession(f"bench-bulk-{session_no:04d}", "bench", agent="bench",
                             project=f"/work/{rng.choice(list(TOPICS))}", started_at=created)
        session_no += 1
        entries, prepared = synthetic_batch(rng, base, sigma, n, session.id, created)
        with store.write() as conn:
            upsert_session(conn, session, "lca-tui:bench", store.writer_version)
            write_entries(conn, session.id, entries, indexer, "lca-tui:bench",
                          store.writer_version, prepared)
        done += n
        if progress:
            progress("bulk", done, count)


def synthetic_batch(rng: random.Random, base: list[tuple[str, np.ndarray]], sigma: float,
                    n: int, session_id: str, created: str
                    ) -> tuple[list[NewEntry], dict[str, list[Prepared]]]:
    """``n`` synthetic entries of one session and their chunks prepared with vectors near the
    sample's (no model call): the bulk part of a bench store, on either backend."""
    entries: list[NewEntry] = []
    prepared: dict[str, list[Prepared]] = {}
    for i in range(n):
        topic, bvec = base[rng.randrange(len(base))]
        body = synthetic_text(rng, topic)
        v = bvec + rng_noise(rng, sigma)
        prepared[sha256_text(body)] = [Prepared(0, len(body), count_tokens(body), body,
                                                (v / np.linalg.norm(v)).astype(np.float32),
                                                None)]
        entries.append(NewEntry(KINDS[i % len(KINDS)], body, f"bench:{session_id}",
                                source_offset=i, ts=created))
    return entries, prepared


def rng_noise(rng: random.Random, sigma: float) -> np.ndarray:
    seed = rng.randrange(2**32)
    return np.random.default_rng(seed).normal(0.0, sigma, 384).astype(np.float32)


def checkpoint(store: Any) -> None:
    """Move the WAL into the main file and truncate it: on a connection of its own, outside
    any transaction (the DB-API connection runs in autocommit)."""
    raw = store.engine.raw_connection()
    try:
        cur = raw.cursor()
        # raw SQL: PRAGMA wal_checkpoint on the DB-API connection, outside any transaction
        busy = cur.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        cur.close()
    finally:
        raw.close()
    if busy is not None and busy[0]:
        raise RuntimeError("the bench store's WAL could not be checkpointed (a reader held it)")


def _storage(store: Any) -> tuple[int, int, int]:
    """(main file bytes after a checkpoint, raw transcript bytes, index bytes: chunk table +
    vectors + FTS). The WAL is not counted: the checkpoint has emptied it."""
    checkpoint(store)
    with store.read() as conn:
        raw = int(conn.execute(select(func.coalesce(func.sum(func.length(
            cast(col(Entry.content), LargeBinary))), 0))).scalar_one())
        # ``dbstat`` is SQLite's page-statistics virtual table: no model describes it.
        # raw SQL: dbstat virtual table (no model): pages of the chunk table, its vectors and FTS
        index = int(conn.exec_driver_sql(
            "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name LIKE 'chunk%'")
            .scalar_one())
    return Path(store.path).stat().st_size, raw, index


def _trace_bytes(store: Any) -> int:
    """Bytes of the recall trace tables (the bench's own recalls), pages in the main file."""
    checkpoint(store)
    with store.read() as conn:  # dbstat: SQLite's page statistics, no model (see _storage)
        # raw SQL: dbstat virtual table (no model): pages of the recall trace tables
        return int(conn.exec_driver_sql(
            "SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name LIKE 'recall%'")
            .scalar_one())


def vectors_made_by(name: str, degraded: bool) -> str:
    """How the store's vectors were made, naming the embedder actually used."""
    if degraded:
        return f"{name} vectors (the fallback hashing embedder, not a model)"
    return f"model vectors ({name})"


def _health(store: Any, scans: int) -> tuple[dict[str, float], str]:
    """The health scan's wall time (every signal, embedder loaded, nothing stored): the first
    scan of the open store, then percentiles over ``scans`` more."""
    from store.health.scan import scan

    t0 = time.perf_counter()
    result = scan(store, save="never")
    first = (time.perf_counter() - t0) * 1000
    times, cpu = [], []
    for _ in range(max(1, scans)):
        t0, c0 = time.perf_counter(), time.process_time()
        scan(store, save="never")
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    # CPU time too: on a machine shared with other work, wall time says more about the load
    return {**percentiles(times), "first": round(first, 1),
            "cpu_p50": percentiles(cpu)["p50"]}, result.status


def run_bench(chunks: int = 50_000, queries: int = 60, sample: int = 2000,
              embedder: str = "auto", seed: int = 7, progress: Progress | None = None,
              keep: Path | None = None, health_scans: int = 5) -> BenchResult:
    """Build the synthetic store in a temporary folder (or ``keep``) and measure it."""
    from store.facade import open_store
    from store.recall.run import recall
    from store.core.settings import Settings

    rng = random.Random(seed)
    sample = max(1, min(sample, chunks))
    folder = Path(tempfile.mkdtemp(prefix="lca-bench-")) if keep is None else keep
    # a warm process, as `lca-tui serve` opens the store: connections kept between
    # transactions (opening one loads sqlite-vec: ≈ 14 ms of CPU per recall at 50,000 chunks)
    store = open_store(folder / "bench.db", Settings.load({"embed.backend": embedder,
                                                          "store.keep_connections": 4}))
    try:
        store.data_version()  # hold one connection open, as the app and `serve` do
        started = time.perf_counter()
        store.embedder.embed(["warm up"])
        topics = list(TOPICS)
        texts = [(topics[i % len(topics)], synthetic_text(rng, topics[i % len(topics)]))
                 for i in range(sample)]
        t0 = time.perf_counter()
        per_session = 500
        for s in range(0, sample, per_session):
            part = texts[s:s + per_session]
            session = NewSession(id=f"bench-sample-{s // per_session:04d}", format="bench",
                                 project=f"/work/{part[0][0]}", started_at=now_iso())
            store.append_entries(session, [
                NewEntry(KINDS[i % len(KINDS)], body, session.id, source_offset=s + i,
                         ts=now_iso()) for i, (_t, body) in enumerate(part)])
            if progress:
                progress("sample (normal write path)", min(s + per_session, sample), sample)
        sample_s = time.perf_counter() - t0
        with store.read() as conn:
            sample_chunks = int(conn.execute(select(func.count()).select_from(Chunk))
                                .scalar_one())
            rows = conn.execute(select(Chunk.id).order_by(col(Chunk.id))).scalars().all()
            base = []
            for cid, (topic, _body) in zip(rows, texts, strict=False):
                v = vec.vector_of(conn, int(cid))
                if v is not None:
                    base.append((topic, v))
        bulk = max(0, chunks - sample_chunks)
        if bulk:
            _bulk(store, rng, bulk, base, progress)
        build_s = time.perf_counter() - started
        size, raw, index = _storage(store)  # before any recall: no traces, no WAL
        latencies, embeds, injected = [], [], []
        # the first recall of the process that built the store: no vector file yet, every
        # vector read from chunk_vec (and the file beside the store written)
        w0, c0 = time.perf_counter(), time.process_time()
        recall(store, "warm up the recall path", probe=True)
        load_ms = round((time.perf_counter() - w0) * 1000, 1)
        load_cpu = round((time.process_time() - c0) * 1000, 1)
        # then the store opened again, as the next process (the app, `serve`) opens it: its
        # first recall maps the vector file (recall/vecfile.py) when it is still the store's
        store.close()
        store = open_store(folder / "bench.db", Settings.load({
            "embed.backend": embedder, "store.keep_connections": 4}))
        store.data_version()
        store.embedder.embed(["warm up"])
        w0, c0 = time.perf_counter(), time.process_time()
        recall(store, "warm up the recall path", probe=True)
        first_ms = round((time.perf_counter() - w0) * 1000, 1)
        first_cpu = round((time.process_time() - c0) * 1000, 1)
        cpu = []
        for i in range(queries):
            q = synthetic_query(rng)
            e0 = time.perf_counter()
            store.embedder.embed([q])
            embeds.append((time.perf_counter() - e0) * 1000)
            r0, c0 = time.perf_counter(), time.process_time()
            result = recall(store, q)
            latencies.append((time.perf_counter() - r0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
            injected.append(len(result.items))
            if progress:
                progress("recall", i + 1, queries)
        traces = _trace_bytes(store)
        health_ms, health_status = _health(store, health_scans)
        total = sample_chunks + bulk
        info = store.embedder
        made = vectors_made_by(info.name, bool(info.degraded))
        method = (f"{sample_chunks:,} chunks through the normal write path with "
                  f"{info.name}; {bulk:,} more through the same write path with synthetic "
                  f"texts whose vectors are the sample's {made} plus noise (cosine ≈ 0.9), "
                  "not computed by the embedder")
        return BenchResult(
            chunks=total, sample_chunks=sample_chunks, bulk_chunks=bulk, model=info.name,
            degraded=bool(info.degraded),
            ingest_per_s=round(sample_chunks / sample_s, 1),
            ingest_entries_per_s=round(sample / sample_s, 1), build_s=round(build_s, 1),
            queries=queries, recall_ms=percentiles(latencies),
            embed_query_ms=percentiles(embeds), bytes_total=size,
            bytes_per_1k_chunks=round(size / max(1, total) * 1000, 1),
            raw_transcript_bytes=raw, index_bytes=index,
            index_to_raw=round(index / max(1, raw), 2),
            injected_mean=round(float(np.mean(injected)), 2), method=method,
            first_recall_ms=first_ms, recall_cpu_ms=percentiles(cpu),
            first_recall_cpu_ms=first_cpu, first_recall_load_ms=load_ms,
            first_recall_load_cpu_ms=load_cpu, trace_bytes=traces, health_scan_ms=health_ms,
            health_status=health_status)
    finally:
        store.close()
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)


def recall_cost_main() -> None:
    """``python -m store.bench STORE [--keep N] [--profile]``: recall's own cost on a kept
    bench store (docs/performance.md, issue 28). Opens the store with the real model
    (``--keep N``: connections kept between transactions, 4 as ``lca-tui serve`` keeps; 0
    as a one-shot command), times the first recall (it loads the vectors) and 60 recalls
    of the synthetic queries (query embedding and trace write included), wall and CPU;
    ``--profile`` prints the functions that took the most time of their own (cProfile)."""
    import argparse
    import cProfile
    import pstats

    from store.core.settings import Settings
    from store.facade import open_store
    from store.recall.run import recall

    p = argparse.ArgumentParser(prog="python -m store.bench")
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
    recall_cost_main()
