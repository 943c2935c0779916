"""A Claude Code 1.0.x session whose Task subagents were written inline
(``isSidechain``) shows each subagent as its own agent on Transcript and Context."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lca_tui.app import make_app
from store import Store
from tests.conftest import DATA, make_store
from tests.helpers_shell import (
    FIXED_NOW,
    SIZE,
    load_count,
    load_log,
    screen_loaded,
    settled,
    wait_until,
    watch,
)
from widgets.pressure_chart import PressureChart

SIDE = "sidechain-c0ffee01"


@pytest.fixture
def inline_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The inline-sidechain fixture imported by a relative path (the same on every machine)."""
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(DATA / "claude-code-shapes" / "inline-sidechains-1.0.jsonl",
                    tmp_path / "inline.jsonl")
    store = make_store(Path("inline.db"))
    assert store.ingest([Path("inline.jsonl")]).errors == []
    yield store
    store.close()


def test_transcript_inline_sidechain(snap_compare: Any, inline_store: Store) -> None:
    """Transcript: the subagent's prompt selected, agent sidechain-c0ffee01, not main."""
    app = make_app(store=inline_store, now=FIXED_NOW, mode="transcript")
    session = inline_store.session("1a2b3c4d")
    seq = inline_store.entries(session.id, SIDE)[0].seq

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        loads = load_count(screen, "entries")
        screen.open_session(session.id, seq)
        await wait_until(pilot, lambda: load_count(screen, "entries") > loads,
                         what="the sidechain entry")
        await settled(pilot)

    assert snap_compare(watch(app), terminal_size=SIZE, run_before=run_before)


def test_context_inline_sidechain(snap_compare: Any, inline_store: Store) -> None:
    """Context: the subagent's own series picked (2 turns), the main agent's apart."""
    app = make_app(store=inline_store, now=FIXED_NOW, mode="context", refresh_seconds=3600)
    session = inline_store.session("1a2b3c4d")

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: screen_loaded(app, "context"),
                         what="the Context screen's load")
        screen = app.screen
        table = screen.query_one("#context-series")
        table.focus()
        table.move_cursor(row=table.get_row_index(f"{session.id}\x1f{SIDE}"), animate=False)
        await pilot.press("enter")
        await wait_until(pilot, lambda: load_count(screen, "full") >= 2
                         and screen.query_one(PressureChart).data.used == [3004, 3206],
                         what="the sidechain's series")
        await settled(pilot)

    assert snap_compare(watch(app), terminal_size=SIZE, run_before=run_before)


async def test_overview_shows_the_agents_mark_whole(inline_store: Store) -> None:
    """Overview at 120 columns: "main + 3 workers" fits its column, not cut to "main + 3…"."""
    from textual.widgets import DataTable

    app = make_app(store=inline_store, now=FIXED_NOW)
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        await wait_until(pilot, lambda: screen_loaded(app), what="overview loaded")
        table = app.screen.query_one("#overview-sessions", DataTable)
        mark = str(table.get_cell(inline_store.session("1a2b3c4d").id, "agents"))
        assert mark == "main + 3 workers"
        assert table.columns["agents"].width >= len(mark)  # type: ignore[index]
