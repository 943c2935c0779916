"""Carrying out a closure: erase (delete) or redact (rewrite in place), in one transaction.

Everything an erasure changes in the store — index rows, pointers cleared, container rows
scrubbed, rows deleted children first, memories flagged, fingerprints, the tombstone and the
audit event — is one write transaction: a failure anywhere (a seam, ``fail_after``, lets tests
inject one) rolls all of it back and the store is as it was. Deleted content is overwritten
(``PRAGMA secure_delete``, set on every connection; FTS5 ``secure-delete``).

A redaction rewrites every matching value to ``[REDACTED]``, keeps entries in their place and
sequence, rewrites a changed entry's ``idem_key`` (a keyed hash of the old one) and
``content_hash`` (of the new text) — a plain SHA-256 of the original would confirm a guess —
and rebuilds the chunks, vectors and FTS rows of every changed entry (embedded before the
write lock is taken) and memory (through ``store.core.memories``, which also gives it the
content hash of what it now says).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy import Connection, delete, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlmodel import col, select

from store.core import erasure, filejournal, memories, vec
from store.core.db import orm
from store.core.errors import StoreError
from store.core.models import Entry, Memory
from store.core.index import Prepared, Source, drop_chunks_of, sha256_text
from store.core.timeutil import now_iso
from store.core.writes import token_estimate
from store.governance.chains import erasure_bridges, link
from store.privacy.closure import Closure
from store.privacy.models import Tombstone
from store.privacy.tables import children_first, in_json, rel, rowid

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

Step = Callable[[str], None]


class ErasureFailed(StoreError):
    """The erasure could not be carried out; nothing was changed."""


def _one_line(exc: DBAPIError) -> str:
    return " ".join(str(exc.orig).split())


def _ids(rows: set[int] | list[int]) -> str:
    return json.dumps(sorted(int(r) for r in rows))


def actor_name(store: Store, actor: str | None) -> str:
    """The person behind an erasure (``store.core.actor``: never the program's name)."""
    from store.core.actor import resolve

    return resolve(actor, store.settings)


def _tombstone(store: Store, conn: Connection, c: Closure, actor: str,
               reason: str | None) -> int:
    with orm(conn) as s:
        row = Tombstone(ts=now_iso(), action=c.action, scope_kind=c.scope.record_kind,
                        counts=json.dumps(c.counts(), sort_keys=True), actor=actor,
                        reason=reason, verified=None, writer=store.writer,
                        writer_version=store.writer_version, created_at=now_iso())
        s.add(row)
        s.flush()
        assert row.id is not None
        return row.id


def _journal_files(store: Store, conn: Connection, c: Closure) -> None:
    """The bound directory's files of the closure (deleted, or rewritten as the redacted
    memory reads), as a redo journal committed with the rows (``store.core.filejournal``):
    played after the commit, finished by the next writer after a kill. A rewritten file's
    hash is recorded with its memory, so the file guard knows it as lca-tui's own."""
    if not c.files:
        return
    ops = [filejournal.FileOp(p, d) for p, d in sorted(c.files.items())]
    c.journal = filejournal.record(conn, ops, f"{c.action} of {c.scope.kind}")
    if c.action != "redact":
        return
    from store.governance.file_guard import FILE_HASH_KEY, sha256_bytes

    for old, new in c.renamed.items():  # a name that held the text: the memory's new file
        renamed = memories.find(conn, source_file=old)
        if renamed is not None and renamed.id is not None:
            memories.update(conn, store, renamed.id, {"source_file": new}, index=False)
    for path, data in c.files.items():
        if data is None:
            continue
        m = memories.find(conn, source_file=path)
        if m is None or m.id is None:
            continue
        try:
            fm = json.loads(m.front_matter or "{}")
        except ValueError:
            fm = {}
        if not isinstance(fm, dict):
            fm = {}
        fm[FILE_HASH_KEY] = sha256_bytes(data.encode("utf-8"))
        memories.update(conn, store, m.id, {"front_matter": json.dumps(
            fm, ensure_ascii=False, default=str)}, index=False)


def _finish(store: Store, conn: Connection, c: Closure, actor: str, reason: str | None) -> int:
    """Review flags, fingerprints, the file journal, the tombstone and the audit event (ids
    and counts)."""
    _journal_files(store, conn, c)
    for memory_id, why in c.review.items():
        conn.execute(update(Memory).where(col(Memory.id) == memory_id)
                     .values(review_reason=why))
    tombstone_id = _tombstone(store, conn, c, actor, reason)
    for kind, values in c.fingerprints.items():
        erasure.record(conn, kind, values, tombstone_id, store.writer, store.writer_version)
    store.audit_in(conn, c.action, "tombstone", [tombstone_id], c.counts(), actor=actor)
    return tombstone_id


def _scrub(conn: Connection, c: Closure, skip: dict[str, set[int]], step: Step) -> None:
    for table, rows in c.scrub.items():
        gone = skip.get(table, set())
        for row, values in rows.items():
            if row in gone or not values:
                continue
            t = rel(table, *values)
            conn.execute(update(t).where(t.c.rowid == row).values(dict(values)))
        step(f"scrub {table}")


def _bridge(store: Store, conn: Connection, bridges: list[tuple[int, int]],
            refs: set[int]) -> None:
    """Keep a chain whole after erasing its members: a link (source ``erasure``, ids only)
    from the memory before the gap to the one after, so ``chain`` shows both sides and marks
    the gap; a ``supersedes`` reference naming an erased memory is cleared."""
    if refs:
        conn.execute(update(Memory).where(in_json(col(Memory.id), _ids(refs)))
                     .values(supersedes_ref=None))
    for old, new in bridges:
        link(conn, store, old, new, source="erasure", retire=False, allow_fork=True)


def erase(store: Store, c: Closure, *, actor: str | None = None, reason: str | None = None,
          step: Step | None = None) -> int:
    """Delete the closure in one transaction; returns the tombstone id."""
    step = step or (lambda _name: None)
    who = actor_name(store, actor)
    try:
        with store.write() as conn:
            vec.ensure_secure_delete(conn)
            vec.delete_chunks_index(conn, [(cid, body) for cid, body, _ in c.chunk_rows])
            step("index")
            for table, columns in c.nullify.items():
                gone = c.delete.get(table, set())
                for column, rows in columns.items():
                    t = rel(table, column)
                    conn.execute(update(t).where(in_json(t.c.rowid, _ids(rows - gone)))
                                 .values({column: None}))
            step("pointers")
            bridges, refs = erasure_bridges(conn, c.delete.get("memory", set()))
            _scrub(conn, c, c.delete, step)
            for table in children_first(c.tables):
                doomed = c.delete.get(table)
                if not doomed:
                    continue
                t = rel(table)
                conn.execute(delete(t).where(in_json(t.c.rowid, _ids(doomed))))
                step(f"delete {table}")
            _bridge(store, conn, bridges, refs)
            tombstone_id = _finish(store, conn, c, who, reason)
            step("tombstone")
    except IntegrityError as exc:
        raise ErasureFailed(f"the erasure would leave records pointing at erased ones "
                            f"({_one_line(exc)}); nothing was changed") from exc
    except DBAPIError as exc:
        raise ErasureFailed(f"the erasure failed in the database ({_one_line(exc)}); nothing "
                            "was changed") from exc
    return tombstone_id


def prepare_redaction(store: Store, c: Closure) -> tuple[dict[str, list[Prepared]],
                                                        list[Source]]:
    """The new chunks of every changed entry, embedded before the write lock is taken."""
    sources: list[Source] = []
    with store.read() as conn:
        for entry_id in sorted(c.rebuild.get("entry", set())):
            row = conn.execute(select(rowid(Entry), col(Entry.content))
                               .where(col(Entry.id) == entry_id)).one()
            body = str(c.scrub.get("entry", {}).get(int(row[0]), {}).get("content", row[1]))
            sources.append(Source("entry", entry_id, body, sha256_text(body)))
    indexer = store.indexer()
    return indexer.prepare({s.content_hash: s.text for s in sources}), sources


def _rewrite_keys(conn: Connection, c: Closure, sources: list[Source]) -> None:
    """A changed entry's idem_key (a keyed hash of the old one) and content_hash."""
    new_hash = {s.source_id: s.content_hash for s in sources}
    for row in c.scrub.get("entry", {}):
        old = conn.execute(select(Entry.id, Entry.idem_key, Entry.content)
                           .where(rowid(Entry) == row)).one()
        conn.execute(update(Entry).where(rowid(Entry) == row).values(
            idem_key="redacted:" + erasure.keyed_hash(conn, "redacted-entry", str(old[1])),
            content_hash=new_hash.get(int(old[0]), sha256_text(old[2])),
            tokens=token_estimate(old[2])))


def _redact_memories(store: Store, conn: Connection, c: Closure) -> None:
    """Changed memories go through the one memory write path: new values, a content hash
    of what they now say, and their chunks rebuilt."""
    for row, values in c.scrub.get("memory", {}).items():
        memory_id = int(conn.execute(select(Memory.id).where(rowid(Memory) == row))
                        .scalar_one())
        memories.update(conn, store, memory_id, values)


def redact(store: Store, c: Closure, *, actor: str | None = None, reason: str | None = None,
           step: Step | None = None) -> int:
    """Rewrite the closure in place in one transaction; returns the tombstone id."""
    step = step or (lambda _name: None)
    who = actor_name(store, actor)
    prepared, sources = prepare_redaction(store, c)
    indexer = store.indexer()
    try:
        with store.write() as conn:
            vec.ensure_secure_delete(conn)
            for source in sources:
                drop_chunks_of(conn, source.source_type, source.source_id)
            step("index")
            _redact_memories(store, conn, c)
            _scrub(conn, c, {"memory": set(c.scrub.get("memory", {}))}, step)
            _rewrite_keys(conn, c, sources)
            indexer.index(conn, sources, prepared)
            step("rebuild")
            for table, rows in c.delete.items():
                t = rel(table)
                conn.execute(delete(t).where(in_json(t.c.rowid, _ids(rows))))
            tombstone_id = _finish(store, conn, c, who, reason)
            step("tombstone")
    except DBAPIError as exc:
        raise ErasureFailed(f"the redaction was refused by the database ({_one_line(exc)}); "
                            "nothing was changed") from exc
    return tombstone_id
