"""The guided tour of the demo store: ``lca-tui demo --tour``, or ``t`` on any screen of the
demo store. Each step (``Store.tour_step``: what to say, which part of the store and which
record, found in the store) switches to the screen about its subject
(``screens.registry.ABOUT``), opens its record there through the app (``LcaApp.open_record``),
docks a ``TourPanel`` above the footer and puts the cursor on the row it talks about once the
screen says its data is on screen (``StoreScreen.Loaded``, which the app hands to
``TourGuide.loaded``). ``]`` goes on, ``[`` back, ``t`` leaves and ``t`` again resumes at the
step it left (kept beside the demo store, so it survives a restart).

The store gives a step's facts and what it invites a person to do (``TourStep.invites``); the
keys that do it are added here (``hint``), from the bindings in force: a key remapped in the
settings' ``[keys]`` is named as remapped. A screen is reached only through its typed
protocols (``screens.navigation``: ``Shows``, ``PreviewsScope``) and its widgets' ids.

The tour runs on the demo's own file only (``Store.demo_refusal``: the marker the demo wrote):
its last step fills in a scope to erase, which it must never do on a person's real store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.geometry import Region
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable

from screens.base import StoreScreen
from screens.navigation import PreviewsScope, Shows
from screens.registry import screen_about, screen_for
from store import RecordRef, Subject
from widgets.tour_panel import TourPanel, key_name

if TYPE_CHECKING:
    from store import TourStep
    from lca_tui.app import LcaApp


@dataclass
class TourReady(Message):
    """A step computed in the worker: show it (or, with ``refused``, say why the tour does not
    run on this store)."""

    step: TourStep | None
    refused: str | None = None
    token: int = 0


def _table_row(screen: Screen[Any], selector: str, key: str) -> bool:
    """Put ``selector``'s cursor on the row ``key`` and focus the table; False until the row
    is there (the screen is still loading)."""
    tables = screen.query(selector)
    if not tables:
        return False
    table = tables.first(DataTable)
    if key not in table.rows:
        return False
    table.move_cursor(row=table.get_row_index(key), animate=False)
    table.focus()
    return True


def _overview(screen: Screen[Any], step: TourStep) -> bool:
    return step.row is None or _table_row(screen, "#overview-sessions", step.row)


def _context(screen: Screen[Any], step: TourStep) -> bool:
    from widgets.pressure_events import PressureEvents

    if step.target is None:
        return True
    events = screen.query_one("#context-events", PressureEvents)
    for i, (kind, record) in enumerate(events.events):
        if kind == "compaction" and getattr(record, "ts", None) == step.row and \
                getattr(record, "session_id", None) == step.target.id:
            events.cursor = i
            events.focus()
            events.action_move(0)
            return True
    return False


def _shows(screen: Screen[Any], ref: RecordRef) -> bool:
    """Whether ``screen`` has the record ``ref`` selected (``Shows``)."""
    return isinstance(screen, Shows) and screen.shown() == ref


def _recall(screen: Screen[Any], step: TourStep) -> bool:
    if step.target is None or step.row is None:
        return True
    if not _shows(screen, step.target):
        return False
    if screen.has_class("-short") and isinstance(screen, StoreScreen) and screen.side_visible():
        # a short terminal has no rows for the candidates beside the traces list and the
        # panel: the list goes (b brings it back), the candidate the step names stays
        screen.action_toggle_side()
    return _table_row(screen, "#recall-candidates", step.row)


def _selected(selector: str) -> Callable[[Screen[Any], TourStep], bool]:
    def place(screen: Screen[Any], step: TourStep) -> bool:
        if step.row is None or step.target is None:
            return True
        if not _shows(screen, step.target):
            return False
        return _table_row(screen, selector, step.row)
    return place


def _health(screen: Screen[Any], step: TourStep) -> bool:
    return step.row is None or _table_row(screen, "#health-signals", step.row)


def _privacy(screen: Screen[Any], step: TourStep) -> bool:
    if step.row is None or step.refused is not None:
        return True
    if not isinstance(screen, PreviewsScope) or not screen.query("#privacy-input"):
        return False  # not composed yet: its Loaded comes
    screen.preview_scope("match", step.row)
    return True


PLACE: dict[Subject, Callable[[Screen[Any], TourStep], bool]] = {
    "store": _overview, "series": _context, "trace": _recall,
    "proposal": _selected("#proposal-queue"), "memory": _selected("#memory-table"),
    "signal": _health, "erasure": _privacy}
"""How each step's row is selected, by the step's subject (``screens.registry.ABOUT`` maps it
to the screen the step shows)."""


def _select_key() -> str:
    """The key that opens a table's row (``DataTable``'s own binding: it has no id, so no
    keymap moves it)."""
    found = next(b for b in DataTable.BINDINGS
                 if isinstance(b, Binding) and b.action == "select_cursor")
    return key_name(found.key)


def hint(step: TourStep, key: Callable[[str], str]) -> str:
    """What to press on the step's screen for what it invites (``TourStep.invites``), the
    keys named by ``key(binding id)``; empty when it invites nothing."""
    if step.invites == "open" and step.subject == "series":
        return f" {key('events-open')} opens its summary."
    if step.invites == "open":
        return f" Its six terms are on the row; {_select_key()} opens it."
    if step.invites == "review":
        return (f" {key('proposals-approve')} approves as supersede or keep-both, "
                f"{key('proposals-reject')} rejects; both ask for a reason.")
    if step.invites == "drill":
        return (f" {_select_key()} lists a signal's offending rows; {key('health-fix')} "
                "previews a safe fix.")
    if step.invites == "erase":
        return (" The tree is all that erasing it touches; nothing changed yet. "
                f"{key('privacy-erase')} erases (type the word it shows), then the "
                "Verification tab proves it.")
    return ""


def tour_text(step: TourStep, key: Callable[[str], str]) -> str:
    """The panel's text: the step's facts, what to press there, then how to move in the tour
    (the keys named by ``key(binding id)``, as they are in force)."""
    text = step.text
    if step.invites == "verify":  # the tab's key goes inside the facts' last sentence
        text = (f"{text.removesuffix('.')} (the Verification tab, "
                f"{key('privacy-tab-verification')}, lists each probe).")
    else:
        text += hint(step, key)
    leave = key("tour")
    return (f"{text}\n{key('tour-next')} next · {key('tour-back')} back · {leave} leaves the "
            f"tour, {leave} again resumes it here")


def heading(step: TourStep) -> str:
    """The panel's title: the step's number and the title of the screen it shows."""
    return f"Tour {step.index + 1}/{step.total} · {screen_about(step.subject).title}"


class TourGuide:
    """The tour's state in one app: the step it is on, whether its panel shows."""

    def __init__(self, app: LcaApp) -> None:
        self.app = app
        self.active = False
        self.index: int | None = None
        self.step: TourStep | None = None
        self.placed = 0
        """How many steps had their row selected (tests wait on it)."""
        self._placing = False
        self._panel: TourPanel | None = None
        self._token = 0

    # -- what the keys do ------------------------------------------------------------------
    def toggle(self) -> None:
        """``t``: leave the tour, or start it (resuming at the step it was left on)."""
        if self.active:
            self.leave()
        else:
            self.go(self.index)

    def move(self, delta: int) -> None:
        """``]`` / ``[``: the next or the previous step (the ends stay where they are)."""
        if not self.active or self.index is None:
            return
        target = self.index + delta
        if self.step is None or not 0 <= target < self.step.total:
            edge = "last" if delta > 0 else "first"
            self.app.notify(f"This is the tour's {edge} step: {self.app.key_name('tour')} "
                            "leaves it.", markup=False, timeout=3)
            return
        self.go(target)

    def leave(self) -> None:
        self.active = False
        self._stop_placing()
        if self._panel is not None:
            self._panel.remove()
            self._panel = None

    def go(self, index: int | None) -> None:
        """Compute step ``index`` (None: where the tour was left) in a worker, then show it."""
        self._token += 1
        token = self._token
        self.app.run_worker(lambda: self._compute(index, token), thread=True, exclusive=True,
                            group="tour", exit_on_error=False)

    # -- in the worker -----------------------------------------------------------------------
    def _compute(self, index: int | None, token: int) -> None:
        store = self.app.store
        refused = store.demo_refusal()
        if refused is not None:
            self.app.post_message(TourReady(None, refused, token))
            return
        if index is None:
            index = store.tour_position()
        self.app.post_message(TourReady(store.tour_step(index, self.app.now()), token=token))

    # -- on the main thread ------------------------------------------------------------------
    async def show(self, message: TourReady) -> None:
        if message.token != self._token:
            return  # a step asked for before the latest ] or [ (a thread runs to its end)
        if message.step is None:
            self.app.notify(f"The tour runs on the demo store only: {message.refused}. "
                            "`lca-tui demo --tour` builds one and opens it on the tour.",
                            markup=False, severity="warning", timeout=8)
            return
        step = message.step
        self.app.store.remember_tour_position(step.index)  # a few bytes beside the store
        self.leave()
        self.active, self.index, self.step = True, step.index, step
        spec = screen_about(step.subject)
        if step.target is not None and screen_for(step.target.kind) == spec:
            await self.app.open_record(step.target)  # the app's one way to a record
        else:
            await self.app.switch_mode(spec.mode)
        screen = self.app.screen
        self._panel = TourPanel(heading(step), tour_text(step, self.app.key_name),
                                id="tour-panel")
        await screen.mount(self._panel)
        self._token = 0
        self._placing = True
        # the screen's data may be on screen already (a mode shown before); else its Loaded
        screen.call_after_refresh(self._place)

    def loaded(self, screen: StoreScreen) -> None:
        """``screen`` put (part of) its data on screen: place the step's row if the step is
        waiting for that screen."""
        if self._placing and self._panel is not None and self._panel.parent is screen:
            self._place()

    def _place(self) -> None:
        if not self._placing:
            return
        step, panel = self.step, self._panel
        screen = panel.parent if panel is not None else None
        if step is None or not self.active or not isinstance(screen, Screen) or \
                not screen.is_current:
            # left, or another screen came on top (a mode switch, a modal): stop here
            self._stop_placing()
            return
        if isinstance(screen, StoreScreen) and not screen.loaded_once:
            return  # its Loaded comes: the rows placed early would move as the rest shows
        if PLACE[step.subject](screen, step):
            self._stop_placing()
            self.placed += 1
            focused = screen.focused
            if isinstance(focused, DataTable):  # after the panel took its rows
                focused.call_after_refresh(reveal_cursor, focused)

    def _stop_placing(self) -> None:
        self._placing = False


def cursor_region(table: DataTable[Any]) -> Region:
    """The cursor row of ``table`` on screen (unclipped: it may lie outside the view)."""
    row = table._get_row_region(table.cursor_row)
    content = table.content_region
    return Region(content.x, content.y + row.y - int(table.scroll_y), content.width,
                  row.height)


def reveal_cursor(table: DataTable[Any]) -> None:
    """Scroll the table to its cursor row, then every scrolling pane around it, so the row
    is on screen (a table in a scrolling screen, as Overview's, is below the fold at 80x24)."""
    table._scroll_cursor_into_view()
    node = table.parent
    while isinstance(node, Widget):
        if node.allow_vertical_scroll:
            row = cursor_region(table)
            inner = node.content_region
            node.scroll_to_region(row.translate((-inner.x, -inner.y + int(node.scroll_y))),
                                  animate=False, immediate=True, force=True)
        node = node.parent
