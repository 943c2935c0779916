"""The gate's own writes: a supersede or merge approved through the gate writes the
bound directory's files, and the next consolidation pass does not take them for changes made
outside the gate (no ``revise`` of the memory it just wrote)."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.governance import approve
from tests.conftest import make_store
from tests.helpers_gov import _propose


@pytest.mark.parametrize("op", ["supersede", "merge"])
def test_the_next_pass_does_not_propose_a_revise_of_what_the_gate_wrote(
        tmp_path: Path, op: str) -> None:
    folder = tmp_path / "mem"
    folder.mkdir()
    with make_store(tmp_path / "s.db", **{"memory.dir": str(folder)}) as store:
        made = []
        for text, name in (("Tax reminders go out on the first of the month.", "Tax"),
                           ("Invoices are sent on the last working day.", "Invoices")):
            info = _propose(store, {"op": "add", "type": "reference", "content": text,
                                    "metadata": {"name": name}})
            made.append(int(approve(store, info.id).memory_id or 0))
        doc = ({"op": "supersede", "target": made[0]} if op == "supersede" else
               {"op": "merge", "targets": made})
        info = _propose(store, {**doc, "type": "reference",
                                "content": "Tax reminders and invoices go out on the fifth."})
        done = approve(store, info.id)
        assert done.status == "applied" and done.verified
        before = {p.id for p in store.proposals()}
        report = store.consolidate(use_proposer=False)
        new = [p for p in store.proposals() if p.id not in before]
        assert report.by_kind.get("file", 0) == 0 and new == [], [
            (p.op, p.origin) for p in new]
