"""The footer fits 80 columns on every screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from screens.registry import SCREENS
from widgets.footer import FitFooter

from tests.helpers_shell import wait_until
from tests.helpers_shell import load_log
from tests.helpers_ui import SMALL, _app, _settled, screen_lines


MODES = [spec.mode for spec in SCREENS]


@pytest.mark.parametrize("mode", MODES)
async def test_footer_fits_80_columns_on_every_screen(demo_path: Path, mode: str) -> None:
    """Every key shown ends left of the palette key; "? Help" (which lists every key) and the
    palette key are always there; at 120 columns nothing is left out."""
    app = _app(demo_path, mode)
    async with app.run_test(message_hook=load_log(app), size=SMALL) as pilot:
        await _settled(pilot)
        footer = app.screen.query_one(FitFooter)
        await wait_until(pilot, lambda: len(footer.children) > 1, what="the footer's keys")
        palette = footer.query_one(".-command-palette")
        for key in footer.children:
            if key is not palette:
                assert key.region.right <= palette.region.x, (mode, key)
        # the footer's line once drawn (under load a frame can come after the keys mount)
        await wait_until(pilot, lambda: screen_lines(app)[-1].rstrip().endswith("^p palette"),
                         what="the footer drawn")
        line = screen_lines(app)[-1]
        assert "? Help" in line and "b " in line and "z Zoom" in line, line
        # no table wider than its pane (nothing to scroll sideways), nor the help
        from textual.widgets import DataTable

        for table in app.screen.query(DataTable):
            if table.display and table.size.width:
                assert table.max_scroll_x == 0, (mode, table.id, table.virtual_size)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen",
                         what="the help")
        await pilot.pause()
        for widget in app.screen.walk_children():
            assert widget.region.right <= SMALL[0], (mode, widget)
            if widget.allow_horizontal_scroll:
                assert widget.max_scroll_x == 0, (mode, widget)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.resize_terminal(120, 40)
        await wait_until(pilot, lambda: not footer.left_out, what="every key at 120 columns")
        await wait_until(pilot, lambda: "1-8 screens" in screen_lines(app)[-1],
                         what="the number keys as one span")
        assert "12345678" not in screen_lines(app)[-1]  # run together they read as a number
