"""Rebuild every derived record from entries and memories: chunks, vectors, FTS rows, and
what the derivers interpret from stored entries."""

from __future__ import annotations

from typing import TYPE_CHECKING


from sqlalchemy import Connection, text

from store.core import vec
from store.core.memories import index_text
from store.core.errors import StoreError
from store.core.derive import run_derivers
from store.core.index import TOOL_KINDS, Source
from store.core.records import ReindexReport

if TYPE_CHECKING:
    from store.core.base import Progress
    from store.core.base import StoreBase as Store

_BATCH = 256


def reindex(store: Store, progress: Progress | None = None) -> ReindexReport:
    """Rebuild the index. Chunks are embedded first, outside the write lock; then one
    transaction swaps the old index for the new, so a crash leaves the old one whole."""
    report = ReindexReport()
    indexer = store.indexer(progress)
    with store.read() as conn:
        _refuse_silent_downgrade(store, conn)
        entries = conn.exec_driver_sql(
            "SELECT id, content, content_hash, kind FROM entry ORDER BY id").all()
        memories = conn.exec_driver_sql(
            "SELECT id, name, description, body, invariant, content_hash FROM memory "
            "ORDER BY id").all()
    sources = [Source("entry", int(r[0]), r[1], r[2], r[3]) for r in entries]
    head_only = ({s.content_hash for s in sources if s.kind in TOOL_KINDS}
                 - {s.content_hash for s in sources if s.kind not in TOOL_KINDS})
    sources += [Source("memory", int(r[0]), index_text(r[1], r[2], r[3], r[4]), r[5])
                for r in memories]
    total = len(sources)
    prepared = {}
    for i in range(0, total, _BATCH):
        part = sources[i:i + _BATCH]
        prepared.update(indexer.prepare({s.content_hash: s.text for s in part
                                         if s.content_hash not in prepared}, head_only))
        if progress:
            progress("embed", min(i + _BATCH, total), total)
    with store.write() as conn:
        vec.clear_index(conn)
        conn.exec_driver_sql("DELETE FROM chunk")
        for i in range(0, total, _BATCH):
            result = indexer.index(conn, sources[i:i + _BATCH], prepared)
            report.chunks += result.chunks
            report.chunks_failed += result.failed
            if progress:
                progress("write", min(i + _BATCH, total), total)
        if entries:  # what was read is indexed now: no longer waiting for embedding
            conn.execute(text("DELETE FROM embed_queue WHERE entry_id <= :m"),
                         {"m": int(entries[-1][0])})
        report.entries, report.memories = len(entries), len(memories)
        report.derived = run_derivers(conn, None)
        store.audit(conn, "reindex", "store", [],
                    {"entries": report.entries, "memories": report.memories,
                     "chunks": report.chunks, "chunks_failed": report.chunks_failed})
    return report


def _refuse_silent_downgrade(store: Store, conn: Connection) -> None:
    """Under ``auto``, a model that failed to load must not silently turn every real vector
    into a fallback one."""
    embedder = store.embedder
    if not embedder.degraded or store.settings["embed.backend"] != "auto":
        return
    others = int(conn.execute(text("SELECT COUNT(*) FROM chunk WHERE model != :m"),
                              {"m": embedder.name}).scalar_one())
    if others:
        raise StoreError(
            f"the embedding model could not load ({embedder.reason}); reindexing now would "
            f"replace {others} chunks made by the real model with fallback vectors. Fix the "
            "model, or run with --set embed.backend=fallback to do it anyway")
