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
    embed.settle_early()


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

    def slow(*_args: Any) -> Any:
        release.wait(30)
        finished.set()
        raise RuntimeError("nobody asked")  # not this run's error: settling says nothing

    monkeypatch.setattr(embed, "load_embedder", slow)
    embed.load_early(("model", 0, 64, 2048))
    threading.Timer(0.2, release.set).start()
    embed.settle_early()
    assert finished.is_set()
    assert embed.take_early(("model", 0, 64, 2048)) is None


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
