"""The Recall screen: a new recall with the CLI's cue options (esc clears), a re-run that moved
nothing says so and is marked, candidates that fit 80 columns with reasons cut by an
ellipsis."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Checkbox, Input, Select

from store.recall.traces import get_trace, list_traces
from widgets.table import FilterTable

from tests.helpers_shell import rendered_text, wait_until, workers_done
from tests.helpers_shell import load_count, load_log
from tests.helpers_ui import _app, _loaded, _rows, _settled, screen_lines


async def test_new_recall_takes_the_cli_options_and_esc_clears(demo_path: Path) -> None:
    app = _app(demo_path, "recall")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
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
        await wait_until(pilot, lambda: load_count(screen, "recall") >= 1, what="the recall")
        trace = get_trace(app.store, list_traces(app.store, 1)[0].id)
        assert (trace.query, trace.role, trace.project, trace.channel, trace.historical) == (
            "how do we deploy", "developer", "ledgerline", "shared", True)


async def test_rerun_that_moved_nothing_says_so_and_is_marked(demo_path: Path) -> None:
    app = _app(demo_path, "recall")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        screen.query_one("#recall-traces").focus()
        # the demo's traces predate what the demo stores after them (its health incidents):
        # a first re-run may move candidates; a re-run of that re-run, on the same store, not
        await pilot.press("r")
        await wait_until(pilot, lambda: load_count(screen, "recall") >= 1
                         and load_count(screen) >= 2,
                         what="the first re-run")
        await workers_done(pilot.app)
        await pilot.pause()
        before = screen.trace.id
        await pilot.press("r")
        await wait_until(pilot, lambda: load_count(screen, "recall") >= 2
                         and load_count(screen) >= 3,
                         what="the re-run")
        await workers_done(pilot.app)
        await pilot.pause()
        assert "nothing moved" in screen.moved_note
        assert "nothing moved" in rendered_text(screen.query_one("#recall-head"))
        origins = _rows(screen.query_one("#recall-traces", FilterTable), "origin")
        assert f"re-run {before}" in origins


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
        await _settled(pilot)
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
