"""The closure of a redaction: every value holding a text scope rewritten in place, or, for a
record named by id, its own text and the copies of it (``DERIVED``) replaced whole; the chunks
of changed entries and memories rebuilt; memories whose evidence was redacted flagged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Connection, func
from sqlmodel import col, select

from store.core.errors import NotFound
from store.core.models import Chunk, Entry, Evidence, Memory
from store.privacy.scope import MARK, Matcher, redact_all
from store.privacy.sets import (
    Closure,
    add_rows,
    column_values,
    ids_json,
    import_positions,
    resolve_session,
    rows_where,
    scan,
)
from store.privacy.tables import in_json, rel, rowid

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

# Redacting a record named by id: the columns of its own row replaced whole, and the rows
# that copied its text (table → (pointer columns to it, columns replaced whole)).
OWN = {"entry": ("content", "meta"), "memory": ("name", "description", "body", "invariant",
                                                "front_matter"), "session": ("title",)}
DERIVED = {
    "recall_candidate": ({"entry": "source_id", "memory": "source_id"}, ("excerpt", "label")),
    "recall_trace": ({"entry": "entry_id"}, ("query", "settings")),
    "handoff": ({"entry": "source_entry_id"}, ("path",)),
}


def redact_text(conn: Connection, c: Closure, matcher: Matcher) -> None:
    for table, rows in scan(conn, c.tables, matcher).items():
        if table == "chunk":  # chunks are rebuilt from their source
            for row in rows:
                src = conn.execute(select(Chunk.source_type, Chunk.source_id)
                                   .where(rowid(Chunk) == row)).one()
                c.rebuild.setdefault(str(src[0]), set()).add(int(src[1]))
            continue
        if table == "import_position":  # a path holding it: read the file again next time
            add_rows(c.delete, table, set(rows))
            continue
        keys = c.tables[table].keys
        for row, cols in rows.items():
            cols = [name for name in cols if name not in keys]  # keys cannot be rewritten
            if not cols:
                continue
            t = rel(table, *cols)
            values = conn.execute(select(*(t.c[name] for name in cols))
                                  .where(t.c.rowid == row)).one()
            c.scrub.setdefault(table, {})[row] = {
                name: matcher.redact_in(table, name, v)[0]
                for name, v in zip(cols, values, strict=True)}
        if table in ("entry", "memory") and c.scrub.get(table):
            c.rebuild.setdefault(table, set()).update(
                int(v) for v in column_values(conn, table, "id", set(c.scrub[table])))


def redact_ids(store: Store, conn: Connection, c: Closure) -> None:
    kind, value = c.scope.kind, c.scope.value
    own: dict[str, set[int]] = {}
    if kind == "session":
        sid = resolve_session(store, value)
        c.session_id = sid
        own["entry"] = rows_where(conn, "entry", "session_id", [sid])
        own["session"] = rows_where(conn, "session", "id", [sid])
    else:
        model = Entry if kind == "entry" else Memory
        table = str(model.__tablename__)
        row = conn.execute(select(rowid(model)).where(col(model.id) == int(value))).first()
        if row is None:
            raise NotFound(f"no {table} with id {value}")
        own[table] = {int(row[0])}
    for table, rows in own.items():
        cols = [name for name in OWN[table] if name in c.tables[table].columns]
        t = rel(table, *cols)
        for r in conn.execute(select(t.c.rowid, *(t.c[x] for x in cols))
                              .where(in_json(t.c.rowid, ids_json(rows)))).all():
            c.scrub.setdefault(table, {})[int(r[0])] = {
                name: redact_all(v) for name, v in zip(cols, r[1:], strict=True)
                if isinstance(v, str) and v}
            c.texts.extend(v for v in r[1:] if isinstance(v, str) and v and v[:1] not in "{[")
        if table in ("entry", "memory"):
            c.rebuild.setdefault(table, set()).update(rows)
    for table, (pointers, copied) in DERIVED.items():
        if table not in c.tables:
            continue
        for target, column in pointers.items():
            ids = c.rebuild.get(target)
            if not ids:
                continue
            t = rel(table, column, "source_type", *copied)
            query = (select(t.c.rowid, *(t.c[x] for x in copied))
                     .where(in_json(t.c[column], ids_json(ids))))
            if table == "recall_candidate":
                query = query.where(t.c.source_type == target)
            for r in conn.execute(query).all():
                c.scrub.setdefault(table, {})[int(r[0])] = {
                    name: redact_all(v) for name, v in zip(copied, r[1:], strict=True)
                    if isinstance(v, str) and v and v != MARK}


def redact_followups(conn: Connection, c: Closure) -> None:
    """Memories whose evidence was redacted are flagged; import positions of changed files
    go; what importers must refuse from now on is fingerprinted."""
    entries = c.rebuild.get("entry", set())
    memories = c.rebuild.get("memory", set())
    if entries:
        for memory_id, n in conn.execute(
                select(Evidence.memory_id, func.count())
                .where(in_json(col(Evidence.entry_id), ids_json(entries)))
                .group_by(col(Evidence.memory_id))).all():
            if int(memory_id) not in memories:
                c.review[int(memory_id)] = (f"{n} of its evidence entries were redacted: "
                                            "review whether it still stands")
        import_positions(conn, c, entries)


