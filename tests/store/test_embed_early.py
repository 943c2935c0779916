"""The embedder loaded early (``store.core.embed.load_early``): a one-shot process that will
embed begins the model's load before it imports and opens the store; the store takes that
embedder the first time it asks, with the same settings only; its load's error is raised
where the store asks, and a load nothing took is waited for before the process goes on."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from store.core import embed
from store.core.embed import HashEmbedder
from store.core.settings import Settings
from store.facade import open_store
from store.harness import hook
from tests.conftest import make_store


@pytest.fixture(autouse=True)
def _nothing_left_early() -> Any:
    yield
    for key in list(embed._EARLY):
        embed.settle_early(key)


def test_the_store_takes_the_embedder_begun_for_its_settings(tmp_path: Path) -> None:
    settings = Settings.load({"embed.backend": "fallback"})
    key = embed.embedder_key(settings)
    embed.load_early(key)
    store = open_store(tmp_path / "s.db", settings)
    try:
        assert isinstance(store.embedder, HashEmbedder)
        assert embed.take_early(key) is None  # the store took it
    finally:
        store.close()


def test_another_settings_embedder_is_not_taken(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    real = embed.load_embedder

    def counted(*args: Any) -> Any:
        made.append(args)
        return real(*args)

    monkeypatch.setattr(embed, "load_embedder", counted)
    import store.core.base as base

    monkeypatch.setattr(base, "load_embedder", counted)
    embed.load_early(("fallback", 0, 7, 2048))  # a batch size the store does not use
    store = open_store(tmp_path / "s.db", Settings.load({"embed.backend": "fallback"}))
    try:
        assert isinstance(store.embedder, HashEmbedder)
    finally:
        store.close()
    assert ("fallback", 0, 64, 2048) in made  # loaded for the store's own settings
    assert embed.take_early(("fallback", 0, 7, 2048)) is not None  # left for its owner


def test_an_early_loads_error_is_raised_where_the_store_asks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: Any) -> Any:
        raise RuntimeError("the embedding model could not load: test")

    monkeypatch.setattr(embed, "load_embedder", broken)
    key = ("model", 0, 64, 2048)
    embed.load_early(key)
    with pytest.raises(RuntimeError, match="could not load: test"):
        embed.take_early(key)


def test_a_load_nothing_took_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    release, finished = threading.Event(), threading.Event()

    def slow(*args: Any) -> Any:
        if args[0] == "fallback":
            return HashEmbedder("a test")
        release.wait(30)
        finished.set()
        raise RuntimeError("nobody asked")  # not this run's error: settling says nothing

    monkeypatch.setattr(embed, "load_embedder", slow)
    embed.load_early(("model", 0, 64, 2048))
    embed.load_early(("fallback", 0, 64, 2048))  # another run's: left to it
    threading.Timer(0.2, release.set).start()
    embed.settle_early(("model", 0, 64, 2048))
    assert finished.is_set()
    assert embed.take_early(("model", 0, 64, 2048)) is None
    assert embed.take_early(("fallback", 0, 64, 2048)) is not None


def test_an_interrupt_while_settling_is_not_swallowed() -> None:
    from concurrent.futures import Future

    interrupted: Future[Any] = Future()
    interrupted.set_exception(KeyboardInterrupt())  # as Ctrl-C raises it in the wait
    embed._EARLY[("model", 0, 64, 2048)] = interrupted
    with pytest.raises(KeyboardInterrupt):
        embed.settle_early(("model", 0, 64, 2048))


def _runs(path: Path) -> list[tuple[str, int | None]]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return [(str(r[0]), r[1]) for r in conn.execute(
            "SELECT status, trace_id FROM hook_run ORDER BY id")]


def _prompt(tmp_path: Path, prompt: str) -> str:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("", encoding="utf-8")
    return json.dumps({"session_id": "s-early", "transcript_path": str(transcript),
                       "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
                       "prompt": prompt})


def test_a_hook_that_will_fail_first_loads_nothing_early(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """No session, a folder for a transcript, a folder for the store: the run fails before
    it would embed, so nothing is begun (and nothing waited for)."""
    begun: list[Any] = []
    monkeypatch.setattr(embed, "load_early", begun.append)
    make_store(tmp_path / "s.db").close()
    settings = Settings.load({"embed.backend": "fallback"})
    good = json.loads(_prompt(tmp_path, "why did the deploy fail"))
    folder = tmp_path / "a-folder.jsonl"
    folder.mkdir()
    for store_path, payload in (
            (tmp_path / "s.db", {k: v for k, v in good.items() if k != "session_id"}),
            (tmp_path / "s.db", {**good, "transcript_path": str(folder)}),
            (tmp_path / "s.db", {**good, "transcript_path": "~nosuchuser-zz/t.jsonl"}),
            (tmp_path, good), (tmp_path / "nope" / "s.db", good)):
        assert hook.handle(store_path, "UserPromptSubmit", json.dumps(payload),
                           settings) == ""
    assert begun == []
    # the runs the store could take are recorded there, as the run's own failures
    assert [r[0] for r in _runs(tmp_path / "s.db")] == ["failed"] * 3


@pytest.mark.parametrize(("prompt", "early"), [("why did the deploy fail", True),
                                               ("/compact", False), ("   ", False)])
def test_a_hook_in_process_loads_early_only_what_it_will_recall_with(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prompt: str, early: bool) -> None:
    begun: list[Any] = []
    real = embed.load_early

    def recorded(key: Any) -> None:
        begun.append(key)
        real(key)

    monkeypatch.setattr(embed, "load_early", recorded)
    import store.core.base as base

    loaded_by_the_store: list[Any] = []
    monkeypatch.setattr(base, "load_embedder", lambda *a: loaded_by_the_store.append(a))
    make_store(tmp_path / "s.db").close()
    settings = Settings.load({"embed.backend": "fallback"})
    out = hook.handle(tmp_path / "s.db", "UserPromptSubmit", _prompt(tmp_path, prompt),
                      settings)
    assert out == "" or out.startswith("{")
    assert begun == ([embed.embedder_key(settings)] if early else [])
    assert loaded_by_the_store == []  # it recalled with the early one (or embedded nothing)
    runs = _runs(tmp_path / "s.db")
    assert [r[0] for r in runs] == ["ok"] and (runs[0][1] is not None) == early  # a trace


@pytest.mark.parametrize(("made", "read_only", "opens"), [
    ("file", False, True), ("missing", False, True), ("missing", True, False),
    ("folder", False, False), ("no-parent", False, False), ("parent-a-file", False, False),
    ("file", "setting", True), ("empty", "setting", False), ("empty", False, True),
    ("collapsed-url", False, False)])
def test_a_command_loads_early_only_for_a_store_it_can_open(
        tmp_path: Path, made: str, read_only: bool | str, opens: bool) -> None:
    """``recall`` / ``search`` with no daemon: not for a store that will be refused before it
    opens (a folder; one missing in a folder that does not exist, or under ``--read-only``;
    a parent that is a file; an empty file read-only, by the flag or the setting; a URL made
    into a path); a missing one in an existing folder is made, so yes."""
    import argparse

    from lca_tui.output import model_meanwhile

    path = tmp_path / "s.db"
    if made == "file":
        make_store(path).close()
    elif made == "folder":
        path.mkdir()
    elif made == "no-parent":
        path = tmp_path / "nope" / "s.db"
    elif made == "parent-a-file":
        (tmp_path / "afile").write_text("x")
        path = tmp_path / "afile" / "s.db"
    elif made == "empty":
        path.write_bytes(b"")
    elif made == "collapsed-url":
        path = Path("postgresql:/agent@localhost/lca")
    overrides = ["embed.backend=fallback"] + (
        ["store.read_only=true"] if read_only == "setting" else [])
    args = argparse.Namespace(store=str(path), read_only=read_only is True,
                              overrides=overrides)
    key = ("fallback", 0, 64, 2048)
    with model_meanwhile(args):
        assert (key in embed._EARLY) == opens
    assert key not in embed._EARLY  # settled (or taken) when the block ends
