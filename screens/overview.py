"""Overview: the store at a glance — where it is, what it holds, its embedder, latest sessions.

On a change in the store the screen reads the counts again (``Store.stats``) and only what the
change touched (``Store.changes_since``): the latest sessions when entries came, the context
pressure when a snapshot did, the last consolidation pass when proposals moved, the health
line when a scan was stored; the daemon's state is not asked again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from screens.base import StoreScreen
from screens.navigation import OpenRecord
from store import RecordRef
from widgets.footer import FitFooter
from widgets.fmt import agents_mark, ago, size, when
from widgets.health_line import HealthLine
from widgets.pressure_summary import PressureSummary
from widgets.safe import cell, join, number, safe_text
from widgets.table import FilterTable

if TYPE_CHECKING:  # records only: their modules load with the data, after the first frame
    from store import Changes, PassSummary, ScanResult, Series, SessionInfo, Stats

LATEST = 5
PROBE_S = 1.0  # seconds a daemon has to answer the Overview's status request
SESSION_COLUMNS = (("session", "id", 8), ("started", "started", 16), ("last entry", "ago", 10),
                   (Text("entries", justify="right"), "entries", 7), ("agents", "agents", 16),
                   ("format", "format", 11), ("project", "project", 30))
NARROW_TABLE = 100
NARROW_LEFT_OUT = ("started", "format")
"""Left out of the latest sessions below ``NARROW_TABLE`` columns (the Transcript screen and
``lca-tui sessions`` show them)."""
LABEL_WIDTH = 14


@dataclass(frozen=True)
class OverviewData:
    stats: Stats
    latest: list[SessionInfo]
    pressure: Series | None
    daemon: dict[str, Any] | None = None  # `lca-tui serve`'s state (daemon_probe)
    consolidation: PassSummary | None = None


@dataclass(frozen=True)
class OverviewChanges:
    """What a change needs: the counts, and what moved of the rest (None: unchanged)."""

    stats: Stats
    latest: list[SessionInfo] | None
    pressure: Series | None
    pressure_moved: bool
    consolidation: PassSummary | None
    consolidation_moved: bool
    scan_moved: bool


@dataclass
class CountsFetched(Message):
    """The cheap half of the Overview's load (the counts and the latest sessions), posted by
    the load worker before it reads the rest: the screen shows them at once."""

    stats: Stats
    latest: list[SessionInfo]


@dataclass
class HealthSummary(Message):
    """The health scan for the one-line summary (its own worker: a scan of a large store
    must not hold back the rest of the Overview)."""

    result: ScanResult


def _counts(mapping: dict[str, int]) -> Text:
    """``tool_call 101 · user 18``: a name and its count never wrap apart (a no-break space)."""
    return join([Text(f"{k}\u00a0{v:,}", end="") for k, v in sorted(
        mapping.items(), key=lambda kv: (-kv[1], kv[0]))])


def _line(label: str, value: Text | str, detail: Text | None = None) -> Text:
    out = Text(f"{label:<{LABEL_WIDTH}}", style="bold", end="")
    out.append(value if isinstance(value, Text) else Text(value))
    if detail is not None and detail.plain:
        out.append("   ")
        out.append(detail)
    out.append("\n")
    return out


def store_text(stats: Stats) -> Text:
    out = Text(end="")
    out.append(_line("path", safe_text(stats.path)))
    out.append(_line("size", size(stats.size_bytes)))
    out.append(_line("schema", f"version {stats.schema_version}"))
    if stats.backend == "postgresql":  # a file is the default; a server is named
        out.append(_line("backend", f"PostgreSQL {stats.server_version}, pgvector "
                                    f"{stats.vector_version or 'missing'}"))
    out.rstrip()
    return out


def context_value(s: Series | None) -> Text:
    """How full the latest session's window is, in a few cells: ``14.8 % of 200,000``, or
    the threshold it is past."""
    if s is None or s.latest is None:
        return Text("no snapshots", style="dim")
    used, window = s.latest.used_tokens, s.window_tokens
    pct = 100.0 * used / window if window else 0.0
    if used >= s.auto_compact_threshold:
        return Text(f"{pct:.0f} %: auto-compact", style="bold")
    if used >= s.checkpoint_threshold:
        return Text(f"{pct:.0f} %: checkpoint due", style="bold")
    return Text(f"{pct:.1f} % of {window:,}")


def records_text(stats: Stats) -> Text:
    out = Text(end="")
    out.append(_line("sessions", f"{stats.sessions:,}"))
    out.append(_line("entries", f"{stats.entries:,}", _counts(stats.entries_by_kind)))
    memories = _counts(stats.memories_by_status)
    if stats.memories_unloadable:
        memories.append(" · ", style="dim")
        memories.append(f"not loadable {stats.memories_unloadable:,}", style="bold")
    out.append(_line("memories", f"{stats.memories:,}", memories))
    out.append(_line("chunks", f"{stats.chunks:,}", _counts(stats.chunks_by_status)))
    if stats.chunks_by_model:
        out.append(_line("  by model", _counts(stats.chunks_by_model)))
    index = [f"vectors {stats.vectors:,}", f"FTS rows {stats.fts_rows:,}"]
    if stats.chunks_lexical_only:  # long tool output past its embedded head
        index.append(f"FTS only {stats.chunks_lexical_only:,}")
    out.append(_line("index", join(index)))
    out.append(_line("checkpoints", f"{stats.checkpoints:,}"))
    out.append(_line("recall traces", f"{stats.traces:,}"))
    out.rstrip()
    return out


def embedder_status(stats: Stats) -> str:
    return "DEGRADED" if stats.embedder.degraded else "OK"


def embedder_text(stats: Stats, daemon: dict[str, Any] | None | bool = None) -> Text:
    """The Embedder pane; ``daemon`` False: the daemon's state is not read yet."""
    e = stats.embedder
    out = Text(end="")
    out.append(_line("model", safe_text(e.model)))
    if e.degraded:  # the reason before the dimensions: a short terminal shows three lines
        out.append(_line("why", safe_text(e.reason or "no reason given")))
    out.append(_line("dimensions", str(e.dim)))
    out.append(_line("daemon", "checking…" if daemon is False
                     else describe_daemon(daemon if isinstance(daemon, dict) else None)))
    out.append(_line("to embed", f"{stats.entries_waiting:,} entries waiting"))
    if e.degraded:
        out.append("Semantic search and recall know nothing of meaning until the model "
                   "loads; lexical search is unaffected.", style="italic")
    else:
        out.append("Semantic search and recall use this local model.", style="dim")
    return out


def daemon_status(path: Any) -> dict[str, Any] | None:
    """What state `lca-tui serve` for the store at ``path`` is in (``daemon_probe``: running,
    starting, not answering, not running), or None when no folder can hold its socket. Run
    in the screen's loading worker: a hung daemon costs it ``PROBE_S`` at most."""
    from store import UnsafeDirectory, daemon_probe, resolve_store, socket_path

    try:
        return daemon_probe(socket_path(resolve_store(path)), timeout=PROBE_S)
    except UnsafeDirectory:
        return None


# daemon_probe's states as the Embedder pane names them: "not answering (pid N)" does not
# fit it at 80 columns
SHORT_STATES = {"not answering": "no answer"}


def describe_daemon(found: dict[str, Any] | None) -> str:
    """``running (pid N)``, ``starting (pid N)``, ``no answer (pid N)``, ``not running``."""
    if not found:
        return "not running"
    from store import describe_daemon as describe

    return describe({**found, "state": SHORT_STATES.get(found["state"],
                                                               found["state"])})


class OverviewScreen(StoreScreen):
    """The store at a glance."""

    _latest: tuple[list[SessionInfo], int] | None = None
    _narrow_sessions: bool = False

    HELP: ClassVar[str] = (
        "Overview: the store this app is open on, at a glance.\n\n"
        "Store: the file's path, its size on disk (with the write-ahead log) and its schema "
        "version. Records: how many sessions, entries (by kind), memories (by lifecycle status, "
        "and how many the agent's loader could not read), index chunks (by status and by "
        "embedding model), vectors and FTS rows (FTS only: the windows of a long tool call or "
        "result past its embedded head), checkpoints, and recall traces (one per recall "
        "the agent ran) the store holds. Embedder: the "
        "model that embeds text for semantic search and recall; DEGRADED means the local model "
        "could not load (or was turned off) and a hashing fallback is in use; whether the "
        "warm daemon (`lca-tui serve`) runs (\"no answer\": its process is there but did not "
        "answer within a second — stopped or stuck; `lca-tui serve --stop` ends it), and how "
        "many entries a hook stored that wait for "
        "it (or for the next checkpoint) to embed them — they are found by FTS meanwhile. "
        "Latest sessions: "
        "the five most recent; enter opens one on the Transcript screen. Consolidation "
        "(below them): when the latest consolidation pass ran, over how many sessions, and "
        "what it proposed (and where those proposals stand now). Health (top line): "
        "how many health signals fail or warn, and which; enter on it (or 6) opens the "
        "Health screen. Context pressure: "
        "the latest session's gauge (how old its latest snapshot is when it is not live); "
        "enter on it opens the Context screen; on a terminal under 32 rows, where the panel is "
        "below the fold, the Store pane says how full that window is (context).\n\n"
        "The health line has the focus when the screen opens (enter opens Health); tab moves "
        "to the sessions and the pressure panel. On a small terminal the panes scroll: up "
        "and down scroll, b hides the store and embedder panes, z fills the screen with the "
        "focused pane.\n\n"
        "Everything here follows the store: what a harness writes while the app is open "
        "appears within a second or so, without a restart; the header says when the store "
        "last changed."
    )
    FOLLOWS = True
    AUTO_FOCUS = "#overview-health"  # enter opens Health first, as docs/app.md says
    SIDE_PANE = "#overview-top"
    SIDE_NAME = "Store panes"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "reload", "Reload", id="overview-reload"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="overview"):
            yield HealthLine("Health        scanning…", id="overview-health", markup=False)
            # the two status lines together at the top: both visible at 80x24
            yield Static("", id="overview-consolidation", markup=False)
            with Horizontal(id="overview-top"):
                yield Static("loading…", id="overview-store", classes="panel", markup=False)
                with Vertical(id="overview-embedder", classes="panel"):
                    yield Static("", id="embedder-status", markup=False)
                    yield Static("loading…", id="embedder-detail", markup=False)
            yield Static("loading…", id="overview-records", classes="panel", markup=False)
            with Vertical(id="overview-latest", classes="panel"):
                yield FilterTable(id="overview-sessions", filter_label="sessions",
                                  filter_columns=("id", "project", "format", "agents"),
                                  stretch="project", tail_columns=("project",))
                yield Static("", id="overview-no-sessions", markup=False)
            with Vertical(id="overview-pressure"):
                yield PressureSummary(id="overview-pressure-summary", classes="panel")
        yield FitFooter()

    def on_mount(self) -> None:
        self.query_one("#overview-store").border_title = "Store"
        self.query_one("#overview-embedder").border_title = "Embedder"
        self.query_one("#overview-records").border_title = "Records"
        self.query_one("#overview-latest").border_title = "Latest sessions"
        self._session_columns(self.app.size.width < NARROW_TABLE)
        self._apply_side()

    def _session_columns(self, narrow: bool) -> None:
        """Fixed widths (the table renders right on its first frame, whatever the data);
        below ``NARROW_TABLE`` columns the start time and the format are left out, so the
        table fits without scrolling sideways and the project keeps some room."""
        table = self.query_one("#overview-sessions", DataTable)
        table.clear(columns=True)
        self._narrow_sessions = narrow
        for label, key, width in SESSION_COLUMNS:
            if not (narrow and key in NARROW_LEFT_OUT):
                table.add_column(label, key=key, width=width)

    _data: OverviewData | None = None

    def _show_store(self) -> None:
        """The Store pane; below 32 rows (the pressure panel off screen) with the latest
        window's fill in its spare line."""
        if self._data is None:
            return
        text = store_text(self._data.stats)
        if self.has_class("-short"):
            text.append("\n")
            text.append(_line("context", context_value(self._data.pressure)))
            text.rstrip()
        self.query_one("#overview-store", Static).update(text)

    def on_resize(self, event: Resize) -> None:
        short = self.has_class("-short")
        super().on_resize(event)
        if short != self.has_class("-short"):
            self._show_store()
        narrow = event.size.width < NARROW_TABLE
        if narrow != getattr(self, "_narrow_sessions", narrow):
            self._session_columns(narrow)
            if self._latest is not None:
                self._show_sessions(*self._latest)

    _early_counts = False
    _session_rows: list[tuple[str, list[Any]]] | None = None
    """The latest sessions' rows as the table shows them."""

    def load_early(self) -> None:
        """While the store opens: the counts and the latest sessions read without the ORM
        (``LcaApp.early_listings``), shown at once (``CountsFetched``)."""
        lean = self.lca.early_listings()
        if lean is None:
            return
        try:
            counts = CountsFetched(lean.stats(), lean.sessions(limit=LATEST))
        except Exception:  # never an error of its own: the store's opening, next, reports it
            return
        finally:
            lean.close()
        self._early_counts = True
        self.post_message(counts)

    def load_data(self) -> OverviewData:
        """The counts and the latest sessions first (shown as soon as they are read:
        ``CountsFetched``, then ``Loaded("counts")``; before the store is open, from
        ``load_early``), then the pressure, the daemon's state and the last consolidation pass
        (``Loaded("screen")`` once all of it shows)."""
        store = self.lca.store
        stats, latest = store.stats(), store.sessions(limit=LATEST)
        if not self._early_counts:
            self.post_message(CountsFetched(stats, latest))
        key = store.latest_series_key()
        pressure = store.series(key.session_id, key.agent) if key else None
        return OverviewData(stats, latest, pressure, daemon_status(store.path),
                            store.last_consolidation())

    def read_changes(self, changes: Changes) -> OverviewChanges:
        store = self.lca.store
        latest = store.sessions(limit=LATEST) if changes.sessions else None
        pressure = None
        if changes.moved("snapshot"):
            key = store.latest_series_key()
            pressure = store.series(key.session_id, key.agent) if key else None
        moved = changes.moved("proposal") or bool(changes.proposals)
        return OverviewChanges(store.stats(), latest, pressure, changes.moved("snapshot"),
                               store.last_consolidation() if moved else None, moved,
                               changes.moved("scan"))

    def apply_changes(self, changes: Changes, part: OverviewChanges) -> None:
        from dataclasses import replace

        from screens.proposal_view import pass_line

        data = self._data
        if data is None:
            return
        latest = part.latest if part.latest is not None else data.latest
        data = replace(data, stats=part.stats, latest=latest,
                       pressure=part.pressure if part.pressure_moved else data.pressure,
                       consolidation=part.consolidation if part.consolidation_moved
                       else data.consolidation)
        self._data = data
        self._show_counts(data.stats, latest, data.daemon)
        if part.pressure_moved:
            self.query_one(PressureSummary).show(data.pressure, self.lca.now())
        if part.consolidation_moved:
            self.query_one("#overview-consolidation", Static).update(
                pass_line(data.consolidation, self.lca.now()))
        self._show_store()
        if part.scan_moved:
            self._load_health()

    @on(CountsFetched)
    def _counts_fetched(self, message: CountsFetched) -> None:
        if self._data is not None:  # a reload: the whole of it shows in a moment
            return
        self._show_counts(message.stats, message.latest, False)
        self.query_one("#overview-store", Static).update(store_text(message.stats))
        self.loaded("counts")

    def _show_counts(self, stats: Stats, latest: list[SessionInfo],
                     daemon: dict[str, Any] | None | bool) -> None:
        """The records, the embedder and the latest sessions (``daemon`` False: its state is
        not read yet)."""
        self.query_one("#overview-records", Static).update(records_text(stats))
        status = self.query_one("#embedder-status", Static)
        status.update(Text(embedder_status(stats), end=""))
        status.set_class(stats.embedder.degraded, "-degraded")
        status.set_class(not stats.embedder.degraded, "-ok")
        self.query_one("#embedder-detail", Static).update(embedder_text(stats, daemon))
        self._show_sessions(latest, stats.sessions)

    def show_data(self, data: OverviewData) -> None:
        from screens.proposal_view import pass_line  # the governance records: not before

        stats = data.stats
        self.query_one("#overview-consolidation", Static).update(
            pass_line(data.consolidation, self.lca.now()))
        self._show_counts(stats, data.latest, data.daemon)
        self.query_one(PressureSummary).show(data.pressure, self.lca.now())
        self._data = data
        self._show_store()
        self._load_health()

    @work(thread=True, exclusive=True, group="health", exit_on_error=False)
    def _load_health(self) -> None:
        self.post_message(HealthSummary(self.lca.store.health_summary(now=self.lca.now())))

    @on(HealthSummary)
    def _health_loaded(self, message: HealthSummary) -> None:
        self.query_one(HealthLine).show(message.result)
        self.loaded("health")

    def _show_sessions(self, sessions: list[SessionInfo], total: int) -> None:
        self._latest = (sessions, total)
        table = self.query_one("#overview-sessions", DataTable)
        now = self.lca.now()
        keys = [str(k.value) for k in table.columns]
        rows = []
        for s in sessions:
            cells = {"id": cell(s.id[:8], style="dim"), "started": cell(when(s.started_at)),
                     "ago": cell(ago(s.ended_at or s.started_at, now)),
                     "entries": number(s.entries), "agents": cell(agents_mark(s)),
                     "format": cell(s.format), "project": cell(s.project or "-")}
            rows.append((s.id, [cells[k] for k in keys]))
        if rows != self._session_rows:
            # (the same rows, e.g. the store's load after the early counts: left as they are,
            # the cursor and the scroll with them — the tour's row may be shown already)
            self._session_rows = rows
            keep = table.cursor_key() if isinstance(table, FilterTable) else None
            table.clear()
            for key, row in rows:
                table.add_row(*row, key=key)
            if keep is not None and keep in table.rows:  # a live reload keeps the cursor's row
                table.move_cursor(row=table.get_row_index(keep), animate=False)
        self.query_one("#overview-latest").border_title = (
            f"Latest sessions ({len(sessions)} of {total:,})" if sessions
            else "Latest sessions")
        table.display = bool(sessions)
        hint = self.query_one("#overview-no-sessions", Static)
        hint.display = not sessions
        hint.update(Text("No sessions in this store yet. Import some with `lca-tui ingest "
                         "PATH...`, or try `lca-tui demo`.", end=""))

    @on(DataTable.RowSelected, "#overview-sessions")
    async def _open(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value:
            self.post_message(OpenRecord(RecordRef("session", event.row_key.value)))

    def action_reload(self) -> None:
        self.reload()
