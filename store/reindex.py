"""Rebuild every derived record from entries and memories: chunks, vectors, FTS rows, and
what the derivers interpret from stored entries."""

from __future__ import annotations

from typing import TYPE_CHECKING


from store import vec
from store.derive import run_derivers
from store.index import Source
from store.records import ReindexReport

if TYPE_CHECKING:
    from store.facade import Progress, Store

_BATCH = 256


def reindex(store: Store, progress: Progress | None = None) -> ReindexReport:
    """Drop and rebuild the index in one transaction: a crash leaves the old index whole."""
    report = ReindexReport()
    indexer = store.indexer()
    with store.write() as conn:
        vec.clear_index(conn)
        conn.exec_driver_sql("DELETE FROM chunk")
        entries = conn.exec_driver_sql(
            "SELECT id, content, content_hash FROM entry ORDER BY id").all()
        memories = conn.exec_driver_sql(
            "SELECT id, name, description, body, invariant, content_hash FROM memory "
            "ORDER BY id").all()
        sources = [Source("entry", int(r[0]), r[1], r[2]) for r in entries]
        from store.ingest.memory_dir import memory_index_text

        sources += [Source("memory", int(r[0]), memory_index_text(r[1], r[2], r[3], r[4]), r[5])
                    for r in memories]
        total = len(sources)
        for i in range(0, total, _BATCH):
            result = indexer.index(conn, sources[i:i + _BATCH])
            report.chunks += result.chunks
            report.chunks_failed += result.failed
            if progress:
                progress("reindex", min(i + _BATCH, total), total)
        report.entries, report.memories = len(entries), len(memories)
        report.derived = run_derivers(conn, None)
        store.audit(conn, "reindex", "store", [],
                    {"entries": report.entries, "memories": report.memories,
                     "chunks": report.chunks, "chunks_failed": report.chunks_failed})
    return report
