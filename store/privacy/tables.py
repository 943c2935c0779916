"""Every relational table of the store, its text columns and its foreign keys, read from the
migrated schema at run time.

The closure and the substring probe walk every table this finds, so a capability that adds a
table (governance's proposals and their edit history, health's scans, ...) is covered without
a change here: its text columns are scanned and its foreign keys followed. The schema read
here is the one ``tests/store/test_schema.py`` proves equal to the SQLModel classes; reading it from
the file rather than from ``SQLModel.metadata`` also covers a table whose models module this
process has not imported. Virtual tables (``vec0``, FTS5) and their shadow tables are not
relational: their rows are removed with the chunks they index (``store.core.vec``).

Rows are addressed by ``rowid`` (a session's or an import position's key is text). Tables with
a model are read and written through it (``rowid(Entry)`` for the rowid no model declares);
tables discovered at run time through ``rel(name, columns)``, a SQLAlchemy Core handle built
from the discovered schema (no model class can name a table that does not exist yet), with
SQLAlchemy quoting the identifiers. Sets of ids travel as one JSON parameter (``in_json``), so
a closure of any size is one statement, whatever SQLite's limit on bound variables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Integer,
    TableClause,
    column,
    func,
    literal_column,
    select,
    table,
)
from sqlmodel import SQLModel

from store.core import pragmas

# Bookkeeping that holds no user content by construction and is never part of a closure
# (the substring probe still scans it: content found there is a failure to report).
BOOKKEEPING = frozenset({"schema_migration", "store_meta", "erasure_fingerprint", "tombstone",
                         "erasure_verification", "erasure_probe"})
_TEXT_TYPES = ("TEXT", "CHAR", "CLOB", "JSON")


@dataclass(frozen=True)
class ForeignKey:
    column: str
    parent: str
    parent_column: str
    on_delete: str  # CASCADE, SET NULL, NO ACTION, RESTRICT, SET DEFAULT


@dataclass
class TableInfo:
    name: str
    columns: list[str]
    text_columns: list[str]
    nullable: set[str]
    primary_key: set[str] = field(default_factory=set)
    foreign_keys: list[ForeignKey] = field(default_factory=list)

    @property
    def keys(self) -> set[str]:
        """Columns never rewritten in place: the primary key and foreign keys (a row whose
        key holds the text can only be deleted)."""
        return self.primary_key | {fk.column for fk in self.foreign_keys}


def dbapi(conn: Connection) -> Any:
    """The driver's own connection under ``conn`` (to register a Python SQL function)."""
    raw = conn.connection.driver_connection
    assert raw is not None
    return raw


q = pragmas.quoted  # a quoted SQL identifier


def rel(name: str, *columns: str) -> TableClause:
    """A Core handle on a table discovered at run time: its ``rowid`` and ``columns``."""
    return table(name, column("rowid", Integer), *(column(c) for c in columns))


def rowid(model: type[SQLModel]) -> ColumnElement[int]:
    """The ``rowid`` of a model's table (SQLite's implicit key, which no model declares)."""
    return literal_column(f"{q(str(model.__tablename__))}.rowid", Integer)


def in_json(expr: Any, values: str) -> ColumnElement[bool]:
    """``expr IN (SELECT value FROM json_each(:values))``: ``values`` is a JSON list."""
    return expr.in_(select(func.json_each(values).table_valued("value").c.value))


def relational_tables(conn: Connection) -> dict[str, TableInfo]:
    """name → TableInfo for every relational table (not virtual, not a shadow table)."""
    rows = pragmas.schema_tables(conn)
    virtual = [n for n, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")]
    out: dict[str, TableInfo] = {}
    for name, sql in rows:
        if name.startswith("sqlite_") or name in virtual or any(
                name.startswith(f"{v}_") for v in virtual):
            continue
        if "WITHOUT ROWID" in (sql or "").upper():
            raise RuntimeError(f"table {name} has no rowid: privacy cannot address its rows")
        cols = pragmas.table_info(conn, name)
        info = TableInfo(
            name=name, columns=[c[1] for c in cols],
            text_columns=[c[1] for c in cols
                          if any(t in str(c[2]).upper() for t in _TEXT_TYPES) or not c[2]],
            nullable={c[1] for c in cols if not c[3] and not c[5]},
            primary_key={c[1] for c in cols if c[5]})
        for fk in pragmas.foreign_key_list(conn, name):
            info.foreign_keys.append(ForeignKey(fk[3], fk[2], fk[4] or "rowid",
                                                str(fk[6] or "NO ACTION").upper()))
        out[name] = info
    return out


def children_first(tables: dict[str, TableInfo]) -> list[str]:
    """Table names ordered so that every table comes before the tables it points at (rows
    are deleted in this order: a child never outlives its parent)."""
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(name: str) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:  # a cycle (a self reference): already being placed
            return
        state[name] = 1
        for other, info in sorted(tables.items()):
            if other != name and any(fk.parent == name for fk in info.foreign_keys):
                visit(other)
        state[name] = 2
        order.append(name)

    for name in sorted(tables):
        visit(name)
    return order
