"""Memory retention: ``memory.retention_days.<type>`` yields ``expire`` proposals (a gate
operation) for exactly the memories past it — never a critical or evergreen one — and an
applied expiry leaves the memory ``expired``: kept, recalled only by a --historical recall."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from store import ProposalError, Store
from store.governance import approve, get_proposal

from tests.conftest import make_store
from tests.helpers_gov_seed import _propose
from tests.helpers_recall import by_name, import_memories

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture
def kept(tmp_path: Path) -> Store:
    s = make_store(tmp_path / "kept.db", **{"memory.retention_days.project": 30,
                                            "memory.retention_days.reference": 100})
    yield s
    s.close()


def _seed(store: Store, tmp_path: Path) -> dict[str, int]:
    ids = import_memories(store, tmp_path / "mem", [
        ("old-project", "The old staging cluster is called ferry.",
         {"name": "old project", "type": "project", "created": "2026-04-01"}),
        ("new-project", "The new staging cluster is called barge.",
         {"name": "new project", "type": "project", "created": "2026-05-20"}),
        ("old-critical", "Never force-push to the release branch.",
         {"name": "old critical", "type": "project", "created": "2026-01-10"}),
        ("old-evergreen", "The company was founded in Lyon.",
         {"name": "old evergreen", "type": "project", "created": "2026-01-10"}),
        ("old-used", "The build cache lives in the ci-cache bucket.",
         {"name": "old but used", "type": "project", "created": "2026-03-01"}),
        ("old-reference", "The style guide is at docs/style.md.",
         {"name": "old reference", "type": "reference", "created": "2026-01-15"}),
        ("mid-reference", "The API docs are at docs/api.md.",
         {"name": "mid reference", "type": "reference", "created": "2026-04-01"}),
        ("old-feedback", "Answer in short paragraphs.",
         {"name": "old feedback", "type": "feedback", "created": "2025-01-01"}),
    ])
    with store.write() as conn:
        conn.exec_driver_sql("UPDATE memory SET critical = 1 WHERE id = ?",
                             (ids["old critical"],))
        conn.exec_driver_sql("UPDATE memory SET evergreen = 1 WHERE id = ?",
                             (ids["old evergreen"],))
        conn.exec_driver_sql("UPDATE memory SET last_applied = '2026-05-25T10:00:00Z' "
                             "WHERE id = ?", (ids["old but used"],))
    return ids


def test_expire_proposals_for_exactly_the_memories_past_their_retention(
        kept: Store, tmp_path: Path) -> None:
    ids = _seed(kept, tmp_path)
    # past: a project memory of 61 days (limit 30), a reference of 137 (limit 100); not: a
    # new one, a critical, an evergreen, one applied a week ago, a reference of 61 days, and
    # a feedback memory (no retention for its type)
    expected = {ids["old project"], ids["old reference"]}
    assert {e.memory_id for e in kept.expiry_due(NOW)} == expected
    dry = kept.expire_pass(now=NOW, dry_run=True)
    assert dry.proposals_added == 0 and kept.proposals() == []
    report = kept.expire_pass(now=NOW)
    assert (report.proposals_added, report.errors) == (2, [])
    infos = [get_proposal(kept, p) for p in report.proposal_ids]
    assert {i.summary.targets[0] for i in infos} == expected
    assert all(i.summary.op == "expire" and i.status == "pending" for i in infos)
    assert "memory.retention_days.project = 30" in " ".join(i.rationale or "" for i in infos)
    again = kept.expire_pass(now=NOW)
    assert (again.proposals_added, again.skipped) == (0, 2)
    for i in infos:
        assert approve(kept, i.id, reason="past retention").status == "applied"
    old = kept.memory(ids["old project"])
    assert old.status == "expired" and old.body == "The old staging cluster is called ferry."
    assert kept.expiry_due(NOW) == []


def test_an_expired_memory_is_recalled_only_by_a_historical_recall(
        kept: Store, tmp_path: Path) -> None:
    ids = _seed(kept, tmp_path)
    report = kept.expire_pass(now=NOW)
    for pid in report.proposal_ids:
        approve(kept, pid, reason="past retention")
    query = "what is the old staging cluster called"
    now = by_name(kept.recall(query))["old project"]
    assert now.decision != "injected" and "expired" in (now.reason or "")
    then = by_name(kept.recall(query, historical=True))["old project"]
    assert "expired" not in (then.reason or "")
    assert kept.memory(ids["old project"]).status == "expired"


def test_the_gate_never_expires_a_critical_or_evergreen_memory(kept: Store,
                                                              tmp_path: Path) -> None:
    ids = _seed(kept, tmp_path)
    for name, kind in (("old critical", "critical"), ("old evergreen", "evergreen")):
        with pytest.raises(ProposalError, match=f"is {kind}: a {kind} memory never expires"):
            _propose(kept, {"op": "expire", "target": ids[name]})


def test_no_retention_set_expires_nothing(store: Store, tmp_path: Path) -> None:
    _seed(store, tmp_path)
    assert store.expiry_due(NOW) == [] and store.expire_pass(now=NOW).proposals_added == 0
