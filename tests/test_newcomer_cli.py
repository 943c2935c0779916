"""Issue 16, the command line: green without a terminal, tables that keep ids whole, no silent
no-ops, one time format, plurals, progress when stderr is a log."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lca_tui.cli import main
from store import Store
from store.core.textsafe import one_line
from store.core.writes import NewEntry, NewSession
from store.recall.run import compare
from store.recall.traces import Candidate, Trace
from tests.conftest import CLAUDE_CODE
from widgets.fmt import agents_mark

WORKER = "a7c3e51f"
SESSIONS = [f"{n:08x}-0e70-4378-a129-7842bc337b8d" for n in (0x5CCEC58F, 0x4CA67353,
                                                               0xE4039782)]


def _store_with_worker(store: Store) -> Store:
    """Three sessions with long ids; the first has a worker whose entries fall between the
    main agent's by time but were written after them (higher seq)."""
    for i, sid in enumerate(SESSIONS):
        store.append_entries(
            NewSession(sid, "claude-code", project="/home/dana/projects/ledgerline",
                       started_at=f"2026-03-0{i + 1}T10:00:00Z",
                       ended_at=f"2026-03-0{i + 1}T10:05:00Z"),
            [NewEntry("user", f"question {i}", f"s{i}", ts=f"2026-03-0{i + 1}T10:00:00Z"),
             NewEntry("assistant", f"answer {i}", f"s{i}", ts=f"2026-03-0{i + 1}T10:04:00Z",
                      source_offset=1)])
    store.append_entries(
        NewSession(SESSIONS[0], "claude-code"),
        [NewEntry("user", "worker task", "w", agent=WORKER, ts="2026-03-01T10:01:00Z"),
         NewEntry("assistant", "worker result", "w", agent=WORKER, ts="2026-03-01T10:02:00Z",
                  source_offset=1)])
    return store


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_error_line(code: int, out: str, err: str, *fragments: str) -> None:
    assert code != 0, "a silent no-op must fail"
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("lca-tui: "), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


# -- the silent no-ops, each one clear line and a non-zero exit ----------------------------------
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


def test_context_unknown_and_ambiguous_agent(store: Store,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from store.context.api import record_snapshot

    _store_with_worker(store)
    for agent in ("main", WORKER, "a7c3e999"):
        record_snapshot(store, SESSIONS[0], 1000, agent=agent, ts="2026-03-01T10:03:00Z")
    _one_error_line(*_run(["context", "--agent", "nobody", "--store", str(store.path)], capsys),
                    "no agent 'nobody'", "main", WORKER)
    _one_error_line(*_run(["context", "--agent", "a7c3e", "--store", str(store.path)], capsys),
                    "names 2 agents", WORKER, "a7c3e999")
    code, out, _ = _run(["context", "--agent", "a7c3e5", "--json", "--store", str(store.path)],
                        capsys)
    assert code == 0 and [s["agent"] for s in json.loads(out)["sessions"]] == [WORKER]


def test_ingest_missing_path_fails_and_imports_nothing(store: Store, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    missing = tmp_path / "no" / "such.jsonl"
    _one_error_line(*_run(["ingest", str(CLAUDE_CODE), str(missing), "--store",
                           str(store.path)], capsys), str(missing), "no such file")
    assert store.stats(with_embedder=False).entries == 0


def test_store_in_a_missing_folder_is_refused(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "typo" / "store.db"
    _one_error_line(*_run(["sessions", "--store", str(target)], capsys),
                    str(target.parent), "does not exist")
    assert not target.parent.exists()


def test_default_store_location_is_created_on_demand(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("LCA_STORE")
    code, out, _ = _run(["sessions", "--json"], capsys)
    assert code == 0 and json.loads(out) == []
    assert (tmp_path / "xdg_data_home" / "lca-tui" / "store.db").is_file()


def test_empty_search_is_an_error(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    for text in ("", "   "):
        _one_error_line(*_run(["search", text, "--store", str(store.path)], capsys),
                        "nothing to search for")


# -- tables at any width ------------------------------------------------------------------------
def test_sessions_at_80_columns_shows_every_id_whole(
        store: Store, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    for width in (80, 100, 60):
        monkeypatch.setenv("COLUMNS", str(width))
        code, out, _ = _run(["sessions", "--store", str(store.path)], capsys)
        assert code == 0
        assert all(len(line) <= width for line in out.splitlines()), out
        for sid in SESSIONS:
            assert sum(sid in line for line in out.splitlines()) == 1, (width, out)
        if width >= 80:
            assert re.search(r"\b2026-03-01 10:00\b", out), "times never split either"
    assert "not shown at 60 columns" in out


def test_sessions_shows_agents_as_the_app_does(store: Store, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    monkeypatch.setenv("COLUMNS", "200")
    _, out, _ = _run(["sessions", "--store", str(store.path)], capsys)
    first = next(s for s in store.sessions() if s.id == SESSIONS[0])
    assert agents_mark(first) == "main + 1 worker"
    assert "main + 1 worker" in out and "worker(s)" not in out


def test_one_time_format_and_iso_in_json(store: Store, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    monkeypatch.setenv("COLUMNS", "200")
    _, out, _ = _run(["entries", SESSIONS[0][:8], "--store", str(store.path)], capsys)
    assert "#0 2026-03-01 10:00:00 user" in out and "T10:00:00" not in out
    _, out, _ = _run(["entries", SESSIONS[0][:8], "--json", "--store", str(store.path)], capsys)
    assert json.loads(out)[0]["ts"] == "2026-03-01T10:00:00Z"


def test_all_agents_interleave_by_time(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    entries = store.entries(SESSIONS[0], by_time=True)
    assert [e.content for e in entries] == ["question 0", "worker task", "worker result",
                                            "answer 0"]
    assert [e.agent for e in entries] == ["main", WORKER, WORKER, "main"]
    _, out, _ = _run(["entries", SESSIONS[0][:8], "--json", "--store", str(store.path)], capsys)
    assert [e["content"] for e in json.loads(out)] == [e.content for e in entries]


def test_plurals(store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = tmp_path / "in"
    one.mkdir()
    (one / "short.jsonl").write_bytes((CLAUDE_CODE / "short.jsonl").read_bytes())
    (one / "empty.jsonl").write_text("")
    code, out, _ = _run(["ingest", str(one), "--store", str(store.path)], capsys)
    assert code == 0
    assert "added 1 session," in out and "2 files read" in out and "1 problem" in out
    assert "(s)" not in out and "1 problems" not in out


# -- green without a terminal ----------------------------------------------------------------------
def test_cli_without_columns_lines_or_a_terminal(store: Store, tmp_path: Path) -> None:
    """As CI runs it: no COLUMNS or LINES, stdin not a terminal, output to pipes. Tables get
    their full width, error and progress lines on stderr are never wrapped."""
    _store_with_worker(store)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    exe = [sys.executable, "-m", "lca_tui.cli"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(exe + list(args), capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL, timeout=120)

    sessions = run("sessions", "--store", str(store.path))
    assert sessions.returncode == 0
    for sid in SESSIONS:
        assert sid in sessions.stdout
    deep = tmp_path / ("a-long-folder-name-" * 6) / "store.db"
    bad = run("stats", "--store", str(deep))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and str(deep.parent) in bad.stderr
    ingest = run("ingest", str(CLAUDE_CODE / "short.jsonl"), "--store", str(store.path))
    assert ingest.returncode == 0
    assert "lca-tui: ingest: loading the embedding model…\n" in ingest.stderr
    assert all(line.startswith("lca-tui: ingest: ") for line in ingest.stderr.splitlines())


# -- truncation, moves ----------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "width", "expected"), [
    ("ranked #3, S 0.234 < floor 0.25 and more", 30, "ranked #3, S 0.234 < floor…"),
    ("session live-test", 15, "session…"),
    ("short", 10, "short"),
    ("x" * 20, 8, "x" * 7 + "…"),
])
def test_truncation_at_word_boundaries(text: str, width: int, expected: str) -> None:
    assert one_line(text, width) == expected


def _trace(order: list[tuple[int, float]]) -> Trace:
    return Trace(1, "2026-03-01T10:00:00Z", "q", None, None, "private", False, {}, 1.0, None,
                 False, candidates=[Candidate(rank=r, source_type="memory", source_id=sid,
                                              decision=("injected" if score > 0.6
                                                        else "not_selected"),
                                              reason="", score=score)
                                    for r, (sid, score) in enumerate(order, start=1)])


def test_equal_score_swaps_are_not_moves() -> None:
    before = _trace([(1, 0.9), (2, 0.5), (3, 0.5), (4, 0.1)])
    swapped = _trace([(1, 0.9), (3, 0.5), (2, 0.5), (4, 0.1)])
    assert not any(m.changed for m in compare(before, swapped))
    assert any(m.tie_only for m in compare(before, swapped))
    overtaken = _trace([(3, 0.9), (1, 0.8), (2, 0.5), (4, 0.1)])
    assert {m.pointer for m in compare(before, overtaken) if m.changed} == {
        "memory 1", "memory 2", "memory 3"}
