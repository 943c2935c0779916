"""CLI tables at every width: ids, paths and times never split, the columns left out named, a
table wider than the console not cut, the CLI without COLUMNS, LINES or a terminal, and text cut
at word boundaries."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from store import Store
from store.core.textsafe import one_line

from tests.conftest import CLAUDE_CODE, needs_shared_data
from tests.helpers_ui import SESSIONS, _output, _run, _store_with_worker
from tests.helpers_ui import demo  # noqa: F401 (a pytest fixture, named as a parameter)


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


@needs_shared_data
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


@pytest.mark.parametrize(("text", "width", "expected"), [
    ("ranked #3, S 0.234 < floor 0.25 and more", 30, "ranked #3, S 0.234 < floor…"),
    ("session live-test", 15, "session…"),
    ("short", 10, "short"),
    ("x" * 20, 8, "x" * 7 + "…"),
])
def test_truncation_at_word_boundaries(text: str, width: int, expected: str) -> None:
    assert one_line(text, width) == expected


ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


LOCAL = re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\b")


def _dropped(out: str) -> list[str]:
    found = re.search(r"not shown at \d+ columns: (.*?) \(a wider terminal or --json shows",
                      " ".join(out.split()))
    return found.group(1).split(", ") if found else []


def _header(out: str, first: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.split()[:1] == [first])
    return line.split()


@pytest.mark.parametrize("width", [80, 60])
def test_audit_keeps_times_whole_in_local_time(demo: Path, width: int,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    out = _output(["audit", "--limit", "5", "--store", str(demo)], capsys)
    assert not ISO.search(out), out
    rows = [line for line in out.splitlines() if re.match(r"\s*\d+\s+\d{4}-", line)]
    assert len(rows) == 5 and all(LOCAL.search(r) for r in rows), out
    shown = _header(out, "id")
    assert set(shown) | set(_dropped(out)) >= {"id", "time", "actor", "action", "target",
                                               "counts"}, out


@pytest.mark.parametrize("width", [80, 60])
def test_imports_keep_paths_whole_and_name_every_dropped_column(
        demo: Path, width: int, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    out = _output(["imports", "--store", str(demo)], capsys)
    data = f"{demo}.demo-data"
    assert f"{data}/memory" in out and f"{data}/claude-code" in out, out
    shown, dropped = _header(out, "run"), _dropped(out)
    assert set(shown) | set(dropped) == {"run", "started", "status", "paths", "sessions",
                                         "entries", "memories", "problems"}, out
    assert "problems" in shown  # the count of problems is never the one left out
    for line in out.splitlines():
        assert not re.search(r"\d{4}-\d\d-\d\d\s*$", line), "a time split from its clock"


@pytest.mark.parametrize("width", [80, 60])
def test_ingest_problems_keep_paths_whole_and_reasons_readable(
        demo: Path, width: int, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    out = _output(["ingest", "--problems", "--store", str(demo)], capsys)
    data = f"{demo}.demo-data/memory"
    assert f"{data}/feedback_commit-style.md" in out
    assert f"{data}/feedback_release-process.md" in out
    # the reason column is wide enough for phrases, not squeezed to a few letters a line
    assert "front matter is not valid" in out, out
    for word in ("top-level", "'critical'", "'metadata':"):
        assert re.search(rf"(^|\s){re.escape(word)}(\s|$)", out, re.M), (word, out)
    assert "sessions added 0, entries added 0, memories added 7, files 24" in out


@pytest.mark.parametrize("width", [80, 60])
def test_config_keeps_the_store_path_whole(tmp_path: Path, width: int,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    path = tmp_path / "a-folder-with-a-rather-long-name" / "and-another-one-below-it" / "s.db"
    out = _output(["config", "--store", str(path)], capsys)
    assert f"store: {path}\n" in out, out
    assert "embed.backend" in out and "recall.floor" in out


def test_a_table_wider_than_the_console_is_not_cut(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """When the whole columns alone are wider than the console, the table is drawn wider
    (the terminal wraps it) rather than cropping or squeezing an id; the note is one line."""
    from lca_tui.output import Listing, col, console

    monkeypatch.setenv("COLUMNS", "40")
    ident = "5ccec58f-0e70-4378-a129-7842bc337b8d"
    t = Listing(col("session", whole=True), col("started", whole=True),
                col("title", drop=1), col("text", min_width=20))
    t.add_row(ident, "2026-11-30 16:27", "dropped first", "some words of free text here")
    t.print(console())
    out = capsys.readouterr().out
    assert ident in out and "2026-11-30 16:27" in out
    assert "not shown at 40 columns: title (a wider terminal or --json shows them)" in " ".join(
        out.split())
    assert "some words of free" in out  # the free text kept its min width (20)


def test_audit_summarises_an_event_over_many_ids(store: Store, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """One event over 600 chunks printed all 600 ids; the text names the first few and the
    count, and `--json` keeps every id."""
    import json

    store.audit("reindex", "chunk", list(range(1000, 1600)), {"chunks": 600})
    monkeypatch.setenv("COLUMNS", "160")
    out = _output(["audit", "--store", str(store.path)], capsys)
    line = next(ln for ln in out.splitlines() if "reindex" in ln)
    assert "1000, 1001, 1002, 1003, 1004 … (600 in all" in " ".join(out.split())
    assert "1599" not in out and len(line) <= 160
    doc = json.loads(_output(["audit", "--json", "--store", str(store.path)], capsys))
    assert doc["events"][0]["target_ids"] == list(range(1000, 1600))
