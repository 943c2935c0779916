"""A memory's history and revert: every version of its chain (each applied
proposal: who, when, the diff; an imported first text; an erased version as erased, never its
text), ``revert --to`` as an ordinary pending proposal checked by the gate, and ``undo`` of the
latest approval as the same proposal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import ProposalError, Store
from store.governance import approve

from tests.helpers_gov_seed import _propose
from tests.helpers_recall import import_memories

V1 = "Deploys go through the staging cluster first."
V2 = "Deploys go through the staging cluster first, then canary."
V3 = "Deploys go through the canary cluster only."


def _chain_of_three(store: Store) -> list[int]:
    add = approve(store, _propose(store, {"op": "add", "type": "project", "content": V1}).id,
                  actor="ana")
    mid = add.memory_id
    assert mid is not None
    approve(store, _propose(store, {"op": "revise", "target": mid, "content": V2}).id,
            actor="ben", reason="canary added")
    sup = approve(store, _propose(store, {"op": "supersede", "target": mid,
                                          "content": V3}).id, actor="ana",
                  as_=None, reason="no more staging")
    assert sup.status == "applied" and sup.memory_id is not None
    return [mid, sup.memory_id]


def test_history_lists_every_version_with_who_when_and_the_diff(store: Store) -> None:
    first, last = _chain_of_three(store)
    versions = store.memory_history(first)
    assert store.memory_history(last) == versions  # the chain's history, whichever is asked
    assert [(v.version, v.op, v.memory_id, v.actor) for v in versions] == [
        (1, "add", first, "ana"), (2, "revise", first, "ben"), (3, "supersede", last, "ana")]
    assert [v.text for v in versions] == [V1, V2, V3]
    assert [v.current for v in versions] == [False, False, True]
    assert versions[0].diff is None and all(v.ts for v in versions)
    assert f"-{V1}" in (versions[1].diff or "") and f"+{V2}" in (versions[1].diff or "")


def test_revert_files_an_ordinary_pending_proposal_and_rewrites_nothing(store: Store) -> None:
    first, last = _chain_of_three(store)
    info = store.revert_memory(first, 1, reason="staging is back", actor="ana")
    assert info.status == "pending" and info.summary.op == "supersede"
    assert info.summary.targets == (last,) and info.content == V1
    assert {c.kind for c in info.checks} >= {"duplicate", "contradiction"}  # the gate's checks
    assert "revert memory" in (info.rationale or "") and "staging is back" in (info.rationale
                                                                              or "")
    assert store.memory(last).body == V3  # nothing rewritten until approved
    done = approve(store, info.id, actor="ana", reason="revert")
    assert done.status == "applied"
    versions = store.memory_history(first)
    assert [v.text for v in versions] == [V1, V2, V3, V1] and versions[-1].current
    with pytest.raises(ProposalError, match="already memory .* text"):
        store.revert_memory(first, 1)
    with pytest.raises(ProposalError, match="has versions 1–4, not 9"):
        store.revert_memory(first, 9)


def test_an_imported_memory_starts_with_its_file_text(store: Store, tmp_path: Path) -> None:
    ids = import_memories(store, tmp_path / "mem", [
        ("deploy", V1, {"name": "deploys", "type": "project"})])
    mid = ids["deploys"]
    approve(store, _propose(store, {"op": "revise", "target": mid, "content": V2}).id)
    versions = store.memory_history(mid)
    assert [(v.op, v.text) for v in versions] == [("import", V1), ("revise", V2)]


def test_an_erased_version_shows_when_and_by_whom_never_its_text(store: Store) -> None:
    first, last = _chain_of_three(store)
    third = approve(store, _propose(store, {"op": "supersede", "target": last,
                                            "content": "Deploys are paused."}).id,
                    reason="pause").memory_id
    assert third is not None
    store.erase(memory=last, actor="dpo", reason="wrong cluster named")
    versions = store.memory_history(third)
    erased = [v for v in versions if v.erased]
    assert len(erased) == 1 and erased[0].actor == "dpo" and erased[0].ts
    assert erased[0].text is None and erased[0].diff is None
    assert "canary cluster only" not in json.dumps([v.to_json() for v in versions])
    with pytest.raises(ProposalError, match="was erased .* by dpo: its text is gone"):
        store.revert_memory(third, erased[0].version)


def test_a_version_whose_proposal_was_erased_says_so_and_diffs_the_right_version(
        store: Store) -> None:
    """Issue 30 review: erasing a memory erases the proposal that superseded it; the next
    version is not an "import by lca-tui" but a write whose proposal was erased, and its diff
    header names the version it compares to (the one before the erased version)."""
    first, last = _chain_of_three(store)
    third = approve(store, _propose(store, {"op": "supersede", "target": last,
                                            "content": "Deploys are paused."}).id,
                    reason="pause").memory_id
    assert third is not None
    store.erase(memory=last, actor="dpo", reason="wrong cluster named")
    versions = store.memory_history(third)
    assert [v.op for v in versions] == ["add", "revise", "erased", "write"]
    made = versions[-1]
    assert made.proposal_erased and made.memory_id == third and made.current
    assert made.actor is None and made.text == "Deploys are paused."
    assert not any(v.proposal_erased for v in versions[:-1])
    assert made.diff is not None
    assert made.diff.splitlines()[:2] == ["--- version 2", "+++ version 4"]
    assert f"-{V2}" in made.diff.splitlines()


def test_an_imported_memory_is_still_an_import(store: Store, tmp_path: Path) -> None:
    """The erased-proposal mark needs a named proposal that is gone: an import is an import."""
    ids = import_memories(store, tmp_path / "mem", [
        ("ports", "The database listens on 5432.", {"name": "Ports", "type": "project"})])
    (v,) = store.memory_history(ids["Ports"])
    assert v.op == "import" and not v.proposal_erased


def test_expire_and_quarantine_approvals_are_versions_with_who_and_when(
        store: Store) -> None:
    """Issue 30 review: history left out expire and quarantine approvals; each is a version
    (who, when), its text unchanged and no diff — and the memory brought back after it."""
    made = approve(store, _propose(store, {"op": "add", "type": "project",
                                           "content": V1}).id, actor="ana")
    mid = made.memory_id
    assert mid is not None
    gone = approve(store, _propose(store, {"op": "expire", "target": mid}).id, actor="ben")
    versions = store.memory_history(mid)
    assert [(v.op, v.actor, v.proposal_id) for v in versions] == [
        ("add", "ana", made.id), ("expire", "ben", gone.id)]
    assert versions[1].ts == gone.decided_at and versions[1].text == V1
    assert versions[1].diff is None and not versions[1].current
    back = approve(store, store.undo_last_approval().id, actor="ana")
    assert back.memory_id is not None
    assert [v.op for v in store.memory_history(back.memory_id)] == [
        "add", "expire", "supersede"]
    other = approve(store, _propose(store, {"op": "add", "type": "user",
                                            "content": "Prefers tabs over spaces."}).id)
    assert other.memory_id is not None
    held = approve(store, store.undo_last_approval().id, actor="cy")
    assert held.status == "applied"
    assert [(v.op, v.proposal_id) for v in store.memory_history(other.memory_id)] == [
        ("add", other.id), ("quarantine", held.id)]
    assert store.memory_history(other.memory_id)[-1].actor == "cy"


def test_undo_of_the_latest_approval_is_the_revert_proposal(store: Store) -> None:
    first, last = _chain_of_three(store)
    info = store.undo_last_approval()
    assert info.summary.op == "supersede" and info.content == V2
    assert info.status == "pending" and "undo of proposal" in (info.rationale or "")
    # an add has no version before: its undo quarantines what it made
    made = approve(store, _propose(store, {"op": "add", "type": "user",
                                           "content": "Prefers tabs over spaces."}).id)
    undo = store.undo_last_approval()
    assert undo.summary.op == "quarantine" and undo.summary.targets == (made.memory_id,)


def test_undo_of_an_expire_brings_the_memory_back_not_the_add_before_it(
        store: Store) -> None:
    """Issue 30 review: approve an add, then an expire — undo undoes the expire (the latest
    approval) with an ordinary proposal that brings the memory back, not the add."""
    made = approve(store, _propose(store, {"op": "add", "type": "project",
                                           "content": V1}).id, actor="ana")
    mid = made.memory_id
    assert mid is not None
    gone = approve(store, _propose(store, {"op": "expire", "target": mid}).id, actor="ben")
    assert gone.status == "applied" and store.memory(mid).status == "expired"
    info = store.undo_last_approval()
    assert info.summary.op == "supersede" and info.summary.targets == (mid,)
    assert info.content == V1 and f"undo of proposal {gone.id}" in (info.rationale or "")
    back = approve(store, info.id, actor="ana")
    assert back.status == "applied" and back.memory_id is not None
    assert store.memory(back.memory_id).status == "active"
    assert store.memory(back.memory_id).body.strip() == V1


def test_a_second_undo_or_revert_of_the_same_thing_is_refused(store: Store) -> None:
    """Issue 30 review: an undo (or revert) already pending for the same target and text is
    not filed twice: one line names the pending proposal."""
    first, last = _chain_of_three(store)
    info = store.undo_last_approval()
    with pytest.raises(ProposalError, match=f"proposal {info.id} already files this"):
        store.undo_last_approval()
    with pytest.raises(ProposalError, match=f"proposal {info.id} already files this"):
        store.revert_memory(last, to=2)
    made = approve(store, _propose(store, {"op": "add", "type": "user",
                                           "content": "Prefers tabs over spaces."}).id)
    quarantine = store.undo_last_approval()
    assert quarantine.summary.op == "quarantine"
    with pytest.raises(ProposalError, match=f"proposal {quarantine.id} already files"):
        store.undo_last_approval(made.id)


def test_undo_of_a_reinforce_says_there_is_nothing_to_undo(store: Store) -> None:
    """The latest approval is a reinforce: undo names it and files nothing (it never undoes
    an older approval instead)."""
    made = approve(store, _propose(store, {"op": "add", "type": "user",
                                           "content": "Prefers tabs over spaces."}).id)
    assert made.memory_id is not None
    again = approve(store, _propose(store, {"op": "reinforce", "target": made.memory_id},
                                    auto_apply=False).id)
    with pytest.raises(ProposalError, match=f"proposal {again.id}, is a reinforce"):
        store.undo_last_approval()
    assert not [p for p in store.proposals() if p.status == "pending"]


def test_undo_with_nothing_approved_says_so(store: Store) -> None:
    with pytest.raises(ProposalError, match="no approval to undo"):
        store.undo_last_approval()
