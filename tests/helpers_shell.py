"""Shared by the screen tests: a frozen clock, the demo store built once, polling helpers and
the Pilot set-up every screen test uses (``running``, handed out by the ``run_app`` fixture)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

FIXED_NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
DEMO_NAME = "demo.db"
SIZE = (120, 40)


class FixedLatency:
    """Stands in for ``time`` in store.recall.run: every recall takes 12.5 ms, so the demo's
    traces look the same in every snapshot."""

    def __init__(self) -> None:
        self.t = 0.0

    def perf_counter(self) -> float:
        self.t += 0.0125
        return self.t


def build_demo_template(folder: Path) -> Path:
    """Build the demo store in ``folder`` with relative paths (so copies look identical)."""
    from store.demo import build_demo
    from store.core.settings import Settings

    import store.recall.run as recall_run

    old_cwd, old_embedder = Path.cwd(), os.environ.get("LCA_EMBEDDER")
    os.environ["LCA_EMBEDDER"] = "fallback"
    os.chdir(folder)
    real_time, recall_run.time = recall_run.time, FixedLatency()  # type: ignore[assignment]
    try:
        build_demo(Path(DEMO_NAME), now=FIXED_NOW, settings=Settings.load())
    finally:
        recall_run.time = real_time  # type: ignore[assignment]
        os.chdir(old_cwd)
        if old_embedder is None:
            del os.environ["LCA_EMBEDDER"]
        else:
            os.environ["LCA_EMBEDDER"] = old_embedder
    return folder


def copy_demo(template: Path, target: Path) -> Path:
    """Copy the demo store and its data folder into ``target``; the store's relative path."""
    shutil.copyfile(template / DEMO_NAME, target / DEMO_NAME)
    shutil.copytree(template / f"{DEMO_NAME}.demo-data", target / f"{DEMO_NAME}.demo-data")
    return Path(DEMO_NAME)


async def wait_until(pilot: Pilot[Any], predicate: Callable[[], bool], timeout: float = 20.0,
                     what: str = "condition") -> None:
    """Let the app run until ``predicate()`` holds; fail after a generous ``timeout``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def rendered_text(widget: Widget) -> str:
    """The text a widget puts on screen (its rendered lines with border and padding, joined)."""
    region = Region(0, 0, widget.outer_size.width, widget.outer_size.height)
    return "\n".join(strip.text for strip in widget.render_lines(region))


def rendered_segments(widget: Widget) -> list[Any]:
    region = Region(0, 0, widget.outer_size.width, widget.outer_size.height)
    return [seg for strip in widget.render_lines(region) for seg in strip]


def screen_loaded(app: Any, mode: str | None = None) -> bool:
    """The screen of ``mode`` (default: whichever is current) has shown its first load: the
    Transcript counts ``entry_loads``, the Context screen ``full_loads``, the others
    ``loads``."""
    if mode is not None and app.current_mode != mode:
        return False
    screen = app.screen
    for counter in ("entry_loads", "full_loads", "loads"):
        if hasattr(screen, counter):
            return int(getattr(screen, counter)) >= 1
    return False


async def settled(pilot: Pilot[Any]) -> None:
    """Let the workers finish and the screen repaint (twice: a worker may start another),
    then wait until no scrollable widget moves (a table scrolls to its cursor after a layout;
    under load that can land after a fixed pause)."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.2)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()

    def offsets() -> list[tuple[int, int]]:
        return [(w.scroll_offset.x, w.scroll_offset.y) for w in pilot.app.screen.query(Widget)
                if w.is_scrollable]

    for _ in range(50):
        before = offsets()
        await pilot.pause(0.1)
        moving = any(pilot.app.animator.is_being_animated(w, attr)
                     for w in pilot.app.screen.query(Widget) if w.is_scrollable
                     for attr in ("scroll_x", "scroll_y"))
        if not moving and offsets() == before:
            break
    await pilot.pause()


async def overview_settled(pilot: Pilot[Any]) -> None:
    """The Overview with its health line, loaded once more after the health scan: the scan
    may store itself (the store's size on screen then grows), and whether the screen's live
    refresh catches that before a snapshot is a race."""
    screen = pilot.app.screen
    await wait_until(pilot, lambda: screen.loads >= 1, what="overview loaded")
    await wait_until(pilot, lambda: screen.health_loads >= 1, what="health line")
    await pilot.app.workers.wait_for_complete()
    loads, health = screen.loads, screen.health_loads
    screen.reload()
    await wait_until(pilot, lambda: screen.loads > loads, what="overview reloaded")
    await wait_until(pilot, lambda: screen.health_loads > health, what="health line again")
    await settled(pilot)


@asynccontextmanager
async def running(*args: Any, size: tuple[int, int] = SIZE,
                  ready: Callable[[Any], bool] | None = None,
                  what: str = "the screen's first load", settle: bool = False,
                  **kwargs: Any) -> AsyncIterator[Pilot[Any]]:
    """The app of ``make_app(*args, **kwargs)`` (the frozen clock unless ``now`` is given)
    running at ``size``, handed over once ``ready(app)`` holds — by default once the screen
    of its mode has loaded — and, with ``settle``, once its workers are done."""
    from lca_tui.app import make_app

    kwargs.setdefault("now", FIXED_NOW)
    app = make_app(*args, **kwargs)
    mode = kwargs.get("mode", "overview")
    check = ready or (lambda a: screen_loaded(a, mode))
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: check(app), what=what)
        if settle:
            await settled(pilot)
        yield pilot
