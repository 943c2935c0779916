"""Rebuild every derived record from entries and memories: chunks, vectors, FTS rows, and
what the derivers interpret from stored entries."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, and_, delete, func, or_
from sqlmodel import col, select

from store.core.db import columns, yield_to_writers
from store.core import vec
from store.core.models import Chunk, EmbedQueue, Entry, Memory
from store.core.derive import run_derivers
from store.core.errors import StoreError
from store.core.index import Indexer, IndexResult, Prepared, Source, tool_heads
from store.core.memories import index_text
from store.core.records import ReindexReport

if TYPE_CHECKING:
    from store.core.base import Progress
    from store.core.base import StoreBase as Store

_BATCH = 256


def reindex(store: Store, progress: Progress | None = None) -> ReindexReport:
    """Rebuild the index without holding the write lock for long.

    Outside the lock: read the sources, chunk and embed them, and find each new chunk's
    nearest earlier neighbour (pure numpy). Then, a batch of sources per short transaction,
    swap each source's old chunks for its new ones, so a writer waiting for the lock waits
    for one batch at most, and a crash leaves every source with one whole set of chunks (old
    or new). Entries appended meanwhile were indexed by their writer and are left alone; a
    memory changed meanwhile keeps the chunks its writer made. Derived records are rebuilt
    last, in one transaction (they are cleared and rebuilt together)."""
    report = ReindexReport()
    indexer = store.indexer(progress)
    with store.read() as conn:
        _refuse_silent_downgrade(store, conn)
        entries = conn.execute(columns(col(Entry.id), col(Entry.content), col(Entry.content_hash),
                                       col(Entry.kind)).order_by(col(Entry.id))).all()
        memories = conn.execute(columns(
            col(Memory.id), col(Memory.name), col(Memory.description), col(Memory.body),
            col(Memory.invariant), col(Memory.content_hash)).order_by(col(Memory.id))).all()
        old_max = _max_chunk_id(conn)
    sources = [Source("entry", int(r[0]), r[1], r[2], r[3]) for r in entries]
    head_only = tool_heads(sources)
    sources += [Source("memory", int(r[0]), index_text(r[1], r[2], r[3], r[4]), r[5])
                for r in memories]
    del entries, memories
    total = len(sources)
    prepared: dict[str, list[Prepared]] = {}
    for i in range(0, total, _BATCH):
        part = sources[i:i + _BATCH]
        prepared.update(indexer.prepare({s.content_hash: s.text for s in part
                                         if s.content_hash not in prepared}, head_only))
        if progress:
            progress("embed", min(i + _BATCH, total), total)
    neighbours = _neighbours(sources, prepared)
    written: list[int] = []  # chunk id of the k-th new chunk with a vector
    for i in range(0, total, _BATCH):
        part = sources[i:i + _BATCH]
        if i:  # a writer waiting for the lock gets it between two batches
            yield_to_writers(store.engine)
        with store.write() as conn:
            result = _swap(conn, indexer, part, prepared, neighbours, written, old_max)
        report.chunks += result.chunks
        report.chunks_failed += result.failed
        if progress:
            progress("write", min(i + _BATCH, total), total)
    report.entries = sum(1 for s in sources if s.source_type == "entry")
    report.memories = total - report.entries
    yield_to_writers(store.engine)
    with store.write() as conn:
        _drop_orphans(conn)
        report.derived = run_derivers(conn, None)
        store.audit_in(conn, "reindex", "store", [],
                       {"entries": report.entries, "memories": report.memories,
                     "chunks": report.chunks, "chunks_failed": report.chunks_failed})
    return report


def _neighbours(sources: list[Source], prepared: dict[str, list[Prepared]]
                ) -> list[tuple[int | None, float | None]]:
    """Every new chunk's nearest earlier new chunk (global index among the chunks that have a
    vector, in write order), computed with no database and no lock."""
    vectors = [p.vector for s in sources for p in prepared.get(s.content_hash, [])
               if p.vector is not None]
    if not vectors:
        return []
    matrix = np.stack(vectors).astype(np.float32)
    del vectors
    return Indexer.neighbours_among(matrix)


def _swap(conn: Connection, indexer: Indexer, part: list[Source],
          prepared: dict[str, list[Prepared]], neighbours: list[tuple[int | None, float | None]],
          written: list[int], old_max: int) -> IndexResult:
    """In one transaction: drop the old chunks of ``part``'s sources and write their new
    ones. A memory whose text changed since it was read is skipped (its writer indexed it)."""
    current = _current_hashes(conn, part)
    keep = [s for s in part if current.get((s.source_type, s.source_id)) == s.content_hash]
    # the global neighbour indices of the chunks this batch writes (skipped sources too:
    # their vectors were counted when the neighbours were found)
    first = len(written)
    refs: list[tuple[int | None, float | None]] = []
    position = first
    kept = {(s.source_type, s.source_id) for s in keep}
    for s in part:
        for p in prepared.get(s.content_hash, []):
            if p.vector is None:
                continue
            ref, sim = neighbours[position]
            position += 1
            if (s.source_type, s.source_id) not in kept:
                written.append(-1)  # never written: nothing may point at it
                continue
            if ref is None or written[ref] == -1:  # none, or one that was never written
                refs.append((None, None))
            elif ref < first:  # written by an earlier batch: its chunk id
                refs.append((written[ref], sim))
            else:  # a chunk of this batch: index() resolves -1 - j (j-th vector it writes)
                refs.append((-1 - _rank_in_batch(written, first, ref), sim))
            written.append(-2)  # filled with the real id below
    marks = [k for k in range(first, len(written)) if written[k] == -2]
    stale: list[Any] = []
    for kind in ("entry", "memory"):
        stale += conn.execute(columns(col(Chunk.id), col(Chunk.text)).where(
            col(Chunk.id) <= old_max, col(Chunk.source_type) == kind,
            col(Chunk.source_id).in_(_each([s.source_id for s in keep
                                            if s.source_type == kind])))).all()
    vec.delete_chunks_index(conn, [(int(r[0]), str(r[1])) for r in stale])
    conn.execute(delete(Chunk).where(col(Chunk.id).in_(_each([int(r[0]) for r in stale]))))
    before = _max_chunk_id(conn)
    result = indexer.index(conn, keep, prepared, refs)
    # the chunks with a vector (a lexical-only window has none)
    ids = [int(r[0]) for r in conn.execute(columns(col(Chunk.id)).where(
        col(Chunk.id) > before, col(Chunk.status) == "ok", col(Chunk.lexical_only) == 0)
        .order_by(col(Chunk.id)))]
    # entries indexed now no longer wait for embedding (a hook stored them deferred)
    conn.execute(delete(EmbedQueue).where(col(EmbedQueue.entry_id).in_(
        [s.source_id for s in keep if s.source_type == "entry"])))
    for k, chunk_id in zip(marks, ids, strict=True):
        written[k] = chunk_id
    return result


def _each(ids: list[int]) -> Any:
    """``ids`` as a subquery over ``json_each``: one bound parameter however many ids (an
    expanding IN would bind one each and can pass SQLite's variable limit)."""
    values = func.json_each(json.dumps(ids)).table_valued("value")
    return select(values.c.value)


def _max_chunk_id(conn: Connection) -> int:
    return int(conn.execute(columns(func.coalesce(func.max(col(Chunk.id)), 0))).scalar_one())


def _rank_in_batch(written: list[int], first: int, ref: int) -> int:
    """Which of this batch's written vectors the global index ``ref`` is (skipped ones are
    not written, so they do not count)."""
    return sum(1 for k in range(first, ref) if written[k] == -2)


def _current_hashes(conn: Connection, part: list[Source]) -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}
    for kind in ("entry", "memory"):
        ids = [s.source_id for s in part if s.source_type == kind]
        if ids:
            model = Entry if kind == "entry" else Memory
            for sid, h in conn.execute(columns(col(model.id), col(model.content_hash))
                                       .where(col(model.id).in_(_each(ids)))):
                out[(kind, int(sid))] = str(h)
    return out


def _drop_orphans(conn: Connection) -> None:
    """Chunks whose source is gone (erased while the reindex ran) go with their index rows."""
    entry_gone = ~select(col(Entry.id)).where(col(Entry.id) == col(Chunk.source_id)).exists()
    memory_gone = ~select(col(Memory.id)).where(col(Memory.id) == col(Chunk.source_id)).exists()
    rows = conn.execute(columns(col(Chunk.id), col(Chunk.text)).where(or_(
        and_(col(Chunk.source_type) == "entry", entry_gone),
        and_(col(Chunk.source_type) == "memory", memory_gone)))).all()
    if rows:
        vec.delete_chunks_index(conn, [(int(r[0]), str(r[1])) for r in rows])
        conn.execute(delete(Chunk).where(col(Chunk.id).in_(_each([int(r[0]) for r in rows]))))


def _refuse_silent_downgrade(store: Store, conn: Connection) -> None:
    """Under ``auto``, a model that failed to load must not silently turn every real vector
    into a fallback one."""
    embedder = store.embedder
    if not embedder.degraded or store.settings["embed.backend"] != "auto":
        return
    others = int(conn.execute(columns(func.count()).select_from(Chunk).where(
        col(Chunk.model) != embedder.name)).scalar_one())
    if others:
        raise StoreError(
            f"the embedding model could not load ({embedder.reason}); reindexing now would "
            f"replace {others} chunks made by the real model with fallback vectors. Fix the "
            "model, or run with --set embed.backend=fallback to do it anyway")
