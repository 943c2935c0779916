"""The closure of a redaction: every value holding a text scope rewritten in place, or, for a
record named by id, its own text and the copies of it (``DERIVED``) replaced whole; the chunks
of changed entries and memories rebuilt; memories whose evidence was redacted flagged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Connection, text

from store.core.errors import NotFound
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
from store.privacy.tables import q

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
            for rowid in rows:
                # raw SQL: privacy works on rows of tables discovered at run time (privacy/tables.py), by rowid, which no model maps
                src = conn.execute(text("SELECT source_type, source_id FROM chunk WHERE "
                                        "rowid = :r"), {"r": rowid}).one()
                c.rebuild.setdefault(str(src[0]), set()).add(int(src[1]))
            continue
        if table == "import_position":  # a path holding it: read the file again next time
            add_rows(c.delete, table, set(rows))
            continue
        keys = c.tables[table].keys
        for rowid, cols in rows.items():
            cols = [col for col in cols if col not in keys]  # keys cannot be rewritten
            if not cols:
                continue
            # raw SQL: privacy works on rows of tables discovered at run time (privacy/tables.py), by rowid, which no model maps
            values = conn.execute(text(f"SELECT {', '.join(q(col) for col in cols)} FROM "
                                       f"{q(table)} WHERE rowid = :r"), {"r": rowid}).one()
            c.scrub.setdefault(table, {})[rowid] = {
                col: matcher.redact(v)[0] for col, v in zip(cols, values, strict=True)}
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
        table = "entry" if kind == "entry" else "memory"
        # raw SQL: privacy works on rows of tables discovered at run time (privacy/tables.py), by rowid, which no model maps
        row = conn.execute(text(f"SELECT rowid FROM {table} WHERE id = :i"),
                           {"i": int(value)}).first()
        if row is None:
            raise NotFound(f"no {table} with id {value}")
        own[table] = {int(row[0])}
    for table, rows in own.items():
        cols = [col for col in OWN[table] if col in c.tables[table].columns]
        # raw SQL: privacy works on rows of tables discovered at run time (privacy/tables.py), by rowid, which no model maps
        for r in conn.execute(text(f"SELECT rowid, {', '.join(q(x) for x in cols)} FROM "
                                   f"{q(table)} WHERE rowid IN (SELECT value FROM json_each(:i))"),
                              {"i": ids_json(rows)}).all():
            c.scrub.setdefault(table, {})[int(r[0])] = {
                col: redact_all(v) for col, v in zip(cols, r[1:], strict=True)
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
            where = f"{q(column)} IN (SELECT value FROM json_each(:i))"
            if table == "recall_candidate":
                where += " AND source_type = :t"
            # raw SQL: privacy works on rows of tables discovered at run time (privacy/tables.py), by rowid, which no model maps
            for r in conn.execute(text(f"SELECT rowid, {', '.join(q(x) for x in copied)} "
                                       f"FROM {q(table)} WHERE {where}"),
                                  {"i": ids_json(ids), "t": target}).all():
                c.scrub.setdefault(table, {})[int(r[0])] = {
                    col: redact_all(v) for col, v in zip(copied, r[1:], strict=True)
                    if isinstance(v, str) and v and v != MARK}


def redact_followups(conn: Connection, c: Closure) -> None:
    """Memories whose evidence was redacted are flagged; import positions of changed files
    go; what importers must refuse from now on is fingerprinted."""
    entries = c.rebuild.get("entry", set())
    memories = c.rebuild.get("memory", set())
    if entries:
        # raw SQL: privacy works on rows of tables discovered at run time (privacy/tables.py), by rowid, which no model maps
        for memory_id, n in conn.execute(text(
                "SELECT memory_id, COUNT(*) FROM evidence WHERE entry_id IN (SELECT value FROM "
                "json_each(:i)) GROUP BY memory_id"), {"i": ids_json(entries)}).all():
            if int(memory_id) not in memories:
                c.review[int(memory_id)] = (f"{n} of its evidence entries were redacted: "
                                            "review whether it still stands")
        import_positions(conn, c, entries)


