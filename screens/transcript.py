"""Transcript: sessions, the selected session's entries verbatim, and search over everything."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import ContentSwitcher, DataTable, Header, Input

from screens.base import StoreScreen
from screens.navigation import OpenRecord
from store import EntryInfo, EntryPage, RecordRef, SearchHit, SessionInfo, agent_label, visible
from widgets.footer import FitFooter
from widgets.entry_view import EntryView
from widgets.fmt import agents_mark, clock, day, plural, short_when, when
from widgets.safe import cell, number
from widgets.table import FilterTable

SEARCH_MODES = ("hybrid", "fts", "semantic")
SETTLE_S = 0.12
"""Seconds the sessions' cursor rests on a row before its entries load: moving through the
list reads no entries for the rows passed (each read and rebuilt the entries table)."""
EXCERPT_MIN = 16
ENTRY_PAGE = 500
"""Entries read at a time: a longer session is paged (``FilterTable`` paging, the store's
``entry_page``), shown in seq order, its ``/`` filter run by the store."""


@dataclass
class EntriesLoaded(Message):
    session_id: str
    agent: str | None
    entries: list[EntryInfo]
    token: int
    which: str = "first"
    """``first`` (a session shown), or the page a paged table asked for (``next``, …)."""
    before: int = 0
    total: int = 0
    unfiltered: int = 0


@dataclass
class SearchDone(Message):
    query: str
    mode: str
    hits: list[SearchHit]


class TranscriptScreen(StoreScreen):
    """Sessions and their entries, verbatim; search."""

    HELP: ClassVar[str] = (
        "Transcript: every session in the store and its entries, exactly as stored.\n\n"
        "Top: the sessions, latest first, with the agents that wrote in them (\"main + 2 "
        "workers\" when subagents worked in the session; the harness's own helpers, such as "
        "Claude Code's compaction summariser and prompt suggester, are not counted as "
        "workers and show in the agent column as compactor and suggester; a Claude Code "
        "1.0.x subagent written inside the main file is the worker sidechain-<id>, shown by "
        "its id); b hides or shows them (they start hidden on a short terminal). Moving the "
        "cursor there shows that session's entries below: sequence number (an entry is named "
        "by its session and seq, e.g. 5ccec58f#12, everywhere in lca-tui), local time, kind "
        "(user, assistant, tool_call, tool_result, reasoning, system, compaction, checkpoint, "
        "event), agent, estimated tokens, and the start of the text (a tool call's tool "
        "first, in brackets). With all agents shown, the main agent's and the workers' "
        "entries are interleaved by time. The pane at the bottom shows the highlighted entry "
        "in full: its header (model and token usage for assistant turns, compaction figures) "
        "and its content verbatim, scrollable. Stored text is shown as text: markup and "
        "terminal escape sequences in it are never interpreted; control characters appear as "
        "\\xNN.\n\n"
        "Keys: `a` cycles an agent filter (all, main, each worker and helper). `/` filters the "
        "focused list as you type (entries by kind or agent, sessions by id, project or "
        "format); esc in the filter clears it. `s` opens search over entries and memories: "
        "enter runs it, ctrl+t switches between hybrid (0.7 cos + 0.3 lex), fts (BM25 only) "
        "and semantic (vectors only); enter on a hit opens its entry in its session (or its "
        "memory); esc closes the results. `z` fills the screen with the focused pane, `y` "
        "copies the selected session id or entry name. The list follows the store: entries "
        "a harness appends appear without a restart.\n\n"
        "Entries marked secret (`lca-tui mark --as secret`) show no text until you press `r` "
        "on one to reveal it; private and secret entries are labelled in the header."
    )
    SIDE_PANE = "#sessions"
    SIDE_NAME = "Sessions"
    SIDE_AUTO_HIDE = "-short"
    OPENS: ClassVar[frozenset[str]] = frozenset({"session"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "search", "Search", id="transcript-search"),
        Binding("ctrl+t", "search_mode", "Search mode", id="transcript-search-mode"),
        Binding("escape", "close_search", "Close search", id="transcript-close-search"),
        Binding("a", "agent_filter", "Agent", id="transcript-agent"),
        Binding("r", "reveal", "Reveal secret", id="transcript-reveal"),
    ]

    def __init__(self, entry_page: int | None = None) -> None:
        super().__init__()
        self.entry_page = ENTRY_PAGE if entry_page is None else entry_page
        """Entries read at a time (a session with more is paged)."""
        self.sessions: list[SessionInfo] = []
        self.session_id: str | None = None
        self.agent: str | None = None
        self.entries: list[EntryInfo] = []
        self.hits: list[SearchHit] = []
        self.search_mode = SEARCH_MODES[0]
        self.searches = 0
        self._token = 0
        self._goto_seq: int | None = None
        self._settle: Timer | None = None
        self._by_id: dict[int, EntryInfo] = {}
        self._one_day: str | None = None
        self._loaded_count: int | None = None
        self._last_search: tuple[str, str] = ("", SEARCH_MODES[0])
        self.revealed: set[int] = set()
        """Ids of secret entries revealed on purpose (``r``); masked again when another
        session is shown."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="transcript"):
            yield FilterTable(id="sessions", classes="panel", filter_label="sessions",
                              filter_columns=("id", "project", "format", "agents"),
                              stretch="project", tail_columns=("project",))
            with Vertical(id="lists", classes="panel"):
                yield Input(id="search", classes="-hidden")
                with ContentSwitcher(initial="entries", id="list-switcher"):
                    yield FilterTable(id="entries", filter_columns=("kind", "agent"),
                                      filter_label="entries", stretch="text")
                    yield FilterTable(id="hits", filter_columns=("source",),
                                      filter_label="hits", stretch="text")
            yield EntryView(id="entry-view", classes="panel")
        yield FitFooter()

    def on_mount(self) -> None:
        # Fixed widths, so a table renders right on its first frame; the text column is
        # added on first fill, when the width it can have is known.
        sessions = self.query_one("#sessions", DataTable)
        sessions.border_title = "Sessions"
        self._apply_side()
        # the id and times first: they are what tells sessions apart at any width
        for label, key, width in (("session", "id", 8), ("started", "started", 16),
                                  ("last entry", "ended", 16),
                                  (Text("entries", justify="right"), "n", 7),
                                  ("agents", "agents", 16), ("format", "format", 11),
                                  ("project", "project", 26)):
            sessions.add_column(label, key=key, width=width)
        entries = self.query_one("#entries", DataTable)
        for label, key, width in ((Text("seq", justify="right"), "seq", 5),
                                  ("time", "ts", 14), ("kind", "kind", 11),
                                  ("agent", "agent", 9),
                                  (Text("tokens", justify="right"), "tokens", 6),
                                  ("text", "text", EXCERPT_MIN)):
            entries.add_column(label, key=key, width=width)
        hits = self.query_one("#hits", DataTable)
        for label, key, width in ((Text("score", justify="right"), "score", 6),
                                  ("cos", "cos", 6), ("lex", "lex", 6),
                                  ("source", "source", 34), ("text", "text", EXCERPT_MIN)):
            hits.add_column(label, key=key, width=width)
        self._set_search_placeholder()
        self._title_lists()
        self.query_one(EntryView).show_note("Select a session to see its entries.")

    # -- sessions --------------------------------------------------------------------------
    def load_data(self) -> list[SessionInfo]:
        return self.lca.store.sessions()

    def show_data(self, data: list[SessionInfo]) -> None:
        self.sessions = data
        table = self.query_one("#sessions", DataTable)
        table.border_title = f"Sessions ({len(data):,})"
        if self.session_id is None and data:
            self.session_id = data[0].id
        with self.prevent(DataTable.RowHighlighted):
            table.clear()
            for s in data:
                table.add_row(cell(s.id[:8], style="dim"), cell(when(s.started_at)),
                              cell(when(s.ended_at)), number(s.entries), cell(agents_mark(s)),
                              cell(s.format), cell(s.project or "-"), key=s.id)
            if self.session_id is not None and self.session_id in table.rows:
                table.move_cursor(row=table.get_row_index(self.session_id), animate=False)
        if not data:
            self.query_one(EntryView).show_note(
                "No sessions in this store yet: `lca-tui ingest PATH...` imports some.")
            return
        current = self._session()
        if current is not None and current.entries != self._loaded_count:
            self._request_entries()

    def _session(self) -> SessionInfo | None:
        return next((s for s in self.sessions if s.id == self.session_id), None)

    @on(DataTable.RowHighlighted, "#sessions")
    def _session_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        if key and key != self.session_id:
            self.session_id = key
            self.agent = None
            self._token += 1  # an older session's entries, still loading, are not shown
            if self._settle is not None:
                self._settle.stop()
            self._settle = self.set_timer(SETTLE_S, self._settled)

    def _settled(self) -> None:
        self._settle = None
        self._request_entries()

    def open_record(self, ref: RecordRef) -> None:
        self.open_session(str(ref.id), None if ref.at is None else int(ref.at))

    def open_session(self, session_id: str, seq: int | None = None) -> None:
        """Show ``session_id`` (from Overview or a search hit), at entry ``seq`` if given."""
        self.session_id = session_id
        self.agent = None
        self._goto_seq = seq
        table = self.query_one("#sessions", DataTable)
        if session_id in table.rows:
            with self.prevent(DataTable.RowHighlighted):
                table.move_cursor(row=table.get_row_index(session_id), animate=False)
        self._close_search()
        self._request_entries()
        self.query_one("#entries", DataTable).focus()

    # -- entries ---------------------------------------------------------------------------
    def _request_entries(self) -> None:
        if self._settle is not None:  # asked for at once (a search hit, the agent filter)
            self._settle.stop()
            self._settle = None
        if self.session_id is None:
            return
        self._token += 1
        table = self.query_one("#entries", FilterTable)
        self._load_entries(self.session_id, self.agent, self._token, "first",
                           words=tuple(table.filter_words), at_seq=self._goto_seq)

    @on(FilterTable.PageWanted, "#entries")
    def _page_wanted(self, event: FilterTable.PageWanted) -> None:
        """A paged session's table wants more: the next page, the last, the first (with the
        filter as it is now)."""
        event.stop()
        if self.session_id is None:
            return
        table = event.table
        after = ((self.entries[-1].seq, self.entries[-1].id)
                 if event.which == "next" and self.entries else None)
        self._token += 1
        self._load_entries(self.session_id, self.agent, self._token, event.which,
                           words=tuple(table.filter_words), after=after,
                           unfiltered=table.unfiltered_total)

    @work(thread=True, exclusive=True, group="entries", exit_on_error=False)
    def _load_entries(self, session_id: str, agent: str | None, token: int, which: str,
                      words: tuple[str, ...] = (), after: tuple[int, int] | None = None,
                      unfiltered: int = 0, at_seq: int | None = None) -> None:
        store, limit = self.lca.store, self.entry_page
        # all agents: interleaved by time, so the time column never runs backwards (a
        # session too long for one page is shown in seq order: time is no key to page by)
        by_time = agent is None
        if which == "first":
            page = store.entry_page(session_id, agent, limit=limit, by_time=by_time)
            unfiltered = page.total
            if page.total > limit and (words or at_seq is not None):
                start = None if at_seq is None or words else (at_seq - 1, 2**62)
                page = store.entry_page(session_id, agent, after=start, limit=limit,
                                        words=words)
        else:
            page = store.entry_page(session_id, agent, after=after, last=which == "last",
                                    limit=limit, words=words)
        self.post_message(self._page_message(session_id, agent, token, which, page,
                                             unfiltered))

    @staticmethod
    def _page_message(session_id: str, agent: str | None, token: int, which: str,
                      page: EntryPage, unfiltered: int) -> EntriesLoaded:
        return EntriesLoaded(session_id, agent, page.rows, token, which, page.before,
                             page.total, unfiltered)

    @on(EntriesLoaded)
    def _entries_loaded(self, message: EntriesLoaded) -> None:
        if message.token != self._token:
            return
        table = self.query_one("#entries", FilterTable)
        if message.which == "next":
            self._append_page(table, message)
            return
        keep = self._highlighted_entry_id()
        same_session = bool(self.entries) and self.entries[0].session_id == message.session_id
        if not same_session:
            self.revealed.clear()
        if message.which == "first":
            if message.unfiltered > self.entry_page:
                table.start_paging(message.unfiltered)
            else:
                table.unpage()
        self.entries = message.entries
        self._by_id = {e.id: e for e in message.entries}
        session = self._session()
        self._loaded_count = session.entries if session else None
        days = {day(e.ts) for e in message.entries} - {None}
        self._one_day = next(iter(days)) if len(days) == 1 else None
        stamp = clock if self._one_day else short_when
        time_column = table.columns.get("ts")  # type: ignore[call-overload]
        if time_column is not None and time_column.width != (8 if self._one_day else 14):
            time_column.width = 8 if self._one_day else 14
            table.fit_stretch()
        with self.prevent(DataTable.RowHighlighted):
            table.clear()
            for e in message.entries:
                table.add_row(number(e.seq), cell(stamp(e.ts)), cell(e.kind),
                              cell(agent_label(e.agent, short=True)), number(e.tokens),
                              self._text_cell(e), key=str(e.id))
            table.page_shown(message.before, message.total)
        target = (self.entries[-1].id if message.which == "last" and self.entries
                  else self._target_entry(keep if same_session else None))
        if target is not None and str(target) in table.rows:
            table.move_cursor(row=table.get_row_index(str(target)), animate=False)
        self._show_highlighted()
        self._title_lists()
        self.loaded("entries")

    def _append_page(self, table: FilterTable, message: EntriesLoaded) -> None:
        """The next page of a paged session, added below the rows held (the cursor stays)."""
        stamp = clock if self._one_day else short_when
        with self.prevent(DataTable.RowHighlighted):
            for e in message.entries:
                if e.id in self._by_id:
                    continue
                self.entries.append(e)
                self._by_id[e.id] = e
                table.add_row(number(e.seq), cell(stamp(e.ts)), cell(e.kind),
                              cell(agent_label(e.agent, short=True)), number(e.tokens),
                              self._text_cell(e), key=str(e.id))
        table.page_shown(table.page_before, message.total)
        self._title_lists()
        self.loaded("entries")

    def _text_cell(self, e: EntryInfo) -> Text:
        """The entry's text for the list; a secret entry's is masked until revealed."""
        if e.sensitivity == "secret" and e.id not in self.revealed:
            return cell("[secret: r reveals]", style="italic")
        return cell(f"[{e.tool_name}] {e.content}" if e.tool_name else e.content)

    def action_reveal(self) -> None:
        """Show the highlighted secret entry's text (until another session is shown)."""
        entry = self.highlighted_entry()
        if entry is None or entry.sensitivity != "secret":
            return
        self.revealed.add(entry.id)
        self.query_one("#entries", FilterTable).update_cell(str(entry.id), "text",
                                                            self._text_cell(entry))
        self._show_highlighted()

    def _target_entry(self, keep_id: int | None) -> int | None:
        """The entry to put the cursor on: the one asked for (by seq), the one it was on, or
        the first."""
        if not self.entries:
            return None
        if self._goto_seq is not None:
            seq, self._goto_seq = self._goto_seq, None
            exact = next((e.id for e in self.entries if e.seq == seq), None)
            if exact is not None:
                return exact
            later = [e for e in self.entries if e.seq >= seq]
            if later:
                return min(later, key=lambda e: e.seq).id
        if keep_id is not None and keep_id in self._by_id:
            return keep_id
        return self.entries[0].id

    def _highlighted_entry_id(self) -> int | None:
        key = self.query_one("#entries", FilterTable).cursor_key()
        return int(key) if key is not None else None

    def highlighted_entry(self) -> EntryInfo | None:
        """The entry under the cursor of the entries list (None when it shows none)."""
        entry_id = self._highlighted_entry_id()
        return self._by_id.get(entry_id) if entry_id is not None else None

    @on(DataTable.RowHighlighted, "#entries")
    def _entry_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_highlighted()

    def _show_highlighted(self) -> None:
        view = self.query_one(EntryView)
        entry = self.highlighted_entry()
        if entry is not None:
            view.show_entry(entry, revealed=entry.id in self.revealed)
            self.refresh_bindings()  # "reveal" applies to a masked entry only
        elif self.entries:
            view.show_note("No entry matches the filter (esc in the filter clears it).")
        else:
            view.show_note("This session has no entries" +
                           (f" from agent {agent_label(self.agent)}." if self.agent
                            else "."))

    COPY_WHAT = "session"  # y on a session row (an entry's `id#seq` says entry)

    def selected_id(self) -> str | None:
        """The session's id, or the entry's name (session id + seq), or the hit's source."""
        focused = self.focused
        if focused is self.query_one("#sessions"):
            return self.query_one("#sessions", FilterTable).cursor_key()
        if focused is self.query_one("#hits"):
            hit = self._highlighted_hit()
            if hit is None:
                return None
            return (f"{hit.session_id}#{hit.seq}" if hit.source_type == "entry"
                    else f"memory {hit.source_id}")
        entry = self.highlighted_entry()
        return f"{entry.session_id}#{entry.seq}" if entry is not None else self.session_id

    def action_agent_filter(self) -> None:
        """Cycle: all agents, main, then each worker of the session."""
        session = self._session()
        if session is None:
            return
        choices: list[str | None] = [None, *session.agents]
        index = choices.index(self.agent) if self.agent in choices else 0
        self.agent = choices[(index + 1) % len(choices)]
        self._request_entries()

    # -- search ----------------------------------------------------------------------------
    def action_search(self) -> None:
        field = self.query_one("#search", Input)
        field.remove_class("-hidden")
        field.focus()

    def action_search_mode(self) -> None:
        self.search_mode = SEARCH_MODES[(SEARCH_MODES.index(self.search_mode) + 1)
                                        % len(SEARCH_MODES)]
        self._set_search_placeholder()
        field = self.query_one("#search", Input)
        if field.value.strip() and self.query_one(ContentSwitcher).current == "hits":
            self._search(field.value.strip(), self.search_mode)
        self._title_lists()

    def _set_search_placeholder(self) -> None:
        self.query_one("#search", Input).placeholder = (
            f"search entries and memories ({self.search_mode}): enter runs, ctrl+t changes "
            "mode, esc closes")
        self.query_one("#search", Input).border_title = f"search · {self.search_mode}"

    @on(Input.Submitted, "#search")
    def _submitted(self, event: Input.Submitted) -> None:
        query = event.value.strip()
        if query:
            self._search(query, self.search_mode)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(self, query: str, mode: str) -> None:
        store = self.lca.store
        hits = store.search(query, int(store.settings["search.limit"]), mode)
        self.post_message(SearchDone(query, mode, hits))

    @on(SearchDone)
    def _search_done(self, message: SearchDone) -> None:
        self.hits = message.hits
        table = self.query_one("#hits", DataTable)
        with self.prevent(DataTable.RowHighlighted):
            table.clear()
            for i, h in enumerate(message.hits):
                source = (f"{(h.session_id or '?')[:8]}#{h.seq} {h.kind}"
                          if h.source_type == "entry"
                          else f"memory {h.source_id} {h.memory_name or ''}")
                table.add_row(number(h.score), cell("-" if h.cos is None else f"{h.cos:.3f}"),
                              cell("-" if h.lex is None else f"{h.lex:.3f}"),
                              cell(source), cell(h.text), key=str(i))
        self.query_one(ContentSwitcher).current = "hits"
        self._last_search = (message.query, message.mode)
        self._title_lists()
        hit = self._highlighted_hit() if table.row_count else None
        if hit is not None:
            table.move_cursor(row=0, animate=False)
            self.query_one(EntryView).show_hit(hit)
            table.focus()
        else:
            self.query_one(EntryView).show_note(f"No hits ({message.mode}).")
        self.searches += 1

    def _highlighted_hit(self) -> SearchHit | None:
        key = self.query_one("#hits", FilterTable).cursor_key()
        return self.hits[int(key)] if key is not None and int(key) < len(self.hits) else None

    @on(DataTable.RowHighlighted, "#hits")
    def _hit_highlighted(self, event: DataTable.RowHighlighted) -> None:
        hit = self._highlighted_hit()
        if hit is not None:
            self.query_one(EntryView).show_hit(hit)

    @on(DataTable.RowSelected, "#hits")
    async def _hit_selected(self, event: DataTable.RowSelected) -> None:
        hit = self._highlighted_hit()
        if hit is None:
            return
        if hit.source_type == "entry" and hit.session_id:
            self.open_session(hit.session_id, hit.seq)
        elif hit.source_type == "memory":
            self.post_message(OpenRecord(RecordRef("memory", hit.source_id)))

    def action_close_search(self) -> None:
        self._close_search()
        self._show_highlighted()
        self.query_one("#entries", DataTable).focus()

    def _close_search(self) -> None:
        self.query_one("#search", Input).add_class("-hidden")
        self.query_one(ContentSwitcher).current = "entries"
        self._title_lists()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("close_search", "search_mode"):
            # shown in the footer only while searching: room for the keys that apply
            return (not self.query_one("#search", Input).has_class("-hidden")
                    or self.query_one(ContentSwitcher).current == "hits")
        if action == "reveal":
            entry = self.highlighted_entry()
            return (entry is not None and entry.sensitivity == "secret"
                    and entry.id not in self.revealed)  # shown only on a masked entry
        if action == "agent_filter":
            session = self._session()
            return bool(session and len(session.agents) > 1) or None
        return super().check_action(action, parameters)

    def _title_lists(self) -> None:
        lists = self.query_one("#lists")
        if self.query_one(ContentSwitcher).current == "hits":
            _, mode = self._last_search
            lists.border_title = f"Search ({mode}) · {plural(len(self.hits), 'hit')}"
            lists.border_subtitle = (self.query_one("#hits", FilterTable).summary()
                                     or "enter opens · esc closes")
            return
        session = self._session()
        if session is None:
            lists.border_title = "Entries"
            lists.border_subtitle = ""
            return
        agent = f"agent {agent_label(self.agent)}" if self.agent else "all agents, by time"
        on_day = f" · {self._one_day}" if self._one_day else ""
        lists.border_title = Text(visible(
            f"Entries · {session.id[:8]}{on_day} · {agent} · {self._entry_count():,}"), end="")
        lists.border_subtitle = (self.query_one("#entries", FilterTable).summary()
                                 or ("a: agent filter" if len(session.agents) > 1 else ""))

    def _entry_count(self) -> int:
        table = self.query_one("#entries", FilterTable)
        return table.unfiltered_total if table.paged else len(self.entries)

    def filter_changed(self, table: FilterTable) -> None:
        if table.id == "sessions":
            super().filter_changed(table)
            return
        self._title_lists()
        if table.id == "entries":
            self._show_highlighted()
