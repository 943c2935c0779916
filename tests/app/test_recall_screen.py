"""The Recall screen: traces, one trace's candidates with their bars, a new recall, a re-run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from lca_tui.app import make_app
from store import Store, open_store
from store.core.settings import Settings
from store.recall.run import recall, seed_demo_traces
from store.recall.traces import get_trace, list_traces
from tests.conftest import RunApp, make_store
from tests.helpers_recall import NOW, add_entries, import_memories
from tests.helpers_shell import (
    FIXED_NOW,
    SIZE,
    FixedLatency,
    load_count,
    screen_loaded,
    settled,
    wait_until,
    watch,
    workers_done,
)

BODY = ("Deploy the service with the helm chart: run the canary rollout in staging first, "
        "watch the error budget for ten minutes, then promote the release to production.")


@pytest.fixture
def snap_store(tmp_path: Path) -> Iterator[Store]:
    """A small store with memories (one secret, one superseded, one disputed), transcript
    entries and three traces, all at a fixed time and each taking 12.5 ms."""
    s = open_store(tmp_path / "snap.db", Settings.load(), timer=FixedLatency())
    import_memories(s, tmp_path / "mem", [
        ("deploy", BODY, {"name": "deploy guide", "authority": "approved", "hits": 6,
                          "projects": ["shop"]}),
        ("deploy-old", BODY + " Use the old script.", {"name": "old deploy script",
                                                       "status": "superseded"}),
        ("token", BODY + " The deploy token is tok-93ab-SECRET.", {"name": "deploy token",
                                                                   "sensitivity": "secret"}),
        ("rollback", "Rollback: helm rollback to the previous release, then page the on-call.",
         {"name": "rollback", "status": "disputed"}),
        ("tax", "Quarterly tax filing deadlines and invoice reminders.", {"name": "tax"}),
    ])
    add_entries(s, "sess-0001", [
        ("user", "How do we deploy the service to production with helm?"),
        ("assistant", "Run the canary rollout in staging first, then promote the release."),
        ("tool_result", "helm upgrade --install shop ./chart --set canary=true"),
    ], project="/work/shop", ts="2026-05-31T10:00:00Z")
    recall(s, "how do we deploy the service with helm", project="shop", now=NOW)
    recall(s, "what is the rollback procedure", now=NOW)
    recall(s, "deploy token for production", channel="public", now=NOW)
    yield s
    s.close()


def _app(store: Store) -> Any:
    return make_app(store=store, now=NOW, mode="recall", refresh_seconds=3600)


def _running(run_app: RunApp, store: Store) -> Any:
    """The Recall screen on ``store``, handed over loaded and settled."""
    return run_app(store=store, now=NOW, mode="recall", refresh_seconds=3600, settle=True)


async def _ready(pilot: Pilot[Any]) -> None:
    """Snapshot tests' ``run_before``: the same readiness as ``_running``."""
    await wait_until(pilot, lambda: screen_loaded(pilot.app, "recall"),
                     what="the Recall screen's first load")
    await settled(pilot)


# -- behaviour -----------------------------------------------------------------------------

async def test_recall_on_the_demo_store_is_shown_with_every_candidate(
        demo_path: Path, tmp_path: Path, run_app: RunApp) -> None:
    store = make_store(tmp_path / demo_path)
    demo_traces = len(list_traces(store))
    assert demo_traces == 4  # the demo builder seeds its own recalls
    seeded = seed_demo_traces(store, now=FIXED_NOW)
    assert len(seeded) == 4 and len(list_traces(store)) == demo_traces + 4
    async with run_app(store=store, mode="recall", refresh_seconds=3600,
                       settle=True) as pilot:
        app = pilot.app
        screen = app.screen
        await pilot.press("n")
        assert isinstance(app.focused, Input)
        await pilot.press(*"how do we run the tests")
        await pilot.press("enter")
        await wait_until(pilot, lambda: load_count(screen, "recall") == 1, what="the new recall")
        await workers_done(app)
        await pilot.pause()
        trace = get_trace(store, screen.trace_id)
        assert trace.query == "how do we run the tests"
        injected = [c for c in trace.candidates if c.decision == "injected"]
        assert 0 < len(injected) <= 6
        assert sum(c.source_type == "memory" for c in injected) <= 4
        assert sum(c.source_type == "entry" for c in injected) <= 2
        assert all(c.terms["S"] >= trace.settings["floor"] for c in injected)
        table = app.screen.query_one("#recall-candidates", DataTable)
        assert table.row_count == len(trace.candidates) == trace.considered
        traces = app.screen.query_one("#recall-traces", DataTable)
        assert str(trace.id) in traces.rows
        assert traces.row_count == demo_traces + len(seeded) + 1
    store.close()


async def test_secret_is_masked_on_screen(snap_store: Store, run_app: RunApp) -> None:
    async with _running(run_app, snap_store) as pilot:
        app = pilot.app
        table = app.screen.query_one("#recall-candidates", DataTable)
        text = " ".join(str(c) for r in range(table.row_count) for c in table.get_row_at(r))
        assert "policy_filtered" in text and "[withheld]" in text
        for row in range(table.row_count):
            table.move_cursor(row=row)
            await pilot.pause()
            detail = str(app.screen.query_one("#recall-detail-text").render())
            assert "tok-93ab" not in detail and "deploy token" not in detail


async def test_rerun_shows_what_moved(snap_store: Store, run_app: RunApp) -> None:
    async with _running(run_app, snap_store) as pilot:
        app = pilot.app
        screen = app.screen
        first = screen.trace_id
        with snap_store.write() as conn:
            conn.exec_driver_sql("UPDATE memory SET status = 'active' WHERE name = "
                                 "'old deploy script'")
        await pilot.press("r")
        await wait_until(pilot, lambda: load_count(screen, "recall") == 1, what="the re-run")
        await workers_done(app)
        assert screen.trace_id != first and screen.moves_for == screen.trace_id
        assert get_trace(snap_store, screen.trace_id).rerun_of == first
        table = screen.query_one("#recall-candidates", DataTable)
        assert "moved" in [str(c.label) for c in table.columns.values()]
        cells = " ".join(str(c) for r in range(table.row_count) for c in table.get_row_at(r))
        assert "was superseded" in cells


# -- snapshots -----------------------------------------------------------------------------

def test_snapshot_traces_list(snap_store: Store, snap_compare: Any) -> None:
    """The traces, newest first, and the latest trace opened below."""
    assert snap_compare(watch(_app(snap_store)), terminal_size=SIZE, run_before=_ready)


def test_snapshot_trace_with_bars(snap_store: Store, snap_compare: Any) -> None:
    """The first trace: every candidate with its six terms, bar, decision and reason."""
    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await pilot.press("down", "down")
        await wait_until(pilot, lambda: pilot.app.screen.trace_id == 1, what="trace 1")
        await workers_done(pilot.app)
        await pilot.pause()
        pilot.app.screen.query_one("#recall-candidates").focus()
        await pilot.press("down", "down")
        await pilot.pause()

    assert snap_compare(watch(_app(snap_store)), terminal_size=SIZE, run_before=run_before)


def test_snapshot_new_recall_flow(snap_store: Store, snap_compare: Any) -> None:
    """n, a query, enter: the recall runs in a worker and its trace opens."""
    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await pilot.press("n", *"helm canary rollout", "enter")
        await wait_until(pilot, lambda: load_count(pilot.app.screen, "recall") == 1,
                         what="the recall")
        await workers_done(pilot.app)
        await pilot.pause()

    assert snap_compare(watch(_app(snap_store)), terminal_size=SIZE, run_before=run_before)


# -- review fixes ----------------------------------------------------------------------------

LONG = ("Line one of the helm deploy note.\nLine two: run the canary rollout in staging.\n"
        "Line three: watch the error budget, then promote.\n" + "More detail words " * 5
        + "END-OF-EXCERPT")


async def test_detail_uses_the_traces_weights_and_shows_the_whole_excerpt(
        tmp_path: Path, run_app: RunApp) -> None:
    s = open_store(tmp_path / "w.db", Settings.load(), timer=FixedLatency())
    add_entries(s, "sess-w", [("user", LONG)])
    recall(s, "helm deploy canary rollout", now=NOW, overrides={"cos_weight": 0.5})
    async with _running(run_app, s) as pilot:
        app = pilot.app
        text = str(app.screen.query_one("#recall-detail-text").render())
        assert "= 0.5·cos" in text and "+ 0.5·lex" in text and "0.7·cos" not in text
        assert "Line one" in text and "Line three" in text and "END-OF-EXCERPT" in text
        pane = app.screen.query_one("#recall-detail")
        assert pane.virtual_size.height <= pane.scrollable_content_region.height
    s.close()


async def test_harness_trace_shows_the_harness_figures(tmp_path: Path, run_app: RunApp) -> None:
    from store.core.writes import NewEntry, NewSession

    s = make_store(tmp_path / "h.db")
    meta = {"event": "memory_recall_injected", "role": "event", "runId": "run_1",
            "metadata": {"event": "memory_recall_injected", "query": "deploy steps",
                         "hitCount": 1, "hits": [{"id": "d", "title": "deploy",
                                                  "score": 0.81, "providerScore": 0.77,
                                                  "recallMode": "hybrid"}]}}
    s.append_entries(NewSession(id="ms", format="mindstone-ndjson"), [NewEntry(
        "event", "memory recall injected", source_key="ms", source_offset=1,
        ts="2026-05-30T09:00:00Z", meta=meta)])
    async with _running(run_app, s) as pilot:
        app = pilot.app
        text = str(app.screen.query_one("#recall-detail-text").render())
        assert "the harness's own figures" in text
        assert "score 0.810, provider score 0.770, recall mode hybrid" in text
        assert "cos" not in text
        head = str(app.screen.query_one("#recall-head").render())
        assert "hits=" not in head and "hitCount=1" in head
    s.close()
