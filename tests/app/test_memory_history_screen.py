"""The Memories screen's history: ``h`` shows every version of the memory's chain,
Enter on one asks, and yes files the revert proposal — pending in the queue, nothing changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import OptionList

from lca_tui.app import make_app
from screens.memories import MemoriesScreen
from screens.memory_history import HistoryModal
from screens.proposal_modals import ConfirmModal
from store import Store
from store.governance import approve

from tests.helpers_gov_seed import _propose
from tests.helpers_shell import FIXED_NOW, load_count, load_log, wait_until

SIZE = (120, 40)


async def _open_history(pilot: Pilot[Any], screen: MemoriesScreen, mid: int) -> HistoryModal:
    """Open memory ``mid`` on the Memories screen, wait for its detail (loaded again), press
    ``h`` and wait for its history."""
    loads = load_count(screen, "detail")
    screen.open_memory(mid)
    await wait_until(pilot, lambda: screen.detail is not None
                     and load_count(screen, "detail") > loads, what="the memory")
    await pilot.press("h")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, HistoryModal), what="history")
    modal = pilot.app.screen
    assert isinstance(modal, HistoryModal)
    return modal


async def test_h_lists_the_versions_and_a_pick_files_the_revert(store: Store,
                                                               tmp_path: Path) -> None:
    mid = approve(store, _propose(store, {"op": "add", "type": "project",
                                          "content": "The build uses make."}).id,
                  actor="ana").memory_id
    assert mid is not None
    approve(store, _propose(store, {"op": "revise", "target": mid,
                                    "content": "The build uses just."}).id, actor="ben")
    app = make_app(store=store, now=FIXED_NOW, mode="memories")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, MemoriesScreen)
                         and load_count(app.screen) >= 1, what="memories loaded")
        screen = app.screen
        await _open_history(pilot, screen, mid)
        options = app.screen.query_one("#history-versions", OptionList)
        assert options.option_count == 2
        first = str(options.get_option_at_index(0).prompt)
        assert "v1" in first and "add" in first and "by ana" in first
        assert "The build uses make." in first
        assert options.get_option_at_index(1).disabled  # the current version
        options.focus()
        options.highlighted = 0
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), what="confirm")
        await pilot.press("y")
        await wait_until(pilot, lambda: bool(store.proposals("pending")), what="the revert")
    (pending,) = store.proposals("pending")
    assert pending.op == "supersede" and pending.targets == (mid,)
    assert store.proposal(pending.id).content == "The build uses make."
    assert store.memory(mid).body == "The build uses just."


async def test_u_offers_undo_of_an_approval_for_a_few_minutes(store: Store) -> None:
    """After an approval on the Proposals screen, u files the undo proposal (an add's undo is
    a quarantine), pending in the queue; past the window, u is not offered."""
    from screens.proposals import UNDO_MINUTES, ProposalsScreen

    first = _propose(store, {"op": "add", "type": "project", "content": "The build uses make."})
    second = _propose(store, {"op": "add", "type": "user", "content": "Prefers tabs."})
    app = make_app(store=store, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ProposalsScreen)
                         and load_count(app.screen) >= 1, what="proposals loaded")
        screen = app.screen
        assert screen.check_action("undo", ()) is False  # nothing approved here yet
        t = [1000.0]
        screen.clock = lambda: t[0]
        for pid in (first.id, second.id):
            loads = load_count(screen, "detail")
            screen.open_proposal(pid)
            await wait_until(pilot, lambda p=pid, n=loads: screen.detail is not None
                             and screen.detail.info.id == p
                             and load_count(screen, "detail") > n, what=f"proposal {pid}")
            decided = screen.decisions
            await pilot.press("a")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal),
                             what="confirm")
            await pilot.press("y")
            await wait_until(pilot, lambda d=decided: screen.decisions > d, what="approval")
        made = store.proposal(second.id).memory_id
        t[0] += UNDO_MINUTES * 60 - 1
        assert screen.check_action("undo", ()) is True
        decided = screen.decisions
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), what="confirm")
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.decisions > decided, what="undo filed")
        (undo,) = store.proposals("pending")
        assert undo.op == "quarantine" and undo.targets == (made,)
        assert store.memory(made).status == "active"  # nothing changed until approved
        assert screen.check_action("undo", ()) is False  # the undo was used
        # an approval's window closes UNDO_MINUTES after it
        screen._undo = (first.id, t[0])
        t[0] += UNDO_MINUTES * 60
        assert screen.check_action("undo", ()) is False


async def test_the_current_version_is_never_offered_as_a_revert(store: Store) -> None:
    """The current version is the text already: the highlight starts on the version before
    it, and a memory with only its current version offers no revert at all (Enter on it asks
    nothing)."""
    mid = approve(store, _propose(store, {"op": "add", "type": "project",
                                          "content": "The build uses make."}).id,
                  actor="ana").memory_id
    assert mid is not None
    app = make_app(store=store, now=FIXED_NOW, mode="memories")
    async with app.run_test(message_hook=load_log(app), size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, MemoriesScreen)
                         and load_count(app.screen) >= 1, what="memories loaded")
        screen = app.screen
        await _open_history(pilot, screen, mid)
        modal = app.screen
        box = modal.query_one(".gov-box")
        assert "enter revert" not in str(box.border_subtitle)
        assert "nothing to revert to" in str(box.border_subtitle)
        options = modal.query_one("#history-versions", OptionList)
        assert options.option_count == 1 and options.highlighted is None
        options.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is modal  # no confirmation: there is nothing to file
        await pilot.press("escape")
        approve(store, _propose(store, {"op": "revise", "target": mid,
                                        "content": "The build uses just."}).id, actor="ben")
        await _open_history(pilot, screen, mid)
        options = app.screen.query_one("#history-versions", OptionList)
        assert options.highlighted == 0  # v1, not the current v2
        assert "enter revert" in str(app.screen.query_one(".gov-box").border_subtitle)
    assert store.proposals("pending") == []
