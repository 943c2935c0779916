"""The guided tour of the demo store (``lca-tui demo --tour``, ``t``): walked forwards and
backwards at 80x24 and 120x40, each step's row selected, found from the store, and on screen
outside the tour's panel; left and resumed (also by a new app on the same store); refused on
a store that is not the demo's own file; its erase step erasing with proof; its text naming
the keys as the settings' ``[keys]`` remap them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input
from textual.worker import WorkerCancelled

from lca_tui.app import LcaApp, make_app
from screens.tour import cursor_region
from store import Settings, open_store
from store.tour.steps import PASTED_KEY
from tests.conftest import make_store
from tests.helpers_shell import FIXED_NOW, load_count, load_log, settled, wait_until
from widgets.confirm_word import ConfirmWord
from widgets.pressure_events import PressureEvents
from widgets.tour_panel import TourPanel

MODES = ("overview", "context", "recall", "proposals", "memories", "health", "privacy")


async def _placed(pilot: Pilot[Any], count: int) -> TourPanel:
    app: LcaApp = pilot.app  # type: ignore[assignment]
    await wait_until(pilot, lambda: app.tour.placed >= count, what=f"tour step {count} placed")
    for _ in range(10):  # a screen's exclusive worker replaced by the next is cancelled
        try:
            await settled(pilot)
            break
        except WorkerCancelled:
            await pilot.pause(0.1)
    return app.screen.query_one(TourPanel)


def _on_screen_outside_panel(app: LcaApp, panel: TourPanel) -> None:
    """The focused table's cursor row (or the Context screen's picked event) is drawn on
    screen, by that widget: not cut off, not under the panel or the footer."""
    focused = app.screen.focused
    if isinstance(focused, DataTable):
        row = cursor_region(focused)
    elif isinstance(focused, PressureEvents):
        plain = focused.text_for(focused._series).plain.split("\n")
        starts = [i for i, line in enumerate(plain) if line[:2] in ("✓ ", "✗ ", "· ")]
        y = focused.content_region.y + starts[focused.cursor] - int(focused.parent.scroll_y)
        row = focused.content_region._replace(y=y, height=1)
    else:
        return
    assert 0 <= row.y < app.size.height, f"row at y={row.y} is off screen"
    assert not row.overlaps(panel.region), "the tour's panel covers the row"
    widget, _ = app.screen.get_widget_at(row.x + 1, row.y)
    assert widget is focused, f"{widget!r} is drawn where the row should be"


def _check_step(app: LcaApp, index: int, panel: TourPanel) -> None:
    """The step's screen, heading and selected row, each checked against the store."""
    store, screen = app.store, app.screen
    assert app.current_mode == MODES[index]
    assert panel.border_title == f"Tour {index + 1}/7 · {MODES[index].capitalize()}"
    assert "] next" in panel.text and "[ back" in panel.text
    if MODES[index] == "overview":
        table = screen.query_one("#overview-sessions", DataTable)
        session = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        series = store.series(str(session), "main")
        assert any(not c.checkpoint_before for c in series.compactions)
        assert str(session)[:8] in panel.text
    elif MODES[index] == "context":
        events = screen.query_one("#context-events", PressureEvents)
        kind, compaction = events.events[events.cursor]
        assert kind == "compaction" and not compaction.checkpoint_before
        assert app.screen.focused is events
        assert f"{compaction.pre_tokens:,} tokens" in panel.text
    elif MODES[index] == "recall":
        table = screen.query_one("#recall-candidates", DataTable)
        rank = int(str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))
        candidates = {c.rank: c for c in screen.trace.candidates}
        held = candidates[rank]
        injected = [c for c in candidates.values()
                    if c.source_type == "memory" and c.decision == "injected"]
        assert held.source_type == "memory" and held.decision in ("superseded",
                                                                   "policy_filtered")
        assert injected and injected[0].rank > held.rank
        assert f"\u201c{held.label}\u201d ranked #{rank}" in panel.text
    elif MODES[index] == "proposals":
        p = store.proposal(screen.selected)
        assert p.status == "pending"
        assert any(c.kind == "contradiction" and c.result != "pass" for c in p.checks)
        assert f"Proposal {p.id} " in panel.text
    elif MODES[index] == "memories":
        contradicted = {conflict["memory_id"] for p in store.proposals()
                        if p.status == "pending" for c in p.checks
                        if c.kind == "contradiction" and c.result != "pass"
                        for conflict in c.evidence["conflicts"]}
        assert screen.selected in contradicted
        assert len(store.chain(screen.selected)) > 2
    elif MODES[index] == "health":
        table = screen.query_one("#health-signals", DataTable)
        name = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        assert screen.result.signal(str(name)).status == "fail"
        assert str(name) in panel.text
    elif MODES[index] == "privacy":
        assert screen.query_one("#privacy-input", Input).value == PASTED_KEY
        assert screen.closure is not None and screen.closure.counts().get("entry", 0) > 0
    _on_screen_outside_panel(app, panel)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_tour_walks_forwards_and_backwards(demo_path: Path,
                                                     size: tuple[int, int]) -> None:
    app = make_app(demo_path, now=FIXED_NOW, tour=True)
    async with app.run_test(size=size, message_hook=load_log(app)) as pilot:
        placed = 0
        for index in range(len(MODES)):
            placed += 1
            panel = await _placed(pilot, placed)
            if MODES[index] == "privacy":
                await wait_until(pilot, lambda: load_count(app.screen, "preview") >= 1,
                                 what="the closure")
            _check_step(app, index, panel)
            await pilot.press("right_square_bracket")
        await pilot.pause(0.2)
        assert app.tour.placed == placed and app.current_mode == "privacy"  # the last step
        for index in reversed(range(len(MODES) - 1)):
            await pilot.press("left_square_bracket")
            placed += 1
            panel = await _placed(pilot, placed)
            _check_step(app, index, panel)
        await pilot.press("left_square_bracket")
        await pilot.pause(0.2)
        assert app.tour.index == 0 and app.tour.placed == placed  # the first step stays


async def test_the_tour_is_left_and_resumed(demo_path: Path) -> None:
    app = make_app(demo_path, now=FIXED_NOW, tour=True)
    async with app.run_test(size=(80, 24), message_hook=load_log(app)) as pilot:
        await _placed(pilot, 1)
        for n in range(3):
            await pilot.press("right_square_bracket")
            await _placed(pilot, n + 2)
        assert app.current_mode == "proposals"
        await pilot.press("t")
        await pilot.pause()
        assert not app.tour.active and not app.screen.query(TourPanel)
        await pilot.press("1")
        await wait_until(pilot, lambda: app.current_mode == "overview", what="overview")
        assert not app.screen.query(TourPanel)
        await pilot.press("right_square_bracket")  # no tour: nothing moves
        await pilot.pause(0.2)
        assert app.current_mode == "overview" and app.tour.placed == 4
        await pilot.press("t")
        panel = await _placed(pilot, 5)
        assert app.current_mode == "proposals" and panel.border_title.startswith("Tour 4/7")
    # a new app on the same store resumes where the tour was left
    again = make_app(demo_path, now=FIXED_NOW)
    async with again.run_test(size=(80, 24), message_hook=load_log(again)) as pilot:
        await wait_until(pilot, lambda: load_count(again.screen) >= 1, what="overview")
        await pilot.press("t")
        panel = await _placed(pilot, 1)
        assert again.current_mode == "proposals" and panel.border_title.startswith("Tour 4/7")


async def _refused(path: Path) -> None:
    """``t`` on the store at ``path`` says why the tour does not run there, and starts nothing."""
    app = make_app(path, now=FIXED_NOW)
    async with app.run_test(size=(80, 24), message_hook=load_log(app)) as pilot:
        await wait_until(pilot, lambda: load_count(app.screen) >= 1, what="overview")
        await pilot.press("t")
        await wait_until(pilot, lambda: any("demo store only" in str(n.message)
                                            for n in app._notifications),
                         what="the refusal")
        assert not app.tour.active and not app.screen.query(TourPanel)
        assert app.current_mode == "overview"


async def test_the_tour_refuses_a_store_that_is_not_the_demos(tmp_path: Path,
                                                               demo_path: Path) -> None:
    # the demo's file copied without its data folder: not the demo's own file any more
    alone = tmp_path / "elsewhere"
    alone.mkdir()
    shutil.copyfile(demo_path, alone / "demo.db")
    await _refused(alone / "demo.db")
    make_store(tmp_path / "real.db").close()
    await _refused(tmp_path / "real.db")


async def test_the_erase_step_erases_with_proof(demo_path: Path) -> None:
    app = make_app(demo_path, now=FIXED_NOW, tour=True)
    async with app.run_test(size=(120, 40), message_hook=load_log(app)) as pilot:
        await _placed(pilot, 1)
        app.tour.go(6)
        await _placed(pilot, 2)
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "preview") >= 1, what="closure")
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmWord), what="modal")
        await pilot.press(*"erase", "enter")
        await wait_until(pilot, lambda: load_count(screen, "erasure") >= 1, timeout=60,
                         what="erasure")
        await pilot.press("left_square_bracket")
        await _placed(pilot, 3)
        await pilot.press("right_square_bracket")
        panel = await _placed(pilot, 4)
        assert panel.text.startswith("Erased: no record holds the pasted key")
        assert "verified: every probe passed" in panel.text
    store = open_store(demo_path)
    try:
        assert not [h for h in store.search(PASTED_KEY, mode="fts") if PASTED_KEY in h.text]
        assert store.tombstones()[0].verified is True
    finally:
        store.close()


async def test_the_tour_names_the_keys_as_remapped(demo_path: Path, tmp_path: Path) -> None:
    """The keys in the panel's text are the bindings in force, not the defaults: remapped by
    id in ``[keys]``, the tour names (and answers to) the new keys."""
    config = tmp_path / "config.toml"
    config.write_text('[keys]\ntour-next = "f6"\ntour-back = "f7"\ntour = "f8"\n'
                      'proposals-approve = "A"\n', encoding="utf-8")
    app = make_app(demo_path, Settings.load(path=config), now=FIXED_NOW, tour=True)
    async with app.run_test(size=(120, 40), message_hook=load_log(app)) as pilot:
        panel = await _placed(pilot, 1)
        assert panel.text.endswith(
            "\nf6 next · f7 back · f8 leaves the tour, f8 again resumes it here")
        assert "] next" not in panel.text and "[ back" not in panel.text
        await pilot.press("f6")
        panel = await _placed(pilot, 2)
        assert app.current_mode == "context" and panel.border_title.startswith("Tour 2/7")
        assert " enter opens its summary.\nf6 next" in panel.text
        app.tour.go(3)
        panel = await _placed(pilot, 3)
        assert app.current_mode == "proposals"
        assert " A approves as supersede or keep-both, r rejects; both ask for a reason." \
            in panel.text
        await pilot.press("f8")
        await pilot.pause()
        assert not app.tour.active and not app.screen.query(TourPanel)


async def test_the_tour_starts_on_a_store_the_caller_opened(demo_path: Path) -> None:
    """``make_app(store=…, tour=True)``: the tour starts as on a path (the app does not open
    the store itself then)."""
    store = open_store(demo_path, Settings.load({"embed.backend": "fallback"}))
    try:
        app = make_app(store=store, now=FIXED_NOW, tour=True)
        async with app.run_test(size=(120, 40)) as pilot:
            panel = await _placed(pilot, 1)
            assert app.tour.active and panel is not None
    finally:
        store.close()


async def test_a_step_waits_for_its_screen_s_whole_load_not_the_early_counts(
        demo_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Overview shows its latest sessions early (read without the ORM); the tour places
    its first step only once the whole load is on screen (placed on the early rows, its scroll
    moved as the rest filled in); and a read of the same rows leaves the table as it is."""
    import threading

    import store as store_package
    from screens.overview import OverviewScreen

    real_open, opens = store_package.open_store, threading.Event()
    real_load, loads_go = OverviewScreen.load_data, threading.Event()

    def open_held(*args: Any, **kwargs: Any) -> Any:
        assert opens.wait(60), "the test never let the store open"
        return real_open(*args, **kwargs)

    def load_held(self: OverviewScreen) -> Any:
        assert loads_go.wait(60), "the test never let the load go"
        return real_load(self)

    monkeypatch.setattr(store_package, "open_store", open_held)
    monkeypatch.setattr(OverviewScreen, "load_data", load_held)
    app = make_app(demo_path, now=FIXED_NOW, tour=True)
    async with app.run_test(size=(80, 24), message_hook=load_log(app)) as pilot:
        try:
            screen = app.screen
            table = screen.query_one("#overview-sessions", DataTable)
            await wait_until(pilot, lambda: load_count(screen, "counts") >= 1,
                             what="early rows")
            opens.set()  # the tour's step is computed from the store: it opens now
            await wait_until(pilot, lambda: app.tour.step is not None, what="the step")
            step = app.tour.step
            assert step is not None and step.row in table.rows  # its row is there already
            await pilot.pause(0.3)
            assert app.tour.placed == 0 and not screen.loaded_once
        finally:
            opens.set()
            loads_go.set()
        panel = await _placed(pilot, 1)
        _check_step(app, 0, panel)
        added: list[Any] = []
        real_add = table.add_row
        monkeypatch.setattr(table, "add_row", lambda *a, **k: added.append(a) or real_add(*a, **k))
        loads = load_count(screen)
        screen.reload()
        await wait_until(pilot, lambda: load_count(screen) > loads, what="the reload")
        await settled(pilot)
        assert added == []  # the same rows: not rebuilt
        _on_screen_outside_panel(app, panel)
