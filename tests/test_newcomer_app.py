"""Issue 16, the app: every screen at 80x24, drill-through, `/` filters, the palette, `y`,
`g` / `G`, panes that hide and zoom, Recall's cue options, live state on screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Checkbox, Input, Select

from lca_tui.app import LcaApp, make_app
from screens.context import ContextScreen
from screens.recall import RecallScreen
from screens.transcript import TranscriptScreen
from store.recall.traces import get_trace, list_traces
from tests.helpers_shell import FIXED_NOW, build_demo_template, copy_demo, rendered_text, wait_until
from widgets.pressure_events import PressureEvents
from widgets.table import FilterTable

SMALL = (80, 24)
WORKER_SESSION = "e4039782"


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_template(tmp_path_factory.mktemp("demo-newcomer"))


@pytest.fixture
def demo_path(demo_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return copy_demo(demo_template, tmp_path)


def _app(path: Path, mode: str) -> LcaApp:
    return make_app(path, now=FIXED_NOW, mode=mode, refresh_seconds=3600)


async def _loaded(pilot: Pilot[Any], loads: int = 1) -> None:
    await wait_until(pilot, lambda: getattr(pilot.app.screen, "loads", 0) >= loads,
                     what="the screen's load")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _rows(table: FilterTable, column: str) -> list[str]:
    index = [k.value for k in table.columns].index(column)
    return [table.get_row_at(r)[index].plain for r in range(table.row_count)]


# -- drill-through ---------------------------------------------------------------------------------
async def test_enter_on_an_entry_candidate_opens_the_entry(demo_path: Path) -> None:
    app = _app(demo_path, "recall")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        assert isinstance(screen, RecallScreen) and screen.trace is not None
        candidate = next(c for c in screen.trace.candidates if c.source_type == "entry")
        table = screen.query_one("#recall-candidates", FilterTable)
        table.focus()
        table.move_cursor(row=table.get_row_index(str(candidate.rank)))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen)
                         and app.screen.highlighted_entry() is not None
                         and app.screen.highlighted_entry().seq == candidate.seq,
                         what="the candidate's entry on Transcript")
        entry = app.screen.highlighted_entry()
        assert entry.session_id == candidate.session_id


async def test_enter_on_a_memory_candidate_asks_for_the_memory(demo_path: Path) -> None:
    app = _app(demo_path, "recall")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        candidate = next(c for c in screen.trace.candidates if c.source_type == "memory")
        table = screen.query_one("#recall-candidates", FilterTable)
        table.focus()
        table.move_cursor(row=table.get_row_index(str(candidate.rank)))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.current_mode == "memories", what="Memories")
        await wait_until(pilot, lambda: getattr(app.screen, "detail", None) is not None
                         and app.screen.detail.row.id == candidate.source_id,
                         what="the candidate's memory on Memories")


async def test_enter_on_a_compaction_opens_its_summary(demo_path: Path) -> None:
    app = _app(demo_path, "context")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        picker = screen.query_one("#context-series", FilterTable)
        key = next(k for k in picker.rows if str(k.value).startswith(WORKER_SESSION)
                   and str(k.value).endswith("\x1fmain"))
        picker.focus()
        picker.move_cursor(row=picker.get_row_index(key))
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.full_loads >= 2, what="the session's series")
        events = screen.query_one(PressureEvents)
        assert "pinned" in str(screen.query_one("#context-gauge-panel").border_subtitle)
        text = rendered_text(events)
        assert "why it matters" in text and "PreCompact hook" in text
        compaction = next(ref for kind, ref in events.events if kind == "compaction")
        assert compaction.summary_at is not None
        sid, seq = compaction.summary_at
        assert f"{sid[:8]}#{seq}" in text and f"entry {compaction.summary_entry_id}" not in text
        events.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen)
                         and app.screen.highlighted_entry() is not None
                         and app.screen.highlighted_entry().seq == seq, what="the summary")
        assert app.screen.highlighted_entry().kind == "compaction"


async def test_context_says_following_latest(demo_path: Path) -> None:
    app = _app(demo_path, "context")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        panel = app.screen.query_one("#context-gauge-panel")
        assert "following the latest session" in str(panel.border_subtitle)


# -- `/` filters -----------------------------------------------------------------------------------
async def test_slash_filters_entries_by_kind_and_esc_clears(demo_path: Path) -> None:
    app = _app(demo_path, "transcript")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        await wait_until(pilot, lambda: screen.entry_loads >= 1, what="entries")
        table = screen.query_one("#entries", FilterTable)
        table.focus()
        everything = table.row_count
        await pilot.press("slash", *"tool_call")
        kinds = _rows(table, "kind")
        assert kinds and set(kinds) == {"tool_call"} and len(kinds) < everything
        assert "of" in str(screen.query_one("#lists").border_subtitle)
        assert screen.highlighted_entry().kind == "tool_call"
        await pilot.press("enter")
        assert app.focused is table and set(_rows(table, "kind")) == {"tool_call"}
        await pilot.press("slash", "escape")
        assert table.row_count == everything and not table.filter_text


async def test_slash_filters_traces_by_query(demo_path: Path) -> None:
    app = _app(demo_path, "recall")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        table = app.screen.query_one("#recall-traces", FilterTable)
        table.focus()
        await pilot.press("slash", *"staging cred")
        assert _rows(table, "query") == ["where are the staging credentials"]
        await pilot.press("escape")
        assert table.row_count == 4


# -- palette, y, g / G, panes ----------------------------------------------------------------------
async def test_palette_finds_sessions_traces_and_memories(demo_path: Path) -> None:
    from lca_tui.palette import StoreCommands

    app = _app(demo_path, "overview")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        provider = StoreCommands(app.screen)
        await provider.startup()

        async def first(query: str) -> str:
            hits = [h async for h in provider.search(query)]
            assert hits, query
            return max(hits, key=lambda h: h.score).match_display.plain

        session = app.store.sessions()[0]
        assert (await first(session.id[:6])).startswith(f"session {session.id}")
        assert (await first("staging credentials")).startswith("trace ")
        memory = next(m for m in app.store.memories() if m.name)
        assert (await first(memory.name)).startswith(f"memory {memory.id}")
        trace_hit = max([h async for h in provider.search("staging credentials")],
                        key=lambda h: h.score)
        await trace_hit.command()
        await wait_until(pilot, lambda: isinstance(app.screen, RecallScreen)
                         and app.screen.trace is not None
                         and app.screen.trace.query == "where are the staging credentials",
                         what="the trace on Recall")


async def test_palette_ranks_an_id_prefix_above_fuzzy_matches(demo_path: Path) -> None:
    """Ctrl+P `e40` opens the session whose id starts with e40 (not the first session, whose
    text happens to contain an e, a 4 and a 0); a memory id prefix opens that memory."""
    from lca_tui.palette import StoreCommands

    app = _app(demo_path, "overview")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        provider = StoreCommands(app.screen)
        await provider.startup()

        async def ranked(query: str) -> list[str]:
            hits = sorted([h async for h in provider.search(query)], key=lambda h: -h.score)
            return [h.match_display.plain for h in hits]

        sessions = app.store.sessions()
        assert sessions[0].id[:8] != WORKER_SESSION
        worker = next(s for s in sessions if s.id.startswith(WORKER_SESSION))
        found = await ranked(WORKER_SESSION[:3])
        assert found[0].startswith(f"session {worker.id}"), found[:3]
        assert len(found) > 1  # fuzzy matches exist, and rank below
        memory = app.store.memories()[-1]  # ids are numbers: "memory N" says which kind
        found = await ranked(f"memory {memory.id}")
        assert found[0].startswith(f"memory {memory.id} "), found[:3]


async def test_y_copies_the_selected_id_and_g_G_jump(demo_path: Path) -> None:
    app = _app(demo_path, "transcript")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        await wait_until(pilot, lambda: screen.entry_loads >= 1, what="entries")
        table = screen.query_one("#entries", FilterTable)
        table.focus()
        await pilot.press("G")
        assert table.cursor_row == table.row_count - 1
        last = screen.highlighted_entry()
        await pilot.press("y")
        assert app.copied == f"{last.session_id}#{last.seq}"
        await pilot.press("g")
        assert table.cursor_row == 0
        sessions = screen.query_one("#sessions", FilterTable)
        sessions.focus()
        await pilot.press("y")
        assert app.copied == sessions.cursor_key()


async def test_z_zooms_the_focused_pane_and_b_hides_the_side_pane(demo_path: Path) -> None:
    app = _app(demo_path, "transcript")
    async with app.run_test(size=SMALL) as pilot:
        await _loaded(pilot)
        screen = app.screen
        sessions = screen.query_one("#sessions")
        assert not sessions.display, "on a short terminal the sessions start hidden"
        await pilot.press("b")
        assert sessions.display and app.focused is sessions
        await pilot.press("b")
        assert not sessions.display
        screen.query_one("#entries").focus()
        await pilot.press("z")
        assert screen.maximized is screen.query_one("#lists")
        await pilot.press("z")
        assert screen.maximized is None


# -- live state ------------------------------------------------------------------------------------
async def test_header_says_the_screen_follows_the_store(demo_path: Path) -> None:
    app = _app(demo_path, "overview")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        assert "following" in app.screen.sub_title and "changed" in app.screen.sub_title


async def test_old_session_gauge_says_how_old(demo_path: Path) -> None:
    app = _app(demo_path, "overview")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        line = rendered_text(app.screen.query_one("#pressure-summary-line"))
        assert "not live: the latest snapshot is" in line


async def test_all_agents_interleave_by_time(demo_path: Path) -> None:
    app = _app(demo_path, "transcript")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        session = next(s for s in screen.sessions if s.workers)
        loads = screen.entry_loads
        screen.open_session(session.id)
        await wait_until(pilot, lambda: screen.entry_loads > loads, what="worker session")
        stamps = [e.ts for e in screen.entries]
        agents = [e.agent for e in screen.entries]
        assert stamps == sorted(stamps)
        first_worker = agents.index(session.workers[0])
        assert "main" in agents[first_worker:], "the main agent goes on after the worker"


# -- Recall's cue, Esc, re-runs --------------------------------------------------------------------
async def test_new_recall_takes_the_cli_options_and_esc_clears(demo_path: Path) -> None:
    app = _app(demo_path, "recall")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        await pilot.press("n", *"release")
        query = screen.query_one("#recall-input", Input)
        assert query.value == "release"
        await pilot.press("escape")
        assert query.value == "" and screen.query_one("#recall-form").display
        await pilot.press("escape")
        assert not screen.query_one("#recall-form").display
        await pilot.press("n", *"how do we deploy")
        screen.query_one("#recall-role", Input).value = "developer"
        screen.query_one("#recall-project", Input).value = "ledgerline"
        screen.query_one("#recall-channel", Select).value = "shared"
        screen.query_one("#recall-historical", Checkbox).value = True
        query.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.recalls >= 1, what="the recall")
        trace = get_trace(app.store, list_traces(app.store, 1)[0].id)
        assert (trace.query, trace.role, trace.project, trace.channel, trace.historical) == (
            "how do we deploy", "developer", "ledgerline", "shared", True)


async def test_rerun_that_moved_nothing_says_so_and_is_marked(demo_path: Path) -> None:
    app = _app(demo_path, "recall")
    async with app.run_test(size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        screen.query_one("#recall-traces").focus()
        # the demo's traces predate what the demo stores after them (its health incidents):
        # a first re-run may move candidates; a re-run of that re-run, on the same store, not
        await pilot.press("r")
        await wait_until(pilot, lambda: screen.recalls >= 1 and screen.loads >= 2,
                         what="the first re-run")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        before = screen.trace.id
        await pilot.press("r")
        await wait_until(pilot, lambda: screen.recalls >= 2 and screen.loads >= 3,
                         what="the re-run")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert "nothing moved" in screen.moved_note
        assert "nothing moved" in rendered_text(screen.query_one("#recall-head"))
        origins = _rows(screen.query_one("#recall-traces", FilterTable), "origin")
        assert f"re-run {before}" in origins


async def test_overview_pressure_panel_is_reached_by_keyboard_at_80x24(demo_path: Path) -> None:
    from widgets.pressure_summary import PressureSummary

    app = _app(demo_path, "overview")
    async with app.run_test(size=SMALL) as pilot:
        await _loaded(pilot)
        summary = app.screen.query_one(PressureSummary)
        assert not summary.region.intersection(app.screen.region).height, "below the fold"
        for _ in range(4):
            if app.focused is summary:
                break
            await pilot.press("tab")
        assert app.focused is summary
        await pilot.pause(0.3)
        visible = summary.region.intersection(app.screen.region)
        assert visible.height >= 4, "focusing it scrolls it into view"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), what="Context")


def test_store_wide_checkpoint_is_a_mark_on_the_chart(store: Any) -> None:
    from screens.context import chart_data
    from store.context.api import record_checkpoint, record_snapshot
    from store.context.series import series

    record_snapshot(store, "sw", 100_000, ts="2026-03-01T10:00:00Z")
    record_checkpoint(store, None, trigger="nightly", ts="2026-03-01T10:00:30Z")
    record_snapshot(store, "sw", 120_000, ts="2026-03-01T10:01:00Z")
    data = chart_data(series(store, "sw"))
    assert data.checkpoints == ["2026-03-01T10:00:30.000Z"]
    assert data.mark_positions() == [("checkpoint", 1.5)]


async def test_palette_shows_stored_titles_literally() -> None:
    from textual.command import Matcher

    from lca_tui.palette import highlight

    shown = highlight(Matcher("deploy"), "memory 3 [bold]deploy[/bold] \x1b[31m")
    assert shown.plain == "memory 3 [bold]deploy[/bold] \\x1b[31m"
