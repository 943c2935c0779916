"""Snapshots of the Proposals and Memories screens on the demo store (frozen clock, fallback
embedder): a proposal whose contradiction check failed, and the three-link chain with its
merge, at 120x40 and 80x24."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lca_tui.app import make_app
from tests.helpers_shell import (
    FIXED_NOW,
    build_demo_template,
    load_count,
    settled,
    wait_until,
    watch,
)

WIDE = (120, 40)
SMALL = (80, 24)


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_template(tmp_path_factory.mktemp("demo-gov-snap"))


async def _settled(pilot: Pilot[Any]) -> None:
    await settled(pilot)


def _contradiction(app: Any) -> int:
    return next(r.id for r in app.screen.rows if r.status == "pending" and any(
        c.kind == "contradiction" and c.result == "fail" for c in r.checks))


async def _open_proposal(pilot: Pilot[Any], pick: Any) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: load_count(app.screen) >= 1, what="proposals")
    screen = app.screen
    pid = pick(app)
    loads = load_count(screen, "detail")
    screen.open_proposal(pid)
    await wait_until(pilot, lambda: screen.detail is not None and screen.detail.info.id == pid
                     and load_count(screen, "detail") > loads, what="the proposal")
    await _settled(pilot)


def _longest_chain(app: Any) -> int:
    store = app.store
    best = max(store.list_memories(), key=lambda m: (len(store.chain(m.id)), m.status ==
                                                     "active", -m.id))
    return next(c.id for c in store.chain(best.id) if c.status == "active")


async def _open_chain(pilot: Pilot[Any]) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: load_count(app.screen) >= 1, what="memories")
    screen = app.screen
    mid = _longest_chain(app)
    assert len(app.store.chain(mid)) >= 4, "the demo has a three-link chain"
    loads = load_count(screen, "detail")
    screen.open_memory(mid)
    await wait_until(pilot, lambda: screen.detail is not None and screen.detail.row.id == mid
                     and load_count(screen, "detail") > loads, what="the chain")
    await _settled(pilot)


@pytest.mark.parametrize("size", [WIDE, SMALL], ids=["120x40", "80x24"])
def test_proposal_with_a_failed_contradiction(snap_compare: Any, demo_path: Path,
                                              size: tuple[int, int]) -> None:
    """Proposals: the queue, and a pending proposal whose contradiction check failed — the
    conflicting memory side by side."""
    app = make_app(demo_path, now=FIXED_NOW, mode="proposals")

    async def run_before(pilot: Pilot[Any]) -> None:
        await _open_proposal(pilot, _contradiction)

    assert snap_compare(watch(app), terminal_size=size, run_before=run_before)


def test_approve_modal_over_a_contradiction(snap_compare: Any, demo_path: Path) -> None:
    """Proposals: a over a failed contradiction offers supersede or keep-both, with a reason."""
    app = make_app(demo_path, now=FIXED_NOW, mode="proposals")

    async def run_before(pilot: Pilot[Any]) -> None:
        await _open_proposal(pilot, _contradiction)
        await pilot.press("a")
        await wait_until(pilot, lambda: app.screen.id != "proposals" and
                         type(app.screen).__name__ == "ApproveModal", what="the modal")
        await pilot.press("down")
        await _settled(pilot)

    assert snap_compare(watch(app), terminal_size=WIDE, run_before=run_before)


@pytest.mark.parametrize("size", [WIDE, SMALL], ids=["120x40", "80x24"])
def test_memory_with_its_supersession_chain(snap_compare: Any, demo_path: Path,
                                            size: tuple[int, int]) -> None:
    """Memories: the table, and the newest memory of the three-link chain (with a merge) —
    its evidence and the chain tree with validity intervals and proposals."""
    app = make_app(demo_path, now=FIXED_NOW, mode="memories")

    async def run_before(pilot: Pilot[Any]) -> None:
        await _open_chain(pilot)

    assert snap_compare(watch(app), terminal_size=size, run_before=run_before)
