"""Issue 16, the reviewer's follow-ups in the app at 80x24: a footer that fits on every
screen, Recall's columns, Context's figures and chart, checkpoint marks beside a compaction,
and no screen (or its help) wider than the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lca_tui.app import LcaApp, make_app
from screens.registry import SCREENS
from tests.helpers_shell import FIXED_NOW, build_demo_template, copy_demo, wait_until
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
    await wait_until(pilot, lambda: getattr(pilot.app.screen, "loads", 1) >= 1,
                     what="the screen's load")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("mode", MODES)
async def test_footer_fits_80_columns_on_every_screen(demo_path: Path, mode: str) -> None:
    """Every key shown ends left of the palette key; "? Help" (which lists every key) and the
    palette key are always there; at 120 columns nothing is left out."""
    app = _app(demo_path, mode)
    async with app.run_test(size=SMALL) as pilot:
        await _loaded(pilot)
        footer = app.screen.query_one(FitFooter)
        await wait_until(pilot, lambda: len(footer.children) > 1, what="the footer's keys")
        palette = footer.query_one(".-command-palette")
        for key in footer.children:
            if key is not palette:
                assert key.region.right <= palette.region.x, (mode, key)
        line = screen_lines(app)[-1]
        assert line.rstrip().endswith("^p palette"), line
        assert "? Help" in line and "b " in line and "z Zoom" in line, line
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
    async with app.run_test(size=size) as pilot:
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
