"""Issue 16, the reviewer's follow-ups in the app at 80x24: a footer that fits on every
screen, Recall's columns, Context's figures and chart, checkpoint marks beside a compaction,
and no screen (or its help) wider than the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lca_tui.app import LcaApp, make_app
from screens.base import StoreScreen
from screens.registry import SCREENS
from tests.helpers_shell import (
    FIXED_NOW,
    build_demo_template,
    copy_demo,
    load_count,
    load_log,
    wait_until,
)
from widgets.footer import FitFooter

SMALL = (80, 24)
MODES = [spec.mode for spec in SCREENS]


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_template(tmp_path_factory.mktemp("demo-review"))


@pytest.fixture
def demo_path(demo_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return copy_demo(demo_template, tmp_path)


def screen_lines(app: LcaApp) -> list[str]:
    """The text of every row of the screen on top, as the terminal shows it."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _app(path: Path, mode: str) -> LcaApp:
    return make_app(path, now=FIXED_NOW, mode=mode, refresh_seconds=3600)


async def _loaded(pilot: Pilot[Any]) -> None:
    await wait_until(pilot, lambda: not isinstance(pilot.app.screen, StoreScreen)
                     or load_count(pilot.app.screen) >= 1,
                     what="the screen's load")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("mode", MODES)
async def test_footer_fits_80_columns_on_every_screen(demo_path: Path, mode: str) -> None:
    """Every key shown ends left of the palette key; "? Help" (which lists every key) and the
    palette key are always there; at 120 columns nothing is left out."""
    app = _app(demo_path, mode)
    async with app.run_test(message_hook=load_log(app), size=SMALL) as pilot:
        await _loaded(pilot)
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


@pytest.mark.parametrize(("size", "dropped"), [((80, 24), {"S", "K", "bar"}),
                                               ((120, 40), {"S", "K"})])
async def test_recall_candidates_fit_and_cut_reasons_with_an_ellipsis(
        demo_path: Path, size: tuple[int, int], dropped: set[str]) -> None:
    """Rank, decision, source, score and reason always show, nothing scrolls sideways; the
    per-term figures (and at 80 columns the bar) give way; a cut reason ends in "…"."""
    from screens.recall import RecallScreen
    from widgets.table import FilterTable

    app = _app(demo_path, "recall")
    async with app.run_test(message_hook=load_log(app), size=size) as pilot:
        await _loaded(pilot)
        screen = app.screen
        assert isinstance(screen, RecallScreen)
        await wait_until(pilot, lambda: screen.trace is not None, what="a trace")
        await pilot.pause()
        table = screen.query_one("#recall-candidates", FilterTable)
        keys = [k.value for k in table.columns]
        assert {"rank", "decision", "source", "score", "reason"} <= set(keys), keys
        assert not dropped & set(keys), keys
        assert table.max_scroll_x == 0, "no column off-screen"
        traces = screen.query_one("#recall-traces", FilterTable)
        assert traces.max_scroll_x == 0
        reasons = [table.get_row_at(r)[keys.index("reason")].plain
                   for r in range(table.row_count)]
        full = {c.reason for c in screen.trace.candidates}
        cut = [r for r in reasons if r not in full]
        assert cut and all(r.endswith("…") for r in cut), reasons
        text = "\n".join(screen_lines(app))
        assert "score" in text and "reason" in text


# -- Context at 80x24 ----------------------------------------------------------------------------
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
        await _loaded(pilot)
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
        await _loaded(pilot)
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
