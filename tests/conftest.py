"""Shared fixtures. Every test runs with its own store, config and XDG folders under tmp_path,
and with the deterministic fallback embedder unless it asks for the real model.

Determinism is injected, never patched into a module or the test runner's environment: where a
test holds the store, ``make_store`` (and the ``store`` / ``cc_store`` fixtures built on it)
hands the store its embedder (``StoreBase(embedder=…)``); the in-process CLI takes the settings
from its caller (``lca_tui.cli.main(argv, settings=FALLBACK)``, what ``tests.helpers_shell.cli``
passes) and the app takes them from ``make_app(path, settings)`` (``run_app`` / ``running``);
the clock goes in by argument (``now=`` to recall, scans and the app, ``timer=`` to
``open_store`` for a recall's latency).

A real ``lca-tui`` process a test starts (and the daemon or server that process starts in
turn) is a user's: it reads the user's config file, and each test's user has one of its own
(``$XDG_CONFIG_HOME/lca-tui/config.toml`` under tmp_path, written by ``isolated_env``) that
chooses ``[embed] backend = "fallback"``, as ``docs/`` tells a user to. No test loads the real
model unasked: ``no_model_unasked`` fails a test that loaded it in this process, or that left
its processes' settings choosing it, unless it is marked ``model``.

The store behaviour tests (``tests/store/test_{ingest,recall,governance,health,privacy,context,
export,harness}*.py``, or any test marked ``both_backends``) run once per backend, ``[sqlite]``
and ``[postgres]``: their ``store`` / ``cc_store`` fixtures and ``make_store(path)`` open a
SQLite file, or a private PostgreSQL database cloned from a template (``tests/pg_server.py``:
one server per run, or per xdist worker, ``LCA_TEST_PG_URL``, ``LCA_TEST_BACKENDS``). A test
that is about SQLite itself (the file's bytes, its pragmas, kill points in its journal) is marked
``sqlite_only("why")`` and runs on SQLite alone."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from store import Store, load_embedder, open_store
from store.core.settings import Settings, SettingsError
from tests import pg_server

# ``run_app``'s value: ``run_app(*make_app_args, size=, ready=, settle=, **make_app_kwargs)``,
# an async context manager yielding the Pilot.
RunApp = Callable[..., Any]

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"  # the project's own fixtures
# Real transcripts taken from other repositories are not committed here: they live in
# ``../shared/data`` beside the clone (CI has it there), and the tests that read them skip
# when it is absent.
SHARED_DATA = ROOT.parent / "shared" / "data"
CLAUDE_CODE = SHARED_DATA / "claude-code"
NO_SHARED_DATA = (f"needs the real Claude Code transcripts in {CLAUDE_CODE} "
                  "(../shared/data beside the clone), absent here")
needs_shared_data = pytest.mark.skipif(not CLAUDE_CODE.is_dir(), reason=NO_SHARED_DATA)
BIG_SESSION = CLAUDE_CODE / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path) -> Iterator[None]:
    """Point every path lca-tui reads or writes at tmp_path, and run as CI does: no
    ``COLUMNS`` / ``LINES`` from the developer's terminal, times shown in UTC. Its own
    ``MonkeyPatch``: a test's ``monkeypatch.undo()`` takes back the test's patches, never the
    isolation (the processes it starts after that still read the test user's config)."""
    monkeypatch = pytest.MonkeyPatch()
    for var in ("COLUMNS", "LINES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("LCA_STORE", str(tmp_path / "env-store.db"))
    monkeypatch.delenv("LCA_CONFIG", raising=False)
    monkeypatch.delenv("LCA_EMBEDDER", raising=False)  # the developer's own, if set
    user_config = tmp_path / "xdg_config_home" / "lca-tui" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text(USER_CONFIG, encoding="utf-8")
    yield
    monkeypatch.undo()
    time.tzset()


USER_CONFIG = '[embed]\nbackend = "fallback"\n'
"""Each test's user's config file (``$XDG_CONFIG_HOME/lca-tui/config.toml``): what a real
``lca-tui`` process the test starts reads, as a user's would. A test that writes its own config
file keeps this line in it (``with_user_config``) unless it means the real model."""


def with_user_config(text: str) -> str:
    """A config file's ``text`` that also keeps the test user's fallback embedder."""
    return USER_CONFIG + text


@pytest.fixture(autouse=True)
def no_model_unasked(request: pytest.FixtureRequest, isolated_env: None) -> Iterator[None]:
    """Fail a test that loads the real embedding model in this process, or that leaves the
    settings a process it starts would read (its environment, its config file) choosing the
    model, unless it is marked ``model`` (pyproject's marker: it uses the real model on purpose):
    loading the model is slow and changes results."""
    from store.core.embed import ModelEmbedder

    marked = request.node.get_closest_marker("model")
    before = ModelEmbedder.loads
    yield
    if marked is not None:
        return
    loaded = ModelEmbedder.loads - before
    assert loaded == 0, f"the test loaded the real embedding model {loaded} time(s) unasked"
    try:
        backend = Settings.load()["embed.backend"]
    except SettingsError:  # a test's broken config file: a process refuses it, loads nothing
        return
    assert backend == "fallback", (
        f"a process this test starts would choose embed.backend={backend!r} (its config file "
        "or environment): keep the test user's fallback (tests.conftest.with_user_config)")


# -- the two backends ---------------------------------------------------------------------
BEHAVIOUR_FILES = tuple(f"test_{c}" for c in (
    "ingest", "recall", "governance", "health", "privacy", "context", "export", "harness"))
"""The files of ``tests/store`` whose tests run on both backends (by name prefix)."""
CHOSEN, PG_REQUIRED = pg_server.chosen_backends(os.environ.get(pg_server.BACKENDS_ENV))
FALLBACK_EMBEDDER = {"embed.backend": "fallback"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "both_backends: run once on SQLite, once on PostgreSQL")
    config.addinivalue_line("markers", "sqlite_only(reason): a test of SQLite itself, run on "
                            "the SQLite backend only (the reason says why)")


def runs_on_both(path: Path, marked: bool) -> bool:
    """Whether the test at ``path`` is a store behaviour test (parametrised per backend)."""
    return marked or (path.parent.name == "store" and path.parent.parent.name == "tests"
                      and path.name.startswith(BEHAVIOUR_FILES))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    node = metafunc.definition
    if not runs_on_both(Path(str(node.path)), node.get_closest_marker("both_backends") is not None):
        return
    only = node.get_closest_marker("sqlite_only")
    if only is not None and not (only.args or only.kwargs.get("reason")):
        raise pytest.UsageError(f"{node.nodeid}: sqlite_only needs its reason")
    backends = [b for b in CHOSEN if only is None or b == "sqlite"]
    metafunc.parametrize("backend", backends, indirect=True)


class PgStores:
    """One test's PostgreSQL databases: the store path a test names -> a database cloned for
    it on first use (the same path again reopens the same database), all dropped after."""

    def __init__(self, server: pg_server.PgServer, schema: str) -> None:
        self.server, self.schema = server, schema
        self.urls: dict[str, str] = {}

    def url_for(self, path: Path | str, template: str | None = None) -> str:
        key = str(path)
        if key not in self.urls:
            self.urls[key] = self.server.clone(template or self.schema)
        return self.urls[key]

    def drop_all(self) -> None:
        for url in self.urls.values():
            self.server.drop(url.split("?", 1)[0].rsplit("/", 1)[1])
        self.urls.clear()


# The [postgres] test running now (its databases), and those that opened no PostgreSQL store;
# held in ``tests.pg_server``, as this module is imported twice (``conftest`` by pytest and
# ``tests.conftest`` by the tests that import ``make_store``).
_UNUSED: list[str] = pg_server.unused


def _active() -> PgStores | None:
    held: PgStores | None = pg_server.active
    return held


@pytest.fixture(scope="session")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pg_server.PgServer]:
    """The run's PostgreSQL server (started on first use, stopped at the end); the tests
    that need it skip with the reason when none can be had, unless ``LCA_TEST_BACKENDS``
    asked for postgres by name (then they fail). A run whose ``LCA_TEST_BACKENDS`` leaves
    postgres out starts none: those tests skip, saying so."""
    if "postgres" not in CHOSEN:
        pytest.skip(f"{pg_server.BACKENDS_ENV}={os.environ.get(pg_server.BACKENDS_ENV)} "
                    "leaves PostgreSQL out: no server is started")
    try:
        server = pg_server.start()
    except RuntimeError as exc:
        if PG_REQUIRED:
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    # templates are built outside any test: the stores they open keep their local files
    # (a server store's folder under XDG_DATA_HOME) here, not in the user's home
    server.env = {var: str(tmp_path_factory.mktemp("pg-env") / var.lower()) for var in
                  ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")}
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_schema(pg: pg_server.PgServer) -> str:
    """The template database at the current schema (a store opened on it once, closed)."""

    def build(url: str) -> None:
        open_store(url, Settings.load(FALLBACK_EMBEDDER)).close()

    try:
        return pg.template("schema", build)
    except Exception as exc:  # noqa: BLE001 - the backend's refusal, shown as the reason
        reason = ("the store does not open on PostgreSQL on this branch: "
                  f"{type(exc).__name__}: {' '.join(str(exc).split())}")
        if PG_REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(autouse=True)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Which backend this test's stores are on: ``sqlite`` unless parametrised (store
    behaviour tests) to ``postgres``."""
    name: str = getattr(request, "param", "sqlite")
    if name != "postgres":
        yield name
        return
    stores = PgStores(request.getfixturevalue("pg"), request.getfixturevalue("pg_schema"))
    pg_server.active = stores
    try:
        yield name
    finally:
        pg_server.active = None
        if not stores.urls:  # reported by the run's main process (pytest_runtest_logreport)
            request.node.user_properties.append((NO_PG_STORE, True))
        stores.drop_all()


NO_PG_STORE = "opened no PostgreSQL store"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the [postgres] tests that opened no server store, from the teardown reports:
    under ``pytest -n`` (xdist) the reports of the workers reach the main process, which
    writes the summary."""
    if report.when == "teardown" and (NO_PG_STORE, True) in report.user_properties:
        _UNUSED.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _UNUSED:
        terminalreporter.write_line(
            f"{len(_UNUSED)} [postgres] test(s) opened no PostgreSQL store through "
            "make_store / store / cc_store (they ran on SQLite or on no store), e.g. "
            + ", ".join(_UNUSED[:5]))


def store_target(path: Path | str) -> Path | str:
    """What a test's store at ``path`` is opened on: the path, or (a [postgres] test) the
    URL of the database cloned for that path; a URL (``store.opened_as`` of a store on the
    server: another connection to it) as it is."""
    if "://" in str(path):
        return str(path)
    held = _active()
    return held.url_for(path) if held is not None else path




REAL_BACKENDS = ("model", "auto")


def make_store(path: Path | str, **overrides: object) -> Store:
    """The store at ``path`` with ``overrides`` as settings, given the deterministic fallback
    embedder (whatever ``$LCA_EMBEDDER`` says) unless the overrides ask for the real one
    (``**{"embed.backend": "model"}`` or ``"auto"``: then the settings choose it)."""
    settings = Settings.load(dict(overrides))
    real = overrides.get("embed.backend") in REAL_BACKENDS
    return open_store(store_target(path), settings,
                      embedder=None if real else load_embedder("fallback"))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An empty store with the fallback embedder (on the test's backend)."""
    s = make_store(tmp_path / "store.db")
    yield s
    s.close()


@pytest.fixture(scope="session")
def cc_store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the three real Claude Code sessions imported (built once, copied)."""
    if not CLAUDE_CODE.is_dir():
        pytest.skip(NO_SHARED_DATA)
    path = tmp_path_factory.mktemp("cc") / "cc.db"
    s = make_store(path, **{"embed.backend": "fallback"})
    s.ingest([CLAUDE_CODE])
    s.close()
    return path


@pytest.fixture(scope="session")
def cc_pg_template(pg: pg_server.PgServer, pg_schema: str) -> str:
    """The Claude Code store on PostgreSQL: a template database, imported into once."""

    def build(url: str) -> None:
        s = open_store(url, Settings.load(FALLBACK_EMBEDDER))
        try:
            report = s.ingest([CLAUDE_CODE])
        finally:
            s.close()
        if report.errors:  # a template that silently lacks data would pass tests vacuously
            raise RuntimeError(f"the Claude Code import into PostgreSQL failed: "
                               f"{report.errors[0].reason}")

    if not CLAUDE_CODE.is_dir():
        pytest.skip(NO_SHARED_DATA)
    return pg.template("cc", build)


@pytest.fixture
def cc_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A private copy of the Claude Code store (on the test's backend)."""
    path = tmp_path / "cc.db"
    held = _active()
    if held is not None:
        held.url_for(path, template=request.getfixturevalue("cc_pg_template"))
    else:
        shutil.copyfile(request.getfixturevalue("cc_store_template"), path)
    s = make_store(path)
    yield s
    s.close()


# -- the screen tests' shared set-up ----------------------------------------------------------
@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store, built once for the whole run (tests use copies: ``demo_path``)."""
    from tests.helpers_shell import build_demo_template

    return build_demo_template(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="session")
def demo_pg_template(pg: pg_server.PgServer, pg_schema: str, demo_template: Path) -> str:
    """The demo store on PostgreSQL: a template database, every record copied into it once
    from the SQLite demo (``Store.copy_to``, verified)."""
    from tests.helpers_shell import DEMO_NAME

    def build(url: str) -> None:
        source = open_store(demo_template / DEMO_NAME, Settings.load(FALLBACK_EMBEDDER))
        target = open_store(url, Settings.load(FALLBACK_EMBEDDER))
        try:
            report = source.copy_to(target)
        finally:
            source.close()
            target.close()
        bad = [c for c in report.checks if not c.ok]
        if bad:  # a template that silently lacks data would pass tests vacuously
            raise RuntimeError(f"the demo's copy into PostgreSQL does not verify: {bad[0]}")

    return pg.template("demo", build)


@pytest.fixture
def demo_path(request: pytest.FixtureRequest, demo_template: Path, tmp_path: Path,
              monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the demo store, as the relative path the app is opened with (in a
    [postgres] test, that path names a clone of the demo's template database; the demo's data
    folder is copied beside it either way)."""
    from tests.helpers_shell import copy_demo

    monkeypatch.chdir(tmp_path)
    path = copy_demo(demo_template, tmp_path)
    held = _active()
    if held is not None:
        held.url_for(path, template=request.getfixturevalue("demo_pg_template"))
    return path


@pytest.fixture
def run_app() -> RunApp:
    """The Pilot set-up of every screen test: ``async with run_app(path_or_store=..., mode=...,
    refresh_seconds=...) as pilot`` runs the app at 120x40 with the frozen clock and hands the
    pilot over once the screen has loaded (see ``tests.helpers_shell.running``)."""
    from tests.helpers_shell import running

    return running
