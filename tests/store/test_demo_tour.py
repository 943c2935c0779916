"""The demo's own file (``store.demo_refusal``: a token in the store matching the one in its
data folder) and the tour's steps as the store gives them (``store.tour_step``): every step
finds its record, the erase step refuses a store that is not the demo's, and the step a tour
was left on is kept beside the demo store only."""

from __future__ import annotations

import shutil
from pathlib import Path

from store import demo_refusal, open_store, remember_tour_position, tour_position, tour_step
from store.demo.tour import PASTED_KEY, STEPS
from tests.conftest import make_store
from tests.helpers_shell import FIXED_NOW


def test_the_demo_is_its_own_file_and_copies_without_its_folder_are_not(
        demo_path: Path, tmp_path: Path) -> None:
    store = open_store(demo_path)
    try:
        assert demo_refusal(store) is None
    finally:
        store.close()
    # the file alone, elsewhere
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copyfile(demo_path, alone / "demo.db")
    store = open_store(alone / "demo.db")
    try:
        assert "no demo data folder beside it" in str(demo_refusal(store))
    finally:
        store.close()
    # a folder beside it whose token is another demo's
    (Path(f"{demo_path}.demo-data") / "demo-token").write_text("0" * 32 + "\n")
    store = open_store(demo_path)
    try:
        assert "is not demo.db's" in str(demo_refusal(store))
    finally:
        store.close()


def test_a_store_the_demo_did_not_build_is_refused(tmp_path: Path) -> None:
    store = make_store(tmp_path / "demo.db")  # the name does not make it the demo
    try:
        assert "was not built by `lca-tui demo`" in str(demo_refusal(store))
        step = tour_step(store, 6, FIXED_NOW)
        assert step.refused is not None and step.row is None and step.target is None
        remember_tour_position(store, 3)  # nothing written beside a store that is not a demo
        assert not Path(f"{tmp_path / 'demo.db'}.demo-data").exists()
        assert tour_position(store) == 0
    finally:
        store.close()


def test_every_step_finds_its_record_in_the_demo(demo_path: Path) -> None:
    store = open_store(demo_path)
    try:
        steps = [tour_step(store, i, FIXED_NOW) for i in range(len(STEPS))]
        assert [s.subject for s in steps] == ["store", "series", "trace", "proposal",
                                              "memory", "signal", "erasure"]
        assert all(s.row is not None for s in steps), [s.subject for s in steps
                                                       if s.row is None]
        assert steps[0].target is not None and steps[0].row == steps[1].target.id  # type: ignore[union-attr]
        assert steps[3].target is not None and steps[3].target.kind == "proposal"
        assert steps[4].target is not None and steps[4].target.kind == "memory"
        assert steps[6].row == PASTED_KEY and steps[6].refused is None
        assert tour_step(store, 99, FIXED_NOW).index == 6  # clamped
        remember_tour_position(store, 4)
        assert tour_position(store) == 4
    finally:
        store.close()


def test_a_read_only_store_keeps_the_tour_step_nowhere(demo_path: Path) -> None:
    """--read-only writes nothing at all, beside the store either: the step a read-only tour
    reached is not written to the demo's data folder (it was, as tour-step)."""
    store = open_store(demo_path, read_only=True)
    try:
        before = tour_position(store)
        remember_tour_position(store, before + 2)
        assert tour_position(store) == before
    finally:
        store.close()
