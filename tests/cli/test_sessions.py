"""``lca-tui sessions`` lists a session's agents as the app does."""

from __future__ import annotations

import pytest

from store import Store
from widgets.fmt import agents_mark

from tests.helpers_ui import SESSIONS, _run, _store_with_worker


def test_sessions_shows_agents_as_the_app_does(store: Store, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    monkeypatch.setenv("COLUMNS", "200")
    _, out, _ = _run(["sessions", "--store", str(store.path)], capsys)
    first = next(s for s in store.sessions() if s.id == SESSIONS[0])
    assert agents_mark(first) == "main + 1 worker"
    assert "main + 1 worker" in out and "worker(s)" not in out
