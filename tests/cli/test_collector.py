"""``lca_tui/collector.py`` on the command line: a command a person waits for, run as a
process of its own (``main()`` with no ``argv``), and a hook run in-process, have the garbage
collector paused until their store is open, and on again (what was alive frozen) after; a
command called with ``argv`` (a test, a script) leaves the collector as it was."""

from __future__ import annotations

import gc
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lca_tui import collector
from lca_tui.cli import main
from tests.conftest import make_store


@pytest.fixture
def collector_reset(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Whatever the test does, this worker's collector is on after it, nothing frozen."""
    assert gc.isenabled() and not collector.paused()
    monkeypatch.setattr(collector, "_owned", False)
    try:
        yield
    finally:
        collector.settle()
        gc.unfreeze()
        gc.enable()


def _watch(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[bool]:
    """Record whether the collector is on each time ``module.name`` is called."""
    real, seen = getattr(module, name), []

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, watched)
    return seen


def _a_store(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    make_store(path).close()
    return path


def _as_its_own_process(monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    """``lca-tui ARGV`` as the console script runs it: ``main()`` reading ``sys.argv``."""
    monkeypatch.setattr(sys, "argv", ["lca-tui", *argv])
    return main()


@pytest.mark.sqlite_only("the lean listing reads a store file")
def test_a_listing_run_as_its_own_process_opens_its_store_with_the_collector_paused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        collector_reset: None) -> None:
    import store as store_package

    path = _a_store(tmp_path)
    seen = _watch(monkeypatch, store_package, "open_listings")
    assert _as_its_own_process(monkeypatch, "--store", str(path), "stats", "--json") == 0
    assert json.loads(capsys.readouterr().out)["sessions"] == 0
    assert seen == [False]  # paused while it opened
    assert gc.isenabled() and not collector.paused() and gc.get_freeze_count() > 0


def test_a_command_that_opens_the_store_turns_the_collector_on_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        collector_reset: None) -> None:
    import store as store_package

    path = _a_store(tmp_path)
    seen = _watch(monkeypatch, store_package, "open_store")
    assert _as_its_own_process(monkeypatch, "--store", str(path), "--set",
                               "embed.backend=fallback", "search", "anything", "--json") == 0
    capsys.readouterr()
    assert seen and seen[0] is False
    assert gc.isenabled() and not collector.paused()


def test_a_command_that_fails_before_its_store_leaves_the_collector_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        collector_reset: None) -> None:
    assert _as_its_own_process(monkeypatch, "--store", str(tmp_path / "none" / "s.db"),
                               "health") == 2
    assert "no store at" in capsys.readouterr().err
    assert gc.isenabled() and not collector.paused()


def test_main_with_argv_leaves_the_collector_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        collector_reset: None) -> None:
    import store as store_package

    path = _a_store(tmp_path)
    seen = _watch(monkeypatch, store_package, "open_store")
    frozen = gc.get_freeze_count()
    assert main(["--store", str(path), "--set", "embed.backend=fallback", "search", "x",
                 "--json"]) == 0
    capsys.readouterr()
    assert seen and all(seen) and gc.get_freeze_count() == frozen


@pytest.mark.sqlite_only("the hook's store opened in-process is a file here")
def test_a_hook_run_as_its_own_process_opens_its_store_with_the_collector_paused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        collector_reset: None) -> None:
    from lca_tui.commands.hook import fast_main
    from store import facade

    path = _a_store(tmp_path)
    seen = _watch(monkeypatch, facade, "open_store")
    monkeypatch.setenv("LCA_NO_DAEMON", "1")
    raw = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s1",
                      "prompt": "what do we know", "cwd": str(tmp_path)}).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    assert fast_main(["hook", "UserPromptSubmit", "--store", str(path)], raw=raw,
                     own_process=True) == 0
    capsys.readouterr()
    assert seen == [False]
    assert gc.isenabled() and not collector.paused() and gc.get_freeze_count() > 0
