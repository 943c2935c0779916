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

from sqlalchemy import Connection, text

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
    if session_id is None:
        return int(conn.exec_driver_sql("SELECT COUNT(*) FROM embed_queue").scalar_one())
    return int(conn.execute(text(
        "SELECT COUNT(*) FROM embed_queue q JOIN entry e ON e.id = q.entry_id "
        "WHERE e.session_id = :s"), {"s": session_id}).scalar_one())


def _queued(conn: Connection, session_id: str | None, limit: int) -> list[Any]:
    sql = ("SELECT e.id, e.content, e.content_hash, e.kind FROM embed_queue q "
           "JOIN entry e ON e.id = q.entry_id")
    params: dict[str, Any] = {"n": limit}
    if session_id is not None:
        sql += " WHERE e.session_id = :s"
        params["s"] = session_id
    return list(conn.execute(text(sql + " ORDER BY q.entry_id LIMIT :n"), params).all())


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
        marks = ", ".join(str(i) for i in ids)
        with store.write() as conn:
            still = conn.exec_driver_sql(
                "SELECT e.id, e.content, e.content_hash, e.kind, "
                "EXISTS (SELECT 1 FROM chunk c WHERE c.source_type = 'entry' AND "
                "c.source_id = e.id) FROM embed_queue q JOIN entry e ON e.id = q.entry_id "
                f"WHERE q.entry_id IN ({marks}) ORDER BY e.id").all()
            sources = [Source("entry", int(r[0]), r[1], r[2], r[3]) for r in still if not r[4]]
            result = indexer.index(conn, sources, prepared)
            conn.exec_driver_sql(f"DELETE FROM embed_queue WHERE entry_id IN ({marks})")
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
