"""A ``DataTable`` that every list of the app uses: filterable with ``/``, ``g`` / ``G`` to the
top and bottom, and cells cut at word boundaries to their column.

``FilterTable`` keeps every row it is given; ``set_filter(text)`` shows only the rows whose
chosen columns (``filter_columns``: the entries' kind, the traces' query, …) contain every word
of the filter, case-insensitively, and keeps the cursor on the same row when it is still shown.
Screens fill it as they fill a ``DataTable`` (``clear`` / ``add_row`` with a key); a row hidden by
the filter is simply not in ``rows`` until the filter lets it through again.

A ``Text`` cell longer than its (fixed-width) column is cut at a word boundary with an
ellipsis, so a number, an id or a word is never shown half ("floor 0.2" for 0.25). The
``stretch`` column (the text, the query) takes the width the others leave and follows the
table's size: its cells are cut again from what was given when the width changes.

A table too long to hold (a session of 200,000 entries) is *paged*: the screen gives it one
page of the store's rows at a time (``show_page``: the rows, how many come before them, the
total) and the table asks for more with ``PageWanted`` (``next`` when the cursor nears the
last row held, ``last`` on ``G``, ``first`` on ``g``, ``filter`` when its filter changed). A
paged table's filter goes to the store's query, not to the rows held: ``set_filter`` keeps
the text and, ``FILTER_DEBOUNCE_S`` after the last keystroke, asks for the first page with it
(typing six characters runs one query). The pane's count line says which rows are held
("rows 1–500 of 200,000").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.coordinate import Coordinate
from textual.events import Resize
from textual.message import Message
from textual.widgets import DataTable
from textual.timer import Timer
from textual.widgets.data_table import CellDoesNotExist, RowKey

from store import clip_words, visible


def _plain(cell: object) -> str:
    return cell.plain if isinstance(cell, Text) else "" if cell is None else str(cell)


def matches(haystack: str, needle: str) -> bool:
    """Every word of ``needle`` occurs in ``haystack`` (both compared case-insensitively)."""
    words = needle.lower().split()
    low = haystack.lower()
    return all(w in low for w in words)


Cell = Any
"""A cell of a ``FilterTable`` (a ``DataTable[Any]``): a str, a ``Text`` or any renderable."""

FILTER_DEBOUNCE_S = 0.15
"""Seconds after the last keystroke in a paged table's filter before its query runs."""
NEAR_END = 20
"""A paged table asks for its next page when the cursor is this many rows from its last."""


class FilterTable(DataTable[Any]):
    """A row-cursor table whose rows can be filtered (``set_filter``) without being reloaded."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "scroll_top", "Top", show=False, id="top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="bottom"),
        Binding("escape", "clear_filter", "Clear filter", id="table-clear-filter",
                tooltip="Show every row again (the filter kept with enter)"),
    ]

    class PageWanted(Message):
        """A paged table wants a page: ``first`` (its filter as it is), ``next`` (after the
        rows held), ``last``, or ``filter`` (its filter changed: the first page with it)."""

        def __init__(self, table: FilterTable, which: str) -> None:
            super().__init__()
            self.table = table
            self.which = which

        @property
        def control(self) -> FilterTable:
            return self.table

    class FilterCleared(Message):
        """Esc cleared the table's kept filter (the screen hides the filter's line)."""

        def __init__(self, table: FilterTable) -> None:
            super().__init__()
            self.table = table

        @property
        def control(self) -> FilterTable:
            return self.table

    def __init__(self, *, filter_columns: Sequence[str] = (), filter_label: str = "rows",
                 stretch: str | None = None, stretch_min: int = 16,
                 tail_columns: Sequence[str] = (), **kwargs: Any) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)
        self.filter_columns = tuple(filter_columns)
        """Column keys the filter looks at (all columns when empty)."""
        self.filter_label = filter_label
        """What the rows are, for "3 of 22 entries" (the screen's titles)."""
        self.filter_text = ""
        self.stretch = stretch
        """The column that takes the width the others leave (None: all fixed)."""
        self.stretch_min = stretch_min
        self.tail_columns = tuple(tail_columns)
        """Columns of paths: cut from the left (``…/projects/ledgerline``), the end kept."""
        self._all: list[tuple[str | None, tuple[Cell, ...], int | None, str]] = []
        self._search: dict[str | None, str] = {}
        self.paged = False
        """The rows are a page of the store's (``show_page``), not every row."""
        self.page_before = 0
        """Paged: rows (matching the filter) before the first row held."""
        self.page_total = 0
        """Paged: rows matching the filter in all."""
        self.unfiltered_total = 0
        """Paged: rows in all, filter or not (``filter "x": 12 of 200,000``)."""
        self.page_wanted: str | None = None
        """Paged: the page asked for and not yet shown (no second ask meanwhile)."""
        self._debounce: Timer | None = None
        self.shown_filter = ""
        """The filter the rows shown answer (a paged table's lags ``filter_text`` while its
        query runs): what ``bench --app`` times as the filtered result."""
        self._asked_filter = ""
        self._filter_typed = 0

    # -- rows --------------------------------------------------------------------------------
    @property
    def total(self) -> int:
        """Every row given, shown or not (paged: every row the store holds)."""
        return self.unfiltered_total if self.paged else len(self._all)

    @property
    def page_after(self) -> int:
        """Paged: rows matching the filter after the last row held."""
        return max(0, self.page_total - self.page_before - self.row_count) if self.paged else 0

    def unpage(self) -> None:
        """Back to holding every row (a short list): the filter applies to the rows held."""
        self.paged = False
        self.page_before = self.page_total = self.unfiltered_total = 0
        self.page_wanted = None

    def start_paging(self, total: int) -> None:
        """The rows are pages of ``total`` (unfiltered): ``show_page`` fills the table."""
        self.paged = True
        self.unfiltered_total = total
        self.page_wanted = None

    def want_page(self, which: str) -> None:
        """Ask the screen for a page (once until it is shown)."""
        if self.paged and self.page_wanted is None:
            self.page_wanted = which
            self._asked_filter = self.filter_text
            self.post_message(self.PageWanted(self, which))

    def page_shown(self, before: int, total: int) -> None:
        """The rows just added are the page after ``before`` rows of ``total``."""
        self.page_before = before
        self.page_total = total
        self.page_wanted = None
        self.shown_filter = self._asked_filter

    def add_row(self, *cells: Cell, height: int | None = 1, key: str | None = None,
                label: Any = None, search: str = "") -> RowKey:
        """Add a row; ``search``: more text the filter looks in besides the cells (a row's
        whole text, of which a cell shows the start)."""
        if search:
            self._search[key] = search
        haystack = self._haystack(cells, key)
        self._all.append((key, cells, height, haystack))
        if self.filter_text and not self.paged and not matches(haystack, self.filter_text):
            return RowKey(key)  # (a paged table's rows come filtered by the store)
        return super().add_row(*self._fitted(cells), height=height, key=key, label=label)

    def clear(self, columns: bool = False) -> FilterTable:
        self._all.clear()
        self._search.clear()
        super().clear(columns)
        return self

    def update_cell(self, row_key: RowKey | str, column_key: Any, value: Cell, *,
                    update_width: bool = False) -> None:
        """Update a cell whether or not the filter shows its row."""
        keys = list(self.columns)
        index = next((i for i, k in enumerate(keys) if k == column_key or k.value == column_key),
                     None)
        wanted = row_key.value if isinstance(row_key, RowKey) else row_key
        if index is not None:
            for n, (key, cells, height, _) in enumerate(self._all):
                if key == wanted:
                    new = list(cells)
                    new[index] = value
                    self._all[n] = (key, tuple(new), height,
                                    self._haystack(tuple(new), key))
        try:
            super().update_cell(row_key, column_key, self._fit(index or 0, value),
                                update_width=update_width)
        except CellDoesNotExist:
            pass  # hidden by the filter: shown with its new value when it comes back

    def _haystack(self, cells: Iterable[Cell], key: str | None = None) -> str:
        keys = [k.value for k in self.columns]
        chosen = [(_plain(c)) for k, c in zip(keys, cells, strict=False)
                  if not self.filter_columns or k in self.filter_columns]
        extra = self._search.get(key, "") if key is not None else ""
        return " ".join(chosen + ([extra] if extra else []))

    def _fitted(self, cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
        return tuple(self._fit(i, c) for i, c in enumerate(cells))

    def _fit(self, index: int, cell: Cell) -> Cell:
        """A plain ``Text`` cell cut at a word boundary to its fixed-width column."""
        columns = list(self.columns.values())
        if not isinstance(cell, Text) or cell.spans or index >= len(columns):
            return cell
        column = columns[index]
        width = column.width if not column.auto_width else 0
        if width <= 0 or cell.cell_len <= width or "\n" in cell.plain:
            return cell
        key = list(self.columns)[index].value
        shown = ("…" + cell.plain[-(width - 1):] if key in self.tail_columns
                 else clip_words(cell.plain, width))
        return Text(shown, style=cell.style, justify=cell.justify, no_wrap=True, end="")

    # -- the filter ------------------------------------------------------------------------------
    def set_filter(self, text: str) -> None:
        """Show only the rows matching ``text`` (every row when it is blank)."""
        text = text.strip()
        if text == self.filter_text:
            return
        keep = self.cursor_key()
        self.filter_text = text
        if self.paged:  # to the store, once typing rests
            if self._debounce is not None:
                self._debounce.stop()
            self._filter_typed += 1  # (a timer that fired already may still call back)
            self._debounce = self.set_timer(FILTER_DEBOUNCE_S,
                                            partial(self._filter_rested, self._filter_typed))
            return
        self._refill(keep)

    def drop_pending_filter(self) -> None:
        """The screen reads the page it wants itself (the filter just cleared to open a
        row): the page the filter's timer would ask for is not wanted."""
        self._filter_typed += 1
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None

    def _filter_rested(self, typed: int) -> None:
        if typed != self._filter_typed:
            return  # another key came since this timer was set
        self._debounce = None
        self.page_wanted = None  # a new filter: whatever was asked for before is stale
        self.want_page("filter")

    @property
    def filter_words(self) -> list[str]:
        """The filter's words, as a paged table's query matches them."""
        return self.filter_text.lower().split()

    def _refill(self, keep: str | None) -> None:
        """Show ``_all`` again through the filter, the cursor on ``keep`` when it shows."""
        rows = list(self._all)
        if not self.paged:
            self.shown_filter = self.filter_text
        super().clear()
        for key, cells, height, haystack in rows:
            if not self.filter_text or self.paged or matches(haystack, self.filter_text):
                super().add_row(*self._fitted(cells), height=height, key=key)
        self._all = rows
        if keep is not None and keep in self.rows:
            self.move_cursor(row=self.get_row_index(keep), animate=False)
        elif self.row_count:
            self.move_cursor(row=0, animate=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc is a key of the table only while a filter is kept: otherwise it is not shown
        and goes to the screen (restore a zoomed pane, back to a list)."""
        if action == "clear_filter":
            return bool(self.filter_text)
        return super().check_action(action, parameters)

    def action_clear_filter(self) -> None:
        self.set_filter("")
        self.post_message(self.FilterCleared(self))

    # -- the stretching column -------------------------------------------------------------------
    def on_resize(self, event: Resize) -> None:
        self.fit_stretch()

    def fit_stretch(self) -> bool:
        """Give the stretch column the width the others leave; True when it changed (its
        cells are then cut again to the new width)."""
        if self.stretch is None or self.stretch not in self.columns:
            return False
        # room for a vertical scrollbar whether or not one shows yet: rows come after
        width = self.content_region.width - self.styles.scrollbar_size_vertical
        if width <= 0:
            return False
        column = self.columns[self.stretch]  # type: ignore[index]
        others = sum(c.get_render_width(self) for key, c in self.columns.items()
                     if key != self.stretch)
        new = max(self.stretch_min, width - others - 2 * self.cell_padding)
        if new == column.width:
            return False
        column.width = new
        column.auto_width = False
        self._require_update_dimensions = True
        self._refill(self.cursor_key())
        return True

    @property
    def shown(self) -> int:
        return self.row_count

    def summary(self) -> Content | str:
        """``filter "tool": 3 of 22 entries`` while filtered, else ``""``. The typed text is
        shown as typed (``Content``, never read as markup: ``[red]x\\`` stays that)."""
        held = self.page_line()
        if not self.filter_text:
            return held
        shown = self.page_total if self.paged else self.row_count
        line = Content(f'filter "{visible(self.filter_text)}": {shown:,} of '
                       f"{self.total:,} {self.filter_label}")
        return line + f" · {held}" if held else line

    def page_line(self) -> str:
        """Paged: which rows are held, ``rows 1–500 of 200,000`` (else ``""``)."""
        if not self.paged:
            return ""
        if not self.row_count:
            return f"rows 0 of {self.page_total:,}"
        return (f"rows {self.page_before + 1:,}–{self.page_before + self.row_count:,} of "
                f"{self.page_total:,}")

    # -- paging ----------------------------------------------------------------------------------
    def watch_cursor_coordinate(self, old: Coordinate, new: Coordinate) -> None:
        super().watch_cursor_coordinate(old, new)
        if self.paged and self.page_after and old.row < new.row >= self.row_count - NEAR_END:
            self.want_page("next")

    def action_scroll_bottom(self) -> None:
        if self.paged and self.page_after:
            self.want_page("last")
            return
        super().action_scroll_bottom()

    def action_scroll_end(self) -> None:
        """``end`` on a paged table: its last page (on any other: the rightmost column)."""
        if self.paged and self.page_after:
            self.want_page("last")
            return
        super().action_scroll_end()

    def action_scroll_top(self) -> None:
        if self.paged and self.page_before:
            self.want_page("first")
            return
        super().action_scroll_top()

    # -- the cursor ------------------------------------------------------------------------------
    def cursor_key(self) -> str | None:
        """The key of the row under the cursor (None when the table is empty)."""
        if self.row_count == 0:
            return None
        row = min(max(self.cursor_row, 0), self.row_count - 1)
        try:
            return self.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value
        except CellDoesNotExist:
            return None
