"""The SQLite file: an extension-capable driver, sqlite-vec, WAL, owner-only permissions.

The stdlib ``sqlite3`` here cannot load extensions, so the engine is built on ``sqlean``
(SQLite 3.50 with ``enable_load_extension``) and sqlite-vec is loaded on every new connection.
This module and ``store/vec.py`` are the only places that know the backend is SQLite.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlean
import sqlite_vec
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool
from sqlmodel import Session

from store.core.errors import StoreError, StoreLocked
from store.core.location import default_store_path

__all__ = ["default_store_path", "ensure_file", "make_engine", "orm", "write"]


def ensure_file(path: Path) -> bool:
    """Create the store file (and its folder) with owner-only permissions; True if created."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a store file: name a file with --store")
    if path.exists():
        return False
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:  # another process created it first
        return False
    os.close(fd)
    os.chmod(path, 0o600)
    return True


def make_engine(path: Path, busy_timeout_ms: int = 5000) -> Engine:
    """An engine on ``path`` whose every connection has sqlite-vec, WAL and a busy timeout.

    NullPool: each checkout opens its own connection, so worker threads never share one and
    a long-lived reader holds no snapshot between queries.
    """
    engine = create_engine(
        f"sqlite:///{path}",
        module=sqlean,
        poolclass=NullPool,
        connect_args={"check_same_thread": False, "timeout": busy_timeout_ms / 1000},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_conn.enable_load_extension(True)
        sqlite_vec.load(dbapi_conn)
        dbapi_conn.enable_load_extension(False)
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()
        # Transactions are begun by SQLAlchemy (below), so DDL is transactional too.
        dbapi_conn.isolation_level = None

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.info.get("lca_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


@contextmanager
def write(engine: Engine) -> Iterator[Connection]:
    """One write transaction (BEGIN IMMEDIATE: waits for the lock up front, never mid-way)."""
    with engine.connect() as conn:
        conn.info["lca_write"] = True
        try:
            transaction = conn.begin()
        except OperationalError as exc:
            if "locked" in str(exc.orig) or "busy" in str(exc.orig):
                raise StoreLocked(
                    "the store is busy: another process has held its write lock for longer "
                    "than store.busy_timeout_ms; try again, or raise that setting") from exc
            raise
        with transaction:
            yield conn


def orm(conn: Connection) -> Session:
    """A SQLModel session on ``conn`` that joins its transaction: ``add`` / ``exec`` go
    through the models, and the caller's ``read()`` / ``write()`` block commits or rolls back.
    Objects are not expired on flush, so models read here stay usable as plain values."""
    return Session(bind=conn, expire_on_commit=False, autoflush=True,
                   join_transaction_mode="rollback_only")
