"""The lca-tui app: one mode per screen of the registry, the number keys, help and palette.

``make_app`` is the one factory the CLI and the tests use. The app owns a ``Store``
(``app.store``) and a clock (``app.now()``, frozen when ``now`` is given so snapshots do not
move). Screens come from ``screens.registry.SCREENS``, each imported when its mode is first
shown. Between screens there is one way: an ``OpenRecord`` message, which the app routes to the
screen whose registry entry opens the record's kind (``screens.navigation``).
"""

from __future__ import annotations

import importlib
import threading
from functools import partial
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen

from lca_tui.palette import ScreenActions, StoreCommands, screen_commands
from screens.help import HelpScreen
from screens.navigation import OpenRecord, Opens
from screens.registry import SCREENS, ScreenSpec, screen_about, screen_for
from screens.tour import TourGuide, TourReady
from store import RecordRef, Settings, SettingsError, Store, asset_path, open_store, visible
from widgets.messages import Show

SCREENS_GROUP = Binding.Group("screens", compact=True)


def screen_factory(spec: ScreenSpec) -> Screen[Any]:
    """The screen for ``spec``: its class from ``target``."""
    module_name, _, class_name = spec.target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    screen: Screen[Any] = cls()
    screen.title = spec.title
    return screen


def _mode_bindings() -> list[BindingType]:
    return [Binding(spec.key, f"switch_mode('{spec.mode}')", spec.title, group=SCREENS_GROUP,
                    id=f"mode-{spec.mode}", tooltip=spec.summary) for spec in SCREENS]


class LcaApp(App[None]):
    """A terminal inspector for one continuity store."""

    TITLE = "lca-tui"
    CSS_PATH = str(asset_path("app.tcss"))
    COMMANDS = App.COMMANDS | {StoreCommands, ScreenActions}
    BINDINGS: ClassVar[list[BindingType]] = [
        *_mode_bindings(),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        # the guided tour of the demo store (screens/tour.py); shown in its own panel
        Binding("t", "tour", "Tour", show=False, id="tour",
                tooltip="The guided tour of the demo store: leave it, or resume it"),
        Binding("right_square_bracket", "tour_move(1)", "Next step", show=False,
                id="tour-next"),
        Binding("left_square_bracket", "tour_move(-1)", "Step back", show=False,
                id="tour-back"),
    ]

    def __init__(self, store: Store, *, now: datetime | None = None, owns_store: bool = True,
                 mode: str = "overview", refresh_seconds: float | None = None,
                 tour: bool = False) -> None:
        super().__init__()
        self.tour = TourGuide(self)
        self._start_tour = tour
        self.store = store
        self._frozen_now = now
        self._owns_store = owns_store
        self._start_mode = mode
        self._version_lock = threading.Lock()
        self._tombstone_seen: int | None = None
        self.refresh_seconds = float(refresh_seconds if refresh_seconds is not None
                                     else store.settings["app.refresh_seconds"])
        # The Header shows titles as Content (no markup read), but the file name is data: an
        # escape sequence in it must not reach the terminal.
        self.sub_title = visible(store.url if store.url is not None else store.path.name) \
            + (" (read-only)" if store.read_only else "")
        self.copied: str | None = None
        """The last id ``y`` copied (tests read it; the clipboard itself is the terminal's)."""
        for spec in SCREENS:
            self.add_mode(spec.mode, partial(screen_factory, spec))
        from lca_tui.keymap import THEMES, keymap_from

        self.set_keymap(keymap_from(store.settings))
        self.theme = THEMES[str(store.settings["app.theme"])]

    # -- what screens use ----------------------------------------------------------------
    def now(self) -> datetime:
        """The current time (UTC), or the frozen one the app was built with."""
        return self._frozen_now or datetime.now(UTC)

    def data_version(self) -> int:
        """The store's change counter; serialised, as workers of several screens ask it."""
        with self._version_lock:
            return self.store.data_version()

    def store_changed_at(self) -> str | None:
        """When the store file last changed (its write-ahead log included), ISO-8601 UTC, at
        the latest ``now()``; read in workers (a stat, no query)."""
        stamps = []
        for path in (self.store.path, Path(f"{self.store.path}-wal")):
            try:
                stat = path.stat()
            except OSError:
                continue
            if stat.st_size:  # an empty log is one a connection just opened: no change
                stamps.append(stat.st_mtime)
        if not stamps:
            return None
        # a change is never later than now (a file from a skewed clock, or a frozen test clock)
        return min(datetime.fromtimestamp(max(stamps), UTC), self.now()).isoformat()

    def copy_id(self, value: str, what: str = "") -> None:
        """Put an id on the clipboard (OSC 52: works over ssh too) and say what was copied
        ("copied proposal id 13 to the clipboard", not "copied 13")."""
        self.copy_to_clipboard(value)
        self.copied = value
        shown = visible(value)
        said = f"{what} id {shown}" if what else shown if " " in value else f"id {shown}"
        self.notify(f"copied {said} to the clipboard", markup=False, timeout=3)

    def follow_erasures(self) -> bool:
        """When an erasure or redaction happened (in any process) since the last look, drop
        what this process keeps of the store in memory: the recall vector copy, which may
        hold erased vectors. Screens then reload from the store. True if one happened.
        (The app holds no read snapshot between queries: every query takes its own
        connection, so an erasure's WAL checkpoint is never blocked by it.)"""
        latest = self.store.latest_tombstone()
        if latest == self._tombstone_seen:
            return False
        first = self._tombstone_seen is None
        self._tombstone_seen = latest
        if not first:
            self.store.drop_vector_cache()
        return not first

    @on(OpenRecord)
    async def _open_record(self, message: OpenRecord) -> None:
        message.stop()
        await self.open_record(message.ref)

    async def open_record(self, ref: RecordRef) -> None:
        """Show ``ref`` on the screen that opens its kind (the registry's ``opens``): switch
        to its mode, then hand it the reference."""
        spec = screen_for(ref.kind)
        if spec is None:
            self.notify(f"no screen shows a {ref.kind}", markup=False, severity="warning")
            return
        await self.switch_mode(spec.mode)
        screen = self.screen
        if isinstance(screen, Opens) and ref.kind in screen.OPENS:
            screen.open_record(ref)

    @on(Show)
    async def _show(self, message: Show) -> None:
        """A widget asks for the screen about a part of the store (``screens.registry.ABOUT``)."""
        message.stop()
        await self.switch_mode(screen_about(message.subject).mode)

    # -- lifecycle -------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.switch_mode(self._start_mode)
        if self._start_tour:
            self.tour.go(0)

    def on_unmount(self) -> None:
        if self._owns_store:
            self.store.close()

    # -- actions ---------------------------------------------------------------------------
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette: the screens and help first, then Textual's own commands."""
        yield from screen_commands(self)
        yield from super().get_system_commands(screen)

    def action_help(self) -> None:
        """Explain the screen on top and list its keys."""
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.screen))

    def action_tour(self) -> None:
        """Leave the guided tour, or start it where it was left (the demo store only)."""
        self.tour.toggle()

    def action_tour_move(self, delta: int) -> None:
        self.tour.move(delta)

    @on(TourReady)
    async def _tour_ready(self, message: TourReady) -> None:
        await self.tour.show(message)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Switching mode under a modal would strand the modal on the old mode's stack.
        if action in ("switch_mode", "help", "tour") and isinstance(self.screen, ModalScreen):
            return False
        if action == "tour_move":
            return self.tour.active
        return True


def make_app(store_path: Path | str | None = None, settings: Settings | None = None,
             now: datetime | None = None, *, store: Store | None = None,
             mode: str = "overview", refresh_seconds: float | None = None,
             tour: bool = False) -> LcaApp:
    """The app on ``store`` (kept open by the caller) or on the store at ``store_path``
    (default: ``$LCA_STORE`` / the XDG data folder), opened here and closed on exit; ``tour``
    opens it on the guided tour's first step (the demo store only)."""
    owns = store is None
    if store is None:
        store = open_store(store_path, settings)
    try:
        return LcaApp(store, now=now, owns_store=owns, mode=mode,
                      refresh_seconds=refresh_seconds, tour=tour)
    except SettingsError:  # a [keys] entry no binding has: the store opened here is closed
        if owns:
            store.close()
        raise
