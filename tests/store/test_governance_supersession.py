"""Supersession through the gate: no fork (a superseded memory is not superseded again, a
pending supersede whose target moved on is not applied, a second successor is refused and forks
are listed), no reinforce of a superseded memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import Store
from store.governance import ProposalError, approve, chain, get_proposal

from tests.helpers_gov_seed import _propose, _seed


def test_supersede_of_an_already_superseded_memory_is_refused(store: Store,
                                                              tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    old = ids["Tax reminders"]
    first = approve(store, _propose(store, {"op": "supersede", "target": old,
                                            "content": "Tax reminders now include VAT."}).id)
    with pytest.raises(ProposalError, match=f"already superseded by {first.memory_id}; .*"
                       f"supersede {first.memory_id} instead"):
        _propose(store, {"op": "supersede", "target": old, "content": "Tax reminders, v3."})
    with pytest.raises(ProposalError, match="already superseded"):
        _propose(store, {"op": "merge", "targets": [old, first.memory_id],
                         "content": "Tax reminders with VAT, merged."})
    assert store.memory(old).superseded_by_id == first.memory_id
    assert [c.to_json()["successors"] for c in chain(store, old)] == [[first.memory_id], []]


def test_a_pending_supersede_whose_target_was_superseded_meanwhile_is_not_applied(
        store: Store, tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    old = ids["Tax reminders"]
    a = _propose(store, {"op": "supersede", "target": old, "content": "Tax reminders, A."})
    b = _propose(store, {"op": "supersede", "target": old, "content": "Tax reminders, B."})
    assert approve(store, a.id).status == "applied"
    with pytest.raises(ProposalError):
        approve(store, b.id)
    assert get_proposal(store, b.id).status == "pending"
    assert [c.successors for c in chain(store, old)][0] == (get_proposal(store, a.id).memory_id,)


def test_link_refuses_a_second_successor_and_chain_json_lists_forks(store: Store,
                                                                     tmp_path: Path) -> None:
    from store.governance.chains import ForkError, link

    ids = _seed(store, tmp_path)
    old, x, y = ids["Tax reminders"], ids["Release process"], ids["Run tests with pytest -x"]
    with store.write() as conn:
        link(conn, store, old, x)
    with pytest.raises(ForkError, match=f"already superseded by {x}"):
        with store.write() as conn:
            link(conn, store, old, y)
    with store.write() as conn:  # what an importer reads from files is kept, and reported
        link(conn, store, old, y, source="import", allow_fork=True, pointers=False)
    first = chain(store, old)[0].to_json()
    assert first["successors"] == sorted([x, y]) and first["fork"] is True


def test_reinforce_of_a_superseded_memory_is_refused_not_auto_applied(store: Store,
                                                                      tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    old = ids["Tax reminders"]
    new = approve(store, _propose(store, {"op": "supersede", "target": old,
                                          "content": "Tax reminders now include VAT."}).id)
    hits = store.memory(old).hits
    with pytest.raises(ProposalError, match=f"superseded, not active.*{new.memory_id}"):
        _propose(store, {"op": "reinforce", "target": old})
    assert store.memory(old).hits == hits
    assert _propose(store, {"op": "reinforce", "target": new.memory_id}).status == "applied"
