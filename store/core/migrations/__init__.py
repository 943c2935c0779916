"""Numbered forward migrations.

Each module ``mNNNN_<name>.py`` here defines ``VERSION`` (its number), ``NAME`` and
``STATEMENTS`` (SQL run in order, in one transaction). A migration is frozen once released:
later capabilities add a new module instead of editing an old one. A store whose schema is
newer than every migration known here is refused.

On a PostgreSQL server a new store is not built by replaying these: the SQLModel classes are
the schema (``create_all``, plus ``store.core.pg.EXTRA_DDL``), stamped with every migration
known at that time. Every later migration runs on both backends: its module defines
``POSTGRES_STATEMENTS`` too (what it does there — possibly nothing, ``[]``, when its SQL only
concerns SQLite's own objects); a migration without them cannot be applied to a server store
and says so instead of running SQLite's SQL there.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from sqlalchemy import Connection, Engine, text

from store.core.db import write
from store.core.errors import StoreError, StoreTooNew
from store.core.lite import migration_numbers
from store.core.timeutil import now_iso
from store.core.version import CODE_VERSION


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]
    # A table rebuild (drop and rename) runs with foreign keys off, or the DROP would
    # cascade into the children; ``PRAGMA foreign_key_check`` must pass before it commits.
    foreign_keys_off: bool = False
    # What it runs on PostgreSQL (None: not written for a server; see the module docstring).
    postgres: tuple[str, ...] | None = None


def _load(module: ModuleType) -> Migration:
    on_pg = getattr(module, "POSTGRES_STATEMENTS", None)
    return Migration(int(module.VERSION), str(module.NAME), tuple(module.STATEMENTS),
                     bool(getattr(module, "FOREIGN_KEYS_OFF", False)),
                     None if on_pg is None else tuple(on_pg))


def _numbered() -> dict[int, str]:
    """Every migration module's number and name, read from the package's files without
    importing one (``lite.migration_numbers``)."""
    return migration_numbers(__path__)


def newest_version() -> int:
    """The newest schema version this code knows (0 with no migration)."""
    return max(_numbered(), default=0)


def known_migrations() -> list[Migration]:
    """Every migration in this package, in version order; numbers must be unique, and each
    module's ``VERSION`` the number its name starts with."""
    found: dict[int, Migration] = {}
    for number, name in sorted(_numbered().items()):
        migration = _load(importlib.import_module(f"{__name__}.{name}"))
        if migration.version != number:
            raise RuntimeError(f"migration {name} says VERSION {migration.version}")
        found[migration.version] = migration
    return [found[v] for v in sorted(found)]


def current_version(conn: Connection) -> int:
    if conn.dialect.name == "postgresql":
        from store.core import pg

        return pg.current_version(conn)
    exists = conn.exec_driver_sql(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migration'"
    ).first()
    if not exists:
        return 0
    return int(conn.exec_driver_sql("SELECT COALESCE(MAX(version), 0) FROM schema_migration")
               .scalar_one())


def _applied(conn: Connection) -> set[int]:
    if conn.dialect.name == "postgresql":
        from store.core import pg

        return pg.applied(conn)
    if current_version(conn) == 0:
        return set()
    return {int(r[0]) for r in conn.exec_driver_sql("SELECT version FROM schema_migration")}


def migrate(engine: Engine, target: int | None = None) -> list[int]:
    """Apply the pending migrations up to ``target`` (all by default); returns those applied.

    The version is read under the write lock, so processes opening a new store at the same
    time apply each migration once. Each migration is one transaction.
    """
    if engine.dialect.name == "postgresql":
        migrations = known_migrations()
        return _migrate_server(engine, migrations,
                               migrations[-1].version if migrations else 0, target)
    numbered = _numbered()
    newest = max(numbered, default=0)
    with engine.connect() as conn:
        have = current_version(conn)
        done = _applied(conn)
    _refuse_newer(have, newest)
    if numbered.keys() <= done:  # current: the common case, no migration module imported
        return []
    migrations = known_migrations()
    applied: list[int] = []
    for migration in migrations:
        # Each migration not recorded yet, in order: one numbered below the store's highest
        # (branches merged in another order than their numbers) is applied too.
        if migration.version in done or (target is not None and migration.version > target):
            continue
        if migration.foreign_keys_off:
            if _apply_rebuild(engine, migration, newest):
                applied.append(migration.version)
            continue
        with write(engine) as conn:
            _refuse_newer(current_version(conn), newest)
            if migration.version in _applied(conn):
                continue
            conn.exec_driver_sql(
                "CREATE TABLE IF NOT EXISTS schema_migration ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                " applied_at TEXT NOT NULL, code_version TEXT NOT NULL)"
            )
            for statement in migration.statements:
                conn.exec_driver_sql(statement)
            conn.execute(
                text("INSERT INTO schema_migration VALUES (:v, :n, :t, :c)"),
                {"v": migration.version, "n": migration.name, "t": now_iso(), "c": CODE_VERSION},
            )
        applied.append(migration.version)
    return applied


def _migrate_server(engine: Engine, migrations: list[Migration], newest: int,
                    target: int | None) -> list[int]:
    """On PostgreSQL: create a new store at the current version (the SQLModel classes,
    stamped), else apply each later migration's ``POSTGRES_STATEMENTS``, one transaction each,
    under an advisory lock (processes opening one store at once apply each once)."""
    from sqlmodel import SQLModel

    from store.core import pg
    from store.core.migrations import _models  # noqa: F401  (registers every table)

    stamp = [(m.version, m.name) for m in migrations
             if target is None or m.version <= target]
    with engine.begin() as conn:
        if pg.create_schema(conn, SQLModel.metadata, stamp, now_iso(), CODE_VERSION):
            return [v for v, _ in stamp]
        # the common case, a store at the current version: one look at the ledger, not a
        # transaction per known migration (each a few round trips to the server)
        _refuse_newer(pg.current_version(conn), newest)
        done = pg.applied(conn)
    applied: list[int] = []
    for migration in migrations:
        if target is not None and migration.version > target or migration.version in done:
            continue
        with engine.begin() as conn:
            pg.lock_schema(conn)
            _refuse_newer(pg.current_version(conn), newest)
            if migration.version in pg.applied(conn):
                continue
            if migration.postgres is None:
                raise StoreError(f"migration {migration.version} ({migration.name}) has no "
                                 "PostgreSQL statements: this lca-tui cannot upgrade a store on "
                                 "a server past it")
            for statement in migration.postgres:
                conn.exec_driver_sql(statement)
            pg.ensure_rowids(conn)  # a table it added gets its rowid, as created ones have
            pg.store_uncompressed(conn)  # and its text columns stored uncompressed
            conn.execute(
                text("INSERT INTO schema_migration VALUES (:v, :n, :t, :c)"),
                {"v": migration.version, "n": migration.name, "t": now_iso(), "c": CODE_VERSION},
            )
        applied.append(migration.version)
    return applied


_LEDGER = ("CREATE TABLE IF NOT EXISTS schema_migration (version INTEGER PRIMARY KEY, "
           "name TEXT NOT NULL, applied_at TEXT NOT NULL, code_version TEXT NOT NULL)")


def _apply_rebuild(engine: Engine, migration: Migration, newest: int) -> bool:
    """Apply a table-rebuilding migration in one transaction with foreign keys off (they can
    only be switched outside a transaction, hence the DB-API connection) and
    ``legacy_alter_table`` on; refuse to commit when a foreign key would dangle. False when
    another process applied it first."""
    raw = engine.raw_connection()
    conn = raw.driver_connection
    assert conn is not None
    try:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("PRAGMA legacy_alter_table = ON")
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_LEDGER)
            have = int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migration")
                       .fetchone()[0])
            _refuse_newer(have, newest)
            if conn.execute("SELECT 1 FROM schema_migration WHERE version = ?",
                            (migration.version,)).fetchone():
                conn.execute("ROLLBACK")
                return False
            for statement in migration.statements:
                conn.execute(statement)
            dangling = conn.execute("PRAGMA foreign_key_check").fetchall()
            if dangling:
                raise RuntimeError(f"migration {migration.version} would leave "
                                   f"{len(dangling)} dangling references; not applied")
            conn.execute("INSERT INTO schema_migration VALUES (?, ?, ?, ?)",
                         (migration.version, migration.name, now_iso(), CODE_VERSION))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.execute("PRAGMA legacy_alter_table = OFF")
        conn.execute("PRAGMA foreign_keys = ON")
        raw.close()
    return True


def refuse_newer(have: int | None) -> None:
    """Raise ``StoreTooNew`` when ``have`` (a store's schema version) is newer than this code
    knows; called on the file before anything opens it for writing."""
    if have is not None:
        _refuse_newer(have, newest_version())


def _refuse_newer(have: int, newest: int) -> None:
    if have > newest:
        raise StoreTooNew(
            f"this store has schema version {have}, but this lca-tui ({CODE_VERSION}) knows "
            f"versions up to {newest}: upgrade lca-tui to open it (the store was not changed)"
        )
