"""Shared fixtures. Every test runs with its own store, config and XDG folders under tmp_path,
and with the deterministic fallback embedder unless it asks for the real model.

Determinism is injected where a test holds the store: ``make_store`` (and the ``store`` /
``cc_store`` fixtures built on it) hands the store its embedder (``StoreBase(embedder=…)``),
and the clock goes in by argument (``now=`` to recall, scans and the app, ``timer=`` to
``open_store`` for a recall's latency). ``$LCA_EMBEDDER=fallback`` stays set for every test
for one reason: it is the CLI's documented interface, and a command run through
``lca_tui.cli.main`` or in a subprocess, or the app opened on a path, opens its own store from
the environment as a user's would."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from store import Store, load_embedder, open_store
from store.core.settings import Settings

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
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point every path lca-tui reads or writes at tmp_path, and run as CI does: no
    ``COLUMNS`` / ``LINES`` from the developer's terminal, times shown in UTC."""
    for var in ("COLUMNS", "LINES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("LCA_STORE", str(tmp_path / "env-store.db"))
    monkeypatch.delenv("LCA_CONFIG", raising=False)
    monkeypatch.setenv("LCA_EMBEDDER", "fallback")
    yield
    monkeypatch.undo()
    time.tzset()


REAL_BACKENDS = ("model", "auto")


def make_store(path: Path, **overrides: object) -> Store:
    """The store at ``path`` with ``overrides`` as settings, given the deterministic fallback
    embedder (whatever ``$LCA_EMBEDDER`` says) unless the overrides ask for the real one
    (``**{"embed.backend": "model"}`` or ``"auto"``: then the settings choose it)."""
    settings = Settings.load(dict(overrides))
    real = overrides.get("embed.backend") in REAL_BACKENDS
    return open_store(path, settings, embedder=None if real else load_embedder("fallback"))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An empty store with the fallback embedder."""
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


@pytest.fixture
def cc_store(cc_store_template: Path, tmp_path: Path) -> Iterator[Store]:
    """A private copy of the Claude Code store."""
    path = tmp_path / "cc.db"
    shutil.copyfile(cc_store_template, path)
    s = make_store(path)
    yield s
    s.close()


# -- the screen tests' shared set-up ----------------------------------------------------------
@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store, built once for the whole run (tests use copies: ``demo_path``)."""
    from tests.helpers_shell import build_demo_template

    return build_demo_template(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def demo_path(demo_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the demo store, as the relative path the app is opened with."""
    from tests.helpers_shell import copy_demo

    monkeypatch.chdir(tmp_path)
    return copy_demo(demo_template, tmp_path)


@pytest.fixture
def run_app() -> RunApp:
    """The Pilot set-up of every screen test: ``async with run_app(path_or_store=..., mode=...,
    refresh_seconds=...) as pilot`` runs the app at 120x40 with the frozen clock and hands the
    pilot over once the screen has loaded (see ``tests.helpers_shell.running``)."""
    from tests.helpers_shell import running

    return running
