"""The SQLModel classes are the schema's one description: each must match, column by column
and index by index, the tables the numbered migrations create, and every relational table the
migrations create must have a class."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
from sqlalchemy.schema import Table
from sqlmodel import SQLModel

import store
from store import open_store

_AFFINITY = {"TEXT": "TEXT", "VARCHAR": "TEXT", "INTEGER": "INTEGER", "BOOLEAN": "INTEGER",
             "FLOAT": "REAL", "REAL": "REAL"}


def _model_tables() -> dict[str, Table]:
    """Import every ``store/**/models.py`` so each capability's tables are registered."""
    for info in pkgutil.walk_packages(store.__path__, "store."):
        if info.name.endswith(".models"):
            importlib.import_module(info.name)
    return dict(SQLModel.metadata.tables)


def _virtual_or_shadow(conn, name: str) -> bool:
    sql = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).scalar()
    if sql and sql.upper().startswith("CREATE VIRTUAL TABLE"):
        return True
    virtuals = [r[0] for r in conn.exec_driver_sql(
        "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'").all()]
    return any(name.startswith(f"{v}_") for v in virtuals) or name.startswith("sqlite_")


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory):
    path: Path = tmp_path_factory.mktemp("schema") / "store.db"
    s = open_store(path)
    yield s
    s.close()


def test_every_relational_table_has_a_model(migrated) -> None:
    models = _model_tables()
    with migrated.read() as conn:
        names = [r[0] for r in conn.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table'").all()]
        relational = {n for n in names if not _virtual_or_shadow(conn, n)}
    assert relational, "the migrations created no table"
    assert relational - set(models) == set(), "tables without a SQLModel class"
    assert set(models) - relational == set(), "SQLModel classes without a migrated table"


def test_models_match_migrated_columns_and_indexes(migrated) -> None:
    models = _model_tables()
    problems: list[str] = []
    with migrated.read() as conn:
        for name, table in sorted(models.items()):
            cols = {r[1]: r for r in conn.exec_driver_sql(f"PRAGMA table_info('{name}')").all()}
            model_cols = {c.name: c for c in table.columns}
            if set(cols) != set(model_cols):
                problems.append(f"{name}: columns {sorted(cols)} != model {sorted(model_cols)}")
                continue
            for cname, col in model_cols.items():
                _, _, dbtype, notnull, _, pk = cols[cname]
                mtype = _AFFINITY.get(col.type.compile().split("(")[0].upper(), "?")
                if mtype != _AFFINITY.get(dbtype.upper(), dbtype):
                    problems.append(f"{name}.{cname}: type {dbtype} != model {mtype}")
                if bool(pk) != bool(col.primary_key):
                    problems.append(f"{name}.{cname}: primary key {bool(pk)} != model")
                db_nullable = not notnull and not pk
                if not pk and db_nullable != bool(col.nullable):
                    problems.append(f"{name}.{cname}: nullable {db_nullable} != model "
                                    f"{col.nullable}")
            # named indexes
            db_idx = {}
            unique_sets = set()
            for _, iname, _unique, origin, _ in conn.exec_driver_sql(
                    f"PRAGMA index_list('{name}')").all():
                icols = tuple(r[2] for r in conn.exec_driver_sql(
                    f"PRAGMA index_info('{iname}')").all())
                if origin == "c":
                    db_idx[iname] = icols
                elif origin == "u":
                    unique_sets.add(frozenset(icols))
            model_idx = {i.name: tuple(c.name for c in i.columns) for i in table.indexes
                         if not i.unique}
            if db_idx != model_idx:
                problems.append(f"{name}: indexes {db_idx} != model {model_idx}")
            model_unique = {frozenset(c.name for c in u.columns) for u in table.constraints
                            if u.__class__.__name__ == "UniqueConstraint"}
            model_unique |= {frozenset([c.name]) for c in table.columns if c.unique}
            if unique_sets != model_unique:
                problems.append(f"{name}: unique {sorted(map(sorted, unique_sets))} != model "
                                f"{sorted(map(sorted, model_unique))}")
            # foreign keys
            db_fk = {(r[3], r[2], r[4], r[6]) for r in conn.exec_driver_sql(
                f"PRAGMA foreign_key_list('{name}')").all()}
            model_fk = {(fk.parent.name, fk.column.table.name, fk.column.name,
                         (fk.ondelete or "NO ACTION").upper()) for fk in table.foreign_keys}
            if db_fk != model_fk:
                problems.append(f"{name}: foreign keys {sorted(db_fk)} != model "
                                f"{sorted(model_fk)}")
    assert problems == []


def _model_classes() -> dict[str, type[SQLModel]]:
    """{table name: its SQLModel class}."""
    _model_tables()
    out: dict[str, type[SQLModel]] = {}
    todo = list(SQLModel.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        table = getattr(cls, "__table__", None)
        if isinstance(table, Table):
            out[table.name] = cls
    return out


def _sql_default(raw: str | None) -> object:
    """A ``PRAGMA table_info`` default as a Python value (``MISSING`` when there is none)."""
    if raw is None:
        return MISSING
    text = raw.strip()
    if text.upper() == "NULL":
        return None
    if text[:1] == "'" and text[-1:] == "'":
        return text[1:-1].replace("''", "'")
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return f"<expression {text}>"


MISSING = "<no default>"


def _model_default(cls: type[SQLModel], name: str) -> object:
    """What ``session.add`` writes when the caller gives nothing: the field's default
    (``MISSING`` for a required field or one with a default factory)."""
    field = cls.model_fields.get(name)
    if field is None or field.is_required() or field.default_factory is not None:
        return MISSING
    value = field.default
    return int(value) if isinstance(value, bool) else value


def test_model_defaults_match_migrated_defaults(migrated) -> None:
    """A migration's DEFAULT and the model field's default agree: ``session.add`` writes the
    model's default, raw inserts and older writers get the migration's. A required field
    (no model default) is fine whatever the migration says: the caller always gives it.
    Primary keys are left out (their None asks SQLite for the next id)."""
    problems = []
    with migrated.read() as conn:
        for name, cls in sorted(_model_classes().items()):
            for r in conn.exec_driver_sql(f"PRAGMA table_info('{name}')").all():
                cname, dflt, pk = r[1], r[4], r[5]
                if pk:
                    continue
                model = _model_default(cls, cname)
                if model is MISSING:
                    continue
                db = _sql_default(dflt)
                if db is MISSING:
                    db = None  # no DEFAULT: an insert that omits the column writes NULL
                if db != model:
                    problems.append(f"{name}.{cname}: migration default {dflt!r} != model "
                                    f"default {model!r}")
    assert problems == []


def test_named_indexes_match_in_uniqueness(migrated) -> None:
    """A named index is UNIQUE in the migration exactly when it is unique in the model."""
    problems = []
    models = _model_tables()
    with migrated.read() as conn:
        for name, table in sorted(models.items()):
            db = {r[1]: bool(r[2]) for r in conn.exec_driver_sql(
                f"PRAGMA index_list('{name}')").all() if r[3] == "c"}
            model = {i.name: bool(i.unique) for i in table.indexes}
            if db != model:
                problems.append(f"{name}: named indexes {db} != model {model}")
    assert problems == []


def test_a_default_mismatch_is_caught(migrated) -> None:
    """The default check can fail: a model default changed away from the migration's."""
    field = _model_classes()["recall_trace"].model_fields["channel"]
    saved = field.default
    field.default = "public"
    try:
        with pytest.raises(AssertionError, match="recall_trace.channel"):
            test_model_defaults_match_migrated_defaults(migrated)
    finally:
        field.default = saved
    assert _sql_default("'it''s'") == "it's" and _sql_default("NULL") is None
    assert _sql_default(None) is MISSING and _sql_default("1.5") == 1.5


# -- every table portable ----------------------------------------------------------------
_SQLITE_ONLY_NAMES = {"rowid", "oid", "_rowid_"}
# ``sqlite_autoincrement`` (migration 13: ids never reused) is a hint other dialects ignore,
# and their sequences never reuse an id anyway: the table is the same everywhere.
_PORTABLE_SQLITE_OPTIONS = {"sqlite_autoincrement"}


def test_every_table_has_a_declared_primary_key_and_no_sqlite_only_construct(migrated) -> None:
    """Each model's table could live in another database: a primary key the migrations
    declare (not SQLite's implicit rowid), no column named after the rowid, no SQLite-only
    table option or type, and its DDL compiles for PostgreSQL."""
    from sqlalchemy.dialects import postgresql
    from sqlalchemy.schema import CreateIndex, CreateTable

    problems = []
    with migrated.read() as conn:
        for name, table in sorted(_model_tables().items()):
            declared = [r[1] for r in conn.exec_driver_sql(
                f"PRAGMA table_info('{name}')").all() if r[5]]
            if not declared:
                problems.append(f"{name}: no declared primary key in the migrations")
            for c in table.columns:
                if c.name.lower() in _SQLITE_ONLY_NAMES:
                    problems.append(f"{name}.{c.name}: SQLite's implicit rowid as a column")
                if type(c.type).__module__.startswith("sqlalchemy.dialects.sqlite"):
                    problems.append(f"{name}.{c.name}: SQLite-only type {c.type!r}")
            options = [k for k in table.dialect_kwargs
                       if k.startswith("sqlite_") and k not in _PORTABLE_SQLITE_OPTIONS]
            if options:
                problems.append(f"{name}: SQLite-only options {options}")
            try:
                str(CreateTable(table).compile(dialect=postgresql.dialect()))
                for index in table.indexes:
                    str(CreateIndex(index).compile(dialect=postgresql.dialect()))
            except Exception as exc:  # noqa: BLE001 - any compile failure is the finding
                problems.append(f"{name}: does not compile for PostgreSQL: {exc}")
    assert problems == []


def test_migration_14_gives_prune_entry_ids_from_its_rowids(tmp_path: Path) -> None:
    """A store from before migration 14 keeps every ``prune_entry`` row, each with its old
    rowid as its id, so a prune's entries keep their order."""
    from store.core.db import ensure_file, make_engine
    from store.core.migrations import migrate

    path = tmp_path / "old.db"
    ensure_file(path)
    engine = make_engine(path)
    try:
        migrate(engine, target=13)
        with engine.begin() as conn:
            who = "'w', 'v', 't'"
            conn.exec_driver_sql("INSERT INTO session (id, format, writer, writer_version, "
                                 f"created_at) VALUES ('s1', 'claude-code', {who})")
            conn.exec_driver_sql("INSERT INTO prune_event (id, session_id, ts, writer, "
                                 f"writer_version, created_at) VALUES (1, 's1', 't', {who})")
            for rowid, ref in ((7, "b"), (3, "a"), (12, None)):
                conn.exec_driver_sql("INSERT INTO prune_entry (rowid, prune_id, ref, entry_id) "
                                     "VALUES (?, 1, ?, NULL)", (rowid, ref))
            before = conn.exec_driver_sql("SELECT rowid, prune_id, ref, entry_id FROM "
                                          "prune_entry ORDER BY rowid").all()
        assert migrate(engine, target=14) == [14]
        with engine.connect() as conn:
            after = conn.exec_driver_sql("SELECT id, prune_id, ref, entry_id FROM prune_entry "
                                         "ORDER BY id").all()
            pk = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info('prune_entry')").all()
                  if r[5]]
    finally:
        engine.dispose()
    assert [tuple(r) for r in before] == [(3, 1, "a", None), (7, 1, "b", None),
                                          (12, 1, None, None)]
    assert [tuple(r) for r in after] == [tuple(r) for r in before]
    assert pk == ["id"]
