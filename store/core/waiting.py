"""Entries stored without their chunks, waiting for embedding (``embed_queue``).

A hook before every prompt stores what the session wrote and leaves the embedding for later
(``write_entries(defer=True)``); meanwhile the entry is found by FTS. ``embed_waiting`` does
that later work — from the daemon in the background, or from a checkpoint hook — in the same
two steps as an import: chunk and embed outside the write lock, then write the chunks and
take the entries off the queue in one transaction, for the entries still queued with the
text that was embedded (an entry erased or redacted meanwhile is not indexed stale).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, delete, exists, func
from sqlmodel import col, select

from store.core.db import columns
from store.core.models import Chunk, EmbedQueue, Entry

from store.core.index import Source, tool_heads

if TYPE_CHECKING:
    from store.core.base import Progress
    from store.core.base import StoreBase as Store

_ROUND = 500  # entries embedded and written per transaction


@dataclass
class EmbedReport:
    entries: int = 0
    chunks: int = 0
    lexical: int = 0
    failed: int = 0
    left: int = 0  # still waiting afterwards
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def waiting_count(conn: Connection, session_id: str | None = None) -> int:
    """Entries waiting for embedding, of one session or all."""
    query = select(func.count()).select_from(EmbedQueue)
    if session_id is not None:
        query = query.join(Entry, col(Entry.id) == col(EmbedQueue.entry_id)).where(
            col(Entry.session_id) == session_id)
    return int(conn.execute(query).scalar_one())


def _queued(conn: Connection, session_id: str | None, limit: int) -> list[Any]:
    query = (columns(col(Entry.id), col(Entry.content), col(Entry.content_hash), col(Entry.kind))
             .join(EmbedQueue, col(EmbedQueue.entry_id) == col(Entry.id)))
    if session_id is not None:
        query = query.where(col(Entry.session_id) == session_id)
    return list(conn.execute(query.order_by(col(EmbedQueue.entry_id)).limit(limit)).all())


def embed_waiting(store: Store, session_id: str | None = None, limit: int | None = None,
                  progress: Progress | None = None) -> EmbedReport:
    """Embed queued entries (oldest first), at most ``limit`` of them."""
    report = EmbedReport()
    with store.read() as conn:
        total = waiting_count(conn, session_id)
    total = min(total, limit) if limit is not None else total
    if total == 0:
        return report
    indexer = store.indexer(progress)
    while report.entries < total:
        with store.read() as conn:
            rows = _queued(conn, session_id, min(_ROUND, total - report.entries))
        if not rows:
            break
        texts = {r[2]: r[1] for r in rows}
        prepared = indexer.prepare(texts, tool_heads(
            [Source("entry", int(r[0]), r[1], r[2], r[3]) for r in rows]))
        ids = [int(r[0]) for r in rows]
        chunked = exists().where(col(Chunk.source_type) == "entry",
                                 col(Chunk.source_id) == col(Entry.id))
        with store.write() as conn:
            still = conn.execute(
                columns(col(Entry.id), col(Entry.content), col(Entry.content_hash),
                        col(Entry.kind), chunked)
                .join(EmbedQueue, col(EmbedQueue.entry_id) == col(Entry.id))
                .where(col(EmbedQueue.entry_id).in_(ids)).order_by(col(Entry.id))).all()
            sources = [Source("entry", int(r[0]), r[1], r[2], r[3]) for r in still if not r[4]]
            result = indexer.index(conn, sources, prepared)
            conn.execute(delete(EmbedQueue).where(col(EmbedQueue.entry_id).in_(ids)))
        report.entries += len(rows)
        report.chunks += result.chunks
        report.lexical += result.lexical
        report.failed += result.failed
        report.errors.extend(result.errors)
        if progress:
            progress("embedded entries", report.entries, total)
    with store.read() as conn:
        report.left = waiting_count(conn, session_id)
    return report
