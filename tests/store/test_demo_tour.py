"""The demo's own file (``Store.demo_refusal``: a token in the store matching the one in its
data folder) and the tour's steps as the store gives them (``Store.tour_step``): every step
finds its record, the erase step refuses a store that is not the demo's, and the step a tour
was left on is kept beside the demo store only."""

from __future__ import annotations

import shutil
from pathlib import Path

from store import open_store
from store.tour.steps import PASTED_KEY, STEPS
from tests.conftest import make_store
from tests.helpers_shell import FIXED_NOW


def test_the_demo_is_its_own_file_and_copies_without_its_folder_are_not(
        demo_path: Path, tmp_path: Path) -> None:
    store = open_store(demo_path)
    try:
        assert store.demo_refusal() is None
    finally:
        store.close()
    # the file alone, elsewhere
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copyfile(demo_path, alone / "demo.db")
    store = open_store(alone / "demo.db")
    try:
        assert "no demo data folder beside it" in str(store.demo_refusal())
    finally:
        store.close()
    # a folder beside it whose token is another demo's
    (Path(f"{demo_path}.demo-data") / "demo-token").write_text("0" * 32 + "\n")
    store = open_store(demo_path)
    try:
        assert "is not demo.db's" in str(store.demo_refusal())
    finally:
        store.close()


def test_a_store_the_demo_did_not_build_is_refused(tmp_path: Path) -> None:
    store = make_store(tmp_path / "demo.db")  # the name does not make it the demo
    try:
        assert "was not built by `lca-tui demo`" in str(store.demo_refusal())
        step = store.tour_step(6, FIXED_NOW)
        assert step.refused is not None and step.row is None and step.target is None
        store.remember_tour_position(3)  # nothing written beside a store that is not a demo
        assert not Path(f"{tmp_path / 'demo.db'}.demo-data").exists()
        assert store.tour_position() == 0
    finally:
        store.close()


def test_every_step_finds_its_record_in_the_demo(demo_path: Path) -> None:
    store = open_store(demo_path)
    try:
        steps = [store.tour_step(i, FIXED_NOW) for i in range(len(STEPS))]
        assert [s.subject for s in steps] == ["store", "series", "trace", "proposal",
                                              "memory", "signal", "erasure"]
        assert all(s.row is not None for s in steps), [s.subject for s in steps
                                                       if s.row is None]
        assert steps[0].target is not None and steps[0].row == steps[1].target.id  # type: ignore[union-attr]
        assert steps[3].target is not None and steps[3].target.kind == "proposal"
        assert steps[4].target is not None and steps[4].target.kind == "memory"
        assert steps[6].row == PASTED_KEY and steps[6].refused is None
        assert store.tour_step(99, FIXED_NOW).index == 6  # clamped
        store.remember_tour_position(4)
        assert store.tour_position() == 4
    finally:
        store.close()


def test_a_read_only_store_keeps_the_tour_step_nowhere(demo_path: Path) -> None:
    """--read-only writes nothing at all, beside the store either: the step a read-only tour
    reached is not written to the demo's data folder (it was, as tour-step)."""
    store = open_store(demo_path, read_only=True)
    try:
        before = store.tour_position()
        store.remember_tour_position(before + 2)
        assert store.tour_position() == before
    finally:
        store.close()
