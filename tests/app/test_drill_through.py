"""Enter drills through: a recall candidate to its entry or memory, a compaction to its
summary."""

from __future__ import annotations

from pathlib import Path

from screens.context import ContextScreen
from screens.recall import RecallScreen
from screens.transcript import TranscriptScreen
from widgets.pressure_events import PressureEvents
from widgets.table import FilterTable

from tests.helpers_shell import rendered_text, wait_until
from tests.helpers_shell import load_count, load_log
from tests.helpers_ui import WORKER_SESSION, _app, _loaded


async def test_enter_on_an_entry_candidate_opens_the_entry(demo_path: Path) -> None:
    app = _app(demo_path, "recall")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
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
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
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
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        picker = screen.query_one("#context-series", FilterTable)
        key = next(k for k in picker.rows if str(k.value).startswith(WORKER_SESSION)
                   and str(k.value).endswith("\x1fmain"))
        picker.focus()
        picker.move_cursor(row=picker.get_row_index(key))
        await pilot.press("enter")
        await wait_until(pilot, lambda: load_count(screen, "full") >= 2,
                         what="the session's series")
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
