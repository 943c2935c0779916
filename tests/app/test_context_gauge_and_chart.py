"""The Context screen's gauge and chart: following the latest session or saying how old it is,
store-wide checkpoint marks, figures whole and a usable chart at 80x24, a checkpoint mark kept
off a compaction's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot


from tests.helpers_shell import rendered_text, wait_until
from tests.helpers_shell import load_count, load_log
from tests.helpers_ui import SMALL, _app, _loaded, _settled, screen_lines


async def test_context_says_following_latest(demo_path: Path) -> None:
    app = _app(demo_path, "context")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        panel = app.screen.query_one("#context-gauge-panel")
        assert "following the latest session" in str(panel.border_subtitle)


async def test_old_session_gauge_says_how_old(demo_path: Path) -> None:
    app = _app(demo_path, "overview")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        line = rendered_text(app.screen.query_one("#pressure-summary-line"))
        assert "not live: the latest snapshot is" in line


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


COMPACTED = "e4039782"


async def _pin_compacted_series(pilot: Pilot[Any]) -> Any:
    """Show the picker (b), pin the demo's session that compacted, wait for its series."""
    from screens.context import ContextScreen
    from widgets.table import FilterTable

    screen = pilot.app.screen
    assert isinstance(screen, ContextScreen)
    picker = screen.query_one("#context-series", FilterTable)
    if not screen.side_visible():
        await pilot.press("b")
    await pilot.pause()
    key = next(k for k in picker.rows if str(k.value).startswith(COMPACTED)
               and str(k.value).endswith("\x1fmain"))
    picker.focus()
    picker.move_cursor(row=picker.get_row_index(key))
    await pilot.press("enter")
    await wait_until(pilot, lambda: load_count(screen, "full") >= 2, what="the session's series")
    await pilot.pause()
    return screen


async def test_context_at_80x24_figures_whole_and_a_usable_chart(demo_path: Path) -> None:
    """The gauge's figures are each on one line (none split by a wrap), the picker shows its
    peak column whole, and the chart has rows enough for the curve."""
    from widgets.pressure_chart import PressureChart
    from widgets.table import FilterTable

    app = _app(demo_path, "context")
    async with app.run_test(message_hook=load_log(app), size=SMALL) as pilot:
        await _settled(pilot)
        text = "\n".join(screen_lines(app))
        for figure in ("29,683 / 200,000 tokens (14.8 %)", "checkpoint 160,000 (80 %)",
                       "auto-compact 184,000 (92 %)", "peak 29,683",
                       "latest: turn, 2026-03-02 "):
            assert figure in text, (figure, text)
        chart = app.screen.query_one(PressureChart)
        assert chart.size.height >= 9, chart.size
        screen = await _pin_compacted_series(pilot)
        picker = screen.query_one("#context-series", FilterTable)
        assert picker.max_scroll_x == 0, "every picker column shows"
        text = "\n".join(screen_lines(app))
        assert "148,236" in text and "a7c3e51 " in text, text


def _line_columns(chart: Any, colour: tuple[int, int, int]) -> set[int]:
    """The columns where the chart draws a vertical line in ``colour``."""
    from textual.geometry import Region

    found: set[int] = set()
    region = Region(0, 0, chart.size.width, chart.size.height)
    for strip in chart.render_lines(region):
        x = 0
        for segment in strip:
            style = segment.style
            rgb = style.color.get_truecolor() if style and style.color else None
            for ch in segment.text:
                if ch == "│" and rgb is not None and tuple(rgb) == colour:
                    found.add(x)
                x += 1
    return found


@pytest.mark.parametrize("size", [SMALL, (120, 40)], ids=["80x24", "120x40"])
async def test_checkpoint_mark_beside_the_compaction_line(demo_path: Path,
                                                          size: tuple[int, int]) -> None:
    """The demo's store-wide checkpoint came four seconds after the compaction, within the
    same turn: its green line is drawn a column to the right of the red one, both visible."""
    from widgets.pressure_chart import PressureChart

    app = _app(demo_path, "context")
    async with app.run_test(message_hook=load_log(app), size=size) as pilot:
        await _settled(pilot)
        screen = await _pin_compacted_series(pilot)
        if size == SMALL:
            await pilot.press("b")  # the chart gets the width back
            await pilot.pause()
        chart = screen.query_one(PressureChart)
        assert chart.data.compactions and chart.data.checkpoints
        green = _line_columns(chart, chart._rgb("success"))
        red = _line_columns(chart, chart._rgb("error"))
        assert green and red, (green, red)
        assert green - red and red - green, (green, red)
        assert min(green - red) > min(red - green), "the checkpoint came after"


def test_mark_positions_keep_a_checkpoint_off_a_compaction() -> None:
    from widgets.pressure_chart import ChartData

    times = ["2026-03-01T10:00:00Z", "2026-03-01T10:01:00Z", "2026-03-01T10:02:00Z"]
    after = ChartData([1, 2, 3], times, 10, 8, 9, ["2026-03-01T10:01:10Z"],
                      ["2026-03-01T10:01:20Z"])
    assert after.mark_positions() == [("checkpoint", 2.5), ("compaction", 2.5)]
    assert after.mark_positions(0.25) == [("checkpoint", 2.75), ("compaction", 2.5)]
    before = ChartData([1, 2, 3], times, 10, 8, 9, ["2026-03-01T10:01:10Z"],
                       ["2026-03-01T10:01:05Z"])
    assert before.mark_positions(0.25) == [("checkpoint", 2.25), ("compaction", 2.5)]
    last = ChartData([1, 2, 3], times, 10, 8, 9, ["2026-03-01T10:03:00Z"],
                     ["2026-03-01T10:03:10Z"])  # no room right of the last turn
    assert last.mark_positions(0.25) == [("checkpoint", 2.75), ("compaction", 3)]
