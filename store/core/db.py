"""The SQLite file: an extension-capable driver, sqlite-vec, WAL, owner-only permissions; or
a PostgreSQL server with pgvector (``store.core.pg``), named by a ``postgresql://`` URL.

The stdlib ``sqlite3`` here cannot load extensions, so the engine is built on ``sqlean``
(SQLite 3.50 with ``enable_load_extension``) and sqlite-vec is loaded on every new connection.
This module, ``store/core/vec.py``, ``pragmas.py`` and ``pg.py`` are the only places that know
which backend a store is on.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlean
from sqlalchemy import Connection, Engine, Select, create_engine, event
from sqlalchemy import select as sa_select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.pool import NullPool, QueuePool
from sqlmodel import Session, col

from store.core import faults, pragmas
from store.core.errors import StoreError, StoreLocked
# sqlite-vec's extension by its path, without importing ``sqlite_vec`` (it imports NumPy)
from store.core.lite import vec_extension as vec_extension  # re-exported
from store.core.location import default_folder as default_folder  # re-exported
from store.core.location import default_location as default_location  # re-exported
from store.core.location import default_store_path as default_store_path  # re-exported
from store.core.location import is_url as is_url  # re-exported
from store.core.location import local_anchor, mask_url
from store.core.location import not_a_folder, refused


def on_server(engine: Engine) -> bool:
    """Is ``engine`` on a PostgreSQL server (else a SQLite file)?"""
    return engine.dialect.name == "postgresql"


def open_server(url: str, keep: int, ef_search: int,
                read_only: bool = False) -> tuple[Engine, Path, str]:
    """(engine, this machine's folder for the store's local files, the URL to show) for a
    store on a PostgreSQL server; a one-line ``StoreError`` when it cannot be reached, refuses
    the login or has no pgvector. ``read_only``: a read-only session, the server refusing
    every write on it (``pg.READ_ONLY_OPTIONS``)."""
    from store.core import pg

    pg.check_server(url)
    anchor = local_anchor(url)
    try:
        anchor.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise StoreError(f"cannot create {anchor.parent} (this machine's files of the store "
                         f"{mask_url(url)}): {exc.strerror or exc}") from exc
    engine = pg.make_engine(url, keep, ef_search, read_only=read_only)
    faults.install(engine)
    return engine, anchor, mask_url(url)


def upsert(conn: Connection, model: Any) -> Any:
    """``INSERT`` into ``model``'s table with ``on_conflict_do_update`` / ``_do_nothing`` and
    ``.excluded``, in the connection's own dialect (SQLite's and PostgreSQL's read the same)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(model)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(model)


def insert_ignore(conn: Connection, model: Any) -> Any:
    """``INSERT`` that skips a row a unique key already holds: SQLite's ``INSERT OR
    IGNORE``, PostgreSQL's ``ON CONFLICT DO NOTHING`` (under concurrent writers too: the
    server's unique index decides, no lock is taken first)."""
    if conn.dialect.name == "postgresql":
        return upsert(conn, model).on_conflict_do_nothing()
    from sqlalchemy import insert

    return insert(model).prefix_with("OR IGNORE")


def change_counter(conn: Connection) -> int:
    """A cheap "did anything change?" on a server (see ``pg.commit_counter``)."""
    from store.core import pg

    return pg.commit_counter(conn)


def database_identity(conn: Connection) -> str | None:
    """Which database a server connection reaches — its name and its ``pg_database`` oid,
    which a database dropped and made again under the same name does not keep — or None on
    SQLite (a file's identity is its device and inode). No credential is in it."""
    if conn.dialect.name != "postgresql":
        return None
    row = conn.exec_driver_sql("SELECT current_database(), oid FROM pg_database "
                               "WHERE datname = current_database()").one()
    return f"{row[0]}#{row[1]}"


def database_size(conn: Connection) -> int | None:
    """The bytes a server store's database takes on the server (its tables, TOAST and
    indexes: ``pg_database_size``), or None on SQLite (the file's size says it)."""
    if conn.dialect.name != "postgresql":
        return None
    return int(conn.exec_driver_sql("SELECT pg_database_size(current_database())").scalar_one())


def backend_versions(conn: Connection) -> tuple[str, str, str | None]:
    """(backend, its version, the vector extension's version)."""
    if conn.dialect.name == "postgresql":
        from store.core import pg

        server, vector = pg.server_versions(conn)
        return "postgresql", server, vector
    from store.core import vec

    return "sqlite", str(sqlean.sqlite_version), vec.version(conn)


def after_mass_delete(engine: Engine, tables: list[str]) -> tuple[list[str], list[str]]:
    """After deleting many rows of ``tables`` (compaction): on a server, vacuum them so the
    vector index drops the dead entries now (``pg.vacuum_tables``: (vacuumed, skipped as not
    this role's)); a SQLite file's sqlite-vec table removes a row when it is deleted: ([], [])."""
    if not on_server(engine):
        return [], []
    from store.core import pg

    return pg.vacuum_tables(engine, tables)


def scrub_server(engine: Engine, tables: list[str]) -> list[tuple[str, float]]:
    """After an erasure on a server: rebuild the touched tables (``pg.vacuum_full``)."""
    from store.core import pg

    return pg.vacuum_full(engine, tables)


def server_files(engine: Engine, tables: list[str]) -> tuple[list[Path], str | None]:
    """The touched tables' files, when this process can read the server's data directory
    (``pg.table_files``); else ([], why not)."""
    from store.core import pg

    with engine.connect() as conn:
        files, why = pg.table_files(conn, tables)
    return [Path(f) for f in files], why


def server_size(conn: Connection) -> int:
    """The database's size on the server, in bytes."""
    from store.core import pg

    return pg.size_bytes(conn)


def ensure_file(path: Path) -> bool:
    """Create the store file with owner-only permissions; True if created.

    Only lca-tui's own folder (``default_folder``) is created on demand: a store named in a
    folder that does not exist is a typo far more often than a wish, so it is refused rather
    than silently made somewhere unexpected."""
    try:
        blocked = refused(path, read_only=False)
        if blocked:
            raise StoreError(blocked)
        if not path.parent.is_dir():  # lca-tui's own folder, the one made on demand
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.exists():
            return False
        # a symlink to a file not made yet: the file it names (SQLite opens without creating)
        real = Path(os.path.realpath(path)) if path.is_symlink() else path
        try:
            fd = os.open(real, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:  # another process created it first
            return False
        os.close(fd)
        os.chmod(real, 0o600)
    except PermissionError as exc:
        where = exc.filename or path
        raise StoreError(f"cannot create the store {path}: permission denied on {where} (a "
                         "read-only folder?); name a writable place with --store or "
                         "$LCA_STORE") from exc
    except OSError as exc:
        raise StoreError(not_a_folder(path) or f"cannot create the store {path}: "
                         f"{exc.strerror or exc}") from exc
    return True


def schema_version_of(path: Path) -> int | None:
    """The schema version recorded in an existing store file, read without changing a byte
    (a read-only connection, no journal-mode switch); None when it cannot be read that way
    (an empty or new file, or a WAL store whose shared-memory file cannot be opened)."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        conn = sqlean.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlean.Error:
        return None
    try:
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                              "name = 'schema_migration'").fetchone()
        if not exists:
            return 0
        return int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migration")
                   .fetchone()[0])
    except sqlean.Error:
        return None
    finally:
        conn.close()


def make_engine(path: Path, busy_timeout_ms: int = 5000, keep: int = 0,
                read_only: bool = False) -> Engine:
    """An engine on ``path`` whose every connection has sqlite-vec, WAL and a busy timeout.

    ``keep`` 0 (NullPool): each checkout opens its own connection and closes it after, so a
    short-lived process holds nothing open. A warm process (the daemon) keeps up to ``keep``
    connections between checkouts (QueuePool: one checkout, one thread, rolled back on
    return, so no snapshot is held between transactions): opening one costs about a
    millisecond (sqlite-vec loaded, pragmas set), several times a hook's every transaction.
    """
    pooling: dict[str, Any] = ({"poolclass": NullPool} if keep <= 0 else
                               {"poolclass": QueuePool, "pool_size": keep,
                                "max_overflow": 32, "pool_timeout": 60})
    engine = create_engine(
        f"sqlite:///{path}",
        module=sqlean,
        connect_args={"check_same_thread": False, "timeout": busy_timeout_ms / 1000},
        **pooling,
    )

    # Every connection opens the file read-write but never creates it (SQLite's mode=rw):
    # ``ensure_file`` makes a new store; a store deleted under a running process (the
    # daemon) must not come back as an empty file without a schema at its path.
    # ``read_only``: SQLite's mode=ro, so the file itself refuses any write (and the journal
    # mode is left as it is: switching it is a write).
    uri = f"{path.resolve().as_uri()}?mode={'ro' if read_only else 'rw'}"

    @event.listens_for(engine, "do_connect")
    def _open_existing(_dialect, _record, _cargs, cparams):  # type: ignore[no-untyped-def]
        return sqlean.connect(uri, uri=True, **cparams)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_conn.enable_load_extension(True)
        dbapi_conn.load_extension(vec_extension())
        dbapi_conn.enable_load_extension(False)
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if not read_only:
            cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        # Deleted content is overwritten with zeros, not left in free space of the file
        # (privacy: an erasure must remove the bytes, not only the rows).
        cur.execute("PRAGMA secure_delete = ON")
        cur.close()
        # Transactions are begun by SQLAlchemy (below), so DDL is transactional too.
        dbapi_conn.isolation_level = None

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # popped: a kept connection's ``info`` outlives this checkout (``keep``)
        immediate = conn.info.pop("lca_write", False)
        probe = conn.info.pop("lca_probe", False)
        if not (immediate and probe):
            pragmas.begin(conn, immediate)
            return
        pragmas.busy_timeout(conn, 0)  # a first try that does not wait for the lock
        try:
            pragmas.begin(conn, True)
        finally:
            pragmas.busy_timeout(conn, busy_timeout_ms)

    faults.install(engine)
    return engine


def _busy(exc: OperationalError) -> bool:
    reason = str(exc.orig)
    return "locked" in reason or "busy" in reason


WAITING = "-waiting"  # a folder beside the store: one file per writer waiting for the lock
_YIELD_POLL = 0.005


def _waiting_dir(engine: Engine) -> Path:
    return Path(str(engine.url.database) + WAITING)


def _announce(engine: Engine) -> Path | None:
    """Say "a writer is waiting for the lock" (a file named after this process and thread),
    so that long work between its short transactions lets it in (``yield_to_writers``)."""
    folder = _waiting_dir(engine)
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        mark = folder / f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
        mark.touch()
    except OSError:
        return None  # no signal: the writer still waits and retries, only less fairly
    return mark


def yield_to_writers(engine: Engine, limit: float = 2.0) -> None:
    """Between two transactions of long work (reindex): wait while another writer waits for
    the lock, so it gets it now — without this it polls the lock and the long work, taking
    it again at once, starves it for its whole run. At most ``limit`` seconds (a waiter's
    own transaction is short); a mark left by a process that died is removed."""
    if on_server(engine):
        return  # no store-wide lock on a server: nobody waits for one
    folder = _waiting_dir(engine)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            marks = list(folder.iterdir())
        except OSError:
            return
        alive = [m for m in marks if _alive(m)]
        if not alive:
            return
        time.sleep(_YIELD_POLL)


def _alive(mark: Path) -> bool:
    """Is the process that left ``mark`` still running? (A dead one's mark is removed.)"""
    try:
        pid = int(mark.name.split("-", 1)[0])
        os.kill(pid, 0)
    except PermissionError:
        return True
    except (ValueError, ProcessLookupError):
        mark.unlink(missing_ok=True)
        return False
    except OSError:
        return False
    return True


@contextmanager
def write(engine: Engine, retry_seconds: float = 120.0) -> Iterator[Connection]:
    """One write transaction (BEGIN IMMEDIATE: waits for the lock up front, never mid-way).

    A first try does not wait; when the lock is held, the writer announces that it waits
    (``yield_to_writers``: long work lets it in between two of its transactions), then
    SQLite waits ``busy_timeout`` for the lock; when another writer holds it longer, the
    writer retries (backing off up to 1 s) until ``retry_seconds`` have passed, and only then
    gives up with ``StoreLocked``: a write waiting on a busy store is late, never lost."""
    deadline = time.monotonic() + retry_seconds
    pause = 0.05
    mark: Path | None = None
    probe = True
    try:
        while True:
            conn = engine.connect()
            # read and popped by the "begin" listener (a kept connection's info dict outlives
            # this checkout)
            conn.info["lca_write"] = True
            conn.info["lca_probe"] = probe
            try:
                transaction = conn.begin()
            except OperationalError as exc:
                conn.close()
                if not _busy(exc):
                    raise
                if probe:  # held: say so, then wait for it as SQLite does
                    probe = False
                    mark = _announce(engine)
                    continue
                if time.monotonic() >= deadline:
                    raise StoreLocked(
                        "the store is busy: another process has held its write lock for longer "
                        f"than {retry_seconds:g} s (store.write_retry_seconds); try again, or "
                        "raise that setting") from exc
                time.sleep(pause)
                pause = min(1.0, pause * 2)
                continue
            break
    finally:
        if mark is not None:
            mark.unlink(missing_ok=True)
    with conn, transaction:
        yield conn


def columns(*attributes: Any) -> Select[Any]:
    """``select`` of model attributes (``columns(Entry.id, Entry.seq)``) for Core reads of
    many columns, where SQLModel's typed ``select`` stops at four; SQL expressions
    (``func.count()``, labels) pass as they are."""
    return sa_select(*(col(a) if isinstance(a, QueryableAttribute) else a
                       for a in attributes))


def orm(conn: Connection) -> Session:
    """A SQLModel session on ``conn`` that joins its transaction: ``add`` / ``exec`` go
    through the models, and the caller's ``read()`` / ``write()`` block commits or rolls back.
    Objects are not expired on flush, so models read here stay usable as plain values."""
    return Session(bind=conn, expire_on_commit=False, autoflush=True,
                   join_transaction_mode="rollback_only")


def checkpoint_truncate(engine: Engine, attempts: int = 3) -> tuple[bool, int]:
    """Copy the WAL into the database file and truncate the WAL to zero bytes.

    Returns (done, WAL bytes left). SQLite waits (busy timeout) for readers to leave the WAL;
    a reader that holds a snapshot throughout makes it fail, and this says so rather than
    pretending: the caller reports the WAL as not truncated.
    """
    wal = Path(f"{engine.url.database}-wal")
    raw = engine.raw_connection()
    try:
        conn = raw.driver_connection
        assert conn is not None
        done = False
        for _ in range(max(1, attempts)):
            try:
                busy, _log, _moved = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlean.OperationalError:
                continue
            if not busy:
                done = True
                break
    finally:
        raw.close()
    left = wal.stat().st_size if wal.exists() else 0
    return done and left == 0, left


def vacuum(engine: Engine) -> None:
    """Rebuild the database file (outside any transaction): free pages and the unused space
    of pages, where earlier deletes may have left bytes, are gone afterwards."""
    raw = engine.raw_connection()
    try:
        conn = raw.driver_connection
        assert conn is not None
        conn.execute("VACUUM")
    finally:
        raw.close()
