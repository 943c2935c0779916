"""The lca-tui app: one mode per screen of the registry, the number keys, help and palette.

``make_app`` is the one factory the CLI and the tests use. The app owns a ``Store``
(``app.store``) and a clock (``app.now()``, frozen when ``now`` is given so snapshots do not
move). Screens come from ``screens.registry.SCREENS``: a screen whose ``target`` is set is
imported when its mode is first shown; one whose target is ``None`` shows a plain "not built
yet" notice.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen

from lca_tui.palette import StoreCommands, screen_commands
from screens.help import HelpScreen
from screens.not_built import NotBuiltScreen
from screens.registry import SCREENS, ScreenSpec
from store import Store, open_store
from store.core.assets import asset_path
from store.core.settings import Settings
from store.core.textsafe import visible

SCREENS_GROUP = Binding.Group("screens", compact=True)


def screen_factory(spec: ScreenSpec) -> Screen[Any]:
    """The screen for ``spec``: its class from ``target``, or the not-built notice."""
    if spec.target is None:
        return NotBuiltScreen(spec)
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
    COMMANDS = App.COMMANDS | {StoreCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        *_mode_bindings(),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
    ]

    def __init__(self, store: Store, *, now: datetime | None = None, owns_store: bool = True,
                 mode: str = "overview", refresh_seconds: float | None = None) -> None:
        super().__init__()
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
        self.sub_title = visible(store.path.name)
        self.pending_memory: int | None = None
        """A memory asked for (``open_memory``) that the Memories screen has not shown yet."""
        self.pending_proposal: int | None = None
        """A proposal asked for (``open_proposal``) that the Proposals screen has not shown."""
        self.copied: str | None = None
        """The last id ``y`` copied (tests read it; the clipboard itself is the terminal's)."""
        for spec in SCREENS:
            self.add_mode(spec.mode, lambda spec=spec: screen_factory(spec))

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
        name = f"{what} id" if what else "id"
        self.notify(f"copied {name} {visible(value)} to the clipboard", markup=False, timeout=3)

    def follow_erasures(self) -> bool:
        """When an erasure or redaction happened (in any process) since the last look, drop
        what this process keeps of the store in memory: the recall vector copy, which may
        hold erased vectors. Screens then reload from the store. True if one happened.
        (The app holds no read snapshot between queries: every query takes its own
        connection, so an erasure's WAL checkpoint is never blocked by it.)"""
        from store.privacy.api import latest_tombstone
        from store.recall.pool import drop_cache

        latest = latest_tombstone(self.store)
        if latest == self._tombstone_seen:
            return False
        first = self._tombstone_seen is None
        self._tombstone_seen = latest
        if not first:
            drop_cache(self.store)
        return not first

    async def open_session(self, session_id: str, seq: int | None = None) -> None:
        """Show a session (and optionally one of its entries) on the Transcript screen."""
        await self.switch_mode("transcript")
        opener = getattr(self.screen, "open_session", None)
        if opener is not None:
            opener(session_id, seq)

    async def open_trace(self, trace_id: int) -> None:
        """Show one recall trace on the Recall screen."""
        await self.switch_mode("recall")
        opener = getattr(self.screen, "open_trace", None)
        if opener is not None:
            opener(trace_id)

    async def open_memory(self, memory_id: int) -> None:
        """Show one memory on the Memories screen (mode ``memories``).

        Any screen may call it (a recall candidate, a search hit, the palette). The Memories
        screen implements ``open_memory(id)``; it is called once the mode is shown, and the id
        also waits in ``pending_memory`` for a screen that reads it when it mounts. While that
        screen is not built, the notice says which memory was asked for.
        """
        self.pending_memory = memory_id
        await self.switch_mode("memories")
        opener = getattr(self.screen, "open_memory", None)
        if opener is not None:
            self.pending_memory = None
            opener(memory_id)
        else:
            self.notify(f"memory {memory_id}: the Memories screen is not built yet, so it "
                        "cannot be shown here (`lca-tui search` finds its text)",
                        severity="warning", markup=False, timeout=6)

    async def open_proposal(self, proposal_id: int) -> None:
        """Show one proposal on the Proposals screen (from a memory's history, a health row)."""
        self.pending_proposal = proposal_id
        await self.switch_mode("proposals")
        opener = getattr(self.screen, "open_proposal", None)
        if opener is not None:
            self.pending_proposal = None
            opener(proposal_id)

    # -- lifecycle -------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.switch_mode(self._start_mode)

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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Switching mode under a modal would strand the modal on the old mode's stack.
        return not (action in ("switch_mode", "help") and isinstance(self.screen, ModalScreen))


def make_app(store_path: Path | str | None = None, settings: Settings | None = None,
             now: datetime | None = None, *, store: Store | None = None,
             mode: str = "overview", refresh_seconds: float | None = None) -> LcaApp:
    """The app on ``store`` (kept open by the caller) or on the store at ``store_path``
    (default: ``$LCA_STORE`` / the XDG data folder), opened here and closed on exit."""
    owns = store is None
    if store is None:
        store = open_store(store_path, settings)
    return LcaApp(store, now=now, owns_store=owns, mode=mode, refresh_seconds=refresh_seconds)
