"""The base of every store screen: load in a worker, show in the main thread, follow the store,
and the keys every screen shares.

A screen subclasses ``StoreScreen`` and implements ``load_data()`` (runs in a thread worker,
returns plain data, never touches a widget) and ``show_data(data)`` (runs on the main thread);
once the data is shown the screen posts ``Loaded`` (its other loads post it with their part).
While the screen is the one on top, a timer asks the store for ``PRAGMA data_version`` in a thread
worker every ``app.refresh_seconds``; when it moved — a harness or another ``lca-tui`` committed —
the screen follows the change. A screen in the background (another mode, or under a modal) is
not polled; when it comes back it compares the version its data was read at with the one the app
last saw (``LcaApp.known_version``) and follows only if they differ: a switch back costs no
query. The header says that the screen follows the store and when the store file last changed.

Following a change (issue 28): a screen that sets ``FOLLOWS`` keeps the ``ChangeMark`` its data
was read at; on a change a worker asks the store what moved since (``Store.changes_since``, a few
indexed queries), the screen's ``read_changes(changes)`` reads only what that needs (the new
entries, the touched rows) and ``apply_changes(changes, part)`` puts it on screen in place,
the cursor and the scroll kept (``keep_place``); ``Loaded`` says ``changes``. Where a change
cannot be applied in place (``Changes.in_place`` False: an erasure, a redaction, a reindex, a
sensitivity mark; or ``read_changes`` returns ``WHOLE``) the same worker reads the data again
whole (``load_data``) and the screen keeps its cursor on the same record. A screen without
``FOLLOWS`` reloads whole on a change, as before.

Shared keys: ``/`` filters the focused table (or the screen's first), ``z`` maximises the focused
pane (esc or ``z`` restores), ``b`` hides or shows the screen's side pane (``SIDE_PANE``), ``y``
copies the selected id (``selected_id``), ``g`` / ``G`` go to the top and bottom. Below 100
columns the screen has the class ``-narrow``, below 32 rows ``-short``: the stylesheet makes
panes smaller there, and a side pane starts hidden at ``-short`` / ``-narrow`` when
``SIDE_AUTO_HIDE`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ScreenStackError
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Input
from textual.worker import Worker, WorkerState

from store import ReadOnly, plural, visible
from widgets.fmt import ago
from widgets.table import FilterTable
from widgets.text_pane import TextPane

if TYPE_CHECKING:
    from lca_tui.app import LcaApp
    from store import ChangeMark, Changes

NARROW = 100
SHORT = 32
WHOLE: Any = object()
"""What ``read_changes`` returns when the change cannot be applied in place."""


def keep_place(table: DataTable[Any], fill: Any, key: str | None = None) -> None:
    """Run ``fill()`` (which refills ``table``) keeping the cursor on the row with the same key
    (``key``, else the one under the cursor) and that row where it was in view: rows added above
    it scroll the view with it."""
    if key is None and table.row_count:
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    row, y = table.cursor_row, table.scroll_y
    fill()
    if key is not None and key in table.rows:
        new = table.get_row_index(key)
        table.move_cursor(row=new, animate=False, scroll=False)
        table.scroll_to(y=max(0, y + new - row), animate=False, immediate=True)


class FilterInput(Input):
    """The one-line filter above a table: typing filters it, enter returns to the table, esc
    clears the filter and hides the line."""

    DEFAULT_CSS = """
    FilterInput { padding: 0 1; background: $boost; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "clear_filter", "Clear filter", id="filter-clear"),
    ]

    def __init__(self, table: FilterTable, **kwargs: Any) -> None:
        super().__init__(placeholder=f"filter {table.filter_label}: type to narrow, enter "
                         "keeps it, esc clears", compact=True, **kwargs)
        self.table = table

    def action_clear_filter(self) -> None:
        self.value = ""
        self.table.set_filter("")
        self.display = False
        self.table.focus()
        self.screen.post_message(FilterChanged(self.table))


@dataclass
class FilterChanged(Message):
    """A table's filter changed (screens retitle their panes)."""

    table: FilterTable


class StoreScreen(Screen[None]):
    """A screen that reads the store through workers and reloads when the store changes."""

    HELP: ClassVar[str] = ""
    """What the screen shows and how to use it (the ``?`` modal prints it above the keys)."""
    WRITES: ClassVar[frozenset[str]] = frozenset()
    """The actions that write (refused on a read-only store; the palette does not offer them
    there)."""
    SIDE_PANE: ClassVar[str | None] = None
    """The selector of the pane ``b`` hides and shows (None: the screen has none)."""
    SIDE_NAME: ClassVar[str] = "Side pane"
    SIDE_AUTO_HIDE: ClassVar[str | None] = None
    """``-short`` / ``-narrow``: start with the side pane hidden at that size."""
    ALLOW_IN_MAXIMIZED_VIEW: ClassVar[str] = "Header, Footer"
    FOLLOWS: ClassVar[bool] = False
    """Whether the screen applies the store's changes in place (``read_changes`` /
    ``apply_changes``) rather than reloading whole."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", id="filter"),
        Binding("b", "toggle_side", "Panes", id="side",
                tooltip="Hide or show the side pane"),
        Binding("z", "zoom", "Zoom", id="zoom",
                tooltip="Fill the screen with the focused pane (z or esc restores)"),
        Binding("y", "copy_id", "Copy id", show=False, id="copy-id"),
        Binding("g", "top", "Top", show=False, id="top"),
        Binding("G", "bottom", "Bottom", show=False, id="bottom"),
        Binding("x", "export_csv", "Export CSV", show=False, id="export-csv",
                tooltip="Write every row of the table (as filtered) to a CSV file"),
    ]

    @dataclass
    class Fetched(Message):
        """A load worker finished: ``data`` is what ``load_data`` returned."""

        data: Any
        version: int
        changed: str | None = None
        mark: ChangeMark | None = None

    @dataclass
    class ChangesFetched(Message):
        """A follow worker read what moved (``changes``) and what applying it needs (``part``)."""

        changes: Changes
        part: Any
        version: int
        changed: str | None
        token: int

    @dataclass
    class Loaded(Message):
        """Loaded data is on screen. ``part`` says which: ``screen`` for every ``load_data``
        shown; a screen's own loads name theirs (``counts``, ``entries``, ``detail``, ``rows``,
        ``preview``, ``health``, ``full`` / ``tail``, ``pressure``, ``trace``), and so does each
        action finished (``erasure`` / ``redaction``, ``decision`` — failed or not —, ``pass``,
        ``fix``, ``search``, ``recall``) and a long text's lines wrapped in a ``TextPane``
        (``wrap``). It bubbles to the app (which hands it to the tour, to place its row), and
        tests wait on it and count it (``tests.helpers_shell.LoadLog``)."""

        screen: StoreScreen
        part: str = "screen"

    @dataclass
    class VersionSeen(Message):
        """The store's data_version as the watch worker last read it."""

        version: int
        changed: str | None = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._seen_version: int | None = None
        self._load_pending = False
        self._watching = False
        self._store_changed: str | None = None
        self._side: bool | None = None  # None: as the size says
        self._mark: ChangeMark | None = None
        self._follow_token = 0  # a whole read makes a follow read still under way stale
        self.last_export: Path | None = None
        """The CSV file ``x`` wrote last (None before the first)."""

    @property
    def lca(self) -> LcaApp:
        return self.app  # type: ignore[return-value]

    @property
    def loaded_once(self) -> bool:
        """Whether a whole load (``load_data``) is on screen: what a screen shows early (the
        Overview's counts) is not one."""
        return self._seen_version is not None

    def refused_read_only(self, action: str) -> bool:
        """On a store opened read-only: say (one line) that ``action`` ("approving a
        proposal") is refused, and return True; the caller then does nothing."""
        if not self.lca.store.read_only:
            return False
        self.notify(str(ReadOnly(action)), severity="error", markup=False, timeout=6)
        return True

    # -- to implement --------------------------------------------------------------------
    def load_early(self) -> None:
        """What the screen can show before the store is open (in the load worker, before it
        waits for the store; no widgets here): post a message, as the Overview posts its counts
        read without the ORM (``LcaApp.early_listings``). Called only while the store opens."""

    def load_data(self) -> Any:
        """Read what the screen shows (in a worker thread: no widgets here)."""
        return None

    def show_data(self, data: Any) -> None:
        """Put loaded data on screen (main thread)."""

    def read_changes(self, changes: Changes) -> Any:
        """What applying ``changes`` needs, read in the follow worker (no widgets here);
        ``WHOLE``: read the data again whole instead. Only called for ``changes.in_place``."""
        return WHOLE

    def apply_changes(self, changes: Changes, part: Any) -> None:
        """Put what ``read_changes`` read on screen, in place (main thread)."""

    def selected_id(self) -> str | None:
        """The id of what is selected (``y`` copies it): by default the focused table's row."""
        table = self.focused if isinstance(self.focused, FilterTable) else None
        return table.cursor_key() if table is not None else None

    # -- lifecycle -----------------------------------------------------------------------
    def on_mount(self) -> None:
        for footer in self.query(Footer):  # room for every key at 80 columns
            footer.compact = True
        self.set_interval(self.lca.refresh_seconds, self._tick, name="store-watch")
        self._show_status()
        self.reload()

    def on_screen_resume(self) -> None:
        """Back on top: reload only if the store changed since this screen's data was read,
        as the app last saw it (``LcaApp.known_version``, kept by whichever screen polled):
        no query here; this screen's own poll follows within ``app.refresh_seconds``."""
        known = self.lca.known_version
        self._store_changed = self.lca.known_changed or self._store_changed
        self._show_status()
        if self._seen_version is not None and known is not None \
                and known != self._seen_version and not self._load_pending:
            self.follow()

    def reload(self) -> None:
        """Load again (in a worker); the latest request wins."""
        self._load_pending = True
        self._follow_token += 1
        self._load()

    def follow(self) -> None:
        """The store changed: apply what moved in place (``FOLLOWS``), else reload whole."""
        if not self.FOLLOWS or self._mark is None:
            self.reload()
            return
        self._load_pending = True
        self._follow_token += 1
        self._follow(self._mark, self._follow_token)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self) -> None:
        if not self.lca.store_opened:
            self.load_early()
        version = self.lca.data_version()
        self.lca.follow_erasures()
        mark = self.lca.store.changes_since().now if self.FOLLOWS else None
        data = self.load_data()
        self.post_message(self.Fetched(data, version, self.lca.store_changed_at(), mark))

    @work(thread=True, exclusive=True, group="follow", exit_on_error=False)
    def _follow(self, mark: ChangeMark, token: int) -> None:
        version = self.lca.data_version()
        self.lca.follow_erasures()
        changes = self.lca.store.changes_since(mark)
        part = self.read_changes(changes) if changes.in_place else WHOLE
        changed = self.lca.store_changed_at()
        if part is WHOLE:
            self.post_message(self.Fetched(self.load_data(), version, changed, changes.now))
        else:
            self.post_message(self.ChangesFetched(changes, part, version, changed, token))

    @on(ChangesFetched)
    def _on_changes(self, message: ChangesFetched) -> None:
        message.stop()
        if message.token != self._follow_token:
            return  # a whole read was asked for since: it has the change
        self._seen_version = message.version
        self.lca.known_version = message.version
        self._load_pending = False
        self._mark = message.changes.now
        self._store_changed = message.changed or self._store_changed
        if message.changes.any:
            self.apply_changes(message.changes, message.part)
        self._show_status()
        self.loaded("changes")

    @on(Fetched)
    def _on_fetched(self, message: Fetched) -> None:
        message.stop()
        if message.mark is not None:
            self._mark = message.mark
        first = not self.loaded_once
        self._seen_version = message.version
        self.lca.known_version = message.version  # a fresh read: what the app knows now
        self._load_pending = False
        self._store_changed = message.changed or self._store_changed
        self.show_data(message.data)
        self._show_status()
        self.loaded()
        if first:  # its widgets and data live as long as the app
            self.call_after_refresh(self.lca.keep_alive)

    def loaded(self, part: str = "screen") -> None:
        """Say that ``part``'s data is on screen (``Loaded``)."""
        self.post_message(self.Loaded(self, part))

    @on(TextPane.Wrapped)
    def _text_wrapped(self, message: TextPane.Wrapped) -> None:
        message.stop()
        self.loaded("wrap")

    # -- following the store ---------------------------------------------------------------
    def _tick(self) -> None:
        try:
            current = self.app.screen is self
        except ScreenStackError:  # the app is closing: its screens are gone
            return
        if not current or self._load_pending or self._watching:
            return  # (a read still under way is never cancelled by the next tick's)
        self._watching = True
        self._check_version()

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False)
    def _check_version(self) -> None:
        self.post_message(self.VersionSeen(self.lca.data_version(),
                                           self.lca.store_changed_at()))

    @on(VersionSeen)
    def _on_version(self, message: VersionSeen) -> None:
        message.stop()
        self._watching = False
        self.lca.known_version = message.version
        self.lca.known_changed = message.changed or self.lca.known_changed
        self._store_changed = message.changed or self._store_changed
        self._show_status()
        if self._seen_version is not None and message.version != self._seen_version \
                and not self._load_pending:
            self.follow()

    def _show_status(self) -> None:
        """The header: the store's name, that this screen follows it, when it last changed."""
        if not self.lca.store_opened:  # the app opens it after its first frame
            self.sub_title = "opening the store…"
            return
        parts = [visible(self.lca.store.url if self.lca.store.url is not None
                         else self.lca.store.path.name), "following"]
        if self._store_changed is not None:
            parts.append(f"changed {ago(self._store_changed, self.lca.now())}")
        self.sub_title = " · ".join(parts)

    # -- errors ------------------------------------------------------------------------------
    @on(Worker.StateChanged)
    def _on_worker_state(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            self._load_pending = False
            if event.worker.group == "watch":
                self._watching = False
            error = event.worker.error
            self.notify(f"{type(error).__name__}: {error}", title="lca-tui: a worker failed",
                        severity="error", markup=False, timeout=10)
            self.show_error(event.worker.group, error)

    def show_error(self, group: str, error: BaseException | None) -> None:
        """Show a failed worker's error where its result would have gone (optional)."""

    # -- size --------------------------------------------------------------------------------
    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")
        self.set_class(event.size.height < SHORT, "-short")
        self._apply_side()

    def side_visible(self) -> bool:
        """Whether the side pane shows: as toggled with ``b``, else as the size says."""
        if self._side is not None:
            return self._side
        auto = self.SIDE_AUTO_HIDE
        return not (auto is not None and self.has_class(auto))

    def _apply_side(self) -> None:
        if self.SIDE_PANE is None:
            return
        for pane in self.query(self.SIDE_PANE):
            pane.display = self.side_visible()

    # -- shared keys -------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_side":
            return self.SIDE_PANE is not None
        if action == "filter":
            return bool(self.query(FilterTable))
        return True

    def action_toggle_side(self) -> None:
        """Hide or show the side pane (the choice holds until the app closes)."""
        self._side = not self.side_visible()
        self._apply_side()
        if self.SIDE_PANE is None:
            return
        panes = list(self.query(self.SIDE_PANE))
        if self._side:  # shown: put the cursor in it
            for pane in panes:
                target = next((w for w in pane.walk_children(Widget, with_self=True)
                               if w.focusable), None)
                if target is not None:
                    target.focus()
                    return
        elif self.focused is not None and any(
                self.focused in pane.walk_children(with_self=True) for pane in panes):
            self.call_after_refresh(self.focus_next)

    def action_zoom(self) -> None:
        """Maximise the focused pane to the whole screen, or restore it."""
        if self.maximized is not None:
            self.minimize()
            return
        target = self._pane_of(self.focused)
        if target is not None:
            self.maximized = target

    def _pane_of(self, widget: Widget | None) -> Widget | None:
        node: Any = widget
        while isinstance(node, Widget) and node is not self:
            if node.has_class("panel"):
                return node
            node = node.parent
        return widget

    def export_table(self) -> DataTable[Any] | None:
        """The table ``x`` exports: the focused one, else the first one shown."""
        focused = self.focused
        if isinstance(focused, DataTable):
            return focused
        return next((t for t in self.query(DataTable) if t.display), None)

    def action_export_csv(self, table_id: str | None = None) -> None:
        """Write every row of the table (``table_id``, else ``export_table``) as filtered to
        a CSV file in ``app.export_dir`` (default: the current folder), and say where."""
        from widgets.table_export import write_csv

        table = (self.query_one(f"#{table_id}", DataTable) if table_id
                 else self.export_table())
        if table is None:
            self.notify("No table on this screen to export.", severity="warning")
            return
        folder = Path(str(self.lca.store.settings["app.export_dir"]).strip() or ".")
        try:
            path, rows = write_csv(table, folder, table.id or "table")
        except OSError as exc:
            self.notify(f"cannot export to {folder}: {exc.strerror or exc}",
                        severity="error", markup=False)
            return
        self.last_export = path
        self.notify(f"exported {plural(rows, 'row')} of {table.id} to {path}", markup=False)

    def action_copy_id(self) -> None:
        value = self.selected_id()
        if not value:
            self.notify("Nothing selected to copy here.", severity="warning")
            return
        self.lca.copy_id(value, self.copy_what(value))

    def copy_what(self, value: str) -> str:
        """What ``y`` copied, for its message ("copied trace id 13", not "copied 13")."""
        if value.startswith("memory "):
            return ""  # the value says it
        if "#" in value:
            return "entry"
        return getattr(self, "COPY_WHAT", "")

    def action_top(self) -> None:
        self._jump(top=True)

    def action_bottom(self) -> None:
        self._jump(top=False)

    def _jump(self, top: bool) -> None:
        widget = self.focused
        if isinstance(widget, DataTable):
            widget.action_scroll_top() if top else widget.action_scroll_bottom()
        elif widget is not None:
            target = widget if widget.allow_vertical_scroll else self._pane_of(widget)
            if target is not None:
                target.scroll_home(animate=False) if top else target.scroll_end(animate=False)

    # -- the filter --------------------------------------------------------------------------
    def filter_target(self) -> FilterTable | None:
        """The table ``/`` filters: the focused one, else the first shown."""
        if isinstance(self.focused, FilterTable):
            return self.focused
        if isinstance(self.focused, FilterInput):
            return self.focused.table
        shown = [t for t in self.query(FilterTable) if t.display and t.parent is not None
                 and t.parent.display]
        return shown[0] if shown else None

    def action_filter(self) -> None:
        table = self.filter_target()
        if table is None:
            return
        field = self._filter_input(table)
        field.display = True
        field.focus()

    def _filter_input(self, table: FilterTable) -> FilterInput:
        found = [f for f in self.query(FilterInput) if f.table is table]
        if found:
            return found[0]
        field = FilterInput(table, id=f"{table.id}-filter" if table.id else None)
        table.parent.mount(field, before=table)  # type: ignore[union-attr]
        return field

    @on(Input.Changed)
    def _filter_changed(self, event: Input.Changed) -> None:
        if isinstance(event.input, FilterInput):
            event.stop()
            event.input.table.set_filter(event.value)
            self.post_message(FilterChanged(event.input.table))

    @on(Input.Submitted)
    def _filter_submitted(self, event: Input.Submitted) -> None:
        if isinstance(event.input, FilterInput):
            event.stop()
            if not event.value.strip():
                event.input.display = False
            event.input.table.focus()

    @on(FilterTable.FilterCleared)
    def _filter_cleared(self, event: FilterTable.FilterCleared) -> None:
        """Esc in a table with a kept filter: the filter's line goes too, and titles follow."""
        event.stop()
        for field in self.query(FilterInput):
            if field.table is event.table:
                field.value = ""
                field.display = False
        self.post_message(FilterChanged(event.table))
        self.refresh_bindings()

    @on(FilterChanged)
    def _retitle(self, event: FilterChanged) -> None:
        self.filter_changed(event.table)

    def filter_changed(self, table: FilterTable) -> None:
        """A table's filter changed: by default its pane's subtitle says how many rows show."""
        pane = self._pane_of(table)
        if pane is not None and pane is not table:
            pane.border_subtitle = table.summary()
        else:
            table.border_subtitle = table.summary()
