"""Snapshots of the guided tour on the demo store (frozen clock, fallback embedder): its first
step (Overview) and its last (Privacy, the erase step's closure), at 80x24 and 120x40 — the
panel docked above the footer, the row each step talks about selected and in view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lca_tui.app import make_app
from tests.helpers_shell import FIXED_NOW, load_count, overview_settled, settled, wait_until, watch

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}


@pytest.mark.parametrize("size", SIZES)
def test_tour_first_step(snap_compare: Any, demo_path: Path, size: str) -> None:
    """Tour 1/7, Overview: what the store holds; the session with the compaction selected."""
    app = make_app(demo_path, now=FIXED_NOW, tour=True)

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.tour.placed >= 1, what="the first step")
        await overview_settled(pilot)
        await settled(pilot)

    assert snap_compare(watch(app), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_tour_last_step(snap_compare: Any, demo_path: Path, size: str) -> None:
    """Tour 7/7, Privacy: the pasted key's closure previewed, nothing erased yet."""
    app = make_app(demo_path, now=FIXED_NOW, tour=True)

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.tour.placed >= 1, what="the first step")
        app.tour.go(6)
        await wait_until(pilot, lambda: app.tour.placed >= 2, what="the last step")
        await wait_until(pilot, lambda: load_count(app.screen, "preview") >= 1,
                         what="the closure")
        await settled(pilot)

    assert snap_compare(watch(app), terminal_size=SIZES[size], run_before=run_before)
