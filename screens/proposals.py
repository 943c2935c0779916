"""Proposals (screen 4): the approval queue for governed memory writes, one proposal's
candidate, diff, checks with their evidence, and the keys that decide it.

On a change in the store the screen reads only the proposals written or updated since
(``Store.changes_since``, then ``proposals(ids=…)``): a changed row is updated in its cells
where the queue's order holds, else the queue is laid out again from the rows in memory with
the cursor on the same proposal; the detail is read again when its proposal was touched."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from screens.base import NARROW, FilterInput, StoreScreen, keep_place
from screens.navigation import OpenRecord
from screens.proposal_modals import (
    ApproveChoice,
    ApproveModal,
    ConfirmModal,
    EditModal,
    EditResult,
    ReasonModal,
    approval_effect,
)
from screens.proposal_view import (
    ORIGIN_LABEL,
    ProposalDetail,
    candidate_text,
    checks_cell,
    checks_group,
    diff_sides,
    evidence_text,
    head_text,
    load_detail,
    op_label,
    options_text,
    outcome_text,
    target_label,
)
from store import (
    NEEDS_CONTENT,
    ProposalError,
    ProposalSummary,
    RecordRef,
    StoreError,
)
from store import plural
from widgets.footer import FitFooter
from widgets.diff_view import DiffView
from widgets.fmt import ago
from widgets.safe import cell
from widgets.table import FilterTable

if TYPE_CHECKING:
    from store import Changes

NAME_ROOM = 24  # the name keeps 16 + this many cells before op and target grow (160 columns)
DECIDABLE = ("pending", "failed")
UNDO_MINUTES = 5  # how long after an approval made here ``u`` offers to undo it
UNDOABLE = ("add", "revise", "supersede")  # a merge is reverted by version (`lca-tui revert`)
STATUS_SHORT = {"pending": "pend", "approved": "appr", "applied": "done", "rejected": "rej",
                "failed": "FAIL"}


@dataclass
class QueueData:
    rows: list[ProposalSummary]
    detail: ProposalDetail | None


@dataclass
class DetailLoaded(Message):
    detail: ProposalDetail
    token: int


@dataclass
class Decided(Message):
    """A decision (approve, reject, edit) finished: the proposal after it, or the error."""

    action: str
    proposal_id: int
    detail: ProposalDetail | None = None
    error: str | None = None


@dataclass
class PassDone(Message):
    report: Any


def order(rows: list[ProposalSummary]) -> list[ProposalSummary]:
    """The queue: pending first, oldest first (the order they came in), then the decided,
    the latest decision first — so the proposal just decided stays next to the pending ones,
    and the rows in view around it are those still to decide."""
    pending = sorted((r for r in rows if r.status == "pending"), key=lambda r: (r.created, r.id))
    done = sorted((r for r in rows if r.status != "pending"),
                  key=lambda r: (r.decided or r.created, r.id), reverse=True)
    return pending + done


def pass_summary(report: Any) -> str:
    """One line for a consolidation pass's report."""
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(report.by_kind.items()) if v)
    skipped = sum(report.skipped.values())
    n = report.proposals_added
    out = (f"pass over {plural(len(report.sessions), 'session')}"
           f": {plural(n, 'proposal')} added" + (f" ({kinds})" if kinds else "")
           + f", {skipped} already known")
    if report.proposer.get("ran"):
        out += "; proposer " + (f"FAILED: {report.proposer['error']}"
                                if report.proposer.get("error") else "ok")
    if report.errors:
        out += f"; {plural(len(report.errors), 'problem')}: " \
            + report.errors[0]
    return out


class ProposalsScreen(StoreScreen):
    """The approval queue for consolidation proposals."""

    HELP: ClassVar[str] = (
        "Proposals: every candidate durable write — from the consolidation pass, the harness "
        "(API or a harness approval event), a memory file changed outside the gate, the "
        "proposer command or `lca-tui propose` — with the checks the store ran on it.\n\n"
        "The queue (top): pending proposals first, in the order they came, then the decided "
        "ones, the latest decision first (so the one just decided stays beside those still "
        "to decide): id, status, operation and memory type, where it came from "
        "(pass, harness, event, file, proposer, cli), the target memory, the checks that did "
        "not pass (✗ failed, ! warned: dup duplicate, contra contradiction, support source "
        "support, budget critical budget, risk procedure/identity, verifier), and its age. "
        "It follows the store: a proposal written by another process appears by itself.\n\n"
        "The detail (below): the candidate's text and metadata, a line diff against the "
        "target memory for revise / supersede / merge, every check with its evidence — each "
        "sentence's source span quoted from the transcript or marked as inference, the "
        "conflicting memory side by side with the sentences that disagree —, the evidence "
        "pointers, and what approval allows. Once decided: the decision and the "
        "verification of the write, step by step.\n\n"
        "Keys: a approves (offering exactly the choices the checks allow: over a "
        "contradiction supersede or keep-both with a reason, over a duplicate reinforce; "
        "a plain approval asks y / n and says what it will write), r rejects (a reason is "
        "required), e edits the text in place (E in $VISUAL / $EDITOR), n goes to the next "
        "pending proposal, c runs a consolidation pass in the background and says what it "
        "found, o opens the first evidence entry in Transcript, m the target (or written) "
        "memory in Memories. / filters the queue, z maximises the focused pane (esc "
        "restores), b hides the queue, y copies the proposal's id, g / G top and bottom."
    )
    AUTO_FOCUS = "#proposal-queue"
    SIDE_PANE = "#proposal-queue"
    SIDE_NAME = "Queue"
    OPENS: ClassVar[frozenset[str]] = frozenset({"proposal"})
    COPY_WHAT = "proposal"  # y says what it copied
    FOLLOWS = True
    WRITES: ClassVar[frozenset[str]] = frozenset(
        {"approve", "reject", "edit", "edit_external", "consolidate"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "approve", "Approve", id="proposals-approve"),
        Binding("r", "reject", "Reject", id="proposals-reject"),
        Binding("e", "edit", "Edit", id="proposals-edit"),
        Binding("E", "edit_external", "$EDITOR", show=False, id="proposals-edit-external"),
        Binding("n", "next", "Next", id="proposals-next"),
        Binding("c", "consolidate", "Pass", id="proposals-pass",
                tooltip="Run a consolidation pass over the sessions"),
        Binding("o", "open_source", "Source", show=False, id="proposals-source"),
        Binding("m", "open_memory", "Memory", show=False, id="proposals-memory"),
        Binding("b", "toggle_side", "Queue", id="side", tooltip="Hide or show the queue"),
        Binding("u", "undo", "Undo", id="proposals-undo",
                tooltip="Propose undoing the approval just made (for a few minutes)"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: list[ProposalSummary] = []
        self.detail: ProposalDetail | None = None
        self.selected: int | None = None
        self.last_pass: str | None = None
        self._token = 0
        self._narrow_cols: bool | None = None
        self._busy: str | None = None
        self._undo: tuple[int, float] | None = None  # (approval, when) that u may undo
        self.clock: Callable[[], float] = time.monotonic  # tests move it past the window

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="proposals"):
            yield FilterTable(id="proposal-queue", classes="panel", filter_label="proposals",
                              stretch="name")
            with VerticalScroll(id="proposal-detail", classes="panel"):
                yield Static(id="pd-head", markup=False)
                yield Static(id="pd-outcome", markup=False, classes="pd-section")
                yield Static(Text("Candidate", style="bold"), classes="pd-title")
                yield Static(id="pd-candidate", markup=False)
                yield Static(Text("Diff against the target", style="bold"),
                             id="pd-diff-title", classes="pd-title")
                yield DiffView(id="pd-diff")
                yield Static(Text("Checks", style="bold"), classes="pd-title")
                yield Static(id="pd-checks", markup=False)
                yield Static(Text("Evidence", style="bold"), classes="pd-title")
                yield Static(id="pd-evidence", markup=False)
                yield Static(Text("Approval", style="bold"), id="pd-options-title",
                             classes="pd-title")
                yield Static(id="pd-options", markup=False)
        yield FitFooter()

    def on_mount(self) -> None:
        self.query_one("#proposal-queue").border_title = "Queue"
        self.query_one("#proposal-detail").border_title = "Proposal"
        self._columns()
        self._show_detail(None)

    def on_resize(self, event: Any) -> None:
        if self._narrow_cols != (event.size.width < NARROW):
            self._columns()
            self.refill()

    def _columns(self) -> None:
        """The queue's columns: below 100 columns the name goes (the detail shows it) and the
        others narrow; above, the name takes the width the others leave."""
        narrow = self.size.width < NARROW
        self._narrow_cols = narrow
        table = self.query_one("#proposal-queue", FilterTable)
        table.clear(columns=True)
        cols: list[tuple[Any, str, int]] = [
            (Text("id", justify="right"), "id", 3), ("status", "status", 8 if not narrow
                                                     else 4),
            ("op · type", "op", 18 if not narrow else 15), ("origin", "origin", 8),
            ("target" if not narrow else "tgt", "target", 6 if not narrow else 4),
            ("checks", "checks", 20 if not narrow else 17), ("age", "age", 6)]
        if not narrow:
            cols.append(("name", "name", 16))
            # room to spare (160 columns): op and target whole — `add → reinforce feedback`,
            # `#16, #6` — before the name stretches; at 100 they stay as they were
            spare = self.size.width - 4 - sum(w + 2 for _, _, w in cols) - NAME_ROOM
            grow = {"op": min(6, max(0, spare)), "target": min(5, max(0, spare - 6))}
            cols = [(label, key, width + grow.get(key, 0)) for label, key, width in cols]
        for label, key, width in cols:
            table.add_column(label, key=key, width=width)
        table.fit_stretch()

    def _styles(self) -> dict[str, Style]:
        theme = self.app.current_theme
        return {"fail": Style(color=theme.error), "warn": Style(color=theme.warning),
                "pass": Style(color=theme.success)}

    # -- loading -------------------------------------------------------------------------
    def load_data(self) -> QueueData:
        rows = order(self.lca.store.proposals())
        wanted = self.selected if any(r.id == self.selected for r in rows) else (
            rows[0].id if rows else None)
        detail = load_detail(self.lca.store, wanted) if wanted is not None else None
        return QueueData(rows, detail)

    def read_changes(self, changes: Changes) -> QueueData | None:
        """The proposals touched since, and the selected one's detail if it is among them."""
        if not changes.proposals:
            return None
        rows = self.lca.store.proposals(ids=changes.proposals)
        selected = self.selected
        detail = load_detail(self.lca.store, selected) if selected in changes.proposals \
            and selected is not None else None
        return QueueData(rows, detail)

    def apply_changes(self, changes: Changes, part: QueueData | None) -> None:
        if part is None:
            return
        table = self.query_one("#proposal-queue", FilterTable)
        before = [r.id for r in self.rows]
        fresh = {r.id: r for r in part.rows}
        merged = [fresh.pop(r.id, r) for r in self.rows] + list(fresh.values())
        self.rows = order(merged)
        self._retitle_queue()
        if [r.id for r in self.rows] == before:  # the order holds: the touched cells only
            styles, keys = self._styles(), [k.value for k in table.columns]
            for r in part.rows:
                for key, value in zip(keys, self._row_cells(r, styles), strict=False):
                    table.update_cell(str(r.id), key, value)
        else:
            keep_place(table, self.refill)
        if part.detail is not None and part.detail.info.id == self.selected:
            self._show_detail(part.detail)
        elif self.selected is None and self.rows:
            self._follow_cursor(table)

    def _retitle_queue(self) -> None:
        pending = sum(1 for r in self.rows if r.status == "pending")
        self.query_one("#proposal-queue", DataTable).border_title = \
            f"Queue · {pending} pending of {len(self.rows)}"

    def show_data(self, data: QueueData) -> None:
        self.rows = data.rows
        self._retitle_queue()
        if self.selected is None and data.detail is not None:
            self.selected = data.detail.info.id
        self.refill()
        if data.detail is not None and data.detail.info.id == self.selected:
            self._show_detail(data.detail)
        elif not data.rows:
            self._show_detail(None)

    def _row_cells(self, r: ProposalSummary, styles: dict[str, Style]) -> list[Any]:
        status_style: dict[str, str | Style] = {"pending": "bold", "rejected": "dim",
                                                "failed": styles["fail"]}
        status = STATUS_SHORT.get(r.status, r.status) if self._narrow_cols else r.status
        cells: list[Any] = [
            Text(str(r.id), justify="right"), cell(status, style=status_style.get(
                r.status, "")),
            cell(f"{op_label(r)} {r.type or ''}".strip()),
            cell(ORIGIN_LABEL.get(r.origin, r.origin)), cell(target_label(r)),
            checks_cell(r, styles), cell(ago(r.created, self.lca.now()).replace(" ago", ""))]
        if not self._narrow_cols:
            cells.append(cell(r.name or ""))
        return cells

    def refill(self) -> None:
        """Fill the queue from the loaded rows (the table's filter applies as it fills)."""
        table = self.query_one("#proposal-queue", FilterTable)
        styles = self._styles()
        with self.prevent(DataTable.RowHighlighted):
            table.clear()
            for r in self.rows:
                table.add_row(*self._row_cells(r, styles), key=str(r.id))
            if self.selected is not None and str(self.selected) in table.rows:
                table.move_cursor(row=table.get_row_index(str(self.selected)), animate=False)
        self._follow_cursor(table)
        table.border_subtitle = table.summary() or (self.last_pass or "")

    def _follow_cursor(self, table: FilterTable) -> None:
        """When the filter hides the selected proposal, show the row the cursor is on."""
        key = table.cursor_key()
        if key is not None and (self.selected is None or str(self.selected) not in table.rows):
            self.selected = int(key)
            self._request_detail(self.selected)

    def filter_changed(self, table: FilterTable) -> None:
        super().filter_changed(table)
        if table.id == "proposal-queue":
            self._follow_cursor(table)
            table.border_subtitle = table.summary() or (self.last_pass or "")

    @on(DataTable.RowHighlighted, "#proposal-queue")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        if key is not None and int(key) != self.selected:
            self.selected = int(key)
            self._request_detail(int(key))

    def _request_detail(self, proposal_id: int) -> None:
        self._token += 1
        self._load_detail(proposal_id, self._token)

    @work(thread=True, exclusive=True, group="proposal-detail", exit_on_error=False)
    def _load_detail(self, proposal_id: int, token: int) -> None:
        self.post_message(DetailLoaded(load_detail(self.lca.store, proposal_id), token))

    @on(DetailLoaded)
    def _detail_loaded(self, message: DetailLoaded) -> None:
        if message.token == self._token and message.detail.info.id == self.selected:
            self._show_detail(message.detail)

    def shown(self) -> RecordRef | None:
        """The proposal selected in the queue (``Shows``)."""
        return None if self.selected is None else RecordRef("proposal", self.selected)

    def open_record(self, ref: RecordRef) -> None:
        self.open_proposal(int(ref.id))

    def open_proposal(self, proposal_id: int) -> None:
        """Show ``proposal_id`` (from another screen): select its row, load its detail."""
        self.selected = proposal_id
        table = self.query_one("#proposal-queue", FilterTable)
        if table.filter_text and str(proposal_id) not in table.rows:
            for field in self.query(FilterInput):
                if field.table is table:
                    field.action_clear_filter()
        self.refill()
        self._request_detail(proposal_id)
        self.query_one("#proposal-queue", DataTable).focus()

    # -- the detail ----------------------------------------------------------------------
    def _show_detail(self, detail: ProposalDetail | None) -> None:
        before = self.detail.info.id if self.detail is not None else None
        self.detail = detail
        pane = self.query_one("#proposal-detail", VerticalScroll)
        if detail is None or detail.info.id != before:  # another proposal: from its top
            pane.scroll_home(animate=False, immediate=True)
        head = self.query_one("#pd-head", Static)
        sections = pane.query(".pd-title, #pd-candidate, #pd-diff, #pd-checks, #pd-evidence, "
                              "#pd-options, #pd-outcome")
        if detail is None:
            for w in sections:
                w.display = False
            head.update(Text("No proposals in this store yet. They come from the "
                             "consolidation pass (press c, or `lca-tui consolidate`), a "
                             "harness (`Store.propose`, `lca-tui propose FILE`) and memory "
                             "files changed outside the gate.", style="dim", end=""))
            pane.border_title = "Proposal"
            return
        for w in sections:
            w.display = True
        info = detail.info
        styles = self._styles()
        pane.border_title = f"Proposal {info.id} · {info.status}"
        head.update(head_text(info, self.lca.now()))
        outcome = outcome_text(info, styles)
        self.query_one("#pd-outcome", Static).display = outcome is not None
        if outcome is not None:
            self.query_one("#pd-outcome", Static).update(outcome)
        self.query_one("#pd-candidate", Static).update(candidate_text(info))
        sides = diff_sides(info)
        diff = self.query_one("#pd-diff", DiffView)
        self.query_one("#pd-diff-title").display = diff.display = sides is not None
        if isinstance(sides, tuple):
            old, new, label = sides
            diff.show(old, new, label, f"proposal {info.id}")
        elif isinstance(sides, str):
            diff.show_note(sides)
        self.query_one("#pd-checks", Static).update(checks_group(detail, styles))
        self.query_one("#pd-evidence", Static).update(evidence_text(detail))
        decidable = info.status in DECIDABLE and info.summary.op is not None
        self.query_one("#pd-options-title").display = decidable
        self.query_one("#pd-options", Static).display = decidable
        if decidable:
            self.query_one("#pd-options", Static).update(options_text(info))
        pane.border_subtitle = ("a approve · r reject · e edit · n next" if decidable
                                else "z zoom · b hide the queue")
        self.loaded("detail")
        self.refresh_bindings()

    # -- deciding ------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # a key that cannot act on the shown proposal is not shown; while a decision or a
        # pass runs, the decide keys are shown but off
        info = self.detail.info if self.detail is not None else None
        decidable = info is not None and info.status in DECIDABLE and \
            info.summary.op is not None
        busy = None if self._busy is not None else True
        if action in ("approve", "reject"):
            return decidable and busy
        if action in ("edit", "edit_external"):
            editable = decidable and info is not None and info.summary.op in NEEDS_CONTENT \
                and not info.masked and info.status == "pending"
            if action == "edit_external":
                return (editable and bool(_editor()) and busy) or None  # E is not in the footer
            return editable and busy
        if action == "consolidate":
            return self._busy is None or None
        if action == "undo":  # offered only for a few minutes after this screen's approval
            return self._busy is None and self._undoable() is not None
        if action == "next":
            return any(r.status == "pending" for r in self.rows)
        return super().check_action(action, parameters)

    def _memory_dir(self) -> str | None:
        return str(self.lca.store.settings["memory.dir"] or "").strip() or None

    def action_approve(self) -> None:
        if self.detail is None or self.refused_read_only("approving a proposal"):
            return
        info = self.detail.info
        allowed = [o for o in info.options if o.allowed]
        if not allowed:
            self.notify(f"proposal {info.id} cannot be approved: "
                        + "; ".join(o.why for o in info.options), severity="warning",
                        markup=False)
            return
        if len(allowed) == 1 and len(info.options) == 1 and not allowed[0].needs_reason:
            only = allowed[0]

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self._decide("approve", info.id, ApproveChoice(only.as_op, None))

            self.app.push_screen(ConfirmModal(
                f"Approve proposal {info.id}?",
                approval_effect(info, only, self._memory_dir())), confirmed)
            return

        def chosen(choice: ApproveChoice | None) -> None:
            if choice is not None:
                self._decide("approve", info.id, choice)

        self.app.push_screen(ApproveModal(info, self._memory_dir()), chosen)

    def action_reject(self) -> None:
        if self.detail is None or self.refused_read_only("rejecting a proposal"):
            return
        info = self.detail.info

        def given(reason: str | None) -> None:
            if reason:
                self._decide("reject", info.id, reason)

        self.app.push_screen(ReasonModal(
            f"Reject proposal {info.id}?",
            f"Proposal {info.id} ({info.summary.op} '{info.summary.name or ''}') becomes "
            "rejected: nothing is written to the memories, the reason is kept with it, and a "
            "later consolidation pass will not propose the same text again."), given)

    def action_edit(self) -> None:
        if self.detail is None or self.refused_read_only("editing a proposal"):
            return
        info = self.detail.info

        def saved(result: EditResult | None) -> None:
            if result is not None:
                self._decide("edit", info.id, result)

        self.app.push_screen(EditModal(info), saved)

    def action_edit_external(self) -> None:
        """Edit the candidate's text in $VISUAL / $EDITOR (the app is suspended meanwhile)."""
        if self.detail is None or self.detail.info.content is None:
            return
        if self.refused_read_only("editing a proposal"):
            return
        info = self.detail.info
        editor = _editor()
        with tempfile.NamedTemporaryFile("w", suffix=".md", prefix=f"proposal-{info.id}-",
                                         delete=False, encoding="utf-8") as fh:
            fh.write(info.content or "")
            path = Path(fh.name)
        try:
            with self.app.suspend():
                subprocess.run([*shlex.split(editor), str(path)], check=False)
            text = path.read_text(encoding="utf-8")
        except SuspendNotSupported:
            self.notify("This terminal cannot hand over to an editor: use e (edit in place).",
                        severity="warning")
            return
        except (OSError, ValueError) as exc:
            self.notify(f"the editor failed: {exc}", severity="error", markup=False)
            return
        finally:
            path.unlink(missing_ok=True)
        if text == info.content:
            self.notify("Nothing changed.", timeout=3)
            return
        self._decide("edit", info.id, EditResult(text, f"edited in {editor}"))

    def _undoable(self) -> int | None:
        """The approval this screen made that ``u`` may still undo (None when none, or past
        ``UNDO_MINUTES``)."""
        if self._undo is None:
            return None
        pid, at = self._undo
        return pid if self.clock() - at < UNDO_MINUTES * 60 else None

    def action_undo(self) -> None:
        if self.refused_read_only("undoing an approval (it files a proposal)"):
            return
        pid = self._undoable()
        if pid is None:
            self.notify(f"Nothing to undo: undo is offered for {UNDO_MINUTES} minutes after "
                        "an approval made here (`lca-tui undo` any time).", timeout=5)
            self.refresh_bindings()
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._undo = None
                self._decide("undo", pid, None)

        self.app.push_screen(ConfirmModal(
            f"Undo proposal {pid}?",
            f"Files a proposal that brings back what proposal {pid} replaced (an add is "
            "quarantined). It is pending in this queue, checked like any other; nothing "
            "changes until it is approved."), confirmed)

    def _decide(self, action: str, proposal_id: int, arg: Any) -> None:
        """Run a decision in a worker; the decide keys are off until it finishes."""
        self._busy = action
        self.refresh_bindings()
        self._decide_worker(action, proposal_id, arg)

    @work(thread=True, exclusive=True, group="decide", exit_on_error=False)
    def _decide_worker(self, action: str, proposal_id: int, arg: Any) -> None:
        store = self.lca.store
        try:
            if action == "approve":
                store.approve(proposal_id, arg.as_op, arg.reason)
            elif action == "reject":
                store.reject(proposal_id, arg)
            elif action == "undo":
                proposal_id = store.undo_last_approval(proposal_id).id
            else:
                info = store.proposal(proposal_id)
                store.edit_proposal(proposal_id, arg.changes(info), reason=arg.reason)
            detail = load_detail(store, proposal_id)
        except (ProposalError, StoreError, ValueError, OSError) as exc:
            self.post_message(Decided(action, proposal_id, error=str(exc)))
            return
        self.post_message(Decided(action, proposal_id, detail))

    @on(Decided)
    def _decided(self, message: Decided) -> None:
        self._busy = None
        self.loaded("decision")
        if message.error is not None:
            self.notify(message.error, title=f"could not {message.action} proposal "
                        f"{message.proposal_id}", severity="error", markup=False, timeout=10)
            self.refresh_bindings()
            return
        assert message.detail is not None
        info = message.detail.info
        if message.action == "approve":
            if info.status == "failed":
                self.notify(f"proposal {info.id} FAILED: {info.status_reason}",
                            severity="error", markup=False, timeout=10)
            else:
                ok = "verified" if info.verified else "NOT verified (see the detail)"
                can_undo = info.memory_id is not None and info.summary.op in UNDOABLE
                if can_undo:
                    self._undo = (info.id, self.clock())
                self.notify(f"proposal {info.id} applied and {ok}"
                            + (f"; u proposes undoing it (for {UNDO_MINUTES} minutes)"
                               if can_undo else ""), markup=False,
                            severity="information" if info.verified else "warning")
        elif message.action == "reject":
            self.notify(f"proposal {info.id} rejected", markup=False)
        elif message.action == "undo":
            self.notify(f"proposal {info.id} filed ({info.status}): it undoes the approval",
                        markup=False)
        else:
            worst = info.summary.worst
            self.notify(f"proposal {info.id} edited (revision {info.revision}); checks ran "
                        f"again: worst {worst}", markup=False)
        if self.selected == info.id:
            self._show_detail(message.detail)
            self.query_one("#proposal-detail", VerticalScroll).scroll_home(animate=False)
        self.reload()

    # -- moving and opening --------------------------------------------------------------
    def action_next(self) -> None:
        """The next pending proposal after the highlighted one (wrapping round)."""
        table = self.query_one("#proposal-queue", DataTable)
        keys = [str(r.id) for r in self.rows if r.status == "pending" and str(r.id) in
                table.rows]
        if not keys:
            self.notify("No pending proposal left.", timeout=3)
            return
        order_ = [k.value for k in table.rows]
        here = table.cursor_row
        after = [k for k in keys if order_.index(k) > here]
        target = (after or keys)[0]
        table.move_cursor(row=table.get_row_index(target), animate=False)
        table.focus()

    def selected_id(self) -> str | None:
        return str(self.selected) if self.selected is not None else None

    async def action_open_source(self) -> None:
        if self.detail is None:
            return
        first = next((e for e in self.detail.info.evidence if e.session_id), None)
        if first is None:
            self.notify("This proposal points at no transcript entry.", timeout=4)
            return
        self.post_message(OpenRecord(RecordRef("session", first.session_id or "", first.seq)))

    async def action_open_memory(self) -> None:
        if self.detail is None:
            return
        info = self.detail.info
        target = info.memory_id or info.summary.target
        if target is None:
            self.notify("This proposal names no memory yet.", timeout=4)
            return
        self.post_message(OpenRecord(RecordRef("memory", target)))

    # -- the consolidation pass ----------------------------------------------------------
    def action_consolidate(self) -> None:
        if self.refused_read_only("consolidating"):
            return
        self._busy = "pass"
        self.refresh_bindings()
        self.query_one("#proposal-queue", DataTable).border_subtitle = \
            "consolidation pass running…"
        self._run_pass()

    @work(thread=True, exclusive=True, group="pass", exit_on_error=False)
    def _run_pass(self) -> None:
        self.post_message(PassDone(self.lca.store.consolidate()))

    @on(PassDone)
    def _pass_done(self, message: PassDone) -> None:
        self._busy = None
        self.loaded("pass")
        self.last_pass = pass_summary(message.report)
        self.notify(self.last_pass, title="consolidation pass", markup=False, timeout=10,
                    severity="warning" if message.report.proposer.get("error") else
                    "information")
        if message.report.proposal_ids:
            self.selected = message.report.proposal_ids[0]
        self.refresh_bindings()
        self.reload()

    def show_error(self, group: str, error: BaseException | None) -> None:
        if group in ("pass", "decide"):
            self._busy = None
            self.refresh_bindings()
        if group == "pass":
            self.loaded("pass")
            self.last_pass = f"consolidation pass failed: {error}"
            self.refill()


def _editor() -> str:
    return (os.environ.get("VISUAL") or os.environ.get("EDITOR") or "").strip()
