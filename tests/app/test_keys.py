"""Keys on every screen: ``y`` copies the selected id, ``g`` / ``G`` jump, ``z`` zooms, ``b``
hides the side pane, the Overview's pressure panel reached by keyboard at 80x24, the header says
the app follows the store."""

from __future__ import annotations

from pathlib import Path

from screens.context import ContextScreen
from widgets.table import FilterTable

from tests.helpers_shell import wait_until
from tests.helpers_shell import load_count, load_log
from tests.helpers_ui import _app, _loaded


SMALL = (80, 24)


async def test_y_copies_the_selected_id_and_g_G_jump(demo_path: Path) -> None:
    app = _app(demo_path, "transcript")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
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
    async with app.run_test(message_hook=load_log(app), size=SMALL) as pilot:
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


async def test_header_says_the_screen_follows_the_store(demo_path: Path) -> None:
    app = _app(demo_path, "overview")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        assert "following" in app.screen.sub_title and "changed" in app.screen.sub_title


async def test_overview_pressure_panel_is_reached_by_keyboard_at_80x24(demo_path: Path) -> None:
    from widgets.pressure_summary import PressureSummary

    app = _app(demo_path, "overview")
    async with app.run_test(message_hook=load_log(app), size=SMALL) as pilot:
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
