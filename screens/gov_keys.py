"""Keys and sizing the Proposals and Memories screens share: ``/`` filters the main table,
``z`` maximises the focused pane, ``b`` hides or shows the side pane, ``y`` copies the
selected id, ``g`` / ``G`` go to the top and bottom; below 100 columns the screen has the
class ``-narrow`` and below 32 rows ``-short`` (the stylesheet makes panes smaller there).

A screen using ``GovKeys`` names its table (``MAIN_TABLE``), its filter input
(``FILTER_INPUT``) and its side pane (``SIDE_PANE``), implements ``refill()`` (fill the table
with the rows ``matches`` lets through) and ``selected_id()``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import DataTable, Input, Tree

from store.core.textsafe import visible

NARROW = 100
SHORT = 32


def matches(cells: list[Any], needle: str) -> bool:
    """Every word of ``needle`` occurs in the row's text (case-insensitive)."""
    words = needle.lower().split()
    if not words:
        return True
    hay = " ".join(c.plain if isinstance(c, Text) else str(c) for c in cells).lower()
    return all(w in hay for w in words)


class GovKeys(Screen[None]):
    """Mixin of shared keys for a screen with a main table, a detail and a side pane."""

    MAIN_TABLE: ClassVar[str] = ""
    FILTER_INPUT: ClassVar[str] = ""
    SIDE_PANE: ClassVar[str] = ""
    SIDE_NAME: ClassVar[str] = "side pane"
    ALLOW_IN_MAXIMIZED_VIEW: ClassVar[str] = "Header, Footer"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", id="gov-filter"),
        Binding("z", "zoom", "Zoom", id="gov-zoom",
                tooltip="Fill the screen with the focused pane (z or esc restores)"),
        Binding("b", "toggle_side", "Pane", id="gov-side",
                tooltip="Hide or show the side pane"),
        Binding("y", "copy_id", "Copy id", show=False, id="gov-copy"),
        Binding("g", "top", "Top", show=False, id="gov-top"),
        Binding("G", "bottom", "Bottom", show=False, id="gov-bottom"),
        Binding("escape", "restore", "Back", show=False, id="gov-escape"),
    ]

    filter_text: str = ""
    copied: str | None = None

    def refill(self) -> None:
        """Fill the main table again (the filter changed)."""

    def selected_id(self) -> str | None:
        """The id ``y`` copies."""
        return None

    # -- size ----------------------------------------------------------------------------
    def on_resize(self, event: Resize) -> None:
        self.size_classes(event.size.width, event.size.height)

    def size_classes(self, width: int, height: int) -> None:
        """``-narrow`` below 100 columns, ``-short`` below 32 rows."""
        self.set_class(width < NARROW, "-narrow")
        self.set_class(height < SHORT, "-short")

    # -- filter --------------------------------------------------------------------------
    def action_filter(self) -> None:
        field = self.query_one(self.FILTER_INPUT, Input)
        field.display = True
        field.focus()

    @on(Input.Changed)
    def _filter_changed(self, event: Input.Changed) -> None:
        if event.input.id != self.FILTER_INPUT.lstrip("#"):
            return
        self.filter_text = event.value.strip()
        self.refill()

    @on(Input.Submitted)
    def _filter_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == self.FILTER_INPUT.lstrip("#"):
            self.query_one(self.MAIN_TABLE).focus()

    def action_restore(self) -> None:
        """esc: restore a maximised pane, else clear and hide the filter."""
        if self.maximized is not None:
            self.minimize()
            return
        field = self.query_one(self.FILTER_INPUT, Input)
        if field.display:
            field.value = ""
            field.display = False
            self.filter_text = ""
            self.refill()
            self.query_one(self.MAIN_TABLE).focus()

    # -- panes ---------------------------------------------------------------------------
    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
            return
        if self.focused is not None:
            self.maximize(self.focused)

    def action_toggle_side(self) -> None:
        pane = self.query_one(self.SIDE_PANE)
        pane.display = not pane.display
        if not pane.display and self.focused is not None and \
                self.focused in pane.walk_children(with_self=True):
            self.query_one(self.MAIN_TABLE).focus()

    # -- ids and moving ------------------------------------------------------------------
    def action_copy_id(self) -> None:
        value = self.selected_id()
        if value is None:
            self.notify("Nothing selected to copy.", severity="warning")
            return
        self.app.copy_to_clipboard(value)
        self.copied = value
        self.notify(f"copied {visible(value)}", markup=False, timeout=3)

    def action_top(self) -> None:
        self._move(top=True)

    def action_bottom(self) -> None:
        self._move(top=False)

    def _move(self, top: bool) -> None:
        focused = self.focused
        if isinstance(focused, DataTable):
            if focused.row_count:
                focused.move_cursor(row=0 if top else focused.row_count - 1)
        elif isinstance(focused, Tree):
            if focused.last_line >= 0:
                focused.move_cursor_to_line(0 if top else focused.last_line)
        elif focused is not None:
            if top:
                focused.scroll_home(animate=False)
            else:
                focused.scroll_end(animate=False)
