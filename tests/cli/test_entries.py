"""``lca-tui entries``: agents by name or unique prefix (an unknown one names those there are),
every agent's entries interleaved by time, a limit below one or an empty agent refused, and
output into a pipe never re-wrapped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lca_tui.cli import main
from store import Store
from store.core.writes import NewEntry, NewSession

from tests.helpers_ui import demo  # noqa: F401 (a pytest fixture, named as a parameter)
from tests.helpers_ui import (
    SESSIONS,
    WORKER,
    _fails,
    _one_error_line,
    _run,
    _store_with_worker,
)


def test_entries_unknown_agent_names_the_agents(store: Store,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    _one_error_line(*_run(["entries", SESSIONS[0][:8], "--agent", "nobody", "--store",
                           str(store.path)], capsys), "no agent 'nobody'", "main", WORKER)


def test_entries_agent_prefix_resolves(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    code, out, _ = _run(["entries", SESSIONS[0][:8], "--agent", "a7c", "--json", "--store",
                         str(store.path)], capsys)
    assert code == 0 and [e["content"] for e in json.loads(out)] == ["worker task",
                                                                    "worker result"]


def test_all_agents_interleave_by_time(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    entries = store.entries(SESSIONS[0], by_time=True)
    assert [e.content for e in entries] == ["question 0", "worker task", "worker result",
                                            "answer 0"]
    assert [e.agent for e in entries] == ["main", WORKER, WORKER, "main"]
    _, out, _ = _run(["entries", SESSIONS[0][:8], "--json", "--store", str(store.path)], capsys)
    assert [e["content"] for e in json.loads(out)] == [e.content for e in entries]


@pytest.mark.parametrize("limit", ["0", "-3"])
def test_entries_limit_below_one_is_an_error(demo: Path, limit: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _fails(["entries", "e4039782", "--limit", limit, "--store", str(demo)], capsys,
           "--limit must be 1 or more", limit)


def test_entries_empty_agent_is_an_error(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fails(["entries", "e4039782", "--agent", "", "--store", str(demo)], capsys,
           "no agent ''", "main")


def test_piped_entries_are_not_rewrapped(store: Store, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Into a pipe (capsys: not a terminal) an entry's long lines come out as stored, at any
    $COLUMNS: a 300-character line with a long path and a session id stays one line."""
    path = "/home/dana/projects/ledgerline/" + "deeply/nested/" * 12 + "settlement.py"
    sid = "5ccec58f-0e70-4378-a129-7842bc337b8d"
    line = f"see {path} and session {sid} " + "word " * 30
    content = f"{line.strip()}\nsecond line\n    indented third"
    store.append_entries(NewSession(sid, "claude-code"),
                         [NewEntry("assistant", content, "s", ts="2026-03-01T10:00:00Z")])
    for columns in (None, "80", "160"):
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        assert main(["entries", sid[:8], "--store", str(store.path)]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith("#0 2026-03-01 ")
        assert out[1:] == content.split("\n"), out
