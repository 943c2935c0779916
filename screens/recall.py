"""Recall: the traces of every recall, and one trace's candidates with their six terms, the
weighted contributions as a stacked bar, score, decision and reason.

On a change in the store the screen reads only the traces newer than the last it knows
(``Store.changes_since``, then ``traces(after_id=…)``) and puts them at the top of the list (the
latest 200 kept), the cursor and the shown trace where they were."""

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
from textual.widgets import Checkbox, DataTable, Header, Input, Select, Static

from screens.base import StoreScreen, keep_place
from screens.navigation import OpenRecord
from store import TRACE_MASK as MASK
from store import Candidate, Move, RecordRef, Trace, moves_line, term_text, visible
from widgets.footer import FitFooter
from widgets.fmt import plural, when
from widgets.safe import cell, join, safe_text
from widgets.score_bar import bar_text, legend_text, palette_from_theme, scale_for
from widgets.table import FilterTable

if TYPE_CHECKING:
    from store import Changes

CHANNELS = ("private", "shared", "public")

BAR_WIDTH = 18
TRACE_LIMIT = 200  # the latest traces listed (``Store.traces``'s default)
NEG_CELLS = 3
DECISION_STYLE = {"injected": "bold", "policy_filtered": "italic", "superseded": "italic"}


REASON_MIN = 20
"""The reason column's least width before columns are left out for it."""
TERMS = "SETAQK"


def candidate_columns(room: int, with_moves: bool) -> list[tuple[Any, str, int]]:
    """The candidate table's columns (label, key, width) for ``room`` columns of table: all
    of them when the reason keeps ``REASON_MIN``; else the per-term figures go first (the bar
    and the candidate pane below show them), then the bar, then the score, so rank, decision,
    source and reason (and what moved, after a re-run) always show."""
    rank = (Text("#", justify="right"), "rank", 3)
    decision, source = ("decision", "decision", 15), ("source", "source", 20)
    terms = [(Text(t, justify="right"), t, 4) for t in TERMS]
    score = (Text("score", justify="right"), "score", 5)
    bar = ("−K │ S E T A Q", "bar", BAR_WIDTH)
    moved = [("moved", "moved", 14)] if with_moves else []
    reason = ("reason", "reason", REASON_MIN)
    options = [[rank, decision, source, *terms, score, bar, *moved, reason],
               [rank, decision, source, score, bar, *moved, reason],
               [rank, decision, source, score, *moved, reason],
               [rank, decision, source, *moved, reason]]
    for cols in options:
        if sum(w + 2 for _, _, w in cols) <= room:
            return cols
    return options[-1]


def _term(value: float | None) -> str:
    """A term in four cells: ``.55``, ``-.05``, ``1.00`` (``store.term_text``, as the CLI)."""
    return term_text(value)


def harness_line(c: Candidate) -> str:
    """A harness-derived candidate's figures, labelled as the harness's (not R, not a cosine)."""
    figures = dict(c.harness or {})
    if figures.get("score") is None and c.score is not None:
        figures["score"] = c.score
    parts = []
    for key, label in (("score", "score"), ("providerScore", "provider score"),
                       ("scri", "scri"), ("recallMode", "recall mode")):
        value = figures.get(key)
        if value is not None:
            parts.append(f"{label} {value:.3f}" if isinstance(value, float)
                         else f"{label} {visible(str(value))}")
    return "the harness's own figures (no six terms): " + (", ".join(parts) or "none given")


@dataclass
class RecallData:
    traces: list[Trace]
    trace: Trace | None


@dataclass
class RecallDone(Message):
    """A trace to open: loaded, or a recall (or re-run, with its ``moves``) that finished."""

    trace: Trace
    moves: list[Move] | None = None


class RecallScreen(StoreScreen):
    """Recall traces: every candidate's six score terms and its decision."""

    HELP: ClassVar[str] = (
        "Recall: every recall the store ran (or read from a harness's memory_recall_injected "
        "events), newest first, with its time (local), query, latency and how many candidates "
        "were injected of those considered.\n\n"
        "Below, the highlighted trace: its cue (role, project, channel, historical), model "
        "and the settings in force when it ran, then every candidate in rank order with its "
        "decision (injected, below_floor, superseded, policy_filtered, duplicate, "
        "over_budget, not_selected), its six terms — S similarity (w·cos + (1−w)·lex, w the "
        "trace's cos_weight), E "
        "experiential weight, T temporal salience, A source authority, Q task relevance, K "
        "risk penalty — its score R = αS + βE + γT + δA + εQ − λK, and a bar of the weighted "
        "contributions (K to the left of the zero mark). The pane at the bottom shows the "
        "highlighted candidate in full: both parts of S with the weights that trace used, the "
        "contributions, the reason and the whole stored excerpt (scroll it when it is long). "
        "A trace read from a harness event has none of the six terms: its candidates show the "
        "harness's own score, provider score, scri and recall mode, labelled as the "
        "harness's. Secret and policy-filtered candidates show no text.\n\n"
        "Enter on a candidate opens what it points at: an entry on the Transcript screen, a "
        "memory on the Memories screen. y copies the selected trace id or candidate source.\n\n"
        "n opens a new recall: the query, and the cue as `lca-tui recall` takes it — role, "
        "project, channel (private, shared: private memories penalised, public: filtered) and "
        "historical (superseded memories may be used); enter runs it in the background, "
        "stores its trace and opens it; esc clears the query, esc again closes the form. "
        "r re-runs the highlighted trace with today's settings and store and shows what moved "
        "(rank and decision before → now; candidates of equal score trading places is not a "
        "move), or says that nothing moved; re-runs are marked in the traces list (origin "
        "\"re-run N\"). / filters the focused list (traces by query, candidates by decision "
        "or source), b hides the traces list, z fills the screen with the focused pane."
    )
    AUTO_FOCUS = "#recall-traces"
    SIDE_PANE = "#recall-traces"
    SIDE_NAME = "Traces"
    OPENS: ClassVar[frozenset[str]] = frozenset({"trace"})
    FOLLOWS = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new_recall", "New recall", id="recall-new"),
        Binding("r", "rerun", "Re-run", id="recall-rerun"),
        Binding("escape", "leave_input", "Back", show=False, id="recall-escape"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.traces: list[Trace] = []
        self.trace: Trace | None = None
        self.trace_id: int | None = None
        self.moves: dict[str, Move] = {}
        self.moves_for: int | None = None
        self.moved_note = ""
        self._candidate_keys: tuple[str, ...] = ()

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="recall"):
            with Horizontal(id="recall-form", classes="panel"):
                yield Input(placeholder="query: enter runs, esc clears", id="recall-input",
                            compact=True)
                yield Input(placeholder="role", id="recall-role", compact=True)
                yield Input(placeholder="project", id="recall-project", compact=True)
                yield Select([(c, c) for c in CHANNELS], value="private", allow_blank=False,
                             id="recall-channel", compact=True)
                yield Checkbox("historical", id="recall-historical", compact=True)
            yield FilterTable(id="recall-traces", classes="panel", filter_columns=("query",),
                              filter_label="traces", stretch="query", stretch_min=20)
            with Vertical(id="recall-trace", classes="panel"):
                yield Static(id="recall-head", markup=False)
                yield Static(id="recall-legend", markup=False)
                yield FilterTable(id="recall-candidates", filter_label="candidates",
                                  filter_columns=("decision", "source"), stretch="reason",
                                  stretch_min=12)
            with VerticalScroll(id="recall-detail", classes="panel"):
                yield Static(id="recall-detail-text", markup=False)
        yield FitFooter()

    def on_mount(self) -> None:
        traces = self.query_one("#recall-traces", DataTable)
        traces.border_title = "Traces"
        for label, key, width in (("time", "ts", 19), ("origin", "origin", 10),
                                  (Text("ms", justify="right"), "ms", 6),
                                  (Text("injected", justify="right"), "inj", 8),
                                  ("query", "query", 40)):
            traces.add_column(label, key=key, width=width)
        self._candidate_columns(with_moves=False)
        self.query_one("#recall-form").display = False
        self.query_one("#recall-form").border_title = (
            "New recall (the cue as `lca-tui recall` takes it)")
        self.query_one("#recall-trace").border_title = "Trace"
        self.query_one("#recall-detail-text", Static).update(Text(
            "No trace yet: press n to run a recall.", style="dim"))

    def _candidate_columns(self, with_moves: bool) -> None:
        """The candidate columns that fit the table's width (``candidate_columns``), the
        reason column stretched over what they leave."""
        table = self.query_one("#recall-candidates", FilterTable)
        width = table.content_region.width or max(0, self.app.size.width - 4)
        cols = candidate_columns(width - table.styles.scrollbar_size_vertical, with_moves)
        self._candidate_keys = tuple(key for _, key, _ in cols)
        table.clear(columns=True)
        for label, key, w in cols:
            table.add_column(label, key=key, width=w)
        table.fit_stretch()

    def on_resize(self, event: Resize) -> None:
        super().on_resize(event)
        self.call_after_refresh(self._refit_candidates)

    def _refit_candidates(self) -> None:
        """Show the trace again when another set of candidate columns fits the new width."""
        table = self.query_one("#recall-candidates", FilterTable)
        if not table.content_region.width:
            return
        fits = candidate_columns(table.content_region.width
                                 - table.styles.scrollbar_size_vertical,
                                 self.moves_for is not None and self.moves_for == self.trace_id)
        if tuple(key for _, key, _ in fits) == self._candidate_keys:
            return
        if self.trace is not None:
            keep = table.cursor_row
            self._show_trace(self.trace)
            if keep < table.row_count:
                table.move_cursor(row=keep, animate=False)
        else:
            self._candidate_columns(with_moves=False)

    # -- loading ---------------------------------------------------------------------------
    def load_data(self) -> RecallData:
        traces = self.lca.store.traces()
        wanted = self.trace_id if self.trace_id is not None else (
            traces[0].id if traces else None)
        trace = None
        if wanted is not None and any(t.id == wanted for t in traces):
            trace = self.lca.store.trace(wanted)
        return RecallData(traces, trace)

    def read_changes(self, changes: Changes) -> list[Trace] | None:
        """The traces newer than those known (none when no trace was written)."""
        if changes.since is None or not changes.moved("trace"):
            return None
        return self.lca.store.traces(after_id=changes.since.trace)

    def apply_changes(self, changes: Changes, part: list[Trace] | None) -> None:
        if not part:
            return
        known = {t.id for t in self.traces}
        new = [t for t in part if t.id not in known]
        merged = sorted(new + self.traces, key=lambda t: t.id or 0, reverse=True)
        self.traces = sorted(merged, key=lambda t: t.ts, reverse=True)[:TRACE_LIMIT]
        table = self.query_one("#recall-traces", FilterTable)
        table.border_title = f"Traces ({len(self.traces):,})"
        keep = str(self.trace_id) if self.trace_id is not None else None
        keep_place(table, lambda: self._fill_traces(self.trace_id), key=keep)
        if self.trace_id is None and self.traces:
            self.trace_id = self.traces[0].id
            self._load_trace(self.traces[0].id)

    def _fill_traces(self, selected: int | None) -> None:
        table = self.query_one("#recall-traces", DataTable)
        with self.prevent(DataTable.RowHighlighted):
            table.clear()
            for t in self.traces:
                origin = f"re-run {t.rerun_of}" if t.rerun_of else t.origin.replace("-event", "")
                table.add_row(cell(when(t.ts, with_seconds=True)), cell(origin),
                              Text("-" if t.latency_ms is None else f"{t.latency_ms:.1f}",
                                   justify="right"),
                              Text(f"{t.injected} / {t.considered}", justify="right"),
                              cell(t.query), key=str(t.id))
            if selected is not None and str(selected) in table.rows:
                table.move_cursor(row=table.get_row_index(str(selected)), animate=False)

    def show_data(self, data: RecallData) -> None:
        self.traces = data.traces
        table = self.query_one("#recall-traces", DataTable)
        table.border_title = f"Traces ({len(data.traces):,})"
        opened = self.trace_id
        if data.trace is not None and opened is not None and data.trace.id != opened:
            # a trace opened after this load began (the palette, another screen, a row
            # highlighted): it stays; its own read shows it (RecallDone), or has already
            self._fill_traces(opened)
        else:
            self._fill_traces(data.trace.id if data.trace is not None else None)
            if data.trace is not None:
                self._show_trace(data.trace)
        if data.trace is None and not data.traces:
            self.query_one("#recall-head", Static).update(Text(
                "No recall traces in this store yet. Press n and type a query to run one "
                "(or `lca-tui recall QUERY`).", style="dim"))

    @on(DataTable.RowHighlighted, "#recall-traces")
    def _trace_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        if key is not None and int(key) != self.trace_id:
            self.trace_id = int(key)
            self._load_trace(int(key))

    @work(thread=True, exclusive=True, group="trace", exit_on_error=False)
    def _load_trace(self, trace_id: int) -> None:
        self.post_message(RecallDone(self.lca.store.trace(trace_id)))

    # -- a trace -----------------------------------------------------------------------------
    def _show_trace(self, trace: Trace) -> None:
        same = self.trace is not None and self.trace.id == trace.id
        keep = self.highlighted_candidate() if same else None  # a reload keeps the cursor
        self.trace, self.trace_id = trace, trace.id
        showing_moves = self.moves_for == trace.id
        cue = [f"{k} {v}" for k, v in (("role", trace.role), ("project", trace.project))
               if v] + [f"channel {trace.channel}"] + (["historical"] if trace.historical
                                                       else [])
        origin = f"re-run of trace {trace.rerun_of}" if trace.rerun_of else trace.origin
        # the query first: on a short terminal the head shows two lines
        head = Text("query: ", style="dim", end="")
        head.append(safe_text(trace.query))
        if showing_moves and self.moved_note:
            head.append(f"\n{self.moved_note}", style="bold")
        head.append("\n")
        head.append(join([Text(f"trace {trace.id}", style="bold"),
                          when(trace.ts, with_seconds=True),
                          origin, ", ".join(cue),
                          f"{trace.model or 'model n/a'}" + (" DEGRADED" if trace.degraded
                                                             else ""),
                          f"{trace.latency_ms:.1f} ms" if trace.latency_ms is not None
                          else "", f"injected {trace.injected} of {trace.considered}"]))
        s = trace.settings
        if trace.origin == "lca-tui":
            head.append("\nsettings: ", style="dim")
            head.append(", ".join(f"{k}={v}" for k, v in s.items()))
        else:
            head.append("\nfrom a harness event: ", style="dim")
            head.append(", ".join(f"{k}={v}" for k, v in s.items()
                                  if v is not None and k != "hits"))
        self.query_one("#recall-head", Static).update(head)
        palette = palette_from_theme(self.app.current_theme)
        self.query_one("#recall-legend", Static).update(legend_text(palette, s))
        self._candidate_columns(with_moves=showing_moves)
        table = self.query_one("#recall-candidates", DataTable)
        scale = scale_for([c.contributions for c in trace.candidates], BAR_WIDTH, NEG_CELLS)
        self.query_one("#recall-trace").border_title = (
            f"Trace {trace.id}: {plural(len(trace.candidates), 'candidate')}")
        for c in trace.candidates:
            cells: dict[str, Any] = {
                "rank": Text(str(c.rank), justify="right"),
                "decision": cell(c.decision, style=DECISION_STYLE.get(c.decision, "dim")),
                "source": cell(self._source(c))}
            cells.update({t: Text(_term(c.terms.get(t)), justify="right") for t in "SETAQK"})
            cells["score"] = Text("" if c.score is None else f"{c.score:.3f}", justify="right")
            if "bar" in self._candidate_keys:
                cells["bar"] = bar_text(c.contributions, BAR_WIDTH, scale, NEG_CELLS, palette)
            if showing_moves:
                cells["moved"] = cell(self._moved(c))
            cells["reason"] = cell(c.reason, style="dim")
            table.add_row(*(cells[k] for k in self._candidate_keys), key=str(c.rank))
        if keep is not None and str(keep.rank) in table.rows:
            table.move_cursor(row=table.get_row_index(str(keep.rank)), animate=False)
        elif trace.candidates:
            self._show_candidate(trace.candidates[0])
        self.loaded("trace")  # a trace's candidates on screen (the tour places its row here)

    @staticmethod
    def _source(c: Candidate) -> str:
        if c.masked:
            return f"{c.pointer} {MASK}"
        return f"{c.pointer} {c.label or c.kind or ''}".strip()

    def _moved(self, c: Candidate) -> str:
        move = self.moves.get(c.pointer)
        if move is None or move.old_rank is None:
            return "new"
        if move.tie_only and move.old_decision == move.new_decision:
            return "= equal score"
        parts = []
        if move.old_rank != move.new_rank:
            delta = move.old_rank - (move.new_rank or 0)
            parts.append(f"{'▲' if delta > 0 else '▼'}{abs(delta)} from #{move.old_rank}")
        if move.old_decision != move.new_decision:
            parts.append(f"was {move.old_decision}")
        return ", ".join(parts) or "="

    @on(DataTable.RowHighlighted, "#recall-candidates")
    def _candidate_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.trace is None or event.row_key.value is None:
            return
        rank = int(event.row_key.value)
        match = next((c for c in self.trace.candidates if c.rank == rank), None)
        if match is not None:
            self._show_candidate(match)

    def _show_candidate(self, c: Candidate) -> None:
        out = join([Text(f"#{c.rank}", style="bold"), Text(c.decision, style="bold"),
                    self._source(c)])
        settings = self.trace.settings if self.trace is not None else {}
        if c.terms.get("S") is not None:
            w = float(settings.get("cos_weight", 0.7))
            cos = "n/a (no comparable vector)" if c.cos is None else f"{c.cos:.3f}"
            own = w * (c.cos or 0.0) + (1 - w) * (c.lex or 0.0)
            s = float(c.terms["S"] or 0.0)  # not None: checked above
            if c.adj is not None and s > own + 5e-4:
                mu = float(settings.get("adjacent_weight", 0.0))
                head = (f"\nS {s:.3f} = (own + {mu:g}·adj {c.adj:.3f}) / {1 + mu:g}, raised by "
                        f"the entries beside it; own {own:.3f} = ")
            else:
                head = f"\nS {s:.3f} = "
            out.append(head + f"{w:g}·cos {cos} + {1 - w:g}·lex "
                       f"{c.lex or 0:.3f}   contributions: " + "  ".join(
                           f"{k} {v:+.3f}" for k, v in c.contributions.items())
                       + f"   score {c.score:.3f}")
        elif c.harness is not None or c.score is not None:
            out.append("\n" + harness_line(c))
        out.append("\nreason: ", style="dim")
        out.append(safe_text(c.reason))
        out.append("\ntext: ", style="dim")
        out.append(Text(MASK + " (withheld: secret or policy-filtered)", style="italic")
                   if c.masked else safe_text(c.excerpt or ""))
        self.query_one("#recall-detail-text", Static).update(out)
        self.query_one("#recall-detail", VerticalScroll).scroll_home(animate=False)

    # -- new recall, re-run ------------------------------------------------------------------
    def action_new_recall(self) -> None:
        self.query_one("#recall-form").display = True
        self.query_one("#recall-input", Input).focus()

    def action_leave_input(self) -> None:
        """Esc in the form: clear the query first, then close the form."""
        form = self.query_one("#recall-form")
        query = self.query_one("#recall-input", Input)
        if form.display and self.focused is not None and self.focused in form.walk_children():
            if query.value:
                query.value = ""
                query.focus()
                return
            form.display = False
        self.query_one("#recall-traces", DataTable).focus()

    def cue(self) -> dict[str, Any]:
        """The form's cue, as ``lca-tui recall`` takes it."""
        role = self.query_one("#recall-role", Input).value.strip() or None
        project = self.query_one("#recall-project", Input).value.strip() or None
        channel = self.query_one("#recall-channel", Select).value
        return {"role": role, "project": project,
                "channel": channel if channel in CHANNELS else "private",
                "historical": self.query_one("#recall-historical", Checkbox).value}

    @on(Input.Submitted, "#recall-form Input")
    def _submitted(self, event: Input.Submitted) -> None:
        query = self.query_one("#recall-input", Input).value.strip()
        if not query:
            self.notify("Type what to recall first: an empty query recalls nothing.",
                        severity="warning", markup=False)
            self.query_one("#recall-input", Input).focus()
            return
        self.query_one("#recall-detail-text", Static).update(Text(f"recalling {query!r}…",
                                                                  style="dim"))
        self._run_recall(query, self.cue())

    @work(thread=True, exclusive=True, group="recall", exit_on_error=False)
    def _run_recall(self, query: str, cue: dict[str, Any]) -> None:
        result = self.lca.store.recall(query, cue["role"], cue["project"], cue["channel"],
                                       cue["historical"], now=self.lca.now())
        self.post_message(RecallDone(result.trace))

    def action_rerun(self) -> None:
        if self.trace is None:
            self.notify("No trace to re-run.", severity="warning")
            return
        if self.trace.origin != "lca-tui":
            self.notify("This trace came from a harness event: its settings are not "
                        "lca-tui's, so it cannot be re-run.", severity="warning", markup=False)
            return
        self._run_rerun(int(self.trace.id or 0))

    @work(thread=True, exclusive=True, group="recall", exit_on_error=False)
    def _run_rerun(self, trace_id: int) -> None:
        result, moves = self.lca.store.rerun(trace_id, now=self.lca.now())
        self.post_message(RecallDone(result.trace, moves))

    @on(RecallDone)
    def _recall_done(self, message: RecallDone) -> None:
        message.stop()
        if message.moves is not None:
            self.moves = {m.pointer: m for m in message.moves}
            self.moves_for = message.trace.id
            self.moved_note = (f"re-run of trace {message.trace.rerun_of}: "
                               + moves_line(message.moves))
            self.notify(self.moved_note, markup=False)
        fresh = message.trace.id not in {t.id for t in self.traces}
        self._show_trace(message.trace)
        if fresh:
            self.loaded("recall")
            self.query_one("#recall-input", Input).value = ""
            self.query_one("#recall-form").display = False
            self.query_one("#recall-candidates", DataTable).focus()
            self.reload()

    # -- drill-through -------------------------------------------------------------------------
    def shown(self) -> RecordRef | None:
        """The trace whose candidates are on screen (``Shows``)."""
        return None if self.trace is None else RecordRef("trace", int(self.trace.id or 0))

    def open_record(self, ref: RecordRef) -> None:
        self.open_trace(int(ref.id))

    def open_trace(self, trace_id: int) -> None:
        """Show trace ``trace_id`` (from the palette or another screen)."""
        self.trace_id = trace_id
        table = self.query_one("#recall-traces", FilterTable)
        if str(trace_id) in table.rows:
            with self.prevent(DataTable.RowHighlighted):
                table.move_cursor(row=table.get_row_index(str(trace_id)), animate=False)
        self._load_trace(trace_id)
        table.focus()

    def highlighted_candidate(self) -> Candidate | None:
        key = self.query_one("#recall-candidates", FilterTable).cursor_key()
        if self.trace is None or key is None:
            return None
        return next((c for c in self.trace.candidates if c.rank == int(key)), None)

    @on(DataTable.RowSelected, "#recall-candidates")
    async def _candidate_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a candidate: its entry on Transcript, or its memory on Memories."""
        c = self.highlighted_candidate()
        if c is None:
            return
        if c.source_type == "entry" and c.session_id is not None and c.seq is not None:
            self.post_message(OpenRecord(RecordRef("session", c.session_id, c.seq)))
        elif c.source_type == "memory" and c.source_id is not None:
            self.post_message(OpenRecord(RecordRef("memory", c.source_id)))
        else:
            self.notify(f"{visible(c.pointer)} is not in this store (a harness's own item).",
                        markup=False)

    def copy_what(self, value: str) -> str:
        if self.focused is not self.query_one("#recall-candidates"):
            return "trace"
        return super().copy_what(value)

    def selected_id(self) -> str | None:
        """The trace's id, or the candidate's source (session id + seq, or memory id)."""
        if self.focused is self.query_one("#recall-candidates"):
            c = self.highlighted_candidate()
            if c is None:
                return None
            if c.source_type == "entry" and c.session_id is not None:
                return f"{c.session_id}#{c.seq}"
            return c.pointer
        return str(self.trace_id) if self.trace_id is not None else None
