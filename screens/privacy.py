"""Privacy: find records, preview the closure of erasing or redacting them, do it behind a
typed confirmation, and read the proof (the verification, probe by probe); the tombstones."""

from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import (
    DataTable,
    Header,
    Input,
    ProgressBar,
    Select,
    Static,
    TabbedContent,
    TabPane,
    Tree,
)

from screens.base import StoreScreen
from store import (
    SCOPE_KINDS,
    STAGES,
    Closure,
    PlanStale,
    PrivacyResult,
    Scope,
    ScopeError,
    StoreError,
    TombstoneInfo,
    visible,
)
from widgets.footer import FitFooter
from widgets.confirm_word import ConfirmWord
from widgets.fmt import short_when
from widgets.safe import cell, safe_text

EXPAND_UP_TO = 6
FIRST = ("session", "entry", "memory", "memory_review", "chunk", "chunk_vec", "chunk_fts")
PLACEHOLDER = {
    "match": "text to find (any case), e.g. an e-mail address; enter previews",
    "regex": "a regular expression, e.g. sk-[a-z0-9-]+; enter previews",
    "session": "a session id (a unique prefix will do); enter previews",
    "entry": "an entry id (a number); enter previews",
    "memory": "a memory id (a number); enter previews",
}


@dataclass
class ClosureReady(Message):
    closure: Closure
    confirm: bool


@dataclass
class PrivacyProgress(Message):
    stage: str
    done: int
    total: int


@dataclass
class PrivacyDone(Message):
    result: PrivacyResult


@dataclass
class PrivacyProblem(Message):
    text: str


def closure_tree_label(c: Closure) -> Text:
    verb = "erasing" if c.action == "erase" else "redacting"
    out = Text(f"{verb} ", style="bold", end="")
    out.append(safe_text(c.scope.label()))
    counts = c.counts()
    total = sum(n for k, n in counts.items() if k not in ("chunk_vec", "chunk_fts",
                                                            "memory_review"))
    out.append(f" — {total:,} records" if counts else " — nothing holds it", style="dim")
    return out


def probe_table(probes: list[tuple[str, bool, str]]) -> Table:
    """One probe a row: ✓ / ✗, its name, what it found (wrapped under itself; no markup)."""
    t = Table(box=None, show_header=False, pad_edge=False, expand=True)
    t.add_column("result", width=6, no_wrap=True)
    t.add_column("probe", width=9, no_wrap=True)
    t.add_column("detail", ratio=1)
    for name, passed, detail in probes:
        t.add_row(Text("✓ pass" if passed else "✗ FAIL",
                       style="bold" if passed else "bold reverse"),
                  Text(name, style="bold"), safe_text(detail))
    return t


def ordered(counts: dict[str, int]) -> list[str]:
    """Tables in reading order: what the user named first, then the rest."""
    return [k for k in FIRST if k in counts] + [k for k in counts if k not in FIRST]


class PrivacyScreen(StoreScreen):
    """Redact and erase with a preview of the closure, and proof afterwards."""

    HELP: ClassVar[str] = (
        "Privacy: remove records and see proof that nothing is retrievable afterwards.\n\n"
        "Press / and type what names the records (the box on the left chooses: match, a "
        "case-insensitive text; regex; a session id; an entry id; a memory id), then enter: "
        "the closure — every record that "
        "holds or points at it, by table with counts (entries, chunks with their vectors and "
        "FTS rows, memories derived from them, evidence, traces and candidates, context "
        "snapshots, handoffs, import positions, and the exports the store wrote that hold "
        "it) — is shown as a tree, each entry and memory with an excerpt of its text (around "
        "the match for a text scope). Nothing changes yet. Changing the kind in the box "
        "previews again (or the tree says why the value does not fit); c puts the cursor in "
        "the tree.\n\n"
        "e erases it all (one transaction, deleted content overwritten, then the WAL "
        "truncated and the file vacuumed where needed); r redacts instead (the text becomes "
        "[REDACTED] in place, entries keep their place, the index is rebuilt). Either asks "
        "you to type the word it shows. d toggles deleting the export files too. The work "
        "runs in the background with a progress bar; then the Verification tab shows every "
        "probe: rows, FTS, a substring scan of every text column, semantic (no chunk within "
        "0.98 cosine of a removed one), traces, exports and the raw bytes of the database "
        "and its WAL. An erasure that could not truncate the WAL fails there and says so. The "
        "verdict stays in a line above the tabs, naming the probes that failed.\n\n"
        "The Tombstones tab lists what erasures and redactions left (scope kind, counts, "
        "time, actor; never content); enter on one shows its stored verification."
    )
    AUTO_FOCUS = "#privacy-tree"
    WRITES: ClassVar[frozenset[str]] = frozenset({"change"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "change('erase')", "Erase", id="privacy-erase"),
        Binding("r", "change('redact')", "Redact", id="privacy-redact"),
        Binding("d", "toggle_exports", "Delete exports", id="privacy-exports"),
        Binding("slash", "find", "Find", id="privacy-find"),
        Binding("escape", "leave_input", "Back", show=False, id="privacy-escape"),
        Binding("c", "tab('closure')", "Closure", show=False, id="privacy-tab-closure"),
        Binding("v", "tab('verification')", "Verification", show=False,
                id="privacy-tab-verification"),
        Binding("T", "tab('tombstones')", "Tombstones", show=False,
                id="privacy-tab-tombstones"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.closure: Closure | None = None
        self.result: PrivacyResult | None = None
        self.tombstones: list[TombstoneInfo] = []
        self.delete_exports = False
        self.busy = False
        self._tree_scope = False
        """The tree shows a scope (its closure, or why it has none): the select follows."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="privacy"):
            with Horizontal(id="privacy-scope"):
                yield Select([(k, k) for k in SCOPE_KINDS], value="match", allow_blank=False,
                             id="privacy-kind", compact=True)
                yield Input(placeholder=PLACEHOLDER["match"], id="privacy-input")
            yield Static("", id="privacy-verdict", markup=False)
            with TabbedContent(id="privacy-tabs", initial="closure"):
                with TabPane("Closure", id="closure"):
                    yield Tree(Text("Press / and type what names the records, then enter.",
                                    style="dim"), id="privacy-tree")
                with TabPane("Verification", id="verification"):
                    with VerticalScroll(id="privacy-report"):
                        yield Static(Text("No erasure or redaction yet in this session of the "
                                          "app: the Tombstones tab lists earlier ones.",
                                          style="dim"), id="privacy-report-text",
                                     markup=False)
                with TabPane("Tombstones", id="tombstones"):
                    yield DataTable(id="privacy-tombstones", cursor_type="row",
                                    zebra_stripes=True)
            with Horizontal(id="privacy-status-row"):
                yield ProgressBar(total=len(STAGES), show_eta=False, id="privacy-progress")
                yield Static("", id="privacy-status", markup=False)
        yield FitFooter()

    def on_mount(self) -> None:
        super().on_mount()
        table = self.query_one("#privacy-tombstones", DataTable)
        for label, key, width in ((Text("id", justify="right"), "id", 4),
                                  ("time", "ts", 14), ("action", "action", 7),
                                  ("scope", "scope", 8), ("verified", "verified", 8),
                                  ("actor", "actor", 10), ("counts", "counts", 60)):
            table.add_column(label, key=key, width=width)
        self.query_one("#privacy-progress").display = False
        self.query_one("#privacy-verdict").display = False
        self.query_one("#privacy-tree", Tree).show_root = True

    # -- loading: the tombstones ------------------------------------------------------------
    def load_data(self) -> list[TombstoneInfo]:
        return self.lca.store.tombstones(with_probes=True)

    def show_data(self, data: list[TombstoneInfo]) -> None:
        self.tombstones = data
        table = self.query_one("#privacy-tombstones", DataTable)
        with self.prevent(DataTable.RowHighlighted):
            table.clear()
            for t in data:
                counts = ", ".join(f"{k} {v:,}" for k, v in t.counts.items())
                verified = "-" if t.verified is None else ("yes" if t.verified else "FAILED")
                table.add_row(Text(str(t.id), justify="right"), cell(short_when(t.ts)),
                              cell(t.action), cell(t.scope_kind), cell(verified),
                              cell(t.actor), cell(counts), key=str(t.id))
        tabs = self.query_one(TabbedContent)
        tabs.get_tab("tombstones").label = f"Tombstones ({len(data)})"

    # -- scope and preview -------------------------------------------------------------------
    @on(Select.Changed, "#privacy-kind")
    def _kind_changed(self, event: Select.Changed) -> None:
        """Another kind of scope: the tree and the plan follow it — what was previewed no
        longer applies, so the new scope is previewed (or the tree says why it cannot be)."""
        field = self.query_one("#privacy-input", Input)
        field.placeholder = PLACEHOLDER[str(event.value)]
        c = self.closure
        if not self._tree_scope or (c is not None and c.scope.kind == str(event.value)):
            return  # nothing previewed yet, or the preview is of this kind already
        self.closure = None
        self.refresh_bindings()
        scope = self._scope()
        if scope is not None:
            self._start_preview(scope, c.action if c is not None else "erase", confirm=False)

    def _show_problem(self, text: str) -> None:
        """A scope that cannot be previewed: the tree says so (not only the status line), and
        nothing stays planned."""
        self.closure = None
        self._tree_scope = True
        tree = self.query_one("#privacy-tree", Tree)
        tree.clear()
        tree.root.set_label(Text(f"nothing to erase or redact: {visible(text)}",
                                 style="bold"))
        self.query_one(TabbedContent).active = "closure"
        self._status(text)
        self.refresh_bindings()

    def _scope(self) -> Scope | None:
        kind = str(self.query_one("#privacy-kind", Select).value)
        value = self.query_one("#privacy-input", Input).value.strip()
        try:
            return Scope(kind, value)
        except ScopeError as exc:
            self._show_problem(for_screen(str(exc)))
            return None

    @on(Input.Submitted, "#privacy-input")
    def _submitted(self, event: Input.Submitted) -> None:
        scope = self._scope()
        if scope is not None:
            self._start_preview(scope, "erase", confirm=False)

    def preview_scope(self, kind: str, value: str) -> None:
        """Fill in the scope (``kind`` of the kind box, ``value``) and show its closure, as
        typing it and enter would (the guided tour's erase step)."""
        self.query_one("#privacy-kind", Select).value = kind
        self.query_one("#privacy-input", Input).value = value
        scope = self._scope()
        if scope is not None:
            self._start_preview(scope, "erase", confirm=False)

    def _start_preview(self, scope: Scope, action: str, confirm: bool) -> None:
        if self.busy:
            self._status("busy: wait for the running erasure to finish")
            return
        self._status(f"finding every record that holds {scope.label()} …")
        self._preview(scope, action, confirm)

    @work(thread=True, exclusive=True, group="privacy-preview", exit_on_error=False)
    def _preview(self, scope: Scope, action: str, confirm: bool) -> None:
        try:
            closure = self.lca.store.privacy_closure(scope, action)
        except (ValueError, StoreError) as exc:  # a bad scope, an unknown id
            self.post_message(PrivacyProblem(str(exc)))
            return
        self.post_message(ClosureReady(closure, confirm))

    @on(ClosureReady)
    def _closure_ready(self, message: ClosureReady) -> None:
        self.closure = message.closure
        self._show_closure(message.closure)
        self.loaded("preview")
        counts = message.closure.counts()
        self._status("preview only, nothing changed: e erases, r redacts" if counts
                     else "nothing in the store holds it")
        self.refresh_bindings()
        if message.confirm and counts:
            self._confirm(message.closure)

    @on(PrivacyProblem)
    def _problem(self, message: PrivacyProblem) -> None:
        self._show_problem(message.text)

    def _show_closure(self, c: Closure) -> None:
        self._tree_scope = True
        tree = self.query_one("#privacy-tree", Tree)
        tree.clear()
        tree.root.set_label(closure_tree_label(c))
        counts = c.counts()
        for table in ordered(counts):
            n = counts[table]
            what = {"chunk_vec": "vectors", "chunk_fts": "FTS rows",
                    "memory_review": "memories flagged for review"}.get(table, "")
            label = Text(f"{table} ", style="bold", end="")
            label.append(f"{n:,}" + (f" {what}" if what else ""))
            shown = c.labels.get(table, [])
            node = tree.root.add(label, expand=len(shown) <= EXPAND_UP_TO)
            for item in shown:
                node.add_leaf(safe_text(item))
            if n > len(shown) and shown:
                node.add_leaf(Text(f"… and {n - len(shown):,} more", style="dim"))
            if not shown:
                node.allow_expand = False
        if c.exports:
            node = tree.root.add(Text(f"exports {len(c.export_files())} files (outside the "
                                      "store; deleted only with d)", style="bold", end=""),
                                 expand=True)
            for path in c.export_files():
                node.add_leaf(safe_text(path))
        tree.root.expand()
        self.query_one(TabbedContent).active = "closure"
        tree.focus()

    # -- erase / redact ----------------------------------------------------------------------
    def action_change(self, action: str) -> None:
        if self.refused_read_only("erasing" if action == "erase" else "redacting"):
            return
        scope = self._scope()
        if scope is None:
            return
        c = self.closure
        if c is not None and c.scope == scope and c.action == action:
            if c.empty:
                self._status("nothing in the store holds it: nothing to change")
                return
            self._confirm(c)
        else:
            self._start_preview(scope, action, confirm=True)

    def _confirm(self, c: Closure) -> None:
        counts = c.counts()
        what = Text(end="")
        verb = "deletes" if c.action == "erase" else "rewrites to [REDACTED] in place"
        what.append(f"{c.action.capitalize()} ", style="bold")
        what.append(safe_text(c.scope.label()))
        what.append(f": this {verb}, for good:\n")
        for table in ordered(counts):
            what.append(f"  {table:<18} {counts[table]:>7,}\n")
        if c.exports:
            what.append(f"  {len(c.export_files())} export files hold it: "
                        + ("they will be deleted\n" if self.delete_exports else
                           "they are kept (d toggles), and the exports probe will fail\n"))
        what.append("A tombstone (kind, counts, time; no content) and an audit event remain.",
                    style="dim")

        def decided(ok: bool | None) -> None:
            if ok:
                self._start_run(c)
            else:
                self._status("cancelled: nothing was changed")

        self.app.push_screen(ConfirmWord(f"{c.action} — cannot be undone", what, c.action),
                             decided)

    def _start_run(self, c: Closure) -> None:
        self.busy = True
        bar = self.query_one("#privacy-progress", ProgressBar)
        bar.display = True
        bar.update(total=len(STAGES), progress=0)
        self._status(f"{c.action}: starting …")
        self.refresh_bindings()
        self._run(c, self.delete_exports)

    @work(thread=True, exclusive=True, group="privacy-run", exit_on_error=False)
    def _run(self, c: Closure, delete_exports: bool) -> None:
        store = self.lca.store

        def progress(stage: str, done: int, total: int) -> None:
            self.post_message(PrivacyProgress(stage, done, total))

        try:
            result = store.privacy_run(c.scope, c.action, delete_exports=delete_exports,
                                       progress=progress, closure=c)
        except PlanStale as exc:  # the store moved since the preview: show what it holds now
            self.post_message(PrivacyProblem(str(exc)))
            self.post_message(ClosureReady(store.privacy_closure(c.scope, c.action), False))
            return
        self.post_message(PrivacyDone(result))

    @on(PrivacyProgress)
    def _progress(self, message: PrivacyProgress) -> None:
        self.query_one("#privacy-progress", ProgressBar).update(total=message.total,
                                                                progress=message.done)
        self._status(f"{message.stage} …" if message.stage != "done" else "done")

    @on(PrivacyDone)
    def _done(self, message: PrivacyDone) -> None:
        r = message.result
        self.result = r
        self.busy = False
        self.loaded("erasure" if r.action == "erase" else "redaction")
        self.query_one("#privacy-progress").display = False
        self._show_report(f"{r.action} of a {r.scope_kind} scope — tombstone "
                          f"{r.tombstone_id if r.tombstone_id is not None else '-'}",
                          [(p.name, p.passed, p.detail) for p in r.verification.probes],
                          r.verification.passed, r.exports_deleted)
        verdict = "every probe passed" if r.verification.passed else "verification FAILED"
        self._status(f"{r.action} done: {verdict}")
        failed = [p.name for p in r.verification.probes if not p.passed]
        self._verdict(f"{r.action} of {r.scope_kind} scope: " + (
            "verified, every probe passed" if r.verification.passed else
            f"verification FAILED ({', '.join(failed) or 'see the probes'}) · v shows the "
            "probes"), ok=r.verification.passed)
        self.closure = None
        self.refresh_bindings()
        self.reload()

    def _show_report(self, title: str, probes: list[tuple[str, bool, str]],
                     passed: bool | None, deleted: list[str] | None = None) -> None:
        out = Text(title + "\n", style="bold", end="")
        out.append("verification: ")
        out.append("passed" if passed else ("FAILED" if passed is False else "not run"),
                   style="bold" if passed else "bold reverse")
        out.append("\n")
        tail = Text(end="")
        for path in deleted or []:
            tail.append(safe_text(f"deleted export file {path}\n", style="dim"))
        self.query_one("#privacy-report-text", Static).update(
            Group(out, probe_table(probes), tail))
        self.query_one(TabbedContent).active = "verification"

    @on(DataTable.RowSelected, "#privacy-tombstones")
    def _tombstone_selected(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        t = next((t for t in self.tombstones if str(t.id) == key), None)
        if t is None:
            return
        self._show_report(f"tombstone {t.id}: {t.action} of a {t.scope_kind} scope by "
                          f"{visible(t.actor)}", list(t.probes), t.verified)

    # -- small actions -----------------------------------------------------------------------
    def action_toggle_exports(self) -> None:
        self.delete_exports = not self.delete_exports
        self._status("export files holding it will be deleted too" if self.delete_exports
                     else "export files are kept (they are outside the store)")
        self.refresh_bindings()

    def action_find(self) -> None:
        self.query_one("#privacy-input", Input).focus()

    def action_leave_input(self) -> None:
        self.query_one("#privacy-tree", Tree).focus()

    def action_tab(self, tab: str) -> None:
        """Show a tab and put the cursor in it (c: the tree, one key from anywhere)."""
        self.query_one(TabbedContent).active = tab
        target = {"closure": "#privacy-tree", "verification": "#privacy-report",
                  "tombstones": "#privacy-tombstones"}[tab]
        self.query_one(target).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "change":
            return None if self.busy else True
        return True

    def _verdict(self, text: str, ok: bool) -> None:
        """The last run's verdict, above the tabs: it stays whichever tab is shown."""
        line = self.query_one("#privacy-verdict", Static)
        line.update(Text(visible(text), end=""))
        line.set_class(not ok, "-failed")
        line.display = True

    def _status(self, text: str) -> None:
        self.query_one("#privacy-status", Static).update(Text(visible(text), end=""))

    def show_error(self, group: str, error: BaseException | None) -> None:
        if group in ("privacy-run", "privacy-preview"):
            self.busy = False
            self.query_one("#privacy-progress").display = False
            self._status(f"failed: {error}")
            if group == "privacy-run":
                self._verdict(f"the run FAILED before its verification: "
                              f"{type(error).__name__}: {error}", ok=False)
            self.refresh_bindings()


def for_screen(message: str) -> str:
    """A scope error in the screen's words: the CLI's flag (``--entry takes a numeric id``)
    becomes the scope kind chosen in the box (``an entry scope takes a numeric id``)."""
    def kind(m: re.Match[str]) -> str:
        word = m.group(1)
        return f"{'an' if word[0] in 'aeiou' else 'a'} {word} scope "

    return re.sub(r"^--(\w+) ", kind, message)

