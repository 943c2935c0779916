"""Memories (screen 5): every durable memory in a filterable table; one memory's metadata,
load error, integrity problems and body; its evidence (enter opens the entry in Transcript) and
its supersession chain as a tree.

On a change in the store the screen reads only the memories written or touched since
(``Store.changes_since``, then ``list_memories(ids=…)``) and the integrity problems again: a
changed row is updated in its cells where its place and its filter words hold, else the table is
laid out again from the rows in memory with the cursor on the same memory; the detail is read
again when its memory was touched."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static, Tree

from screens.base import NARROW, FilterInput, StoreScreen, keep_place
from screens.memory_view import (
    body_text,
    evidence_where,
    flags_cell,
    head_text,
    problems_text,
    text_cell,
    yes,
)
from screens.navigation import OpenRecord
from store import (
    IntegrityProblem,
    MemoryDetail,
    MemoryPage,
    MemoryRow,
    NotFound,
    RecordRef,
    plural,
)
from widgets.footer import FitFooter
from widgets.chain_tree import ChainTree
from widgets.safe import cell
from widgets.table import FilterTable

if TYPE_CHECKING:
    from store import Changes

TEXT_MIN = 16
TEXT_WIDTH = 200  # cells are cut again to the stretching column's width
TEXT_ROOM = 40  # the text keeps 16 + this many cells before the tags grow (160 columns)
MEMORY_PAGE = 500
"""Memories read at a time: a store with more is paged (``FilterTable`` paging, the store's
``memory_page``), its ``/`` filter run by the store and its integrity problems read after
the rows are shown."""


@dataclass
class MemoriesData:
    rows: list[MemoryRow]
    problems: list[IntegrityProblem]
    detail: MemoryDetail | None
    paged: bool = False
    before: int = 0
    total: int = 0
    """Memories matching the filter (paged)."""
    unfiltered: int = 0
    active: int = 0


@dataclass
class MemoryPageLoaded(Message):
    """The next page of a paged Memories table."""
    page: MemoryPage
    token: int


@dataclass
class ProblemsLoaded(Message):
    """A paged store's integrity problems, read after its first rows were shown."""
    problems: list[IntegrityProblem]


@dataclass
class MemoryLoaded(Message):
    detail: MemoryDetail
    token: int


@dataclass
class Revealed(Message):
    memory_id: int
    body: str


class MemoriesScreen(StoreScreen):
    """Durable memories and their supersession chains."""

    HELP: ClassVar[str] = (
        "Memories: every durable memory in the store, by type and name: id, type, lifecycle "
        "status (active, superseded, disputed, quarantined, expired), ⚠ when it is part of an "
        "integrity problem and ⚑ when it is flagged as contradicting another memory, "
        "critical (always loaded), whether the agent's loader can read it, hits / prevented "
        "(how often it was used, and how often it prevented a mistake), tags, and its name "
        "with the start of its text.\n\n"
        "Below, the highlighted memory: its metadata and validity interval, the load error "
        "when the loader cannot read it, its integrity problems (supersession cycles, "
        "dangling links, forks, superseded-but-active, pointers that disagree with the "
        "links), contradiction flags, and its text. A secret memory's text stays masked until "
        "r reveals it after a confirmation, recorded in the audit log (r again, or leaving "
        "the screen, hides it). On the right: its evidence — enter on an entry "
        "opens it in Transcript — and its supersession chain as a tree, the newest memory at "
        "the top and under each memory the ones it replaced, with validity intervals and the "
        "proposal that made each link (enter on a memory shows it here).\n\n"
        "Keys: / filters the table (every word must appear: a status, a type, a tag, a word "
        "of the name or text), p opens the proposal behind the memory (or the chain link "
        "selected) on the Proposals screen, z maximises the focused pane (esc restores), b "
        "hides or shows the side pane, y copies the memory's id, g / G top and bottom. The "
        "table follows the store: an approval elsewhere shows here by itself."
    )
    AUTO_FOCUS = "#memory-table"
    SIDE_PANE = "#memory-side"
    SIDE_NAME = "Evidence and chain"
    OPENS: ClassVar[frozenset[str]] = frozenset({"memory"})
    COPY_WHAT = "memory"  # y says what it copied
    FOLLOWS = True
    WRITES: ClassVar[frozenset[str]] = frozenset({"reveal"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "reveal", "Reveal", id="memories-reveal"),
        Binding("o", "open_evidence", "Open entry", show=False, id="memories-open-entry"),
        Binding("p", "open_proposal", "Proposal", id="memories-proposal"),
        Binding("h", "history", "History", id="memories-history"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: list[MemoryRow] = []
        self.memory_page = MEMORY_PAGE
        """Memories read at a time (a store with more is paged)."""
        self._window: tuple[tuple[str, str, int] | None, int | None, bool] = (None, None, False)
        """Paged: where the rows held start (after a key, at a memory, or the last page)."""
        self._words: tuple[str, ...] = ()
        """Paged: the filter's words, for the store's query."""
        self._active = 0
        self._page_token = 0
        self._detail_asked: tuple[int, int] | None = None
        self.problems: dict[int, list[IntegrityProblem]] = {}
        self.detail: MemoryDetail | None = None
        self.selected: int | None = None
        self.revealed: dict[int, str] = {}
        self._token = 0
        self._narrow: bool | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="memories"):
            yield FilterTable(id="memory-table", classes="panel", filter_label="memories",
                              stretch="text")
            with Horizontal(id="memory-bottom"):
                with VerticalScroll(id="memory-detail", classes="panel"):
                    yield Static(id="md-head", markup=False)
                    yield Static(id="md-problems", markup=False)
                    yield Static(id="md-body", markup=False)
                with Vertical(id="memory-side"):
                    yield FilterTable(id="memory-evidence", classes="panel",
                                      filter_label="evidence", stretch="text", stretch_min=8,
                                      tail_columns=("where",))
                    yield ChainTree(id="memory-chain", classes="panel")
        yield FitFooter()

    def on_mount(self) -> None:
        self.query_one("#memory-table").border_title = "Memories"
        self.query_one("#memory-detail").border_title = "Memory"
        evidence = self.query_one("#memory-evidence", DataTable)
        evidence.border_title = "Evidence"
        evidence.border_subtitle = "enter opens the entry"
        self.query_one("#memory-chain").border_title = "Supersession chain"
        self._columns()

    def on_resize(self, event: Any) -> None:
        if self._narrow != (event.size.width < NARROW):
            self._columns()
            self.refill()

    def _columns(self) -> None:
        narrow = self.size.width < NARROW
        self._narrow = narrow
        table = self.query_one("#memory-table", FilterTable)
        table.clear(columns=True)
        cols: list[tuple[Any, str, int]] = [
            (Text("id", justify="right"), "id", 3), ("type", "type", 9),
            ("status", "status", 10), ("", "flags", 2), ("crit", "crit", 4),
            ("load", "load", 4), (Text("hits/prev" if not narrow else "h/p", justify="right"),
                                  "hp", 9 if not narrow else 5)]
        if not narrow:
            cols.append(("tags", "tags", 16))
        cols.append(("name — text", "text", TEXT_MIN))
        if not narrow:  # room to spare (160 columns): tags whole (`schema, ledger`), not `schema,…`
            spare = self.size.width - 4 - sum(w + 2 for _, _, w in cols) - TEXT_ROOM
            cols = [(label, key, width + (min(16, max(0, spare)) if key == "tags" else 0))
                    for label, key, width in cols]
        for label, key, width in cols:
            table.add_column(label, key=key, width=width)
        table.fit_stretch()
        evidence = self.query_one("#memory-evidence", FilterTable)
        evidence.clear(columns=True)
        evidence.add_column("where", key="where", width=18 if not narrow else 13)
        evidence.add_column("text", key="text", width=8)
        evidence.fit_stretch()
        if self.detail is not None:
            self._show_evidence(self.detail)

    def _error(self) -> Style:
        return Style(color=self.app.current_theme.error)

    # -- loading -------------------------------------------------------------------------
    def load_data(self) -> MemoriesData:
        store, limit = self.lca.store, self.memory_page
        (after, at, last), words = self._window, self._words
        elsewhere = after is not None or at is not None or last or bool(words)
        page = store.memory_page(limit=0 if elsewhere else limit)  # (0: the counts only)
        unfiltered = page.total
        paged = unfiltered > limit
        if paged and elsewhere:
            page = store.memory_page(after=after, at=at, last=last, limit=limit, words=words)
        elif elsewhere:
            page = store.memory_page(limit=limit)
        rows = page.rows
        wanted = self.selected if any(r.id == self.selected for r in rows) else (
            (rows[-1].id if last else rows[0].id) if rows else None)
        # a paged store's detail and integrity problems come after its rows: both read every
        # memory (the supersession graph), 14 s of CPU at 200,000 memories
        detail = store.memory_detail(wanted) if wanted is not None and not paged else None
        problems = [] if paged else store.integrity()
        return MemoriesData(rows, problems, detail, paged, page.before, page.total,
                            unfiltered, page.active)

    def read_changes(self, changes: Changes) -> MemoriesData | None:
        """The memories touched since, the integrity problems, the selected one's detail if it
        is among them (a paged store: nothing here, ``apply_changes`` reads its page again)."""
        if not changes.memories or self.query_one("#memory-table", FilterTable).paged:
            return None
        store = self.lca.store
        rows = store.list_memories(ids=changes.memories)
        selected = self.selected
        detail = None
        if selected is not None and selected in changes.memories:
            try:
                detail = store.memory_detail(selected)
            except NotFound:
                detail = None
        return MemoriesData(rows, store.integrity(), detail)

    def apply_changes(self, changes: Changes, part: MemoriesData | None) -> None:
        table = self.query_one("#memory-table", FilterTable)
        if part is None:
            if changes.memories and table.paged:
                self.reload()  # the page shown, read again (its window is kept)
            return
        before = self.rows
        fresh = {r.id: r for r in part.rows}
        merged = [fresh.pop(r.id, r) for r in before] + list(fresh.values())
        if fresh:
            merged.sort(key=lambda r: (r.type or "", r.name, r.id))
        old_problems = self.problems
        self._set_problems(part.problems)
        self.rows = merged
        narrow = "tags" not in [k.value for k in table.columns]
        olds = {r.id: r for r in before}
        same = [r.id for r in merged] == [r.id for r in before] and \
            old_problems == self.problems and all(
                self._cells(olds[r.id], narrow)[1] == self._cells(r, narrow)[1]
                for r in part.rows)
        if same:  # the touched rows' cells only
            keys = [k.value for k in table.columns]
            for r in part.rows:
                for key, value in zip(keys, self._cells(r, narrow)[0], strict=False):
                    table.update_cell(str(r.id), key, value)
            self._title(table)
        else:
            keep_place(table, self.refill)
        if part.detail is not None and part.detail.row.id == self.selected:
            self._show_detail(part.detail)

    def _set_problems(self, problems: list[IntegrityProblem]) -> None:
        self.problems = {}
        for p in problems:
            for mid in p.memory_ids:
                self.problems.setdefault(mid, []).append(p)

    def show_data(self, data: MemoriesData) -> None:
        table = self.query_one("#memory-table", FilterTable)
        if data.paged:
            if not table.paged:
                self._load_problems()
            table.start_paging(data.unfiltered)
        else:
            table.unpage()
        self._active = data.active
        if data.rows and self._window[2]:  # the last page: on its last row
            self.selected = data.rows[-1].id
        # a reload (the store changed) reads the same page again
        self._window = (None, data.rows[0].id if data.paged and data.before and data.rows
                        else None, False)
        self.rows = data.rows
        if not data.paged:  # (a paged store's come apart, ``_load_problems``)
            self._set_problems(data.problems)
        if self.selected is None and data.detail is not None:
            self.selected = data.detail.row.id
        self.refill()
        table.page_shown(data.before, data.total)
        self._title(table)
        if data.paged and self.selected is not None:
            if self.detail is None or self.detail.row.id != self.selected:
                self._request_detail(self.selected)
        elif data.detail is not None and data.detail.row.id == self.selected:
            self._show_detail(data.detail)
        elif not data.rows:
            self._show_detail(None)

    def refill(self) -> None:
        """Fill the table from the loaded rows (its filter applies as it fills)."""
        table = self.query_one("#memory-table", FilterTable)
        narrow = "tags" not in [k.value for k in table.columns]
        with self.prevent(DataTable.RowHighlighted):
            table.clear()
            for r in self.rows:
                self._add(table, r, narrow)
            if self.selected is not None and str(self.selected) in table.rows:
                table.move_cursor(row=table.get_row_index(str(self.selected)), animate=False)
        self._follow_cursor(table)
        self._title(table)

    def _add(self, table: FilterTable, r: MemoryRow, narrow: bool) -> None:
        """One memory's row (the filter of a short list applies as it is added)."""
        cells, search = self._cells(r, narrow)
        table.add_row(*cells, key=str(r.id), search=search)

    def _cells(self, r: MemoryRow, narrow: bool) -> tuple[list[Any], str]:
        """A memory's cells and the words the filter looks at besides them."""
        cells: list[Any] = [
            Text(str(r.id), justify="right"), cell(r.type or "-"),
            cell(r.status, style="" if r.status == "active" else "italic"),
            flags_cell(r, self.problems), cell(yes(r.critical)),
            cell("" if r.loadable else "NO", style="bold"),
            Text(f"{r.hits:,}/{r.prevented:,}", justify="right")]
        if not narrow:
            cells.append(cell(", ".join(r.tags)))
        cells.append(text_cell(r, TEXT_WIDTH))
        # the filter looks at the whole name, description and text (the cell shows their
        # start) and every tag, a secret memory's text excepted
        words = [r.name, r.description or "", ", ".join(r.tags)]
        if not r.masked and r.text:
            words.append(r.text)
        return cells, " ".join(words)

    # -- pages of a long list ------------------------------------------------------------
    @on(FilterTable.PageWanted, "#memory-table")
    def _page_wanted(self, event: FilterTable.PageWanted) -> None:
        """A paged table wants more: the next page (added below), or the first, the last,
        the first with a changed filter (read again as the screen's data)."""
        event.stop()
        self._words = tuple(event.table.filter_words)
        if event.which == "next" and self.rows:
            last = self.rows[-1]
            self._page_token += 1
            self._load_next((last.type or "", last.name, last.id), self._words,
                            self._page_token)
            return
        self._window = (None, None, event.which == "last")
        if event.which in ("filter", "first", "last"):
            self.selected = None
        self.reload()

    @work(thread=True, exclusive=True, group="memory-page", exit_on_error=False)
    def _load_next(self, after: tuple[str, str, int], words: tuple[str, ...],
                   token: int) -> None:
        page = self.lca.store.memory_page(after=after, limit=self.memory_page, words=words)
        self.post_message(MemoryPageLoaded(page, token))

    @on(MemoryPageLoaded)
    def _next_loaded(self, message: MemoryPageLoaded) -> None:
        table = self.query_one("#memory-table", FilterTable)
        if message.token != self._page_token or not table.paged:
            return
        held = {r.id for r in self.rows}
        new = [r for r in message.page.rows if r.id not in held]
        self.rows.extend(new)
        narrow = "tags" not in [k.value for k in table.columns]
        with self.prevent(DataTable.RowHighlighted):
            for r in new:
                self._add(table, r, narrow)
        table.page_shown(table.page_before, message.page.total)
        self._title(table)
        self.loaded("rows")

    @work(thread=True, exclusive=True, group="memory-problems", exit_on_error=False)
    def _load_problems(self) -> None:
        self.post_message(ProblemsLoaded(self.lca.store.integrity()))

    @on(ProblemsLoaded)
    def _problems_loaded(self, message: ProblemsLoaded) -> None:
        self._set_problems(message.problems)
        table = self.query_one("#memory-table", FilterTable)
        for r in self.rows:
            if r.id in self.problems:
                table.update_cell(str(r.id), "flags", flags_cell(r, self.problems))
        self._title(table)
        self.loaded("integrity")

    def _title(self, table: FilterTable) -> None:
        if table.paged:
            table.border_title = f"Memories · {table.total:,} · {self._active:,} active"
            table.border_subtitle = table.summary()
            return
        active = sum(1 for r in self.rows if r.status == "active")
        table.border_title = f"Memories · {len(self.rows)} · {active} active"
        table.border_subtitle = table.summary() or (
            f"{len(self.problems)} with integrity problems" if self.problems else "")

    def _follow_cursor(self, table: FilterTable) -> None:
        """When the filter hides the selected memory, show the row the cursor is on; when it
        hides every row, the detail says so instead of showing a memory not in the table."""
        key = table.cursor_key()
        if key is None and table.filter_text and self.rows:
            self.selected = None
            self._token += 1  # a detail still loading is for a row no longer shown
            self._show_no_match(table.filter_text)
            return
        if key is not None and (self.selected is None or str(self.selected) not in table.rows):
            self.selected = int(key)
            self._request_detail(self.selected)

    def _show_no_match(self, text: str) -> None:
        """The detail and side panes emptied: no memory matches the filter."""
        self.detail = None
        self.revealed.clear()
        self.query_one("#memory-detail", VerticalScroll).border_title = "Memory"
        self.query_one("#md-head", Static).update(Text(
            f"No memory matches the filter {text!r}: esc in the filter clears it.",
            style="dim", end=""))
        self.query_one("#md-problems", Static).display = False
        self.query_one("#md-body", Static).update("")
        evidence = self.query_one("#memory-evidence", DataTable)
        evidence.clear()
        evidence.border_title = "Evidence"
        tree = self.query_one("#memory-chain", ChainTree)
        tree.clear()
        tree.border_title = "Supersession chain"
        self.refresh_bindings()

    def filter_changed(self, table: FilterTable) -> None:
        super().filter_changed(table)
        if table.id == "memory-table":
            self._follow_cursor(table)
            self._title(table)

    @on(DataTable.RowHighlighted, "#memory-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        if key is not None and key not in event.data_table.rows:
            return  # from before the filter hid the row (typing fast): not the cursor now
        if key is not None and int(key) != self.selected:
            self.selected = int(key)
            self._request_detail(int(key))

    def _request_detail(self, memory_id: int) -> None:
        if self._detail_asked == (memory_id, self._token):
            return  # asked already, still loading
        self._token += 1
        self._detail_asked = (memory_id, self._token)
        self._load_detail(memory_id, self._token)

    @work(thread=True, exclusive=True, group="memory-detail", exit_on_error=False)
    def _load_detail(self, memory_id: int, token: int) -> None:
        self.post_message(MemoryLoaded(self.lca.store.memory_detail(memory_id), token))

    @on(MemoryLoaded)
    def _detail_loaded(self, message: MemoryLoaded) -> None:
        if message.token == self._token:
            self._detail_asked = None
        if message.token == self._token and message.detail.row.id == self.selected:
            self._show_detail(message.detail)

    def shown(self) -> RecordRef | None:
        """The memory selected in the table (``Shows``)."""
        return None if self.selected is None else RecordRef("memory", self.selected)

    def open_record(self, ref: RecordRef) -> None:
        self.open_memory(int(ref.id))

    def open_memory(self, memory_id: int) -> None:
        """Show ``memory_id`` (a search hit, a recall candidate, a chain link, a health row)."""
        self.selected = memory_id
        table = self.query_one("#memory-table", FilterTable)
        if table.filter_text and str(memory_id) not in table.rows:
            for field in self.query(FilterInput):
                if field.table is table:
                    field.action_clear_filter()
        if table.paged and str(memory_id) not in table.rows:  # the page it is on
            table.drop_pending_filter()
            self._words = ()
            self._window = (None, memory_id, False)
            self.reload()
        self.refill()
        self._request_detail(memory_id)
        self.query_one("#memory-table", DataTable).focus()

    # -- the detail ----------------------------------------------------------------------
    def _show_detail(self, detail: MemoryDetail | None) -> None:
        if self.detail is None or detail is None or detail.row.id != self.detail.row.id:
            self.revealed.clear()  # a secret is revealed for the memory on screen only
        self.detail = detail
        pane = self.query_one("#memory-detail", VerticalScroll)
        evidence = self.query_one("#memory-evidence", DataTable)
        tree = self.query_one("#memory-chain", ChainTree)
        problems = self.query_one("#md-problems", Static)
        if detail is None:
            self.query_one("#md-head", Static).update(Text(
                "No memories in this store yet: `lca-tui ingest DIR` imports a memory "
                "directory, and approved proposals write new ones.", style="dim", end=""))
            problems.display = False
            self.query_one("#md-body", Static).update("")
            evidence.clear()
            tree.clear()
            return
        pane.border_title = f"Memory #{detail.row.id} · {detail.row.status}"
        self.query_one("#md-head", Static).update(head_text(detail,
                                                            self.lca.store.path.parent))
        issues = problems_text(detail, self._error())
        problems.display = issues is not None
        if issues is not None:
            problems.update(issues)
        self.query_one("#md-body", Static).update(
            body_text(detail, self.revealed.get(detail.row.id)))
        self._show_evidence(detail)
        members = {c.id for c in detail.chain}
        chain_problems = {id(p): p for mid in members for p in self.problems.get(mid, [])}
        for p in detail.problems:
            chain_problems.setdefault(id(p), p)
        tree.show_chain(detail.chain, detail.row.id, list(chain_problems.values()))
        links = sum(len(c.supersedes) for c in detail.chain)
        tree.border_title = (f"Supersession chain · {len(detail.chain)} memories, "
                             f"{plural(links, 'link')}" if links else
                             "Supersession chain · none")
        tree.border_subtitle = "enter shows a memory" if links else ""
        self.loaded("detail")
        self.refresh_bindings()

    def _show_evidence(self, detail: MemoryDetail) -> None:
        table = self.query_one("#memory-evidence", DataTable)
        table.clear()
        for ev in detail.evidence:
            where = Text(evidence_where(ev.session_id, ev.seq, ev.file), end="")
            if ev.span:
                where.append(f" {ev.span[0]}:{ev.span[1]}", style="dim")
            text = ev.excerpt if ev.excerpt is not None else (
                "[secret]" if detail.row.masked else ev.note or "")
            table.add_row(where, cell(text), key=str(ev.id))
        table.border_title = f"Evidence · {len(detail.evidence)}"
        table.display = True

    # -- actions -------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # a key that cannot act on the selected memory is not shown
        if action == "reveal":
            return self.detail is not None and self.detail.row.masked
        if action == "open_proposal":
            return self.detail is not None and bool(self.detail.proposals
                                                    or self._link_proposal())
        return super().check_action(action, parameters)

    def selected_id(self) -> str | None:
        return str(self.selected) if self.selected is not None else None

    def action_reveal(self) -> None:
        if self.detail is None or not self.detail.row.masked:
            return
        mid = self.detail.row.id
        if mid in self.revealed:
            del self.revealed[mid]
            self._show_detail(self.detail)
            return
        if self.refused_read_only("revealing a secret memory (a reveal is recorded in the "
                                  "audit log)"):
            return
        from screens.proposal_modals import ConfirmModal

        def answered(yes: bool | None) -> None:
            if yes and self.detail is not None and self.detail.row.id == mid:
                self._reveal(mid)

        self.app.push_screen(ConfirmModal(
            f"Reveal secret memory {mid}?",
            f"Show the text of secret memory {mid} on this screen.\n\nThe reveal is recorded "
            "in the audit log (who, which memory, when — never the text). It is hidden again "
            "when you leave this screen, or with r."), answered)

    @work(thread=True, exclusive=True, group="reveal", exit_on_error=False)
    def _reveal(self, memory_id: int) -> None:
        try:
            body = self.lca.store.reveal_secret(memory_id)
        except NotFound:
            return
        self.post_message(Revealed(memory_id, body))

    def on_screen_suspend(self) -> None:
        """Leaving the screen (another screen, a modal, a mode) hides a revealed secret."""
        if self.revealed:
            self.revealed.clear()
            if self.detail is not None:
                self._show_detail(self.detail)

    @on(Revealed)
    def _revealed(self, message: Revealed) -> None:
        if self.detail is not None and self.detail.row.id == message.memory_id:
            self.revealed[message.memory_id] = message.body
            self.query_one("#md-body", Static).update(body_text(self.detail, message.body))

    @on(DataTable.RowSelected, "#memory-evidence")
    async def _evidence_selected(self, event: DataTable.RowSelected) -> None:
        await self._open_evidence(event.cursor_row)

    async def action_open_evidence(self) -> None:
        await self._open_evidence(self.query_one("#memory-evidence", DataTable).cursor_row)

    async def _open_evidence(self, row: int) -> None:
        if self.detail is None or not 0 <= row < len(self.detail.evidence):
            return
        ev = self.detail.evidence[row]
        if ev.session_id is None:
            self.notify(f"evidence {ev.id} is {'file ' + ev.file if ev.file else 'a note'}, "
                        "not a transcript entry", markup=False, timeout=4)
            return
        self.post_message(OpenRecord(RecordRef("session", ev.session_id, ev.seq)))

    @on(Tree.NodeHighlighted, "#memory-chain")
    def _chain_moved(self) -> None:
        self.refresh_bindings()  # p follows the link under the cursor

    def action_history(self) -> None:
        """Every version of the memory's chain; a version picked files its revert proposal."""
        from screens.memory_history import HistoryModal
        from screens.proposal_modals import ConfirmModal

        if self.detail is None:
            return
        mid = self.detail.row.id
        try:
            versions = self.lca.store.memory_history(mid)
        except NotFound:
            return
        current = next((v for v in versions if v.current), None)

        def picked(version: int | None) -> None:
            if version is None or self.refused_read_only("reverting a memory (it files a "
                                                         "proposal)"):
                return
            target = f"memory {current.memory_id}" if current else "the current memory"

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self._revert(mid, version)

            self.app.push_screen(ConfirmModal(
                f"Revert to version {version}?",
                f"Files a proposal superseding {target} with the text of version {version}. "
                "It is pending on screen 4 (Proposals), checked like any other; nothing "
                "changes until it is approved."), confirmed)

        self.app.push_screen(HistoryModal(mid, versions), picked)

    def _revert(self, memory_id: int, version: int) -> None:
        from store import ProposalError, StoreError

        try:
            info = self.lca.store.revert_memory(memory_id, version)
        except (ProposalError, NotFound, StoreError) as exc:
            self.notify(str(exc), severity="warning", markup=False, timeout=6)
            return
        self.notify(f"proposal {info.id} filed ({info.status}): review it on screen 4",
                    markup=False, timeout=6)

    @on(Tree.NodeSelected, "#memory-chain")
    def _chain_selected(self, event: Tree.NodeSelected[int]) -> None:
        mid = event.node.data
        if mid is not None and mid != self.selected:
            self.open_memory(int(mid))

    def _link_proposal(self) -> int | None:
        tree = self.query_one("#memory-chain", ChainTree)
        node = tree.cursor_node
        if node is None or node.data is None:
            return None
        link = next((c for c in tree.links if c.id == node.data), None)
        return link.proposal_id if link is not None else None

    async def action_open_proposal(self) -> None:
        if self.detail is None:
            return
        chain_focused = self.focused is self.query_one("#memory-chain")
        target = (self._link_proposal() if chain_focused else None) or (
            self.detail.proposals[-1] if self.detail.proposals else None)
        if target is None:
            self.notify("No proposal made or touched this memory.", timeout=4)
            return
        self.post_message(OpenRecord(RecordRef("proposal", target)))
