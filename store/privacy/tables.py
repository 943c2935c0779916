"""Every relational table of the store, its text columns and its foreign keys, read from the
migrated schema at run time.

The closure and the substring probe walk every table this finds, so a capability that adds a
table (governance's proposals and their edit history, health's scans, ...) is covered without
a change here: its text columns are scanned and its foreign keys followed. The schema read
here is the one ``tests/test_schema.py`` proves equal to the SQLModel classes; reading it from
the file rather than from ``SQLModel.metadata`` also covers a table whose models module this
process has not imported. Virtual tables (``vec0``, FTS5) and their shadow tables are not
relational: their rows are removed with the chunks they index (``store.core.vec``).

Queries over tables discovered at run time are built here with quoted identifiers: no model
class can name a table that does not exist yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

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


def q(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def relational_tables(conn: Connection) -> dict[str, TableInfo]:
    """name → TableInfo for every relational table (not virtual, not a shadow table)."""
    # raw SQL: PRAGMA schema discovery (sqlite_master, table_info, foreign_key_list)
    rows = conn.exec_driver_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all()
    virtual = [n for n, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")]
    out: dict[str, TableInfo] = {}
    for name, sql in rows:
        if name.startswith("sqlite_") or name in virtual or any(
                name.startswith(f"{v}_") for v in virtual):
            continue
        if "WITHOUT ROWID" in (sql or "").upper():
            raise RuntimeError(f"table {name} has no rowid: privacy cannot address its rows")
        # raw SQL: PRAGMA schema discovery (sqlite_master, table_info, foreign_key_list)
        cols = conn.exec_driver_sql(f"PRAGMA table_info({q(name)})").all()
        info = TableInfo(
            name=name, columns=[c[1] for c in cols],
            text_columns=[c[1] for c in cols
                          if any(t in str(c[2]).upper() for t in _TEXT_TYPES) or not c[2]],
            nullable={c[1] for c in cols if not c[3] and not c[5]},
            primary_key={c[1] for c in cols if c[5]})
        # raw SQL: PRAGMA schema discovery (sqlite_master, table_info, foreign_key_list)
        for fk in conn.exec_driver_sql(f"PRAGMA foreign_key_list({q(name)})").all():
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
