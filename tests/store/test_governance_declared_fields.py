"""What a proposal declares cannot dodge a rule: a procedure target is never auto-applied
whatever type is declared, a type change on revise is warned, a non-finite half-life is
refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.governance import ProposalError, parse_proposal

from tests.conftest import make_store
from tests.helpers_gov_seed import TAX, _propose, _seed


@pytest.mark.parametrize("op", ["reinforce", "revise"])
def test_a_procedure_target_is_never_auto_applied_whatever_type_is_declared(
        tmp_path: Path, op: str) -> None:
    store = make_store(tmp_path / "s.db", **{"governance.auto_apply": "reinforce,revise,noop"})
    try:
        ids = _seed(store, tmp_path)
        target = ids["Release process"]
        doc: dict[str, Any] = {"op": op, "target": target, "type": "feedback"}
        if op == "revise":
            doc["content"] = "Release with make release; a raw docker push is fine too."
        info = _propose(store, doc)
        risk = info.check("procedure_risk")
        assert info.status == "pending" and risk.result == "warn"
        assert "procedure" in risk.detail and "changes memory" in risk.detail
        assert store.memory(target).type == "procedure"
        assert store.memory(target).hits == 0
        clean = _propose(store, {"op": "reinforce", "target": ids["Tax reminders"]})
        assert clean.status == "applied"  # the policy still applies what it may
    finally:
        store.close()


def test_a_type_change_on_revise_is_warned(store: Store, tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    info = _propose(store, {"op": "revise", "target": ids["Tax reminders"], "type": "project",
                            "content": TAX})
    risk = info.check("procedure_risk")
    assert risk.result == "warn" and "from reference to project" in risk.detail
    same = _propose(store, {"op": "revise", "target": ids["Tax reminders"],
                            "content": TAX + " Monthly too."})
    assert same.check("procedure_risk").result == "pass"


@pytest.mark.parametrize("days", [1e309, float("nan"), -1e309])
def test_non_finite_half_life_is_refused(days: float) -> None:
    with pytest.raises(ProposalError, match="metadata.half_life_days: a positive, finite"):
        parse_proposal({"op": "add", "content": "x y", "metadata": {"half_life_days": days}})
