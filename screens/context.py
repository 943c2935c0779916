"""Context: live context pressure (LCA §4.5, §6.2) for one session and agent.

The first load reads the chosen series whole. After that, each change the store reports
(``data_version``) reads only the snapshots newer than the last id seen or updated in place
since the last revision seen (a repeated message id), in a thread worker, and shows them on the
gauge, the chart and the picker; the chart's compaction and checkpoint marks follow the events
even when no snapshot came with them; a series that lost rows (a reindex) is read again whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Header

from screens.base import StoreScreen
from screens.navigation import OpenRecord
from store import (
    Compaction,
    PruneEvent,
    RecordRef,
    Series,
    SeriesKey,
    Tail,
    agent_label,
    visible,
)
from widgets.footer import FitFooter
from widgets.fmt import plural, when
from widgets.pressure_chart import ChartData, PressureChart
from widgets.pressure_events import PressureEvents
from widgets.pressure_gauge import GaugeReading, PressureGauge
from widgets.safe import cell, number
from widgets.table import FilterTable

Key = tuple[str, str]


@dataclass(frozen=True)
class ContextData:
    """A full read: every series for the picker and the chosen one whole."""

    keys: list[SeriesKey]
    series: Series | None
    max_id: int
    max_revision: int = 0


def reading(s: Series) -> GaugeReading | None:
    latest = s.latest
    if latest is None:
        return None
    note = "window and thresholds from settings" if "window_tokens" in s.settings_defaults \
        else "window reported by the harness"
    return GaugeReading(latest.used_tokens, s.window_tokens, s.checkpoint_threshold,
                        s.auto_compact_threshold, latest.segments,
                        f"latest: {latest.event}, {when(latest.ts, with_seconds=True)}", note)


def chart_data(s: Series) -> ChartData:
    return ChartData([x.used_tokens for x in s.snapshots], [x.ts for x in s.snapshots],
                     s.window_tokens, s.checkpoint_threshold, s.auto_compact_threshold,
                     [c.ts for c in s.compactions], [c.ts for c in s.checkpoints])


def _row_key(key: Key) -> str:
    return f"{key[0]}\x1f{key[1]}"


class ContextScreen(StoreScreen):
    """How full each agent's live window is, against the thresholds, and what left it."""

    HELP: ClassVar[str] = (
        "Context: how full the live context window of one session's agent is.\n\n"
        "The gauge shows tokens used of the window, with the checkpoint threshold (a "
        "pre-compaction checkpoint should run there) and the harness's auto-compact threshold "
        "marked ┃; it turns amber past the first and red past the second. The chart shows used "
        "tokens turn by turn, the thresholds as horizontal lines, compactions (red) and "
        "checkpoints (green; the session's own and store-wide ones while it ran) as vertical "
        "marks. Below: each compaction with its summary or handoff — ✗ \"no checkpoint before "
        "this compaction\" when nothing preserved the window between the previous turn and it, "
        "with why that matters and what fixes it — and each prune event — ✗ \"not preserved "
        "before pruning\" unless what left was both preserved and verified first. Tab to that "
        "list, up and down pick an event, enter opens it: a compaction's summary (or the "
        "entries a prune let go) on the Transcript screen.\n\n"
        "The picker on the left lists every session and agent (main and each worker: each is "
        "its own series); enter pins one, l goes back to following the latest (the gauge's "
        "title says which). b hides or shows the picker (hidden at first below 100 columns), "
        "z fills the screen with the focused pane. The screen is live: snapshots a harness "
        "records appear as they are written."
    )
    AUTO_FOCUS = "#context-series, #context-events"
    SIDE_PANE = "#context-picker"
    SIDE_NAME = "Sessions"
    SIDE_AUTO_HIDE = "-narrow"
    OPENS: ClassVar[frozenset[str]] = frozenset({"series"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "reload", "Reload", id="context-reload"),
        Binding("l", "latest", "Follow latest", id="context-latest"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._wanted: Key | None = None
        self._series: Series | None = None
        self._max_id = 0
        self._max_revision = 0
        self._full_next = True
        self._keys: dict[Key, SeriesKey] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="context"):
            with Vertical(id="context-gauge-panel", classes="panel"):
                yield PressureGauge(id="context-gauge")
            with Horizontal(id="context-middle"):
                with Vertical(id="context-picker", classes="panel"):
                    yield FilterTable(id="context-series", filter_columns=("session", "agent"),
                                      filter_label="series")
                with Vertical(id="context-chart-panel", classes="panel"):
                    yield PressureChart(id="context-chart")
            with VerticalScroll(id="context-events-panel", classes="panel"):
                yield PressureEvents(id="context-events")
        yield FitFooter()

    def on_mount(self) -> None:
        self.query_one("#context-gauge-panel").border_title = "Context window"
        self.query_one("#context-picker").border_title = "Sessions and agents"
        self.query_one("#context-chart-panel").border_title = "Used tokens by turn"
        self.query_one("#context-chart-panel").border_subtitle = \
            self.query_one("#context-chart", PressureChart).legend()
        self.query_one("#context-events-panel").border_title = "Compactions, prunes, handoffs"
        table = self.query_one("#context-series", DataTable)
        table.add_column("session", key="session", width=8)
        table.add_column("agent", key="agent", width=10)
        table.add_column(Text("snaps", justify="right"), key="snaps", width=5)
        table.add_column(Text("peak", justify="right"), key="peak", width=7)
        self._apply_side()

    # -- loading -----------------------------------------------------------------------------
    def reload(self) -> None:
        """A full read the first time or after a change of series; otherwise only newer rows."""
        if self._series is None or self._full_next:
            self._full_next = False
            super().reload()
            return
        self._load_pending = True
        self._tail(self._series, self._max_id, self._max_revision)

    def load_data(self) -> ContextData:
        store = self.lca.store
        top, revision = store.max_snapshot_id(), store.max_revision()
        keys = store.series_keys()
        wanted = self._wanted
        if wanted is None or wanted not in {(k.session_id, k.agent) for k in keys}:
            wanted = (keys[0].session_id, keys[0].agent) if keys else None
        return ContextData(keys, store.series(*wanted) if wanted else None, top, revision)

    @work(thread=True, exclusive=True, group="tail", exit_on_error=False)
    def _tail(self, current: Series, after_id: int, after_revision: int) -> None:
        version = self.lca.data_version()
        store = self.lca.store
        self.post_message(self.Fetched(store.series_tail(current, after_id, after_revision),
                                      version))

    def show_data(self, data: ContextData | Tail) -> None:
        if isinstance(data, Tail):
            self._show_tail(data)
            self.loaded("tail")
        else:
            self._show_full(data)
            self.loaded("full")

    def _show_full(self, data: ContextData) -> None:
        self._series, self._max_id = data.series, data.max_id
        self._max_revision = data.max_revision
        self._keys = {(k.session_id, k.agent): k for k in data.keys}
        table = self.query_one("#context-series", DataTable)
        table.clear()
        for k in data.keys:
            table.add_row(cell(k.session_id[:8]), cell(agent_label(k.agent, short=True)),
                          number(k.snapshots),
                          number(k.peak), key=_row_key((k.session_id, k.agent)))
        if data.series is not None:
            current = _row_key((data.series.session_id, data.series.agent))
            if current in table.rows:
                table.move_cursor(row=table.get_row_index(current), animate=False)
        self._show_series(data.series, replot=True)

    def _show_tail(self, data: Tail) -> None:
        current = self._series
        if current is None or (data.series.session_id, data.series.agent) != \
                (current.session_id, current.agent):
            return
        fresh = {(s.session_id, s.agent) for s in data.new_anywhere + data.updated_anywhere} \
            - set(self._keys)
        newer = self._wanted is None and any(
            s.session_id != current.session_id and s.ts > (current.latest.ts if current.latest
                                                            else "")
            for s in data.new_anywhere)
        if data.rebuilt or fresh or newer:
            self._full_next = True
            self.reload()
            return
        table = self.query_one("#context-series", DataTable)
        for snap, added in [(x, 1) for x in data.new_anywhere] + \
                [(x, 0) for x in data.updated_anywhere]:
            key = (snap.session_id, snap.agent)
            k = self._keys[key]
            k = SeriesKey(k.session_id, k.agent, k.snapshots + added, k.first_ts,
                          max(k.last_ts, snap.ts), max(k.peak, snap.used_tokens))
            self._keys[key] = k
            table.update_cell(_row_key(key), "snaps", number(k.snapshots))
            table.update_cell(_row_key(key), "peak", number(k.peak))
        self._series, self._max_id = data.series, data.max_id
        self._max_revision = data.max_revision
        chart = self.query_one("#context-chart", PressureChart)
        fresh_chart = chart_data(data.series)
        if data.updated or not chart.same_frame(fresh_chart):
            # a snapshot changed in place, or the marks or thresholds moved (a compaction or
            # checkpoint recorded without a snapshot): draw the series again
            chart.show(fresh_chart)
        elif data.added:
            chart.extend([s.used_tokens for s in data.added], [s.ts for s in data.added])
        self._show_series(data.series, replot=False)

    def _show_series(self, s: Series | None, replot: bool) -> None:
        gauge = self.query_one("#context-gauge", PressureGauge)
        events = self.query_one("#context-events", PressureEvents)
        panel = self.query_one("#context-gauge-panel")
        chart_panel = self.query_one("#context-chart-panel")
        if s is None:
            gauge.reading = None
            events.show(None)
            panel.border_title = "Context window"
            if replot:
                self.query_one("#context-chart", PressureChart).show(ChartData())
            return
        gauge.reading = reading(s)
        panel.border_title = Text(visible(f"Context window — {agent_label(s.agent)} · "
                                          f"session {s.session_id[:8]}"), end="")
        panel.border_subtitle = ("following the latest session" if self._wanted is None
                                 else "pinned to this series · l follows the latest")
        # the peak before the count: a narrow panel cuts its title from the right
        chart_panel.border_title = (f"Tokens by turn · peak {s.peak_used_tokens:,} · "
                                    f"{plural(len(s.snapshots), 'snapshot')}")
        if replot:
            self.query_one("#context-chart", PressureChart).show(chart_data(s))
        events.show(s)
        flagged = f" ({events.flagged} flagged)" if events.flagged else ""
        self.query_one("#context-events-panel").border_title = (
            f"Compactions, prunes, handoffs{flagged}")

    # -- actions ---------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#context-series")
    def _pick(self, event: DataTable.RowSelected) -> None:
        session_id, _, agent = str(event.row_key.value).partition("\x1f")
        if self._series is not None and (session_id, agent) == (self._series.session_id,
                                                                self._series.agent):
            return
        self._wanted = (session_id, agent)
        self._full_next = True
        self.reload()

    def open_record(self, ref: RecordRef) -> None:
        self.open_series(str(ref.id), "main" if ref.at is None else str(ref.at))

    def open_series(self, session_id: str, agent: str = "main") -> None:
        """Show one session's agent (the Health screen's drill-down lands here)."""
        self._wanted = (session_id, agent)
        self._full_next = True
        self.reload()

    def action_latest(self) -> None:
        """Follow the latest session again (its main agent first)."""
        self._wanted = None
        self._full_next = True
        self.reload()

    def action_reload(self) -> None:
        self._full_next = True
        self.reload()

    # -- drill-through -----------------------------------------------------------------------
    @on(PressureEvents.Opened)
    async def _open_event(self, event: PressureEvents.Opened) -> None:
        """A compaction opens its summary, a prune the first entry that left, on Transcript."""
        ref = event.ref
        if isinstance(ref, Compaction):
            if ref.summary_at is not None:
                self.post_message(OpenRecord(RecordRef.entry(*ref.summary_at)))
            elif ref.handoff_path:
                self.notify(f"no summary entry is linked; its handoff was written to "
                            f"{visible(ref.handoff_path)}", markup=False)
            else:
                self.notify("This compaction has no summary or handoff linked to it.",
                            markup=False)
        elif isinstance(ref, PruneEvent):
            if ref.entry_seqs:
                self.post_message(OpenRecord(RecordRef.entry(ref.session_id,
                                                             min(ref.entry_seqs))))
            else:
                self.notify("None of the entries this prune let go is in the store.",
                            markup=False)

    COPY_WHAT = "session"

    def selected_id(self) -> str | None:
        """The series' session id (a picker row, or the series shown)."""
        table = self.query_one("#context-series", FilterTable)
        if self.focused is table and table.cursor_key():
            return str(table.cursor_key()).partition("\x1f")[0]
        return self._series.session_id if self._series is not None else None
