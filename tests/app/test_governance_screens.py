"""The Proposals (4) and Memories (5) screens driven with Pilot on a small governance store:
approve, reject and edit change the store and the audit log; a proposal from another process
appears in the queue; the pass key adds proposals; Enter on a memory's evidence opens the
entry; the chain tree; secrets stay masked until revealed; the Overview's pass line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, OptionList

from lca_tui.app import make_app
from screens.memories import MemoriesScreen
from screens.proposal_modals import ApproveModal, ConfirmModal, EditModal, ReasonModal
from screens.proposals import ProposalsScreen
from store import Store
from tests.conftest import make_store
from tests.helpers_gov import SESSION, build_gov_store
from tests.helpers_recall import import_memories
from tests.helpers_shell import FIXED_NOW, load_count, load_log, rendered_text, wait_until
from widgets.chain_tree import ChainTree
from widgets.diff_view import DiffView, diff_lines

SIZE = (120, 40)


@pytest.fixture(scope="module")
def gov_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("gov")
    store = make_store(folder / "gov.db", **{"embed.backend": "fallback"})
    try:
        ids = build_gov_store(store, folder)
    finally:
        store.close()
    return folder, ids


@pytest.fixture
def gov(gov_template: tuple[Path, dict[str, Any]], tmp_path: Path
        ) -> tuple[Store, dict[str, Any]]:
    folder, ids = gov_template
    shutil.copyfile(folder / "gov.db", tmp_path / "gov.db")
    store = make_store(tmp_path / "gov.db")
    yield store, ids
    store.close()


async def _queue(pilot: Any, app: Any) -> ProposalsScreen:
    await wait_until(pilot, lambda: app.current_mode == "proposals"
                     and isinstance(app.screen, ProposalsScreen) and load_count(app.screen) >= 1,
                     what="proposals loaded")
    return app.screen


async def _select(pilot: Any, screen: ProposalsScreen, proposal_id: int) -> None:
    loads = load_count(screen, "detail")
    screen.open_proposal(proposal_id)
    await wait_until(pilot, lambda: screen.detail is not None and screen.detail.info.id ==
                     proposal_id and load_count(screen, "detail") > loads,
                     what=f"proposal {proposal_id}")


def _audit(store: Store, action: str) -> list[Any]:
    return [a for a in store.audit_events(200) if a.action == action]


# -- Proposals: deciding ----------------------------------------------------------------------
async def test_approve_a_duplicate_as_reinforce(gov: tuple[Store, dict[str, Any]]) -> None:
    """a offers as-proposed and reinforce over a duplicate; reinforce adds a hit, no memory."""
    store, ids = gov
    pid = ids["pending"]["duplicate"]
    target = ids["ids"]["Run tests with pytest -x"]
    hits, n_memories = store.memory(target).hits, len(store.memories())
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, pid)
        assert "✗" not in rendered_text(screen.query_one("#pd-checks"))
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, ApproveModal), what="modal")
        modal = app.screen
        labels = [str(o.prompt) for o in modal.query_one(OptionList).options]
        assert [o.as_op for o in modal.options] == [None, "reinforce"], labels
        await pilot.press("down", "enter")  # reinforce, then the reason field
        await pilot.press("enter")
        await wait_until(pilot, lambda: load_count(screen, "decision") >= 1, what="approval")
        assert store.proposal(pid).status == "applied"
        assert store.memory(target).hits == hits + 1
        assert len(store.memories()) == n_memories  # reinforced, nothing added
        assert [pid, target] == list(_audit(store, "proposal_approved")[0].target_ids)
        outcome = rendered_text(screen.query_one("#pd-outcome"))
        assert "approved as reinforce" in outcome and "verified" in outcome


async def test_contradiction_needs_supersede_or_keep_both_with_a_reason(
        gov: tuple[Store, dict[str, Any]]) -> None:
    """As proposed is offered but not allowed; keep-both without a reason is refused in the
    modal; with one, both memories are flagged."""
    store, ids = gov
    pid = ids["pending"]["contradiction"]
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, pid)
        checks = rendered_text(screen.query_one("#pd-checks"))
        assert "FAIL contradiction" in checks and "5432" in checks and "5434" in checks
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, ApproveModal), what="modal")
        modal = app.screen
        assert [(o.as_op, o.allowed) for o in modal.options] == [
            (None, False), ("supersede", True), ("keep-both", True)]
        await pilot.press("down", "enter", "enter")  # keep-both, no reason
        assert isinstance(app.screen, ApproveModal)
        assert "needs a reason" in str(modal.query_one("#approve-error").render())
        assert store.proposal(pid).status == "pending"
        modal.query_one("#approve-reason", Input).value = "both ports during the move"
        await pilot.press("enter")
        await wait_until(pilot, lambda: load_count(screen, "decision") >= 1, what="approval")
        info = store.proposal(pid)
        assert info.status == "applied"
        assert store.memory_detail(info.memory_id).row.flagged
        assert store.memory_detail(ids["merged"]).row.flagged


async def test_plain_approval_asks_yes_or_no(gov: tuple[Store, dict[str, Any]]) -> None:
    """With nothing to choose (warnings only), a says what it will write and asks y / n."""
    store, ids = gov
    pid = ids["pending"]["procedure"]
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, pid)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), what="confirm")
        body = str(app.screen.query_one(".gov-body").render())
        assert "Writes a new procedure memory 'Release checklist'" in body
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is screen, what="closed")
        assert store.proposal(pid).status == "pending"
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), what="confirm")
        await pilot.press("y")
        await wait_until(pilot, lambda: load_count(screen, "decision") >= 1, what="approval")
        info = store.proposal(pid)
        assert info.status == "applied" and info.verified
        assert store.memory(info.memory_id).type == "procedure"


async def test_reject_asks_the_reason(gov: tuple[Store, dict[str, Any]]) -> None:
    """r opens a modal; an empty reason is refused; the reason lands with the proposal and
    the audit log."""
    store, ids = gov
    pid = ids["pending"]["inference"]
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, pid)
        support = rendered_text(screen.query_one("#pd-checks"))
        assert "inference Every commit is signed with a GPG key." in support
        assert f"{SESSION[:8]}#3" in support  # the supported sentence's span, quoted
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ReasonModal), what="modal")
        await pilot.press("enter")
        assert "required" in str(app.screen.query_one("#reason-error").render())
        app.screen.query_one(Input).value = "never said: no GPG signing"
        await pilot.press("enter")
        await wait_until(pilot, lambda: load_count(screen, "decision") >= 1, what="rejection")
        info = store.proposal(pid)
        assert info.status == "rejected" and info.status_reason == "never said: no GPG signing"
        assert list(_audit(store, "proposal_rejected")[0].target_ids) == [pid]
        table = screen.query_one("#proposal-queue", DataTable)
        await wait_until(pilot, lambda: "rejected" in str(table.get_row(str(pid))[1]),
                         what="queue updated")


async def test_edit_in_place_keeps_history_and_checks_again(
        gov: tuple[Store, dict[str, Any]]) -> None:
    """e edits the candidate in a text area; ctrl+s stores revision 1 and the checks rerun."""
    store, ids = gov
    pid = ids["pending"]["inference"]
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, pid)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditModal), what="editor")
        area = app.screen.query_one("#edit-text")
        area.text = "Commit messages stay short, one line in the imperative mood."
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: load_count(screen, "decision") >= 1, what="edit")
        info = store.proposal(pid)
        assert info.revision == 1 and info.edits[0].after["content"].endswith("mood.")
        assert info.check("source_support").result == "pass"  # the inference is gone
        assert _audit(store, "proposal_edited")


async def test_edit_in_place_renames_the_proposal(gov: tuple[Store, dict[str, Any]]) -> None:
    """e edits the name as well as the text: a text whose first sentence went does not keep
    a name made of it; the approved memory carries the new name."""
    store, ids = gov
    pid = ids["pending"]["inference"]
    before = store.proposal(pid)
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, pid)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditModal), what="editor")
        name = app.screen.query_one("#edit-name", Input)
        assert name.value == before.summary.name
        name.value = "Short imperative commits"
        app.screen.query_one("#edit-text").text = \
            "Commit messages stay short, one line in the imperative mood."
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: load_count(screen, "decision") >= 1, what="edit")
    info = store.proposal(pid)
    assert info.revision == 1 and info.summary.name == "Short imperative commits"
    assert info.edits[0].after["metadata"]["name"] == "Short imperative commits"
    done = store.approve(pid)
    assert store.memory(done.memory_id).name == "Short imperative commits"


async def test_external_editor_key_needs_a_terminal(gov: tuple[Store, dict[str, Any]],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """E is offered when $EDITOR is set; where the app cannot hand the terminal over (a
    headless run) it says so and the proposal is unchanged."""
    store, ids = gov
    pid = ids["pending"]["inference"]
    monkeypatch.setenv("EDITOR", "true")
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, pid)
        assert screen.check_action("edit_external", ()) is True
        await pilot.press("E")
        await pilot.pause()
        assert store.proposal(pid).revision == 0
    monkeypatch.delenv("EDITOR")
    monkeypatch.delenv("VISUAL", raising=False)
    assert screen.check_action("edit_external", ()) is None


async def test_revise_shows_a_difflib_diff(gov: tuple[Store, dict[str, Any]]) -> None:
    """A revise shows the target's text against the candidate's, line by line."""
    store, ids = gov
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, ids["pending"]["revise"])
        diff = screen.query_one(DiffView)
        assert diff.display
        assert any(line.startswith("-Always run") for line in diff.lines)
        assert any(line.startswith("+Always run") and "-x -q" in line for line in diff.lines)


def test_diff_lines_and_no_difference() -> None:
    assert diff_lines("a\nb\n", "a\nc\n", "old", "new") == [
        "--- old", "+++ new", "@@ -1,2 +1,2 @@", " a", "-b", "+c"]
    assert diff_lines("same", "same") == []


# -- Proposals: following the store, the pass --------------------------------------------------
async def test_a_proposal_from_another_process_appears(gov: tuple[Store, dict[str, Any]],
                                                       tmp_path: Path) -> None:
    """`lca-tui propose` run as a separate process while the app is open shows in the queue."""
    store, _ = gov
    doc = tmp_path / "p.json"
    doc.write_text(json.dumps({"op": "add", "type": "user", "content":
                               "Dana prefers dark roast coffee in the morning.",
                               "metadata": {"name": "Coffee"}}), encoding="utf-8")
    app = make_app(store=store, now=FIXED_NOW, mode="proposals", refresh_seconds=0.2)
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        before = {r.id for r in screen.rows}
        done = subprocess.run([sys.executable, "-m", "lca_tui.cli", "propose", str(doc),
                               "--store", str(store.path), "--no-auto-apply", "--json"],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        new_id = json.loads(done.stdout)["id"]
        assert new_id not in before
        table = screen.query_one("#proposal-queue", DataTable)
        await wait_until(pilot, lambda: str(new_id) in table.rows, what="the new proposal")
        row = table.get_row(str(new_id))
        assert "cli" in str(row[3]) and "pending" in str(row[1])


async def test_pass_key_runs_a_consolidation_pass(gov: tuple[Store, dict[str, Any]]) -> None:
    """c runs the pass in a worker: its proposals join the queue and the report is shown."""
    store, _ = gov
    before = len(store.proposals())
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        await pilot.press("c")
        await wait_until(pilot, lambda: load_count(screen, "pass") >= 1, what="the pass")
        added = len(store.proposals()) - before
        assert added >= 1
        assert f"{added} proposal" in (screen.last_pass or "")
        table = screen.query_one("#proposal-queue", DataTable)
        await wait_until(pilot, lambda: table.row_count == before + added, what="queue")
        origins = {str(table.get_row(k)[3]) for k in table.rows}
        assert "pass" in origins
        await pilot.press("1")
        overview = app.screen
        await wait_until(pilot, lambda: load_count(overview) >= 1, what="overview")
        line = rendered_text(overview.query_one("#overview-consolidation"))
        assert "last pass" in line and f"{added} proposal" in line


async def test_filter_and_copy_id(gov: tuple[Store, dict[str, Any]]) -> None:
    """/ narrows the queue to rows with every word; esc clears it; y copies the id."""
    store, ids = gov
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _queue(pilot, app)
        table = screen.query_one("#proposal-queue", DataTable)
        total = table.row_count
        table.focus()
        await pilot.press("slash", *"procedure")
        await wait_until(pilot, lambda: table.row_count == 1, what="filtered")
        key = table.cursor_key()
        await wait_until(pilot, lambda: screen.detail is not None
                         and str(screen.detail.info.id) == key, what="the row left shown")
        assert screen.detail.info.summary.type == "procedure"
        await pilot.press("enter", "slash", "escape")
        await wait_until(pilot, lambda: table.row_count == total, what="filter cleared")
        await _select(pilot, screen, ids["pending"]["budget"])
        await pilot.press("y")
        assert app.copied == str(ids["pending"]["budget"])


# -- Memories ---------------------------------------------------------------------------------
async def _memories(pilot: Any, app: Any, memory_id: int) -> MemoriesScreen:
    await wait_until(pilot, lambda: isinstance(app.screen, MemoriesScreen)
                     and load_count(app.screen) >= 1, what="memories loaded")
    screen = app.screen
    loads = load_count(screen, "detail")
    screen.open_memory(memory_id)
    await wait_until(pilot, lambda: screen.detail is not None and screen.detail.row.id ==
                     memory_id and load_count(screen, "detail") > loads, what=f"memory {memory_id}")
    return screen


async def test_enter_on_evidence_opens_the_entry(gov: tuple[Store, dict[str, Any]]) -> None:
    """Enter on a memory's evidence row shows that entry on the Transcript screen."""
    store, ids = gov
    app = make_app(store=store, now=FIXED_NOW, mode="memories")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _memories(pilot, app, ids["merged"])
        evidence = screen.query_one("#memory-evidence", DataTable)
        assert evidence.row_count == 1
        evidence.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.current_mode == "transcript", what="transcript")
        transcript = app.screen
        await wait_until(pilot, lambda: load_count(transcript, "entries") >= 1
                         and transcript.session_id == SESSION, what="the session")
        table = transcript.query_one("#entries", DataTable)
        assert transcript.entries[table.cursor_row].seq == 2


async def test_chain_tree_shows_every_link_with_its_proposal(
        gov: tuple[Store, dict[str, Any]]) -> None:
    """The merged memory's chain: four generations, the links' proposals, and a seeded
    integrity problem (a superseded memory set active again); enter on a node shows that
    memory."""
    store, ids = gov
    old = ids["chain"][0]
    with store.write() as conn:  # the damage a hand edit of the store would do
        conn.exec_driver_sql("UPDATE memory SET status = 'active' WHERE id = ?", (old,))
    app = make_app(store=store, now=FIXED_NOW, mode="memories")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _memories(pilot, app, ids["merged"])
        tree = screen.query_one(ChainTree)
        assert {c.id for c in tree.links} >= set(ids["chain"])
        text = "\n".join(tree.get_node_at_line(i).label.plain for i in range(tree.last_line + 1))
        assert "Database setup" in text and "merge by proposal" in text
        assert "Local dev on SQLite" in text and "⚠ superseded but active" in text
        line = next(i for i in range(tree.last_line + 1) if tree.get_node_at_line(i).data == old)
        tree.focus()
        tree.move_cursor_to_line(line)
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.detail is not None and screen.detail.row.id ==
                         old, what="the old memory")
        problems = rendered_text(screen.query_one("#md-problems"))
        assert "integrity (superseded but active)" in problems
        table = screen.query_one("#memory-table", DataTable)
        assert "⚠" in str(table.get_row(str(old))[3])


async def test_secret_masked_until_revealed_and_load_error_shown(
        gov: tuple[Store, dict[str, Any]]) -> None:
    """A secret memory's body shows only after r; a memory the loader cannot read says why."""
    store, ids = gov
    secret = ids["ids"]["Where the staging credentials live"]
    app = make_app(store=store, now=FIXED_NOW, mode="memories")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        screen = await _memories(pilot, app, secret)
        body = screen.query_one("#md-body")
        assert "vault" not in rendered_text(body) and "press r" in rendered_text(body)
        table = screen.query_one("#memory-table", DataTable)
        assert "vault" not in " ".join(str(c) for c in table.get_row(str(secret)))
        await pilot.press("r", "y")  # a confirmation first (issue 22)
        await wait_until(pilot, lambda: secret in screen.revealed, what="revealed")
        assert "secret/ledgerline/staging" in rendered_text(body)
        await pilot.press("r")
        assert "secret/ledgerline" not in rendered_text(body)
        broken = next(m.id for m in store.memories() if not m.loadable)
        await _memories(pilot, app, broken)
        problems = screen.query_one("#md-problems")
        # the pane renders a frame after the detail is set (under load, later than the check)
        await wait_until(pilot, lambda: rendered_text(problems).strip() != "",
                         what="the problems pane")
        assert "loader cannot read it" in rendered_text(problems)


async def test_transcript_memory_hit_opens_memories(gov: tuple[Store, dict[str, Any]]) -> None:
    """Enter on a memory search hit in Transcript shows that memory on screen 5."""
    store, ids = gov
    app = make_app(store=store, now=FIXED_NOW, mode="transcript")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        transcript = app.screen
        await wait_until(pilot, lambda: load_count(transcript) >= 1, what="transcript")
        transcript.search_mode = "fts"
        await pilot.press("s", *"psycopg", "enter")
        await wait_until(pilot, lambda: load_count(transcript, "search") >= 1, what="search")
        row = next(i for i, h in enumerate(transcript.hits) if h.source_type == "memory")
        hits = transcript.query_one("#hits", DataTable)
        hits.move_cursor(row=row)
        await pilot.press("enter")
        want = transcript.hits[row].source_id
        await wait_until(pilot, lambda: isinstance(app.screen, MemoriesScreen)
                         and app.screen.detail is not None and app.screen.detail.row.id == want,
                         what="the memory")


async def test_narrow_screens_hide_and_zoom_panes(gov: tuple[Store, dict[str, Any]]) -> None:
    """At 80x24 b hides the side pane and z maximises the focused one (esc restores)."""
    store, ids = gov
    app = make_app(store=store, now=FIXED_NOW, mode="memories")
    async with app.run_test(message_hook=load_log(app), size=(80, 24)) as pilot:
        screen = await _memories(pilot, app, ids["merged"])
        assert screen.has_class("-narrow") and screen.has_class("-short")
        assert "tags" not in screen.query_one("#memory-table", DataTable).columns
        await pilot.press("b")
        assert not screen.query_one("#memory-side").display
        await pilot.press("b")
        screen.query_one(ChainTree).focus()
        await pilot.press("z")
        assert screen.maximized is screen.query_one(ChainTree)
        await pilot.press("escape")
        assert screen.maximized is None


# -- the store side of the Overview line -------------------------------------------------------
def test_last_consolidation_summarises_the_latest_pass(store: Store) -> None:
    """None before any pass; then the pass's sessions and proposals; a second pass found none."""
    from tests.store.test_consolidation import LABELLED

    assert store.last_consolidation() is None
    store.ingest([LABELLED])
    report = store.consolidate()
    last = store.last_consolidation()
    assert last.sessions == 1 and last.proposals == report.proposals_added > 0
    assert last.statuses == {"pending": report.proposals_added}
    assert sum(last.found.values()) == report.proposals_added
    store.consolidate()
    again = store.last_consolidation()
    assert again.proposals == 0 and again.total == report.proposals_added
    assert again.ts > last.ts


async def test_memory_filter_reads_the_whole_text_and_no_match_clears_the_detail(
        gov: tuple[Store, dict[str, Any]]) -> None:
    """/ finds a word of a memory's text the table does not show; a filter that leaves no row
    empties the detail (it says so) instead of showing the last memory."""
    store, ids = gov
    folder = Path(str(store.path)).parent / "more"
    folder.mkdir()
    long_body = ("Invoices are numbered per year. " * 12) + "Credit notes keep their own serial."
    sqlite = import_memories(store, folder, [
        ("invoices", long_body, {"name": "Invoice numbering",
                                 "description": "How invoices are numbered"})])[
        "Invoice numbering"]
    app = make_app(store=store, now=FIXED_NOW, mode="memories")
    async with app.run_test(message_hook=load_log(app), size=(80, 24)) as pilot:
        screen = await _memories(pilot, app, ids["merged"])
        table = screen.query_one("#memory-table", DataTable)
        shown = " ".join(str(c) for c in table.get_row(str(sqlite)))
        assert "serial" not in shown  # the cell shows the description, not the text's end
        table.focus()
        await pilot.press("slash", *"serial")
        await wait_until(pilot, lambda: table.row_count == 1, what="filtered by a body word")
        await wait_until(pilot, lambda: screen.detail is not None
                         and screen.detail.row.id == sqlite, what="the match shown")
        await pilot.press(*"zzqx")
        await wait_until(pilot, lambda: table.row_count == 0, what="nothing matches")
        await wait_until(pilot, lambda: screen.detail is None, what="the detail cleared")
        head = " ".join(rendered_text(screen.query_one("#md-head")).split())
        assert "No memory matches the filter 'serialzzqx'" in head
        assert "Invoices" not in rendered_text(screen.query_one("#md-body"))
        assert screen.query_one("#memory-evidence", DataTable).row_count == 0
        await pilot.press("escape")
        await wait_until(pilot, lambda: table.row_count > 1, what="filter cleared")
        await wait_until(pilot, lambda: screen.detail is not None, what="a memory again")


# -- Proposals and Memories: the queue in view, the keys that act ----------------------------
def _row_in_view(table: DataTable) -> bool:
    """The cursor's row is inside the table's visible rows (below the column labels)."""
    shown = table.scrollable_content_region.height - 1
    return table.scroll_y <= table.cursor_row < table.scroll_y + shown


async def test_a_decision_keeps_its_row_next_to_the_pending_ones_at_80x24(
        gov: tuple[Store, dict[str, Any]]) -> None:
    """At 80x24, with more decided proposals than rows in view, the proposal just rejected
    sits right after the pending ones (decided ones: latest decision first), the cursor on it
    and in view, pending rows in view above it (it went down among the decided, ordered by
    creation, and every row in view was a decided one)."""
    store, ids = gov
    for i in range(6):  # decided proposals made after the pending ones
        later = store.propose({"op": "add", "type": "feedback", "content": f"Note {i}.",
                               "metadata": {"name": f"note {i}"}}, origin="cli",
                               auto_apply=False)
        store.reject(later.id, "not needed")
    pid = ids["pending"]["duplicate"]
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=(80, 24)) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, pid)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ReasonModal), what="modal")
        app.screen.query_one(Input).value = "a duplicate"
        await pilot.press("enter")
        await wait_until(pilot, lambda: load_count(screen, "decision") >= 1, what="rejection")
        table = screen.query_one("#proposal-queue", DataTable)
        await wait_until(pilot, lambda: "rej" in str(table.get_row(str(pid))[1]),
                         what="queue updated")
        await pilot.pause()
        await pilot.pause()
        pending = sum(1 for r in screen.rows if r.status == "pending")
        assert table.get_row_index(str(pid)) == pending  # first of the decided
        assert table.cursor_row == pending and _row_in_view(table)
        shown = table.scrollable_content_region.height - 1
        in_view = [table.coordinate_to_cell_key((i, 0)).row_key.value
                   for i in range(int(table.scroll_y), min(int(table.scroll_y) + shown,
                                                           table.row_count))]
        statuses = [store.proposal(int(k)).status for k in in_view]
        assert statuses.count("pending") >= shown - 1, statuses


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
async def test_next_shows_the_next_proposal_from_its_top(gov: tuple[Store, dict[str, Any]],
                                                         size: tuple[int, int]) -> None:
    """n after scrolling a proposal's detail down shows the next one from its first line
    (it kept the old detail's scroll offset)."""
    store, _ = gov
    first, second = (store.propose({
        "op": "add", "type": "reference", "content": f"Inventory {name}.\n" + "".join(
            f"- item {i} of the {name} inventory\n" for i in range(80)),
        "metadata": {"name": f"Inventory {name}"}}, origin="cli", auto_apply=False).id
        for name in ("one", "two"))  # two long candidates, one after the other
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=size) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, first)
        pane = screen.query_one("#proposal-detail")
        await pilot.pause()
        pane.scroll_to(y=12, animate=False, immediate=True)
        await pilot.pause()
        assert pane.scroll_y == 12
        loads = load_count(screen, "detail")
        await pilot.press("n")
        await wait_until(pilot, lambda: load_count(screen, "detail") > loads
                         and screen.detail.info.id == second, what="the next proposal")
        await pilot.pause()
        assert pane.max_scroll_y > 12 and pane.scroll_y == 0


async def test_decide_keys_are_not_shown_on_a_decided_proposal(
        gov: tuple[Store, dict[str, Any]]) -> None:
    """a / r / e are in the footer for a pending proposal and gone for a decided one (they
    were listed there and did nothing)."""

    store, ids = gov
    decided = next(r.id for r in store.proposals() if r.status == "applied")
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = await _queue(pilot, app)
        await _select(pilot, screen, ids["pending"]["inference"])
        await pilot.pause()
        assert {"a", "r", "e"} <= {k.key for k in screen.query("FooterKey")}
        await _select(pilot, screen, decided)
        await pilot.pause()
        assert not {"a", "r", "e"} & {k.key for k in screen.query("FooterKey")}
        assert not {"a", "r", "e"} & set(screen.active_bindings)


async def test_p_is_shown_only_for_a_memory_a_proposal_made(
        gov: tuple[Store, dict[str, Any]]) -> None:
    """p (open the proposal) is in the footer for a memory a proposal made, and not for one
    read from a file that no proposal touched (it did nothing there)."""
    store, ids = gov
    app = make_app(store=store, now=FIXED_NOW, mode="memories")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = await _memories(pilot, app, ids["merged"])
        await pilot.pause()
        assert "p" in screen.active_bindings
        screen = await _memories(pilot, app, ids["ids"]["Release process"])
        assert not screen.detail.proposals
        await pilot.pause()
        assert "p" not in screen.active_bindings


def test_a_rejection_reason_is_said_once(gov: tuple[Store, dict[str, Any]]) -> None:
    """The outcome printed the reason on the decision line and again as `rejected: …`."""
    from rich.style import Style

    from screens.proposal_view import outcome_text

    store, ids = gov
    pid = ids["pending"]["inference"]
    store.reject(pid, "never said: no GPG signing")
    styles = {k: Style() for k in ("pass", "warn", "fail")}
    plain = outcome_text(store.proposal(pid), styles).plain
    assert plain.count("never said: no GPG signing") == 1 and "rejected" in plain
