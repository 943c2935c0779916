"""Health: every signal with its status, value, thresholds and trend; enter drills down to the
offending rows, and enter on a row opens the screen that shows it; f runs the signal's fix
after a confirmation that shows its plan."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Header, ProgressBar, Static

from screens.base import StoreScreen
from screens.health_fix import FixConfirm
from screens.navigation import OpenRecord
from store import FixPlan, FixReport, RowView, ScanResult, SignalResult, TrendPoint
from widgets.footer import FitFooter
from widgets.fmt import plural, when
from widgets.health_trend import HealthTrend, sparkline
from widgets.safe import cell, join, safe_text

STATUS_STYLE = {"fail": "bold reverse red", "warn": "bold yellow", "unknown": "magenta",
                "ok": "green", "n/a": "dim"}
AUTO_SCAN_EVERY = 5.0
TREND = 8
"""Scans shown in a signal's trend (the table fits 80 columns with it)."""
"""Seconds between scans set off by store changes (a harness writing every second must not
keep a core busy with scans); s scans at once."""
DETAIL_MIN = 6
"""Lines the signal's pane keeps below the list (its border, its first line, the keys that act
on it, the start of its explanation): the list takes the rest, up to all its rows."""
LIST_MIN = 5


def _short(value: float | None) -> str:
    """A threshold in a few cells: ``5``, ``0.5``, ``45k``, ``-`` when there is none."""
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value / 1000:,.4g}k"
    return f"{value:.4g}"


def thresholds(sig: SignalResult) -> str:
    """``5 / 20``: warn and fail thresholds (the value fails or warns above them); ``by rule``
    when no threshold decides (the rule, in the detail, says what does)."""
    if sig.graded_by == "rule":
        return "by rule"
    return f"{_short(sig.warn)} / {_short(sig.fail)}"


def detail_text(sig: SignalResult) -> Text:
    """The selected signal: status, figure, rule, explanation, its figures, what keys do."""
    out = join([Text(sig.name, style="bold"), Text(sig.status.upper(),
                                                   style=STATUS_STYLE[sig.status]),
                Text(sig.display)])
    out.append("   ")
    out.append(sig.rule, style="dim")
    keys = []
    if sig.offending_total:
        keys.append(f"enter: {plural(sig.offending_total, 'offending row')}")
    if sig.fix:
        keys.append(f"f: fix ({sig.fix})")
    if keys:  # second: a short terminal gives the detail few lines
        out.append("\n")
        out.append(" · ".join(keys), style="italic")
    out.append("\n")
    out.append(safe_text(sig.explanation))
    for line in _figures(sig.detail):
        out.append("\n")
        line.stylize("dim")
        out.append(line)
    return out


def _figures(detail: dict[str, Any]) -> list[Text]:
    """A signal's extra figures, one line each: per writer, per day, counts."""
    lines = []
    flat = []
    for key, value in detail.items():
        label = key.replace("_", " ")
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in
                                                     value.values()):
            parts = [f"{k} " + ", ".join(f"{a} {b:,}" if isinstance(b, int) else f"{a} {b}"
                                         for a, b in v.items()) for k, v in value.items()]
            lines.append(safe_text(f"{label}: " + " · ".join(parts)))
        elif isinstance(value, dict):
            if value:
                lines.append(safe_text(f"{label}: " + " · ".join(
                    f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}"
                    for k, v in value.items())))
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, list | tuple | set):  # never Python's `[]` / `['a', 'b']`
            items = sorted(map(str, value)) if isinstance(value, set) else list(map(str, value))
            flat.append(f"{label} {', '.join(items) if items else 'none'}")
        else:
            flat.append(f"{label} {value:,}" if isinstance(value, int) else f"{label} {value}")
    if flat:
        lines.insert(0, safe_text(" · ".join(flat)))
    return lines


@dataclass
class HealthData:
    scan: ScanResult
    trends: dict[str, list[TrendPoint]]


@dataclass
class RowsLoaded(Message):
    """The labelled offending rows of one signal (from a worker)."""

    signal: str
    views: list[RowView]


@dataclass
class PlanReady(Message):
    plan: FixPlan


@dataclass
class FixProgress(Message):
    stage: str
    done: int
    total: int


@dataclass
class FixDone(Message):
    report: FixReport


class HealthScreen(StoreScreen):
    """Health signals: what silently stopped working, and the rows that show it."""

    HELP: ClassVar[str] = (
        "Health: every signal of the continuity machinery (LCA §6.1, §10.6, Appendix D) with "
        "its status (FAIL, WARN, unknown, ok), its value, the warn and fail thresholds (value "
        "above them) and a trend over the stored scans. Every scan is stored; a scan runs when "
        "the screen opens and again when the store changes (at most every "
        f"{AUTO_SCAN_EVERY:g} s); s scans now.\n\n"
        "Below the list, the highlighted signal: its rule, what it found, its figures (per "
        "writer, per day...) and its trend as a chart (wide terminals). Enter drills down to "
        "its offending rows; enter on a row opens the screen that shows it — an entry on "
        "Transcript, a memory on Memories, a compaction, checkpoint or snapshot on Context, a "
        "proposal on Proposals. Escape goes back to the list.\n\n"
        "f runs the highlighted signal's fix where there is one (compact duplicates: one "
        "index row per source and span, every reference re-pointed; re-embed failed or "
        "drifted chunks; index lagging sources): a confirmation shows exactly what it will "
        "change, y runs it in the background with a progress bar, then the store is scanned "
        "again."
    )
    AUTO_FOCUS = "#health-signals"
    WRITES: ClassVar[frozenset[str]] = frozenset({"fix"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "scan", "Scan now", id="health-scan"),
        Binding("f", "fix", "Fix", id="health-fix"),
        Binding("escape", "back", "Back to list", id="health-back"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.result: ScanResult | None = None
        self.trends: dict[str, list[TrendPoint]] = {}
        self.selected: str | None = None
        self.drilled: str | None = None
        self.views: list[RowView] = []
        self.fixing = False
        self._last_scan = 0.0
        self._deferred: Timer | None = None
        self._force = False
        self._save: Literal["always", "changed", "never"] = "changed"
        """How the next scan is stored: ``always`` when asked for (s, after a fix), else only
        when it differs from the last stored scan (a rescan set off by a store change)."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="health"):
            yield ProgressBar(id="health-progress", show_eta=False)
            yield DataTable(id="health-signals", cursor_type="row", zebra_stripes=True,
                            classes="panel")
            with Horizontal(id="health-bottom"):
                with VerticalScroll(id="health-detail", classes="panel"):
                    yield Static("Scanning…", id="health-detail-text", markup=False)
                with Vertical(id="health-trend-panel", classes="panel"):
                    yield HealthTrend(id="health-trend")
            yield DataTable(id="health-rows", cursor_type="row", zebra_stripes=True,
                            classes="panel")
        yield FitFooter()

    def on_resize(self, event: Resize | None = None) -> None:
        self.set_class(self.size.width < 100, "-narrow")
        self._fit_list()

    def _fit_list(self) -> None:
        """Size the list to the screen: every signal when there is room, else as many as
        leave the signal's pane ``DETAIL_MIN`` lines (the list scrolls)."""
        table = self.query_one("#health-signals", DataTable)
        room = self.size.height - 2  # the header and the footer
        if self.query_one("#health-progress").display:
            room -= 1
        wanted = max(table.row_count, 1) + 3  # the column labels and the border
        table.styles.height = max(LIST_MIN, min(wanted, room - DETAIL_MIN))

    def on_mount(self) -> None:
        self.set_class(self.size.width < 100, "-narrow")
        table = self.query_one("#health-signals", DataTable)
        table.border_title = "Health signals"
        for label, key, width in (("status", "status", 7), ("signal", "signal", 29),
                                  (Text("value", justify="right"), "value", 11),
                                  (Text("warn / fail", justify="right"), "thresholds", 11),
                                  ("trend", "trend", TREND)):
            table.add_column(label, key=key, width=width)
        rows = self.query_one("#health-rows", DataTable)
        for label, key, width in (("row", "what", 48), ("note", "note", 80)):
            rows.add_column(label, key=key, width=width)
        rows.display = False
        self.query_one("#health-progress").display = False
        self.query_one("#health-detail").border_title = "Signal"
        self.query_one("#health-trend-panel").border_title = "Trend"

    # -- scanning --------------------------------------------------------------------------
    def reload(self) -> None:
        """Scan again: at once when asked (s, a fix, the first load), else at most every
        ``AUTO_SCAN_EVERY`` seconds."""
        wait = self._last_scan + AUTO_SCAN_EVERY - time.monotonic()
        if self._force or not self._last_scan or wait <= 0:
            self._force = False
            if self._deferred is not None:
                self._deferred.stop()
                self._deferred = None
            self._last_scan = time.monotonic()
            super().reload()
        elif self._deferred is None:
            self._deferred = self.set_timer(wait, self._deferred_reload)

    def _deferred_reload(self) -> None:
        self._deferred = None
        self.reload()

    def load_data(self) -> HealthData:
        store = self.lca.store
        save, self._save = self._save, "changed"
        found = store.health(now=self.lca.now(), save=save)
        return HealthData(found, store.health_trends())

    def show_data(self, data: HealthData) -> None:
        self.result, self.trends = data.scan, data.trends
        table = self.query_one("#health-signals", DataTable)
        counts = data.scan.counts()
        table.border_title = (f"Health signals — {counts['fail']} fail · {counts['warn']} "
                              f"warn · {counts['unknown']} unknown · {counts['ok']} ok"
                              + (f" · {counts['n/a']} n/a" if counts["n/a"] else ""))
        table.border_subtitle = f"scanned {when(data.scan.scanned_at, True)}"
        keep = self.selected
        with self.prevent(DataTable.RowHighlighted):
            table.clear()
            for s in data.scan.signals:
                table.add_row(cell(s.status.upper(), style=STATUS_STYLE[s.status]),
                              cell(s.name), Text(s.display[:11], justify="right"),
                              Text(thresholds(s), justify="right"),
                              cell(sparkline(data.trends.get(s.name, []), TREND), style="dim"),
                              key=s.name)
            if keep is not None and keep in table.rows:
                table.move_cursor(row=table.get_row_index(keep), animate=False)
        self._fit_list()
        self._select(keep if keep in table.rows else (
            data.scan.signals[0].name if data.scan.signals else None))
        if self.drilled is not None:
            self._load_rows(self.drilled)

    def _select(self, name: str | None) -> None:
        if name is None or self.result is None:
            return
        self.selected = name
        sig = self.result.signal(name)
        self.query_one("#health-detail-text", Static).update(detail_text(sig))
        self.query_one("#health-detail").border_title = f"Signal: {name}"
        self.query_one("#health-trend-panel").border_title = f"Trend: {name}"
        self.query_one(HealthTrend).show(self.trends.get(name, []), sig.warn, sig.fail)
        self.refresh_bindings()

    @on(DataTable.RowHighlighted, "#health-signals")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._select(str(event.row_key.value))

    def action_scan(self) -> None:
        self._force = True
        self._save = "always"
        self.reload()

    # -- drill-down ----------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#health-signals")
    def _drill(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.drill(str(event.row_key.value))

    def drill(self, name: str) -> None:
        """Show the offending rows of signal ``name``."""
        self._select(name)
        self.drilled = name
        self.set_class(True, "-drilled")
        rows = self.query_one("#health-rows", DataTable)
        rows.display = True
        rows.border_title = f"{name}: loading rows…"
        rows.focus()
        self._load_rows(name)

    @work(thread=True, exclusive=True, group="rows", exit_on_error=False)
    def _load_rows(self, name: str) -> None:
        if self.result is None:
            return
        sig = self.result.signal(name)
        self.post_message(RowsLoaded(name, self.lca.store.health_rows(sig.offending)))

    @on(RowsLoaded)
    def _rows_loaded(self, message: RowsLoaded) -> None:
        if message.signal != self.drilled or self.result is None:
            return
        self.views = message.views
        sig = self.result.signal(message.signal)
        rows = self.query_one("#health-rows", DataTable)
        rows.clear()
        for i, v in enumerate(message.views):
            rows.add_row(cell(v.label), cell(v.row.note, style="dim"), key=str(i))
        shown = len(message.views)
        more = f", first {shown:,} shown" if sig.offending_total > shown else ""
        rows.border_title = (f"{message.signal}: {plural(sig.offending_total, 'offending row')}"
                             f"{more}"
                             if sig.offending_total else f"{message.signal}: no offending rows")
        rows.border_subtitle = "enter opens a row's screen · esc back"
        self.loaded("rows")

    @on(DataTable.RowSelected, "#health-rows")
    async def _open_row(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is None:
            return
        view = self.views[int(event.row_key.value)]
        await self.open_target(view)

    async def open_target(self, view: RowView) -> None:
        """Go to the screen that shows ``view``'s row (or say why not)."""
        if view.ref is None:
            self.notify(f"{view.label}: no screen shows this row", markup=False)
            return
        self.post_message(OpenRecord(view.ref))

    def action_back(self) -> None:
        if self.drilled is None:
            return
        self.drilled = None
        self.set_class(False, "-drilled")
        self.query_one("#health-rows", DataTable).display = False
        self.query_one("#health-signals", DataTable).focus()

    # -- fixes ---------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "fix":  # not shown for a signal without a fix; off while one runs
            sig = self._current()
            if sig is None or sig.fix is None:
                return False
            return None if self.fixing else True
        if action == "back":
            return self.drilled is not None
        return True

    def _current(self) -> SignalResult | None:
        if self.result is None or self.selected is None:
            return None
        return self.result.signal(self.selected)

    def action_fix(self) -> None:
        sig = self._current()
        if sig is None or sig.fix is None or self.fixing:
            return
        if self.refused_read_only("applying a health fix"):
            return
        self._plan(sig.fix)

    @work(thread=True, exclusive=True, group="fix-plan", exit_on_error=False)
    def _plan(self, fix: str) -> None:
        self.post_message(PlanReady(self.lca.store.health_fix_plan(fix)))

    @on(PlanReady)
    def _confirm(self, message: PlanReady) -> None:
        plan = message.plan

        def answered(yes: bool | None) -> None:
            if yes:
                self._start_fix(plan)

        self.app.push_screen(FixConfirm(plan), answered)

    def _start_fix(self, plan: FixPlan) -> None:
        self.fixing = True
        bar = self.query_one("#health-progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self._fit_list()
        self.refresh_bindings()
        self._apply(plan)

    @work(thread=True, exclusive=True, group="fix", exit_on_error=False)
    def _apply(self, plan: FixPlan) -> None:
        """The fix on what the confirmed preview listed (not what a new look would find)."""
        def progress(stage: str, done: int, total: int) -> None:
            self.post_message(FixProgress(stage, done, total))

        self.post_message(FixDone(self.lca.store.health_fix(plan.fix, progress, plan)))

    @on(FixProgress)
    def _progress(self, message: FixProgress) -> None:
        self.query_one("#health-progress", ProgressBar).update(total=max(1, message.total),
                                                               progress=message.done)

    @on(FixDone)
    def _fixed(self, message: FixDone) -> None:
        self._end_fix()
        self.loaded("fix")
        self.notify(message.report.lines[0] if message.report.lines else message.report.fix,
                    title=f"{message.report.fix} done", markup=False, timeout=8)
        self.action_scan()

    def _end_fix(self) -> None:
        self.fixing = False
        self.query_one("#health-progress").display = False
        self._fit_list()
        self.refresh_bindings()

    def show_error(self, group: str, error: BaseException | None) -> None:
        if group == "fix":
            self._end_fix()
        elif group == "load" and self.result is None:
            self.query_one("#health-detail-text", Static).update(
                Text(f"The scan failed: {type(error).__name__}: {error}", style="bold"))
