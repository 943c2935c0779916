"""Snapshots of the shell's screens on the demo store: frozen clock, 120x40, fallback embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lca_tui.app import make_app
from store.core.writes import NewEntry, NewSession
from tests.conftest import make_store
from tests.helpers_shell import (
    FIXED_NOW,
    SIZE,
    load_count,
    overview_settled,
    screen_loaded,
    settled,
    wait_until,
    watch,
)


def test_overview_on_demo(snap_compare: Any, demo_path: Path) -> None:
    """Overview: path, size, counts by record and kind, degraded embedder, latest sessions."""
    app = make_app(demo_path, now=FIXED_NOW)

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: screen_loaded(app), what="overview loaded")
        await overview_settled(pilot)

    assert snap_compare(watch(app), terminal_size=SIZE, run_before=run_before)


def test_transcript_on_demo(snap_compare: Any, demo_path: Path) -> None:
    """Transcript: the session with a worker and a compaction, its entries and the first one."""
    app = make_app(demo_path, now=FIXED_NOW, mode="transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        session = next(s for s in screen.sessions if s.workers)
        loads = load_count(screen, "entries")
        screen.open_session(session.id)
        await wait_until(pilot, lambda: load_count(screen, "entries") > loads,
                         what="worker session")
        await settled(pilot)

    assert snap_compare(watch(app), terminal_size=SIZE, run_before=run_before)


def test_transcript_compaction_entry(snap_compare: Any, demo_path: Path) -> None:
    """Transcript: a compaction boundary selected, its figures in the header."""
    app = make_app(demo_path, now=FIXED_NOW, mode="transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        session = next(s for s in screen.sessions if s.workers)
        store = app.store
        seq = next(e.seq for e in store.entries(session.id) if e.kind == "compaction")
        loads = load_count(screen, "entries")
        screen.open_session(session.id, seq)
        await wait_until(pilot, lambda: load_count(screen, "entries") > loads, what="compaction")
        await settled(pilot)

    assert snap_compare(watch(app), terminal_size=SIZE, run_before=run_before)


def test_transcript_search_results(snap_compare: Any, demo_path: Path) -> None:
    """Transcript: `s` hybrid search results with their scores and the first hit in full."""
    app = make_app(demo_path, now=FIXED_NOW, mode="transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        await pilot.press("s", *"make release", "enter")
        await wait_until(pilot, lambda: load_count(screen, "search") >= 1, what="search")
        await settled(pilot)

    assert snap_compare(watch(app), terminal_size=SIZE, run_before=run_before)


def test_help_on_transcript(snap_compare: Any, demo_path: Path) -> None:
    """`?` on Transcript: what the screen shows and its keys."""
    app = make_app(demo_path, now=FIXED_NOW, mode="transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        await settled(pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.2)

    assert snap_compare(watch(app), terminal_size=SIZE, run_before=run_before)


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
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        await settled(pilot)

    try:
        assert snap_compare(watch(app), terminal_size=SIZE, run_before=run_before)
    finally:
        store.close()


# -- every screen at 80x24, its main content visible ----------------------------------------------
SMALL = (80, 24)


def _shown_lines(widget: Any) -> int:
    """How many lines of ``widget``'s content are on the screen."""
    screen = widget.screen.region
    return widget.content_region.intersection(screen).height if widget.display else 0


def _small(demo_path: Path, mode: str) -> Any:
    return make_app(demo_path, now=FIXED_NOW, mode=mode, refresh_seconds=3600)


def test_overview_at_80x24(snap_compare: Any, demo_path: Path) -> None:
    """Overview at 80x24: the health and consolidation lines, store, embedder and records,
    the latest sessions start below."""
    app = _small(demo_path, "overview")

    async def run_before(pilot: Pilot[Any]) -> None:
        await overview_settled(pilot)
        assert _shown_lines(app.screen.query_one("#overview-records")) >= 9
        assert _shown_lines(app.screen.query_one("#overview-sessions")) >= 2  # header, 1st row
        assert _shown_lines(app.screen.query_one("#overview-consolidation")) == 1

    assert snap_compare(watch(app), terminal_size=SMALL, run_before=run_before)


def test_context_at_80x24(snap_compare: Any, demo_path: Path) -> None:
    """Context at 80x24: the picker hidden, gauge, chart and the flagged compaction."""
    app = _small(demo_path, "context")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen) >= 1, what="context loaded")
        await pilot.press("b", "slash", *"e40 main", "enter", "enter", "b")
        await wait_until(pilot, lambda: load_count(screen, "full") >= 2, what="the session pinned")
        await settled(pilot)
        assert not screen.query_one("#context-picker").display
        assert _shown_lines(screen.query_one("#context-chart")) >= 6
        assert _shown_lines(screen.query_one("#context-events")) >= 4

    assert snap_compare(watch(app), terminal_size=SMALL, run_before=run_before)


def test_recall_at_80x24(snap_compare: Any, demo_path: Path) -> None:
    """Recall at 80x24: traces, the trace's candidates and the highlighted one in full."""
    app = _small(demo_path, "recall")

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: load_count(app.screen) >= 1, what="recall loaded")
        await settled(pilot)
        assert _shown_lines(app.screen.query_one("#recall-candidates")) >= 4
        assert _shown_lines(app.screen.query_one("#recall-traces")) >= 3

    assert snap_compare(watch(app), terminal_size=SMALL, run_before=run_before)


def test_transcript_at_80x24(snap_compare: Any, demo_path: Path) -> None:
    """Transcript at 80x24: sessions hidden (b), entries with their text, the entry in full."""
    app = _small(demo_path, "transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        await settled(pilot)
        assert _shown_lines(screen.query_one("#entries")) >= 6
        assert _shown_lines(screen.query_one("#entry-content")) >= 3
        text = screen.query_one("#entries").columns["text"]
        assert text.width >= 20, "the text column is on screen"

    assert snap_compare(watch(app), terminal_size=SMALL, run_before=run_before)


def test_help_at_80x24(snap_compare: Any, demo_path: Path) -> None:
    """`?` at 80x24 on Transcript: the help box fits and scrolls."""
    app = _small(demo_path, "transcript")

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: load_count(app.screen, "entries") >= 1, what="entries")
        await settled(pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.2)
        assert _shown_lines(app.screen.query_one("#help-text")) >= 8

    assert snap_compare(watch(app), terminal_size=SMALL, run_before=run_before)


def test_recall_form_at_80x24(snap_compare: Any, demo_path: Path) -> None:
    """Recall at 80x24 with the new-recall form open: query, role, project, channel, historical."""
    app = _small(demo_path, "recall")

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: load_count(app.screen) >= 1, what="recall loaded")
        await settled(pilot)
        await pilot.press("n", *"release steps")
        await pilot.pause(0.2)
        assert _shown_lines(app.screen.query_one("#recall-input")) >= 1

    assert snap_compare(watch(app), terminal_size=SMALL, run_before=run_before)
