"""Shared by the app-shell tests: a frozen clock, the demo store built once, polling helpers."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

FIXED_NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
DEMO_NAME = "demo.db"


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
