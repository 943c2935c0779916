"""One local time format in the CLI's tables, ISO-8601 in its JSON."""

from __future__ import annotations

import json

import pytest

from store import Store

from tests.helpers_ui import SESSIONS, _run, _store_with_worker


def test_one_time_format_and_iso_in_json(store: Store, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    monkeypatch.setenv("COLUMNS", "200")
    _, out, _ = _run(["entries", SESSIONS[0][:8], "--store", str(store.path)], capsys)
    assert "#0 2026-03-01 10:00:00 user" in out and "T10:00:00" not in out
    _, out, _ = _run(["entries", SESSIONS[0][:8], "--json", "--store", str(store.path)], capsys)
    assert json.loads(out)[0]["ts"] == "2026-03-01T10:00:00Z"
