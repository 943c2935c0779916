"""Opening the app: it paints before it opens the store, shows the Overview's counts first (read
without the ORM while the store opens), and
a switch back to a screen already loaded asks the store nothing when nothing changed."""

from __future__ import annotations

import threading
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.widgets import DataTable

from lca_tui.app import make_app
from screens.registry import SCREENS
from store import Settings, StoreError
from tests.helpers_shell import FIXED_NOW, load_count, load_log, screen_loaded, wait_until


async def test_the_first_frame_and_the_counts_come_before_the_store_opens(
        demo_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Overview's counts and latest sessions are read without the ORM while the store
    itself opens (held here until they show); the store's read then changes nothing shown."""
    import store as store_package

    real, gate = store_package.open_store, threading.Event()

    def held(*args: Any, **kwargs: Any) -> Any:
        assert gate.wait(60), "the test never let the store open"
        return real(*args, **kwargs)

    monkeypatch.setattr(store_package, "open_store", held)
    app = make_app(demo_path, now=FIXED_NOW, refresh_seconds=3600)
    assert not app.store_opened  # make_app opened nothing
    async with app.run_test(size=(120, 40), message_hook=load_log(app)) as pilot:
        try:
            screen = app.screen
            await wait_until(pilot, lambda: load_count(screen, "counts") >= 1, what="counts")
            assert not app.store_opened
            records = str(screen.query_one("#overview-records").render())
            assert "sessions" in records and "entries" in records
            sessions = screen.query_one("#overview-sessions", DataTable).row_count
            assert sessions > 0
        finally:  # the open worker must not stay parked if an assertion fails
            gate.set()
        await wait_until(pilot, lambda: screen_loaded(app), what="overview loaded")
        assert app.store_opened
        # the counts were shown once (early), the rest by the load that followed
        assert load_count(screen, "counts") == 1 and load_count(screen) == 1
        assert str(screen.query_one("#overview-records").render()) == records
        assert screen.query_one("#overview-sessions", DataTable).row_count == sessions
        assert "checking…" not in str(screen.query_one("#embedder-detail").render())


async def test_a_store_to_migrate_shows_its_counts_once_it_is_open(demo_path: Path) -> None:
    """A store one migration behind is not read without the ORM: the counts come from the
    store's own load, after it opened (and migrated) it."""
    import sqlite3

    with sqlite3.connect(demo_path) as conn:
        newest = conn.execute("SELECT MAX(version) FROM schema_migration").fetchone()[0]
        conn.execute("DELETE FROM schema_migration WHERE version = ?", (newest,))
    app = make_app(demo_path, now=FIXED_NOW, refresh_seconds=3600)
    async with app.run_test(size=(120, 40), message_hook=load_log(app)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "counts") >= 1, what="counts")
        assert app.store_opened
        await wait_until(pilot, lambda: screen_loaded(app), what="overview loaded")
        assert load_count(screen, "counts") == 1


async def _failed_open(tmp_path: Path, then: Callable[[Any], Awaitable[None]] | None = None
                       ) -> Any:
    """The app on a file that is no SQLite store, run until its open failed (and ``then``,
    given the pilot)."""
    bad = tmp_path / "not-a-store.db"
    bad.write_bytes(b"this is not a SQLite file at all" * 64)
    app = make_app(bad, now=FIXED_NOW, refresh_seconds=3600)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.open_error is not None or not app.is_running,
                         what="the open to fail")
        if then is not None:
            await then(pilot)
        await pilot.pause(0.2)
    return app


async def test_a_store_that_cannot_open_ends_the_app_with_its_error(tmp_path: Path) -> None:
    app = await _failed_open(tmp_path)
    assert isinstance(app.open_error, StoreError)
    assert app.return_code == 2


async def test_switching_back_asks_the_store_nothing_when_it_did_not_change(
        demo_path: Path) -> None:
    # read-only: the Health screen's scan is not stored, so nothing changes the store; no
    # poll in the test (refresh_seconds)
    app = make_app(demo_path, Settings.load({"store.read_only": "true"}), now=FIXED_NOW,
                   refresh_seconds=3600)
    screens: dict[str, Any] = {}
    async with app.run_test(size=(120, 40), message_hook=load_log(app)) as pilot:
        for spec in SCREENS:  # every screen loaded once
            await pilot.press(spec.key)
            await wait_until(pilot, lambda m=spec.mode: screen_loaded(app, m),
                             what=f"{spec.mode} loaded", timeout=60)
            screens[spec.mode] = app.screen
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        asked: list[str] = []
        store: Any = app.store
        original = store.data_version

        def counting() -> int:
            asked.append("data_version")
            return original()

        store.data_version = counting
        loads = {mode: load_count(screen) for mode, screen in screens.items()}
        for _ in range(2):
            for spec in SCREENS:
                await pilot.press(spec.key)
                await pilot.pause(0.05)
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        assert asked == []
        assert {mode: load_count(screen) for mode, screen in screens.items()} == loads
        assert app.screen is screens[SCREENS[-1].mode]


@pytest.fixture
def paused_collector(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The collector paused as ``lca-tui`` pauses it before it imports the app; whatever the
    test does, this worker's collector is after it as it was before, nothing frozen."""
    import gc

    from lca_tui import collector

    assert gc.isenabled() and not collector.paused()
    monkeypatch.setattr(collector, "_owned", False)  # put back after the test
    collector.pause()
    try:
        yield collector
    finally:
        collector.settle()
        gc.unfreeze()
        gc.enable()


async def test_the_collector_paused_for_the_start_is_on_again_once_the_store_is_open(
        demo_path: Path, paused_collector: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``lca_tui.collector``: off while the app starts (the first frame, the counts), on again
    with what was alive frozen as soon as the store is open."""
    import gc

    import store as store_package

    real, gate = store_package.open_store, threading.Event()
    seen: list[bool] = []

    def held(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        assert gate.wait(60), "the test never let the store open"
        return real(*args, **kwargs)

    monkeypatch.setattr(store_package, "open_store", held)
    app = make_app(demo_path, now=FIXED_NOW, refresh_seconds=3600)
    async with app.run_test(size=(120, 40), message_hook=load_log(app)) as pilot:
        try:
            await wait_until(pilot, lambda: load_count(app.screen, "counts") >= 1,
                             what="counts")
            assert seen == [False] and not gc.isenabled() and paused_collector.paused()
        finally:
            gate.set()
        await wait_until(pilot, lambda: screen_loaded(app), what="overview loaded")
        assert gc.isenabled() and not paused_collector.paused()
        await pilot.pause()
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # the modules, classes and widgets of the start
        # a screen first showing its data: what it made is frozen too
        await pilot.press("5")
        await wait_until(pilot, lambda: screen_loaded(app, "memories"), what="memories loaded")
        await pilot.pause()
        assert gc.get_freeze_count() > frozen


async def test_the_collector_is_on_again_when_the_store_cannot_open(
        tmp_path: Path, paused_collector: Any) -> None:
    import gc

    async def settled(pilot: Any) -> None:
        # (the open worker sets open_error just before it settles the collector)
        await wait_until(pilot, lambda: not paused_collector.paused(), what="settled")
        assert gc.isenabled()

    app = await _failed_open(tmp_path, settled)
    assert isinstance(app.open_error, StoreError)


async def test_an_app_the_collector_was_not_paused_for_leaves_it_as_it_was(
        demo_path: Path) -> None:
    """A test's (or any caller's) app freezes nothing: freezing would keep the garbage of
    every earlier test in the process for good."""
    import gc

    frozen = gc.get_freeze_count()
    app = make_app(demo_path, now=FIXED_NOW, refresh_seconds=3600)
    async with app.run_test(size=(120, 40), message_hook=load_log(app)) as pilot:
        await wait_until(pilot, lambda: screen_loaded(app), what="overview loaded")
        await pilot.press("5")
        await wait_until(pilot, lambda: screen_loaded(app, "memories"), what="memories loaded")
        await pilot.pause()
    assert gc.isenabled() and gc.get_freeze_count() == frozen
