"""``lca-tui screenshots DIR``: an SVG of every screen (and of the guided tour's first step) on
the demo store, taken by the app itself (``App.save_screenshot``), headless, at a fixed size.

Everything that could move between two runs is fixed, so that the pictures committed under
``docs/screenshots/`` can be checked against the app (``tests/cli/test_screenshots.py``): the
demo is built in a scratch folder and opened by a relative path (no temporary path on screen),
with the story ending at ``SHOT_NOW`` and the app's clock frozen there; the default settings
(no config file is read) with the deterministic fallback embedder; times in UTC and the XDG
folders in the scratch folder (``ENV``); a recall
timer that says 12.5 ms for every recall; no live polling (a screen shows the store as it
loaded). Rich names the SVG's CSS classes after a hash of the picture; ``normalise`` takes it
out, as pytest-textual-snapshot does, for comparing.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SHOT_NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
SIZE = (120, 40)
DEMO_NAME = "demo.db"
TOUR_FILE = "0-tour.svg"
ENV: dict[str, str | None] = {
    "TZ": "UTC", "LCA_EMBEDDER": "fallback", "LCA_CONFIG": None, "LCA_STORE": None,
    "XDG_CONFIG_HOME": "xdg-config", "XDG_STATE_HOME": "xdg-state",
    "XDG_CACHE_HOME": "xdg-cache", "XDG_RUNTIME_DIR": "xdg-runtime", "XDG_DATA_HOME": "xdg-data"}
"""The environment while the pictures are taken: times in UTC, and this machine's own state
(hook failures logged in its state folder, a running daemon, a config file) out of sight; a
value ``xdg-…`` is a folder of the scratch folder."""
FIRST_LOAD = {"transcript": "entries", "context": "full"}
"""The load that puts a screen's data up, where it is not its ``load_data`` ("screen")."""


def normalise(svg: str) -> str:
    """``svg`` without Rich's per-picture id (``terminal-123456-r1`` → ``terminal-r1``)."""
    return re.sub(r"\bterminal-\d+-([\w-]+)", r"terminal-\1", svg)


def file_names() -> list[str]:
    """The files ``shoot`` writes: the tour's first step, then each screen by key and mode."""
    from screens.registry import SCREENS

    return [TOUR_FILE, *(f"{spec.key}-{spec.mode}.svg" for spec in SCREENS)]


class _FixedTimer:
    """A recall timer that moves 12.5 ms a call: every trace says the same latency."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 0.0125
        return self.t


@dataclass
class Shot:
    name: str
    path: Path


def _settings(folder: Path, overrides: dict[str, Any] | None) -> Any:
    from store import Settings

    given = {"embed.backend": "fallback", **(overrides or {})}
    return Settings.load(given, path=folder / "no-config-file.toml")


def shoot(out_dir: Path, size: tuple[int, int] = SIZE, overrides: dict[str, Any] | None = None,
          progress: Callable[[str], None] | None = None) -> list[Shot]:
    """Build the demo store in a scratch folder and write every picture into ``out_dir``."""
    import asyncio

    from store import build_demo

    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lca-tui-shots-") as scratch:
        folder = Path(scratch)
        settings = _settings(folder, overrides)
        old, saved = Path.cwd(), {name: os.environ.get(name) for name in ENV}
        os.chdir(folder)  # the store opened by a relative path: no scratch path on screen
        for name, value in ENV.items():  # nothing of this machine's own state on screen
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = str(folder / value) if value.startswith("xdg-") else value
        time.tzset()
        try:
            if progress:
                progress("building the demo store")
            build_demo(Path(DEMO_NAME), now=SHOT_NOW, settings=settings, timer=_FixedTimer())
            return asyncio.run(_shoot(Path(DEMO_NAME), settings, out_dir, size, progress))
        finally:
            os.chdir(old)
            for name, before in saved.items():
                if before is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = before
            time.tzset()


async def _shoot(store_path: Path, settings: Any, out_dir: Path, size: tuple[int, int],
                 progress: Callable[[str], None] | None) -> list[Shot]:
    from lca_tui.app import make_app
    from textual.worker import WorkerCancelled
    from screens.base import StoreScreen
    from screens.registry import SCREENS

    loads: dict[tuple[int, str], int] = {}

    def hook(message: Any) -> None:
        if isinstance(message, StoreScreen.Loaded):
            key = (id(message.screen), message.part)
            loads[key] = loads.get(key, 0) + 1

    app = make_app(store_path, settings, now=SHOT_NOW, refresh_seconds=3600)
    shots: list[Shot] = []
    async with app.run_test(size=size, message_hook=hook) as pilot:
        async def until(done: Callable[[], bool], what: str) -> None:
            for _ in range(1200):  # 60 s: a loaded machine
                if done():
                    return
                await pilot.pause(0.05)
            raise TimeoutError(f"the app did not show {what} within 60 s")

        async def settle() -> None:
            for _ in range(2):
                for worker in list(app.workers):
                    try:  # one a newer load replaced is done; on a slow machine that is common
                        await worker.wait()
                    except WorkerCancelled:
                        pass
                await pilot.pause(0.2)
            for _ in range(50):  # a table scrolls to its cursor after a layout
                before = [w.scroll_offset for w in app.screen.query("*") if w.is_scrollable]
                await pilot.pause(0.1)
                if [w.scroll_offset for w in app.screen.query("*") if w.is_scrollable] == before:
                    break

        def shown(screen: Any, part: str) -> Callable[[], bool]:
            return lambda: loads.get((id(screen), part), 0) >= 1

        def save(name: str) -> None:
            app.save_screenshot(name, str(out_dir))
            shots.append(Shot(name, out_dir / name))
            if progress:
                progress(f"wrote {name}")

        for spec, name in zip(SCREENS, file_names()[1:], strict=True):
            await app.switch_mode(spec.mode)
            await until(shown(app.screen, FIRST_LOAD.get(spec.mode, "screen")),
                        f"{spec.title}'s data")
            if spec.mode == "overview":
                await until(shown(app.screen, "health"), "the health line")
            await settle()
            save(name)
        await app.switch_mode("overview")
        app.tour.go(0)
        await until(lambda: app.tour.placed >= 1, "the tour's first step")
        await settle()
        save(TOUR_FILE)
    shots.sort(key=lambda s: s.name)
    return shots
