"""The checks run again at approval: the budget, and a duplicate or contradiction that landed
since the proposal was submitted."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import Store
from store.governance import ProposalError, approve, get_proposal

from tests.conftest import make_store
from tests.helpers_gov_seed import _propose


def test_budget_is_checked_again_at_approval(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s.db", **{"governance.critical_budget_chars": 100})
    try:
        a = _propose(store, {"op": "add", "content": "a" * 75, "metadata": {"critical": True}})
        b = _propose(store, {"op": "add", "content": "b" * 75, "metadata": {"critical": True}})
        assert a.check("budget").result == b.check("budget").result == "pass"
        assert approve(store, a.id).status == "applied"
        # over the budget fails at the gate as in Health (issue 22): approving needs a reason
        with pytest.raises(ProposalError, match="needs --reason"):
            approve(store, b.id)
        done = get_proposal(store, b.id)
        budget = done.check("budget")
        assert budget.result == "fail" and "over its 100-char budget" in budget.detail
        assert budget.evidence["current"] == 75 and budget.revision == 1
        assert done.revision == 1 and done.status == "pending"
        forced = approve(store, b.id, reason="the loader budget is raised next release")
        assert forced.status == "applied"
        assert any(d.reason == "the loader budget is raised next release"
                   for d in forced.decisions)
    finally:
        store.close()


def test_a_duplicate_or_contradiction_landed_since_submission_is_found_at_approval(
        store: Store) -> None:
    text = "Local dev and tests run on PostgreSQL 16 in docker compose on port 5433."
    a = _propose(store, {"op": "add", "content": text, "metadata": {"tags": ["ops"]}})
    b = _propose(store, {"op": "add", "content": text, "metadata": {"tags": ["ops"]}})
    c = _propose(store, {"op": "add", "content": text.replace("5433", "5432"),
                         "metadata": {"tags": ["ops"]}})
    assert b.check("duplicate").result == "pass"
    assert c.check("contradiction").result == "pass"
    a = approve(store, a.id)
    with pytest.raises(ProposalError, match="contradiction"):
        approve(store, c.id)  # the contradiction now blocks, as at submission
    assert get_proposal(store, c.id).check("contradiction").result == "fail"
    assert get_proposal(store, c.id).status == "pending"
    done = approve(store, b.id, as_="reinforce")  # offered by the new duplicate result
    assert done.status == "applied" and done.memory_id == a.memory_id
    assert done.check("duplicate").result == "warn" and done.check("duplicate").revision == 1


def test_the_gate_and_health_grade_the_budget_from_one_setting(tmp_path: Path) -> None:
    """Issue 22: one budget (``health.critical_budget_chars``; the old gate key is an alias),
    and the gate warns past Health's warn percent as Health does."""
    store = make_store(tmp_path / "s.db", **{"health.critical_budget_chars": 100})
    try:
        near = _propose(store, {"op": "add", "content": "n" * 95,
                                "metadata": {"critical": True}})
        budget = near.check("budget")
        assert budget.result == "warn" and budget.evidence["budget"] == 100
        assert "warn level (90 chars)" in budget.detail
        under = _propose(store, {"op": "add", "content": "u" * 80,
                                 "metadata": {"critical": True}})
        assert under.check("budget").result == "pass"
    finally:
        store.close()
    from store.core.settings import Settings

    old = Settings.load({"governance.critical_budget_chars": 321})
    assert old["health.critical_budget_chars"] == 321 == old["governance.critical_budget_chars"]
