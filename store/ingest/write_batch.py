"""Write sessions and entries outside ``LineImporter``'s line loop (a whole-file format such
as Gemini's chats JSON, or entries an importer settles after its last line): embedded before
the write lock, erased entries refused, idempotent by key, counted in the report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.core.writes import (
    NewEntry,
    NewSession,
    drop_erased,
    embed_new,
    upsert_session,
    write_entries,
)

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from store.ingest.base import ImportContext


def prepare(ctx: ImportContext, entries: list[NewEntry]) -> tuple[Any, Any]:
    """(indexer, chunks embedded) for ``entries``, outside any write transaction."""
    indexer = None if ctx.defer else ctx.store.indexer()
    prepared = None
    if indexer is not None:
        with ctx.store.read() as conn:
            prepared = embed_new(conn, entries, indexer)
    return indexer, prepared


def write_into(ctx: ImportContext, conn: Connection, path: Path, session: NewSession,
               entries: list[NewEntry], indexer: Any, prepared: Any) -> None:
    store, report = ctx.store, ctx.report
    kept, refused = drop_erased(conn, entries)
    report.erased_earlier += refused
    if refused and not kept:
        return
    if upsert_session(conn, session, store.writer, store.writer_version) and \
            session.id not in ctx.sessions_seen:
        report.sessions_added += 1
    ctx.sessions_seen.add(session.id)
    result = write_entries(conn, session.id, kept, indexer, store.writer, store.writer_version,
                           prepared, defer=ctx.defer, detector=ctx.detector)
    report.entries_added += len(result.entry_ids)
    report.entries_secret += len(result.secret)
    report.private_spans += result.private_spans
    report.entries_waiting += result.queued
    report.chunks += result.chunks
    report.chunks_failed += result.chunks_failed
    for err in result.errors:
        report.error(str(path), None, f"embedding failed: {err}")


def write_batch(ctx: ImportContext, path: Path, session: NewSession,
                entries: list[NewEntry]) -> None:
    indexer, prepared = prepare(ctx, entries)
    with ctx.store.write() as conn:
        write_into(ctx, conn, path, session, entries, indexer, prepared)
        ctx.persist(conn)
