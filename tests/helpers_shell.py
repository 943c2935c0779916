"""Shared by the screen tests: a frozen clock, the demo store built once, polling helpers, the
log of the screens' ``Loaded`` messages tests wait on (``load_count``), and the Pilot set-up
every screen test uses (``running``, handed out by the ``run_app`` fixture)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from textual.app import App
from textual.geometry import Region
from textual.message import Message
from textual.message_pump import MessagePump
from textual.pilot import Pilot
from textual.worker import WorkerCancelled
from textual.widget import Widget

A = TypeVar("A", bound=App[Any])

FIXED_NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
DEMO_NAME = "demo.db"
SIZE = (120, 40)


class FixedLatency:
    """A store's recall timer (``StoreBase(timer=...)``): every recall takes 12.5 ms, so the
    demo's traces look the same in every snapshot."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 0.0125
        return self.t


FALLBACK = {"embed.backend": "fallback"}
"""Settings overrides giving the deterministic fallback embedder: to a store built outside a
test's isolated environment (a module or session fixture), to the in-process CLI (``cli``) and
to the app (``running``), rather than set in the process."""


def cli(argv: list[str]) -> int:
    """``lca-tui ARGV`` run in this process with the fallback embedder given to it
    (``lca_tui.cli.main(argv, settings=FALLBACK)``); the exit code."""
    from lca_tui.cli import main

    return main(argv, settings=FALLBACK)


def app_settings(**overrides: object) -> Any:
    """The settings a test's app opens its store with: the fallback embedder, ``overrides``."""
    from store.core.settings import Settings

    return Settings.load({**FALLBACK, **overrides})


def build_demo_template(folder: Path) -> Path:
    """Build the demo store in ``folder`` with relative paths (so copies look identical): built
    by a child process working in ``folder`` (as ``lca-tui demo --store demo.db`` run there
    would), so the test run's own working directory is never changed."""
    import subprocess
    import sys

    import tempfile

    root = Path(__file__).resolve().parent.parent
    # built before any test's isolation: its own empty home, nothing of the developer's
    # ($LCA_*, ~/.config/lca-tui) shapes the template every app and snapshot test copies
    home = Path(tempfile.mkdtemp(prefix="lca-demo-env-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LCA_", "XDG_"))}
    env.update({var: str(home / var.lower()) for var in (
        "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")})
    env.update(TZ="UTC", PYTHONPATH=os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run([sys.executable, "-c", _BUILD_DEMO], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"building the demo store in {folder} failed:\n{done.stderr}")
    return folder


_BUILD_DEMO = """
from pathlib import Path
from store.core.settings import Settings
from store.demo import build_demo
from tests.helpers_shell import DEMO_NAME, FALLBACK, FIXED_NOW, FixedLatency
build_demo(Path(DEMO_NAME), now=FIXED_NOW, settings=Settings.load(FALLBACK),
           timer=FixedLatency())
"""
"""The demo store's build, run in the folder it is built in (its recorded paths relative)."""


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


class LoadLog:
    """The ``StoreScreen.Loaded`` messages an app's screens posted, counted per screen and
    part: a ``run_test(message_hook=...)`` hook (``load_log(app)``), or, for an app that
    ``snap_compare`` runs (no hook there), fed as each message bubbles up to the app
    (``watch(app)``). A message seen twice (by its screen and by the app) counts once."""

    def __init__(self) -> None:
        self._seen: dict[int, Message] = {}
        self.counts: dict[tuple[MessagePump, str], int] = {}

    def __call__(self, message: Message) -> None:
        from screens.base import StoreScreen

        if isinstance(message, StoreScreen.Loaded) and id(message) not in self._seen:
            self._seen[id(message)] = message
            key = (message.screen, message.part)
            self.counts[key] = self.counts.get(key, 0) + 1


_LOGS: WeakKeyDictionary[App[Any], LoadLog] = WeakKeyDictionary()


def load_log(app: App[Any]) -> LoadLog:
    """The ``LoadLog`` of ``app`` (made on first use): pass it as ``run_test``'s hook."""
    if app not in _LOGS:
        _LOGS[app] = LoadLog()
    return _LOGS[app]


def watch(app: A) -> A:
    """``app``, its ``Loaded`` messages logged as they reach it (``snap_compare(watch(app),
    ...)``: that runs the app without a message hook)."""
    log = load_log(app)
    post = app.post_message

    def posting(message: Message) -> bool:
        log(message)
        return post(message)

    app.post_message = posting  # type: ignore[method-assign]
    return app


def load_count(screen: Any, part: str = "screen") -> int:
    """How many times ``screen`` said ``part``'s data is on screen (``StoreScreen.Loaded``)."""
    return sum(log.counts.get((screen, part), 0) for log in list(_LOGS.values()))


FIRST_LOAD = {"transcript": "entries", "context": "full"}
"""The load that shows a screen's data, where it is not its ``load_data`` (``screen``): the
Transcript's entries, the Context screen's full series."""


def screen_loaded(app: Any, mode: str | None = None) -> bool:
    """The screen of ``mode`` (default: whichever is current) has shown its first load."""
    if mode is not None and app.current_mode != mode:
        return False
    return load_count(app.screen, FIRST_LOAD.get(app.current_mode, "screen")) >= 1



async def workers_done(app: Any) -> None:
    """Wait for every worker the app runs now. A worker cancelled because a newer load replaced
    it (an exclusive group) is done, not a failure: Textual's ``wait_for_complete`` raises
    ``WorkerCancelled`` for it, and whether that happens depends on the machine's speed. A worker
    that failed still raises."""
    for worker in list(app.workers):
        try:
            await worker.wait()
        except WorkerCancelled:
            pass


async def settled(pilot: Pilot[Any]) -> None:
    """Let the workers finish and the screen repaint (twice: a worker may start another),
    then wait until no scrollable widget moves (a table scrolls to its cursor after a layout;
    under load that can land after a fixed pause)."""
    await workers_done(pilot.app)
    await pilot.pause(0.2)
    await workers_done(pilot.app)
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
    await wait_until(pilot, lambda: load_count(screen) >= 1, what="overview loaded")
    await wait_until(pilot, lambda: load_count(screen, "health") >= 1, what="health line")
    await workers_done(pilot.app)
    loads, health = load_count(screen), load_count(screen, "health")
    screen.reload()
    await wait_until(pilot, lambda: load_count(screen) > loads, what="overview reloaded")
    await wait_until(pilot, lambda: load_count(screen, "health") > health,
                     what="health line again")
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
    if kwargs.get("store") is None and len(args) < 2 and kwargs.get("settings") is None:
        kwargs["settings"] = app_settings()  # the app on a path opens its store with these
    app = make_app(*args, **kwargs)
    mode = kwargs.get("mode", "overview")
    check = ready or (lambda a: screen_loaded(a, mode))
    async with app.run_test(size=size, message_hook=load_log(app)) as pilot:
        await wait_until(pilot, lambda: check(app), what=what)
        if settle:
            await settled(pilot)
        yield pilot
