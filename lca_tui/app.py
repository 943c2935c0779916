"""The lca-tui app: one mode per screen of the registry, the number keys, help and palette.

``make_app`` is the one factory the CLI and the tests use. The app owns a ``Store``
(``app.store``). Given a path, ``make_app`` does not open it: the app paints its first frame
(the start screen, its panes saying they are loading) and then opens the store in a thread
(SQLAlchemy's import and the migrations check are most of a cold start); the screens' load
workers wait for it, and anything asking ``app.store`` first opens it there and then. A store
that cannot be opened ends the app with return code 2 and ``open_error`` set (the CLI prints
it as one line). The app has a clock (``app.now()``, frozen when ``now`` is given so
snapshots do not move). Screens come from ``screens.registry.SCREENS``, each imported when
its mode is first shown. Between screens there is one way: an ``OpenRecord`` message, which
the app routes to the screen whose registry entry opens the record's kind
(``screens.navigation``).
"""

from __future__ import annotations

import importlib
import threading
from functools import partial
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import App, ScreenError, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen

from lca_tui import collector
from lca_tui.palette import ScreenActions, StoreCommands, screen_commands
from screens.base import StoreScreen
from screens.help import HelpScreen
from screens.navigation import OpenRecord, Opens
from screens.registry import SCREENS, ScreenSpec, screen_about, screen_for
from screens.tour import TourGuide, TourReady
from store import RecordRef, Settings, asset_path, visible
from widgets.messages import Show
from widgets.tour_panel import key_name

if TYPE_CHECKING:
    from store import Listings, Store

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

    def __init__(self, store: Store | None = None, *, now: datetime | None = None,
                 owns_store: bool = True, mode: str = "overview",
                 refresh_seconds: float | None = None, tour: bool = False,
                 opener: Callable[[], Store] | None = None,
                 settings: Settings | None = None,
                 early: Callable[[], Listings | None] | None = None) -> None:
        """On ``store``, or on the store ``opener`` opens (after the first frame, in a thread;
        ``settings`` are then the ones it opens with); ``early`` opens the same store's
        listings without the ORM, for what the start screen shows while it opens."""
        super().__init__()
        if store is None and opener is None:
            raise ValueError("LcaApp needs a store or an opener")
        self.tour = TourGuide(self)
        self._start_tour = tour
        self._store = store
        self._opener = opener
        self._early = early
        self._first_frame = threading.Event()
        self._open_lock = threading.Lock()
        self.open_error: Exception | None = None
        """Why the store could not be opened (the app then ends with return code 2)."""
        settings = store.settings if store is not None else settings or Settings.load()
        self.settings = settings
        self._frozen_now = now
        self._owns_store = owns_store
        self._start_mode = mode
        self._version_lock = threading.Lock()
        self._tombstone_seen: int | None = None
        self.known_version: int | None = None
        """The store's ``data_version`` as a screen's poll last read it (a screen switched
        back to compares its own with it: no query on a switch)."""
        self.known_changed: str | None = None
        """When the store file last changed, as that poll read it."""
        self.refresh_seconds = float(refresh_seconds if refresh_seconds is not None
                                     else settings["app.refresh_seconds"])
        if store is not None:
            self._name_store(store)
        self.copied: str | None = None
        """The last id ``y`` copied (tests read it; the clipboard itself is the terminal's)."""
        for spec in SCREENS:
            self.add_mode(spec.mode, partial(screen_factory, spec))
        from lca_tui.keymap import THEMES, keymap_from

        self.keymap = keymap_from(settings)
        """The settings' ``[keys]``: binding id -> key(s) (``key_name`` reads it)."""
        self.set_keymap(self.keymap)
        self.theme = THEMES[str(settings["app.theme"])]

    # -- the store -----------------------------------------------------------------------
    @property
    def store(self) -> Store:
        """The store; opened here (in the calling thread) if the app has not opened it yet."""
        store = self._store
        return store if store is not None else self._open_store()

    @property
    def store_opened(self) -> bool:
        """Whether the store is open (a screen's header names it only then)."""
        return self._store is not None

    def _open_store(self) -> Store:
        with self._open_lock:  # one opens, the others wait for it
            if self._store is None:
                if self.open_error is not None:
                    raise self.open_error
                assert self._opener is not None
                try:
                    store = self._opener()
                except Exception as exc:
                    self.open_error = exc
                    raise
                finally:  # the app has started: the collector back on (lca_tui.collector)
                    collector.settle()
                self._name_store(store)
                self._store = store
            return self._store

    def early_listings(self) -> Listings | None:
        """The store's listings read without the ORM (``store.open_listings``: counts, latest
        sessions) while the store itself is still opening — SQLAlchemy's import is most of that
        wait — once the first frame is painted (in a worker thread: it waits for that); None
        once the store is open, or when that reader cannot read this store (a server, a
        store to migrate: the store's own opening then says what there is to say)."""
        if self._store is not None or self._early is None:
            return None
        self._first_frame.wait(5)  # after the first frame (on mount, nothing is painted yet)
        if self._store is not None:
            return None
        try:
            return self._early()
        except Exception:  # never an error of its own: the store's opening reports it
            return None

    @staticmethod
    def keep_alive() -> None:
        """What is alive now lives as long as the app (a screen has first shown its data):
        out of the garbage collector's later passes, when this process tunes it
        (``lca_tui.collector``)."""
        collector.keep()

    def _name_store(self, store: Store) -> None:
        # The Header shows titles as Content (no markup read), but the file name is data: an
        # escape sequence in it must not reach the terminal.
        self.sub_title = visible(store.url if store.url is not None else store.path.name) \
            + (" (read-only)" if store.read_only else "")

    def _open_in_background(self) -> None:
        """After the first frame: open the store in a thread (the screens' workers wait)."""
        if self._store is not None:
            return
        try:
            self._open_store()
        except Exception as exc:
            self.call_from_thread(self._open_failed, exc)

    def _open_failed(self, exc: Exception) -> None:
        self.exit(return_code=2, message=None)

    # -- styles --------------------------------------------------------------------------
    _parsed_for: dict[str, str] | None = None
    """The CSS variables (the theme's) the stylesheet was last parsed with."""

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's ``refresh_css``, without parsing every stylesheet anew when the variables
        they read (the theme) did not change. Textual calls it for each screen shown for the
        first time, and its re-parse of every rule of the app cost a first visit ≈ 0.3 s of
        CPU; a new screen's own rules are parsed as they are added (the stylesheet keeps what
        it parsed), and a change of theme still re-parses everything."""
        variables = self.get_css_variables()
        stylesheet = self.stylesheet
        if variables != self._parsed_for:  # a new theme: every rule is parsed again
            self._parsed_for = dict(variables)
            stylesheet.set_variables(variables)
        stylesheet.parse()  # what it parsed before (same text, same variables) it keeps
        stylesheet.update(self, animate=animate)
        try:
            if self.screen.is_mounted:
                self.screen._refresh_layout(self.size)
                self.screen._css_update_count = self._css_update_count
        except ScreenError:
            pass
        for screen in self.screen_stack:
            if screen is not self.screen:
                stylesheet.update(screen, animate=animate)
                screen._css_update_count = self._css_update_count

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

    @on(StoreScreen.Loaded)
    def _loaded(self, message: StoreScreen.Loaded) -> None:
        """A screen's data is on screen: the tour places its row there (it waits for this)."""
        self.tour.loaded(message.screen)

    def key_name(self, binding_id: str) -> str:
        """The key of the binding ``binding_id`` as it is in force (the settings' ``[keys]``
        remap it), named as a sentence names it: ``]``, ``t``, ``enter``, ``ctrl+n``."""
        from lca_tui.keymap import bindings

        found = next(b for _, b in bindings() if b.id == binding_id)
        return key_name(self.keymap.get(binding_id, found.key))

    @on(Show)
    async def _show(self, message: Show) -> None:
        """A widget asks for the screen about a part of the store (``screens.registry.ABOUT``)."""
        message.stop()
        await self.switch_mode(screen_about(message.subject).mode)

    # -- lifecycle -------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.switch_mode(self._start_mode)
        if self._store is None:
            self.call_after_refresh(self._after_first_frame)
        if self._start_tour:
            self.tour.go(0)

    def _after_first_frame(self) -> None:
        """The first frame is painted: open the store (in a thread), and let the early reads
        go (``early_listings``: before, they would slow the first frame down)."""
        self._first_frame.set()
        self.run_worker(self._open_in_background, thread=True, group="open",
                        exit_on_error=False)

    def on_unmount(self) -> None:
        self._first_frame.set()  # a load worker waiting for it goes on (to find the app gone)
        collector.settle()  # (a store never opened: the collector on again all the same)
        if self._owns_store and self._store is not None:
            self._store.close()

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
             tour: bool = False, app_class: type[LcaApp] | None = None) -> LcaApp:
    """The app on ``store`` (kept open by the caller) or on the store at ``store_path``
    (default: ``$LCA_STORE`` / the XDG data folder), opened by the app after its first frame
    (or when first asked for) and closed on exit; ``tour`` opens it on the guided tour's first
    step (the demo store only). A ``[keys]`` entry no binding has raises ``SettingsError``
    here, before anything is opened. ``app_class``: a subclass of ``LcaApp`` to make (the
    app bench's, which records its frames)."""
    cls = app_class or LcaApp
    if store is not None:
        return cls(store, now=now, owns_store=False, mode=mode,
                      refresh_seconds=refresh_seconds, tour=tour)

    chosen = settings or Settings.load()

    def opener() -> Store:
        from store import open_store

        return open_store(store_path, chosen)

    def early() -> Listings | None:
        from store import open_listings

        return open_listings(store_path, chosen)

    return cls(opener=opener, settings=chosen, now=now, mode=mode,
               refresh_seconds=refresh_seconds, tour=tour, early=early)
