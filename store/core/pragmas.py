"""SQLite's own statements about the schema, which no SQLModel class can express: the tables
``sqlite_master`` lists, a table's columns and foreign keys (``PRAGMA table_info`` /
``foreign_key_list``) and the dangling references ``PRAGMA foreign_key_check`` finds; and
connection control: how a transaction begins and the connection's busy timeout.

With ``store.core.vec`` (sqlite-vec, FTS5) and the migrations, this is the one place raw SQL
is expected (``tests/project/test_raw_sql.py``): records are read and written through the models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, text


def quoted(name: str) -> str:
    """A quoted SQL identifier (a PRAGMA takes a table name, not a bound parameter)."""
    return '"' + name.replace('"', '""') + '"'


def schema_tables(conn: Connection) -> list[tuple[str, str | None]]:
    """(name, CREATE statement) of every table in the database file, by name."""
    if conn.dialect.name == "postgresql":
        from store.core import pg

        return pg.schema_tables(conn)
    rows = conn.exec_driver_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all()
    return [(str(r[0]), r[1]) for r in rows]


def table_info(conn: Connection, table: str) -> Sequence[Any]:  # rows of any width
    """``PRAGMA table_info``: (cid, name, type, notnull, default, pk) per column."""
    if conn.dialect.name == "postgresql":
        from store.core import pg

        return pg.table_info(conn, table)
    return conn.exec_driver_sql(f"PRAGMA table_info({quoted(table)})").all()


def foreign_key_list(conn: Connection, table: str) -> Sequence[Any]:  # rows of any width
    """``PRAGMA foreign_key_list``: (id, seq, parent, column, parent column, on update,
    on delete, match) per foreign key column."""
    if conn.dialect.name == "postgresql":
        from store.core import pg

        return pg.foreign_key_list(conn, table)
    return conn.exec_driver_sql(f"PRAGMA foreign_key_list({quoted(table)})").all()


def foreign_key_check(conn: Connection) -> Sequence[Any]:  # rows of any width
    """``PRAGMA foreign_key_check``: one row per reference to a missing parent row."""
    if conn.dialect.name == "postgresql":
        from store.core import pg

        return pg.foreign_key_check(conn)
    return conn.exec_driver_sql("PRAGMA foreign_key_check").all()


def freelist_count(conn: Connection) -> int:
    """Free pages in the database file (where deleted bytes could linger; 0 after VACUUM)."""
    if conn.dialect.name == "postgresql":
        return 0  # no free-page list on a server: VACUUM FULL rewrites a table whole
    return int(conn.exec_driver_sql("PRAGMA freelist_count").scalar_one())


def sequence(conn: Connection, table: str) -> int:
    """The highest id ever given in an ``AUTOINCREMENT`` table (``sqlite_sequence``), 0 when
    none: a writer that picks ids itself starts above it, so an erased id is never reused."""
    row = conn.execute(text("SELECT seq FROM sqlite_sequence WHERE name = :t"),
                       {"t": table}).first()
    return int(row[0]) if row is not None else 0


def new_ids(conn: Connection, table: str, n: int, highest: int) -> list[int]:
    """``n`` ids for new rows of ``table`` that no row ever had: on SQLite the next ones above
    ``highest`` (the largest id now) and ``sqlite_sequence`` (the caller holds the write
    lock); on a server, from the table's own sequence (no lock: concurrent writers get
    different ones)."""
    if conn.dialect.name == "postgresql":
        from store.core import pg

        return pg.reserve_ids(conn, table, n)
    start = max(int(highest), sequence(conn, table)) + 1
    return list(range(start, start + n))


def placeholder(conn: Connection) -> str:
    """The driver's positional parameter mark for ``exec_driver_sql``: ``?`` (sqlean), ``%s``
    (psycopg)."""
    return "?" if conn.dialect.paramstyle == "qmark" else "%s"


def mmap(conn: Connection, size: int) -> None:
    """Let SQLite read the file through a memory map of up to ``size`` bytes (the recall hot
    path); a server reads its own pages."""
    if conn.dialect.name != "postgresql":
        conn.exec_driver_sql(f"PRAGMA mmap_size = {int(size)}")


def python_functions(conn: Connection) -> bool:
    """Can this connection call Python functions registered on it (SQLite's
    ``create_function``)? Not on a server: a caller matches rows in Python instead."""
    return conn.dialect.name != "postgresql"


def begin(conn: Connection, immediate: bool) -> None:
    """``BEGIN IMMEDIATE`` for a write (the lock taken up front, never mid-way), else
    ``BEGIN``."""
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def busy_timeout(conn: Connection, ms: int) -> None:
    """How long SQLite waits for a lock before it answers "busy" (0: not at all)."""
    conn.exec_driver_sql(f"PRAGMA busy_timeout = {int(ms)}")



def high_water(conn: Connection, table: str) -> int:
    """The highest id ever given in ``table`` by its counter: ``sqlite_sequence`` on SQLite
    (``AUTOINCREMENT`` tables), the table's sequence on PostgreSQL; 0 when it has none."""
    if conn.dialect.name != "postgresql":
        return sequence(conn, table)
    # raw SQL: a serial column's sequence, named by the server
    seq = conn.execute(text("SELECT pg_get_serial_sequence(:t, 'id')"), {"t": table}).scalar()
    if seq is None:
        return 0
    # raw SQL: a sequence's state; its name comes from the server, quoted by it
    last, called = conn.exec_driver_sql(f"SELECT last_value, is_called FROM {seq}").one()
    return int(last) if called else 0


def set_high_water(conn: Connection, table: str, value: int, autoincrement: bool) -> None:
    """Make ``value`` the highest id ever given in ``table`` (a copied store keeps its
    source's, so an id erased there is not given again): ``sqlite_sequence`` for an
    ``AUTOINCREMENT`` table on SQLite (other tables take max(rowid) + 1 there anyway), the
    table's sequence on PostgreSQL (rows copied with their ids do not advance it)."""
    if conn.dialect.name == "postgresql":
        seq = conn.execute(text("SELECT pg_get_serial_sequence(:t, 'id')"),
                           {"t": table}).scalar()
        if seq is not None:
            conn.execute(text("SELECT setval(:s, :v, :called)"),
                         {"s": seq, "v": max(1, int(value)), "called": value > 0})
        return
    if not autoincrement or value <= 0:
        return
    updated = conn.execute(text("UPDATE sqlite_sequence SET seq = :s WHERE name = :t"),
                           {"s": int(value), "t": table}).rowcount
    if not updated:
        conn.execute(text("INSERT INTO sqlite_sequence (name, seq) VALUES (:t, :s)"),
                     {"s": int(value), "t": table})
