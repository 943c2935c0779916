"""A store file read through the bare DB-API, without SQLAlchemy or SQLModel: what the listing
commands (``stats``, ``sessions``, ``memories``, ``proposals``, ``audit``) need, so that a
command a person types answers without importing the ORM (about 0.4 s of a 0.9 s ``stats``).

``open_lite`` opens only a store it can read exactly as ``StoreBase`` would: an existing SQLite
file whose schema has every migration this code knows and none newer. For anything else —
a server, a missing, empty or older store (``StoreBase`` migrates it, or refuses it read-only),
a newer one, a file SQLite refuses — it returns None and the caller opens the ``Store``, which
does what it always did (and says what is wrong). Each listing here builds its records with the
same functions as the ORM read (``stats_record``, ``session_info``, ``store.governance.rows``),
and ``tests/store/test_lite_reads.py`` holds the two to the same answers.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

import sqlean

from store.core.errors import StoreError, StoreUnavailable
from store.core.location import store_location
from store.core.records import BLOCK_PREFIX, EmbedderInfo, SessionInfo, Stats

if TYPE_CHECKING:
    from store.core.embed import Embedder
    from store.core.settings import Settings

L = TypeVar("L", bound="LiteFile")
# The most ids one ``IN (...)`` list carries (SQLite's limit on bound parameters is 32,766).
IN_BATCH = 500


def migration_numbers(paths: Sequence[str]) -> dict[int, str]:
    """Every migration module's number (from its name, ``mNNNN_<name>``) and name in the
    package folders ``paths``, read from the files without importing one: what says cheaply
    whether a store is current."""
    import pkgutil

    found: dict[int, str] = {}
    for info in pkgutil.iter_modules(list(paths)):
        if not info.name.startswith("m") or not info.name[1:5].isdigit():
            continue
        if int(info.name[1:5]) in found:
            raise RuntimeError(f"two migrations numbered {int(info.name[1:5])}")
        found[int(info.name[1:5])] = info.name
    return found


def newest_migrations() -> dict[int, str]:
    """Every migration this code knows (number → module name), read from the migrations
    package's files without importing it (its ``__init__`` imports SQLAlchemy)."""
    spec = importlib.util.find_spec("store.core.migrations")
    assert spec is not None and spec.submodule_search_locations is not None
    return migration_numbers(list(spec.submodule_search_locations))


def file_location(path: Path | str | None, settings: Settings) -> Path | None:
    """The store file ``StoreBase`` would open for ``path`` (``location.store_location``);
    None when it would open a server, or refuse the name."""
    try:
        where = store_location(path, str(settings["store.url"]))
    except StoreError:
        return None
    return where if isinstance(where, Path) else None


class LiteFile:
    """One SQLite connection to a current store file, read in one transaction at a time."""

    def __init__(self, path: Path, conn: sqlean.Connection, settings: Settings) -> None:
        self.path = path
        self.conn = conn
        self.settings = settings

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> LiteFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def read(self) -> Iterator[LiteFile]:
        """One read transaction (a consistent snapshot, as ``StoreBase.read``'s); SQLite
        refusing a query raises ``StoreUnavailable``."""
        try:
            self.conn.execute("BEGIN")
            try:
                yield self
            finally:
                self.conn.execute("ROLLBACK")
        except (sqlean.ProgrammingError, sqlean.InterfaceError, sqlean.IntegrityError):
            raise  # misuse of the DB-API: this code's own error
        except sqlean.DatabaseError as exc:
            # SQLite refusing a query (busy, locked, no such table: StoreBase.read reports
            # those as StoreUnavailable too) or a page it cannot read (there, a traceback)
            raise StoreUnavailable(" ".join(str(exc).split())) from exc

    def tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.conn.execute(sql, tuple(params)).fetchall()]

    def objects(self, sql: str, params: Sequence[Any] = ()) -> list[SimpleNamespace]:
        """Rows with their columns as attributes (what the shared record builders read)."""
        cur = self.conn.execute(sql, tuple(params))
        names = [d[0] for d in cur.description]
        return [SimpleNamespace(**dict(zip(names, row, strict=True))) for row in cur.fetchall()]

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(sql, tuple(params)).fetchone()[0]

    def tables(self) -> set[str]:
        return {str(r[0]) for r in self.tuples(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}

    # -- reads -----------------------------------------------------------------------------
    def stats(self, with_embedder: bool = True) -> Stats:
        """``StoreBase.stats`` on this file."""
        with self.read():
            def grouped(table: str, column: str) -> dict[str, int]:
                return {str(k): int(v) for k, v in self.tuples(
                    f"SELECT {column}, COUNT(*) FROM {table} GROUP BY {column} "
                    f"ORDER BY {column}")}

            def count(table: str, where: str = "") -> int:
                return int(self.one(f"SELECT COUNT(*) FROM {table}"
                                    + (f" WHERE {where}" if where else "")))

            present = self.tables()
            chunk_model = grouped("chunk", "model")
            skips: list[tuple[str, str, int]] = []
            if "import_skip" in present:
                skips = [(str(r), str(w), int(n)) for r, w, n in self.tuples(
                    "SELECT reason, line_type, SUM(count) FROM import_skip "
                    "GROUP BY reason, line_type ORDER BY reason, line_type")]
            vector_version = str(self.one("SELECT vec_version()"))  # loaded by open_lite
            counts = dict(
                by_kind=grouped("entry", "kind"), mem_status=grouped("memory", "status"),
                chunk_status=grouped("chunk", "status"), sessions=count("session"),
                memories_unloadable=count("memory", "loadable = 0"),
                vectors=count("chunk_vec"), fts_rows=count("chunk_fts_docsize"),
                checkpoints=count("checkpoint"),
                proposals_pending=(count("proposal", "status = 'pending'")
                                   if "proposal" in present else 0),
                traces=count("recall_trace") if "recall_trace" in present else 0,
                schema_version=int(self.one(
                    "SELECT COALESCE(MAX(version), 0) FROM schema_migration")),
                entries_waiting=count("embed_queue"),
                chunks_lexical_only=count("chunk", "lexical_only = 1"))
        return stats_record(self.location, file_size(self.path), counts, skips, chunk_model,
                            embedder_info(self.settings, None) if with_embedder else None,
                            "sqlite", str(sqlean.sqlite_version), vector_version)

    def sessions(self, limit: int | None = None, ids: Sequence[str] | None = None
                 ) -> list[SessionInfo]:
        """``StoreBase.sessions`` on this file."""
        where, params = "", []
        if ids is not None:
            wanted = list(ids)
            if not wanted:
                return []
            if len(wanted) > IN_BATCH:
                keep = set(wanted)
                return [s for s in self.sessions(limit=None) if s.id in keep][
                    :int(limit) if limit else None]
            where = f"WHERE s.id IN ({', '.join('?' * len(wanted))}) "
            params = wanted
        sql = ("SELECT s.id, s.agent, s.surface, s.project, s.title, s.started_at, s.ended_at,"
               " s.source, s.format, COUNT(e.id), group_concat(e.agent, ',') FROM session s "
               "LEFT OUTER JOIN entry e ON e.session_id = s.id " + where +
               "GROUP BY s.id ORDER BY coalesce(s.ended_at, s.started_at) DESC, s.id")
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self.read():
            rows = self.tuples(sql, params)
        return [session_info(*row) for row in rows]


def open_lite(path: Path | str | None, settings: Settings,
              kind: type[L] = LiteFile) -> L | None:  # type: ignore[assignment]
    """The store at ``path`` (or the default one) opened for reading without the ORM as a
    ``kind`` (``LiteFile`` or a subclass adding reads), or None when only ``StoreBase`` can
    open it as it must be opened (see the module docstring). A
    store locked past the busy timeout raises ``StoreUnavailable`` here, as ``StoreBase``
    would, rather than making the caller wait that long a second time."""
    file = file_location(path, settings)
    try:
        if file is None or not file.is_file() or file.stat().st_size == 0:
            return None
    except OSError:  # a folder that cannot be searched: StoreBase says so in its words
        return None
    read_only = bool(settings["store.read_only"])
    busy_ms = int(settings["store.busy_timeout_ms"])
    # Whether the store is current, read first without changing a byte (SQLite's mode=ro, no
    # journal-mode switch), as StoreBase refuses a newer store before it connects.
    try:
        applied = applied_migrations(file, busy_ms)
    except sqlean.Error as exc:
        _raise_if_busy(exc)
        return None
    known = newest_migrations()
    if not applied or not known or not set(known) <= applied or max(applied) > max(known):
        return None  # no schema, to migrate, or newer than this code: StoreBase says so
    try:
        conn = sqlean.connect(f"{file.resolve().as_uri()}?mode={'ro' if read_only else 'rw'}",
                              uri=True, check_same_thread=False, timeout=busy_ms / 1000)
    except sqlean.Error:
        return None
    try:
        conn.isolation_level = None  # transactions begun by ``read`` only
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
        if not read_only:
            # as every StoreBase connection does: a store still in rollback-journal mode is
            # switched (and one on read-only media refused by StoreBase, as before)
            conn.execute("PRAGMA journal_mode = WAL")
        conn.enable_load_extension(True)
        conn.load_extension(vec_extension())
        conn.enable_load_extension(False)
    except (sqlean.Error, RuntimeError) as exc:
        conn.close()
        _raise_if_busy(exc)
        return None
    return kind(file, conn, settings)


def _raise_if_busy(exc: Exception) -> None:
    """A store locked past the busy timeout: ``StoreUnavailable`` in StoreBase's words (the
    caller would otherwise open the ``Store`` and wait that long again)."""
    if isinstance(exc, sqlean.OperationalError) and ("locked" in str(exc) or "busy" in str(exc)):
        raise StoreUnavailable(" ".join(str(exc).split())) from exc


def applied_migrations(file: Path, busy_ms: int) -> set[int]:
    """The migrations recorded in the store file (empty: no schema), read on a connection of
    SQLite's mode=ro, which changes nothing (no journal-mode switch, no header write)."""
    conn = sqlean.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True,
                          timeout=busy_ms / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                            "name = 'schema_migration'").fetchone():
            return set()
        return {int(v) for (v,) in conn.execute("SELECT version FROM schema_migration")}
    finally:
        conn.close()


@functools.cache
def vec_extension() -> str:
    """sqlite-vec's loadable extension, as ``sqlite_vec.loadable_path()`` gives it, without
    importing ``sqlite_vec`` (it imports NumPy); looked up once per process (every new
    connection loads it)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the sqlite-vec package is not installed")
    return os.path.normpath(os.path.join(list(spec.submodule_search_locations)[0], "vec0"))


# -- the records, built once for both reads ---------------------------------------------------
def session_info(sid: str, agent: str | None, surface: str | None, project: str | None,
                 title: str | None, started_at: str | None, ended_at: str | None,
                 source: str | None, fmt: str, entries: int, agent_list: str | None
                 ) -> SessionInfo:
    """A session's record from its row, its entry count and its entries' agents (comma
    separated, repeated): the agents once each, ``main`` first."""
    agents = sorted(set((agent_list or "").split(",")) - {""},
                    key=lambda a: (a != "main", a))
    return SessionInfo(sid, agent, surface, project, title, started_at, ended_at, source, fmt,
                       int(entries), tuple(agents))


def embedder_info(settings: Settings, loaded: Embedder | None,
                  load: Callable[[], Embedder] | None = None) -> EmbedderInfo:
    """The embedder in use without loading the model when it would load (``loaded``: the one
    a store holds already; ``load()``: the store's loader, else one from ``settings``) — a
    report costs no model load; the vectors are the loaded model's."""
    from store.core.embed import DIM, MODEL_NAME, load_embedder, model_would_load

    e = loaded
    if e is None:
        if settings["embed.backend"] != "fallback" and model_would_load():
            return EmbedderInfo(MODEL_NAME, DIM, False, None)
        e = load() if load is not None else load_embedder(
            settings["embed.backend"], settings["embed.threads"], settings["embed.batch_size"],
            settings["embed.batch_tokens"])  # the fallback (cheap), or why the model fails
    return EmbedderInfo(e.name, e.dim, e.degraded, e.reason)


def file_size(path: Path) -> int:
    """A store file's size on disk, its write-ahead log included."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def stats_record(location: str, size: int, counts: Mapping[str, Any],
                 skips: Sequence[tuple[str, str, int]], chunk_model: dict[str, int],
                 info: EmbedderInfo | None, backend: str, server_version: str | None,
                 vector_version: str | None) -> Stats:
    """``Stats`` from the counts a read gathered: the lines and blocks imports skipped (by
    reason, rows of (reason, line type, lines)), and the embedder (None: not asked for) flagged
    degraded when chunks were embedded by another model than the one in use."""
    # reason → line type → lines; blocks apart (``block/<type>`` rows)
    skipped: dict[str, dict[str, int]] = {"by-design": {}, "unknown": {}}
    blocks: dict[str, dict[str, int]] = {"by-design": {}, "unknown": {}}
    for reason, what, n in skips:
        if what.startswith(BLOCK_PREFIX):
            blocks.setdefault(reason, {})[what[len(BLOCK_PREFIX):]] = n
        else:
            skipped.setdefault(reason, {})[what] = n
    if info is None:
        info = EmbedderInfo("not loaded", 384, False, None)
        foreign = {}
    else:
        foreign = {m: n for m, n in chunk_model.items() if m != info.model}
    if foreign:
        names = ", ".join(f"{n} by {m}" for m, n in foreign.items())
        note = (f"{sum(foreign.values())} chunks were embedded by another model ({names}): "
                "semantic search ignores them until `lca-tui reindex`")
        info = EmbedderInfo(info.model, info.dim, True,
                            f"{info.reason}; {note}" if info.reason else note)
    by_kind, mem_status, chunk_status = (counts["by_kind"], counts["mem_status"],
                                         counts["chunk_status"])
    return Stats(
        path=location, size_bytes=size, embedder=info, backend=backend,
        server_version=server_version, vector_version=vector_version,
        sessions=counts["sessions"], entries=sum(by_kind.values()), entries_by_kind=by_kind,
        memories=sum(mem_status.values()), memories_by_status=mem_status,
        memories_unloadable=counts["memories_unloadable"],
        chunks=sum(chunk_status.values()), chunks_by_status=chunk_status,
        chunks_by_model=chunk_model, vectors=counts["vectors"], fts_rows=counts["fts_rows"],
        checkpoints=counts["checkpoints"], proposals_pending=counts["proposals_pending"],
        traces=counts["traces"], schema_version=counts["schema_version"],
        skipped_by_design=skipped["by-design"], skipped_unknown=skipped["unknown"],
        entries_waiting=counts["entries_waiting"],
        chunks_lexical_only=counts["chunks_lexical_only"],
        blocks_skipped_by_design=blocks["by-design"], blocks_skipped_unknown=blocks["unknown"])
