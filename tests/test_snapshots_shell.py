"""Snapshots of the shell's screens on the demo store: frozen clock, 120x40, fallback embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lca_tui.app import make_app
from store.core.writes import NewEntry, NewSession
from tests.conftest import make_store
from tests.helpers_shell import FIXED_NOW, build_demo_template, copy_demo, wait_until

SIZE = (120, 40)


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_template(tmp_path_factory.mktemp("demo-snap"))


@pytest.fixture
def demo_path(demo_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return copy_demo(demo_template, tmp_path)


async def _settled(pilot: Pilot[Any]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.2)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_overview_on_demo(snap_compare: Any, demo_path: Path) -> None:
    """Overview: path, size, counts by record and kind, degraded embedder, latest sessions."""
    app = make_app(demo_path, now=FIXED_NOW)

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.screen.loads >= 1, what="overview loaded")
        await wait_until(pilot, lambda: app.screen.health_loads >= 1, what="health line")
        await _settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_transcript_on_demo(snap_compare: Any, demo_path: Path) -> None:
    """Transcript: the session with a worker and a compaction, its entries and the first one."""
    app = make_app(demo_path, now=FIXED_NOW, mode="transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: screen.entry_loads >= 1, what="entries")
        session = next(s for s in screen.sessions if s.workers)
        loads = screen.entry_loads
        screen.open_session(session.id)
        await wait_until(pilot, lambda: screen.entry_loads > loads, what="worker session")
        await _settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_transcript_compaction_entry(snap_compare: Any, demo_path: Path) -> None:
    """Transcript: a compaction boundary selected, its figures in the header."""
    app = make_app(demo_path, now=FIXED_NOW, mode="transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: screen.entry_loads >= 1, what="entries")
        session = next(s for s in screen.sessions if s.workers)
        store = app.store
        seq = next(e.seq for e in store.entries(session.id) if e.kind == "compaction")
        loads = screen.entry_loads
        screen.open_session(session.id, seq)
        await wait_until(pilot, lambda: screen.entry_loads > loads, what="compaction")
        await _settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_transcript_search_results(snap_compare: Any, demo_path: Path) -> None:
    """Transcript: `/` hybrid search results with their scores and the first hit in full."""
    app = make_app(demo_path, now=FIXED_NOW, mode="transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: screen.entry_loads >= 1, what="entries")
        await pilot.press("slash", *"make release", "enter")
        await wait_until(pilot, lambda: screen.searches >= 1, what="search")
        await _settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help_on_transcript(snap_compare: Any, demo_path: Path) -> None:
    """`?` on Transcript: what the screen shows and its keys."""
    app = make_app(demo_path, now=FIXED_NOW, mode="transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: screen.entry_loads >= 1, what="entries")
        await _settled(pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_transcript_hostile_entry(snap_compare: Any, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Transcript: markup, ANSI and OSC 52 in an entry are shown as literal text."""
    monkeypatch.chdir(tmp_path)
    store = make_store(Path("hostile.db"))
    store.append_entries(
        NewSession("hostile-session", "claude-code", project="/srv/[bold]proj[/]",
                   started_at="2026-03-01T10:00:00.000Z"),
        [NewEntry("assistant", "literal [bold red]x[/] and [link=x]y[/] then "
                  "\x1b[31mred\x1b[0m and \x1b]52;c;aGVsbG8=\x07 end", "hostile:1",
                  ts="2026-03-01T10:00:00.000Z", tool_name="[i]tool[/i]")])
    app = make_app(store=store, now=FIXED_NOW, mode="transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: screen.entry_loads >= 1, what="entries")
        await _settled(pilot)

    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    finally:
        store.close()
