"""Screen 6 Health: the list and a drill-down (snapshots at 120x40 and 80x24), enter on a row
opening the screen that shows it, the fix behind its confirmation, live rescans, and the
Overview's one-line summary."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from lca_tui.app import make_app
from screens.health import HealthScreen
from screens.health_fix import FixConfirm
from store import open_store
from store.core.settings import Settings
from store.health import incidents
from store.health.records import Row, RowView
from tests.helpers_shell import (
    FIXED_NOW,
    build_demo_template,
    load_count,
    load_log,
    rendered_text,
    wait_until,
    watch,
    workers_done,
)


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_template(tmp_path_factory.mktemp("demo-health-screen"))


async def _loaded(pilot: Pilot[Any]) -> HealthScreen:
    screen = pilot.app.screen
    assert isinstance(screen, HealthScreen)
    await wait_until(pilot, lambda: load_count(screen) >= 1, what="the first scan")
    await workers_done(pilot.app)
    await pilot.pause()
    return screen


async def _drilled(pilot: Pilot[Any], name: str) -> HealthScreen:
    screen = await _loaded(pilot)
    table = screen.query_one("#health-signals", DataTable)
    table.move_cursor(row=table.get_row_index(name))
    await pilot.press("enter")
    await wait_until(pilot, lambda: load_count(screen, "rows") >= 1, what="the offending rows")
    await workers_done(pilot.app)
    await pilot.pause()
    return screen


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_snapshot_signal_list(snap_compare: Any, demo_path: Path, size: tuple[int, int]
                              ) -> None:
    """Every signal of the demo with status, value, thresholds, trend; the first selected."""
    app = make_app(demo_path, now=FIXED_NOW, mode="health")

    async def run_before(pilot: Pilot[Any]) -> None:
        await _loaded(pilot)

    assert snap_compare(watch(app), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_snapshot_drill_down(snap_compare: Any, demo_path: Path, size: tuple[int, int]
                             ) -> None:
    """duplicate_ratio drilled down: its explanation and the duplicate rows, labelled."""
    app = make_app(demo_path, now=FIXED_NOW, mode="health")

    async def run_before(pilot: Pilot[Any]) -> None:
        await _drilled(pilot, "duplicate_ratio")

    assert snap_compare(watch(app), terminal_size=size, run_before=run_before)


async def test_enter_on_rows_opens_their_screens(demo_path: Path) -> None:
    """A chunk's entry opens on Transcript, a compaction on Context."""
    app = make_app(demo_path, now=FIXED_NOW, mode="health")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = await _drilled(pilot, "duplicate_ratio")
        first = screen.views[0]
        assert first.ref and first.ref.kind == "session" and first.ref.at is not None
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.current_mode == "transcript"
                         and getattr(app.screen, "session_id", None) == first.ref.id,
                         what="the entry's session")
        await pilot.press("6")
        await wait_until(pilot, lambda: app.screen is screen, what="back on Health")
        await pilot.press("escape")
        table = screen.query_one("#health-signals", DataTable)
        table.move_cursor(row=table.get_row_index("compaction_without_checkpoint"))
        loads = load_count(screen, "rows")
        await pilot.press("enter")
        await wait_until(pilot, lambda: load_count(screen, "rows") > loads, what="compaction rows")
        target = screen.views[0].ref
        assert target and target.kind == "series"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.current_mode == "context", what="Context")
        context = app.screen
        await wait_until(pilot, lambda: context._series is not None
                         and context._series.session_id == target.id
                         and context._series.agent == target.at, what="that series")


async def test_memory_rows_open_on_the_memories_screen(demo_path: Path) -> None:
    """A memory row opens that memory on Memories; a row no screen shows says so and stays."""
    app = make_app(demo_path, now=FIXED_NOW, mode="health")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = await _drilled(pilot, "loader_drift")
        ref = screen.views[0].ref
        assert ref is not None and ref.kind == "memory"
        await screen.open_target(RowView(Row("writer", "x"), "writer x", None))
        await pilot.pause()
        assert app.current_mode == "health"
        assert any("writer x: no screen shows this row" in str(n.message)
                   for n in app._notifications)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.current_mode == "memories"
                         and getattr(app.screen, "selected", None) == ref.id,
                         what="the memory on Memories")


async def test_fix_asks_with_its_plan_then_runs_and_rescans(demo_path: Path) -> None:
    app = make_app(demo_path, now=FIXED_NOW, mode="health")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = await _loaded(pilot)
        assert screen.result and screen.result.signal("duplicate_ratio").status == "fail"
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.screen, FixConfirm), what="confirm")
        plan = rendered_text(app.screen.query_one("#fix-plan"))
        assert re.search(r"remove 605 of [\d,]+ index rows", " ".join(plan.split())), plan
        assert "re-point" in plan
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is screen, what="cancelled")
        assert load_count(screen, "fix") == 0
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.screen, FixConfirm), what="confirm")
        await pilot.press("y")
        await wait_until(pilot, lambda: load_count(screen, "fix") == 1, what="the fix")
        await wait_until(pilot, lambda: screen.result is not None and screen.result.signal(
            "duplicate_ratio").status == "ok", what="the rescan")
        table = screen.query_one("#health-signals", DataTable)
        table.move_cursor(row=table.get_row_index("loader_drift"))
        await pilot.pause()
        assert not screen.check_action("fix", ()), "no fix offered where there is none"


async def test_rescans_when_the_store_changes(demo_path: Path) -> None:
    app = make_app(demo_path, now=FIXED_NOW, mode="health", refresh_seconds=0.2)
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = await _loaded(pilot)
        before = screen.result.signal("duplicate_ratio").offending_total
        other = open_store(demo_path, Settings.load())
        try:
            incidents.reindex_again(other, incidents.sources_of(other, memories=False)[:5],
                                    ("another-writer", "1"))
        finally:
            other.close()
        await wait_until(pilot, lambda: screen.result.signal("duplicate_ratio")
                         .offending_total > before, what="a rescan", timeout=30)
        assert "another-writer" in {r.id for r in screen.result.signal(
            "shared_index_writers").offending}


async def test_overview_line_summarises_and_opens_health(demo_path: Path) -> None:
    app = make_app(demo_path, now=FIXED_NOW)
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        overview = app.screen
        await wait_until(pilot, lambda: load_count(overview, "health") >= 1, what="the health line")
        # the line has the focus when the Overview opens (docs/app.md: enter opens Health);
        # with the focus elsewhere its hint names 6
        overview.query_one("#overview-sessions").focus()
        await pilot.pause()
        line = rendered_text(overview.query_one("#overview-health"))
        assert re.search(r"FAIL \d+ · WARN \d+", line) and "duplicate_ratio" in line
        # the hint names the key that opens Health from where the focus is
        assert "(6: open)" in line and "enter" not in line
        overview.query_one("#overview-health").focus()
        await pilot.pause()
        assert "(enter: open)" in rendered_text(overview.query_one("#overview-health"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.current_mode == "health", what="Health")


# -- the layout at 80x24 and 160x50, and the keys that act -------------------------------------
def _footer_keys(screen: Any) -> set[str]:
    """The keys the footer shows (hidden keys are not there; disabled ones would be)."""

    return {k.key for k in screen.query("FooterKey")}


async def test_the_list_holds_every_signal_when_the_screen_has_room(demo_path: Path) -> None:
    """At 160x50 every signal is in view (hook_failures was hidden by a fixed height, half
    the screen empty); at 80x24 the list leaves the signal's pane its first lines."""
    app = make_app(demo_path, now=FIXED_NOW, mode="health")
    async with app.run_test(message_hook=load_log(app), size=(160, 50)) as pilot:
        screen = await _loaded(pilot)
        table = screen.query_one("#health-signals", DataTable)
        assert table.row_count > 15
        assert table.max_scroll_y == 0, "every signal row fits"
        assert "hook_failures" in rendered_text(table)
    app = make_app(demo_path, now=FIXED_NOW, mode="health")
    async with app.run_test(message_hook=load_log(app), size=(80, 24)) as pilot:
        screen = await _loaded(pilot)
        detail = screen.query_one("#health-detail")
        assert detail.outer_size.height >= 6
        assert detail.region.bottom <= 23, "the pane ends above the footer"


async def test_the_selected_signal_shows_what_enter_and_f_do_at_80x24(demo_path: Path
                                                                        ) -> None:
    """The selected signal's pane shows "enter: N offending rows · f: fix" on a 24-line
    terminal (it had two lines, and the keys came after the explanation)."""
    app = make_app(demo_path, now=FIXED_NOW, mode="health")
    async with app.run_test(message_hook=load_log(app), size=(80, 24)) as pilot:
        screen = await _loaded(pilot)
        pane = screen.query_one("#health-detail")
        lines = rendered_text(screen.query_one("#health-detail-text")).splitlines()
        shown = "\n".join(lines[:pane.scrollable_content_region.height])  # what is in view
        assert re.search(r"enter: 605 offending rows · f: fix \(compact-duplicates\)",
                         shown), shown


async def test_f_is_not_shown_for_a_signal_without_a_fix(demo_path: Path) -> None:
    """f is in the footer for a signal with a fix, and gone for one without (it did nothing
    and said nothing there)."""
    app = make_app(demo_path, now=FIXED_NOW, mode="health")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = await _loaded(pilot)
        assert screen.result is not None
        assert "f" in _footer_keys(screen)
        table = screen.query_one("#health-signals", DataTable)
        no_fix = next(s.name for s in screen.result.signals if s.fix is None)
        table.move_cursor(row=table.get_row_index(no_fix))
        await pilot.pause()
        await pilot.pause()
        assert screen.selected == no_fix
        assert "f" not in _footer_keys(screen)
        assert "f" not in screen.active_bindings


def test_a_sparkline_does_not_magnify_noise() -> None:
    """Min–max scaling drew `█▁` for 57.1 % then 57.0 %; the scale's range is floored, so
    a tenth of a point is one height, and a real change still spans the scale."""
    from store import TrendPoint
    from widgets.health_trend import sparkline

    def points(*values: float | None) -> list[TrendPoint]:
        return [TrendPoint(i, f"2026-12-01T0{i}:00:00Z", "ok", v) for i, v in enumerate(values)]

    from widgets.health_trend import BARS

    noise = sparkline(points(57.1, 57.0))
    assert abs(BARS.index(noise[0]) - BARS.index(noise[1])) <= 1, noise
    assert sparkline(points(0.0, 50.0, 100.0)) == "▁▅█"
    assert sparkline(points(3.0, None, 3.0)) == "█·█"


def test_trend_marks_never_share_a_row() -> None:
    """The trend's y marks keep the thresholds and the top and drop a mark too close to one
    kept (0 and warn 5 on a 0–63 axis fell on one row, and which label showed changed from run
    to run); the same figures always give the same marks."""
    from widgets.health_trend import _ticks

    marks, labels = _ticks(57.45, 5.0, 20.0)
    assert marks == [5.0, 20.0, 57.45] and labels == ["5", "20", "57.5"]
    assert _ticks(57.45, 5.0, 20.0) == (marks, labels)
    assert _ticks(100.0, None, None)[0] == [0.0, 100.0]
