"""The Context screen: the real curve of the big Claude Code session, live snapshots written
by another thread and another process, flagged prunes and compactions, the picker, and the
pressure summary on the Overview."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

from lca_tui.app import make_app
from screens.context import ContextScreen
from store import Store
from store.context.api import record_checkpoint, record_compaction, record_prune, record_snapshot
from tests.conftest import BIG_SESSION, RunApp, make_store
from tests.helpers_shell import FIXED_NOW, load_count, rendered_text, wait_until, watch
from widgets.pressure_chart import PressureChart
from widgets.pressure_events import NO_CHECKPOINT, NOT_PRESERVED, PressureEvents
from widgets.pressure_gauge import PressureGauge
from widgets.pressure_summary import PressureSummary

BIG = BIG_SESSION.stem
SIZE = (120, 40)


async def _text(pilot, widget, needle: str) -> str:  # type: ignore[no-untyped-def]
    """The widget's rendered text once it shows ``needle`` (layout may lag an update)."""
    await wait_until(pilot, lambda: needle in rendered_text(widget), timeout=30,
                     what=f"{needle!r} on screen")
    return rendered_text(widget)


def _summary_loaded(app) -> bool:  # type: ignore[no-untyped-def]
    """The Overview's pressure summary has shown its first load."""
    return bool(app.screen.query(PressureSummary)) \
        and load_count(app.screen) >= 1


def _screen(app) -> ContextScreen:  # type: ignore[no-untyped-def]
    screen = app.screen
    assert isinstance(screen, ContextScreen)
    return screen


def test_context_snapshot_big_session(cc_store: Store, snap_compare) -> None:  # type: ignore[no-untyped-def]
    """The big session's main agent: gauge, curve with its compaction, the flagged event."""
    app = make_app(store=cc_store, now=FIXED_NOW, mode="context", refresh_seconds=3600)

    async def loaded(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen)
                         and load_count(app.screen, "full") >= 1, what="the Context screen's load")
        await _text(pilot, app.screen.query_one(PressureEvents), NO_CHECKPOINT)
        await pilot.pause()

    assert snap_compare(watch(app), terminal_size=SIZE, run_before=loaded)


async def test_big_session_figures_on_screen(cc_store: Store, run_app: RunApp) -> None:
    async with run_app(store=cc_store, mode="context", refresh_seconds=3600) as pilot:
        app = pilot.app
        screen = _screen(app)
        chart = screen.query_one(PressureChart)
        assert len(chart.data.used) == 217 and max(chart.data.used) == 141_787
        assert chart.data.compactions == ["2026-02-12T14:48:36.922Z"]
        assert "peak 141,787" in str(screen.query_one("#context-chart-panel").border_title)
        events = await _text(pilot, screen.query_one(PressureEvents), NO_CHECKPOINT)
        assert "✗ 2026-02-12 14:48:36  compaction at 142,431 tokens (manual)" in events
        gauge = await _text(pilot, screen.query_one(PressureGauge), "102,168 / 200,000 tokens")
        assert "checkpoint 160,000 (80 %)" in gauge
        # the workers are their own series: pick the first worker in the picker
        table = screen.query_one("#context-series")
        table.focus()
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: load_count(screen, "full") >= 2
                         and len(screen.query_one(PressureChart).data.used) == 3,
                         what="the worker's series")
        assert "aac57f5" in str(screen.query_one("#context-gauge-panel").border_title)
        await _text(pilot, screen.query_one(PressureGauge), "18,893 / 200,000 tokens")


async def test_snapshots_written_by_another_thread_appear_live(tmp_path: Path,
                                                               run_app: RunApp) -> None:
    path = tmp_path / "live.db"
    seed = make_store(path)
    record_snapshot(seed, "live", 50_000, ts="2026-03-02T09:00:00Z", window_tokens=100_000)
    seed.close()
    async with run_app(path, mode="context", refresh_seconds=0.05) as pilot:
        app = pilot.app
        screen = _screen(app)

        def harness() -> None:
            writer = make_store(path, **{"store.writer": "test-harness"})
            try:
                for i, used in enumerate((61_000, 72_000, 93_500), 1):
                    record_snapshot(writer, "live", used, ts=f"2026-03-02T09:0{i}:00Z")
            finally:
                writer.close()

        thread = threading.Thread(target=harness)
        thread.start()
        await wait_until(pilot, lambda: screen.query_one(PressureChart).data.used
                         == [50_000, 61_000, 72_000, 93_500], timeout=30,
                         what="the harness's snapshots on the chart")
        thread.join()
        await wait_until(pilot, lambda: "93,500 / 100,000 tokens"
                         in rendered_text(screen.query_one(PressureGauge)), timeout=30,
                         what="the gauge to move")
        assert load_count(screen, "full") == 1 and load_count(screen, "tail") >= 1
        assert "past the auto-compact threshold" in rendered_text(screen.query_one(PressureGauge))


async def test_snapshots_recorded_by_another_process_appear_live(tmp_path: Path,
                                                                 run_app: RunApp) -> None:
    path = tmp_path / "proc.db"
    seed = make_store(path)
    record_snapshot(seed, "proc", 10_000, ts="2026-03-02T09:00:00Z")
    seed.close()
    async with run_app(path, mode="context", refresh_seconds=0.05) as pilot:
        app = pilot.app
        screen = _screen(app)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "lca_tui.cli", "context", "record", "--store", str(path),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(
            b'{"session_id": "proc", "used_tokens": 23456, "ts": "2026-03-02T09:01:00Z"}\n'),
            timeout=120)
        assert proc.returncode == 0, err.decode()
        await wait_until(pilot, lambda: "23,456 / 200,000 tokens"
                         in rendered_text(screen.query_one(PressureGauge)), timeout=30,
                         what="the recorded snapshot on the gauge")
        assert screen.query_one(PressureChart).data.used == [10_000, 23_456]


async def test_unverified_prune_and_unchecked_compaction_are_flagged(store: Store,
                                                                     run_app: RunApp) -> None:
    t = "2026-03-02T09:{:02d}:00Z"
    record_snapshot(store, "flags", 150_000, ts=t.format(1), window_tokens=200_000)
    record_prune(store, "flags", 190_000, 120_000, ts=t.format(2), entries_pruned=40)
    record_prune(store, "flags", 180_000, 130_000, ts=t.format(3), entry_ids=[],
                 entries_pruned=5, preserved=True, verified=True)
    record_snapshot(store, "flags", 170_000, ts=t.format(4))
    record_compaction(store, "flags", 185_000, ts=t.format(5), trigger="auto")
    record_snapshot(store, "flags", 60_000, ts=t.format(6))
    record_checkpoint(store, "flags", trigger="pre-compact", ts=t.format(7))
    record_compaction(store, "flags", 182_000, ts=t.format(8), trigger="auto")
    async with run_app(store=store, mode="context", refresh_seconds=3600) as pilot:
        app = pilot.app
        screen = _screen(app)
        events = screen.query_one(PressureEvents)
        text = await _text(pilot, events, "(pre-compact) ran before it")
        lines = [ln for ln in text.splitlines() if ln.startswith(("✗", "✓"))]
        assert len(lines) == 4
        assert lines[0].startswith("✗") and NOT_PRESERVED in lines[0]
        assert lines[1].startswith("✓") and "preserved and verified first" in lines[1]
        assert lines[2].startswith("✗") and NO_CHECKPOINT in lines[2]
        assert lines[3].startswith("✓") and "(pre-compact) ran before it" in lines[3]
        assert events.flagged == 2
        assert "(2 flagged)" in str(screen.query_one("#context-events-panel").border_title)
        error = app.theme_variables["error"].lower()
        styles = {str(seg.style.color.triplet.hex if seg.style and seg.style.color
                      and seg.style.color.triplet else "") for seg in
                  [s for s in _segments(events) if s.text == "✗ "]}
        assert styles == {error}


def _segments(widget):  # type: ignore[no-untyped-def]
    from tests.helpers_shell import rendered_segments

    return rendered_segments(widget)


async def test_overview_shows_latest_pressure(cc_store: Store, run_app: RunApp) -> None:
    async with run_app(store=cc_store, mode="overview", refresh_seconds=3600,
                       ready=_summary_loaded, what="the pressure summary") as pilot:
        app = pilot.app
        summary = app.screen.query_one(PressureSummary)
        text = await _text(pilot, summary.query_one("#pressure-summary-line"), "peak 141,787")
        assert "main · session ae4a77f8 · 217 snapshots" in text
        assert "✗ 1 compaction without checkpoint" in text
        await _text(pilot, summary.query_one(PressureGauge), "102,168 / 200,000 tokens")


async def test_snapshot_updated_in_place_shows_live(tmp_path: Path, run_app: RunApp) -> None:
    """A repeated message id updates its snapshot (same row id): the live screen shows it."""
    path = tmp_path / "upd.db"
    seed = make_store(path)
    record_snapshot(seed, "upd", 40_000, ts="2026-03-02T09:00:00Z", window_tokens=100_000)
    record_snapshot(seed, "upd", 50_000, ts="2026-03-02T09:01:00Z", message_id="msg_2")
    seed.close()
    async with run_app(path, mode="context", refresh_seconds=0.05) as pilot:
        app = pilot.app
        screen = _screen(app)

        def harness() -> None:
            writer = make_store(path, **{"store.writer": "test-harness"})
            try:
                record_snapshot(writer, "upd", 88_000, ts="2026-03-02T09:01:00Z",
                                message_id="msg_2")
            finally:
                writer.close()

        thread = threading.Thread(target=harness)
        thread.start()
        await wait_until(pilot, lambda: screen.query_one(PressureChart).data.used
                         == [40_000, 88_000], timeout=30, what="the updated snapshot")
        thread.join()
        await _text(pilot, screen.query_one(PressureGauge), "88,000 / 100,000 tokens")
        assert load_count(screen, "full") == 1 and load_count(screen, "tail") >= 1


async def test_events_recorded_without_a_snapshot_mark_the_chart_live(tmp_path: Path,
                                                                      run_app: RunApp) -> None:
    path = tmp_path / "marks.db"
    seed = make_store(path)
    record_snapshot(seed, "mk", 150_000, ts="2026-03-02T09:00:00Z")
    record_snapshot(seed, "mk", 170_000, ts="2026-03-02T09:01:00Z")
    seed.close()
    async with run_app(path, mode="context", refresh_seconds=0.05) as pilot:
        app = pilot.app
        screen = _screen(app)
        chart = screen.query_one(PressureChart)
        assert chart.data.mark_positions() == []

        def harness() -> None:
            writer = make_store(path, **{"store.writer": "test-harness"})
            try:
                record_checkpoint(writer, "mk", trigger="pre-compact", ts="2026-03-02T09:02:00Z")
                record_compaction(writer, "mk", 175_000, ts="2026-03-02T09:03:00Z")
            finally:
                writer.close()

        thread = threading.Thread(target=harness)
        thread.start()
        await wait_until(pilot, lambda: chart.data.mark_positions()
                         == [("checkpoint", 2), ("compaction", 2)], timeout=30,
                         what="the checkpoint and compaction marks")
        thread.join()
        await _text(pilot, screen.query_one(PressureEvents), "(pre-compact) ran before it")
        assert load_count(screen, "full") == 1


async def test_a_bad_stored_value_is_reported_not_fatal(store: Store, run_app: RunApp) -> None:
    record_snapshot(store, "bad", 100_000, ts="2026-03-02T09:00:00Z")
    record_snapshot(store, "bad", 120_000, ts="2026-03-02T09:01:00Z")
    record_checkpoint(store, "bad", ts="2026-03-02T09:02:00Z")
    with store.write() as conn:
        conn.exec_driver_sql("UPDATE context_snapshot SET used_tokens = 'lots' "
                             "WHERE used_tokens = 120000")
        conn.exec_driver_sql("UPDATE checkpoint SET entries_added = 'lots'")
    async with run_app(store=store, mode="context", refresh_seconds=3600) as pilot:
        app = pilot.app
        screen = _screen(app)
        # each is waited for: under load the events and the chart may land a frame apart
        events = screen.query_one(PressureEvents)
        await _text(pilot, events, "used_tokens: stored value 'lots'")
        await _text(pilot, events, "entries_added: stored value 'lots'")
        chart = screen.query_one(PressureChart)
        await wait_until(pilot, lambda: chart.data is not None
                         and chart.data.used == [100_000, 0], timeout=30, what="the chart")


async def test_overview_pressure_follows_the_store(tmp_path: Path, run_app: RunApp) -> None:
    """The Overview's one refresh (no timer of the panel's own) brings new snapshots."""
    path = tmp_path / "ov.db"
    make_store(path).close()
    async with run_app(path, mode="overview", refresh_seconds=0.05,
                       ready=_summary_loaded, what="the empty summary") as pilot:
        app = pilot.app
        summary = app.screen.query_one(PressureSummary)
        await _text(pilot, summary.query_one("#pressure-summary-line"), "No context snapshots")
        writer = make_store(path)
        record_snapshot(writer, "ov-live", 123_456, ts="2026-03-02T09:00:00Z",
                        window_tokens=200_000)
        writer.close()
        await _text(pilot, summary.query_one(PressureGauge), "123,456 / 200,000 tokens")


async def test_the_chart_says_what_its_marks_mean(store: Store, run_app: RunApp) -> None:
    """The chart's lines and marks had no legend: its border says which is which, each in
    the colour it is drawn in."""
    record_snapshot(store, "legend", 150_000, ts="2026-03-02T09:01:00Z", window_tokens=200_000)
    async with run_app(store=store, mode="context", refresh_seconds=3600) as pilot:
        screen = _screen(pilot.app)
        await wait_until(pilot, lambda: load_count(screen) >= 1, what="the chart")
        legend = str(screen.query_one("#context-chart-panel").border_subtitle)  # as markup
        for what in ("checkpoint threshold", "auto-compact", "compaction", "checkpoint"):
            assert what in legend, legend
        r, g, b = screen.query_one(PressureChart)._rgb("success")
        assert f"[bold #{r:02x}{g:02x}{b:02x}]│[/bold #{r:02x}{g:02x}{b:02x}] checkpoint" \
            in legend, legend
