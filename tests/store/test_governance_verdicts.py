"""Governance verdicts that say what is true: the write side's proofs and checks
(health's n/a and harnesses without checkpoints, source support against a differing number,
the budget graded as Health grades it, the reinforce offered against a contradiction,
evidence-less approvals, consolidation against existing memories). The person behind every
decision (``--actor``, ``LCA_ACTOR``, ``identity.name``) is ``tests/cli/test_actor.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.core.writes import NewEntry, NewSession
from store.governance import ProposalError, approve, parse_proposal, submit
from store.health.records import RANK
from tests.conftest import make_store
from tests.helpers_health import NOW, add_session, ts
from tests.helpers_recall import add_entries, import_memories

PORT_BODY = ("Local dev and tests run on PostgreSQL 16 in docker compose on port 5432, with the "
             "databases ledgerline and ledgerline_test created by the compose file at startup "
             "and every test in a rolled-back transaction. Copy the example environment file "
             "to the project folder before the first run, then start the stack and run the "
             "migrations once; the seed data loads with the make target for it.")


def _propose(store: Store, doc: dict[str, Any], **kw: Any) -> Any:
    return submit(store, parse_proposal(doc, "cli"), auto_apply=False, **kw)


# -- health: nothing to judge is n/a, a harness without checkpoints is not warned -----------------
def test_compactions_of_a_harness_without_checkpoints_are_information(store: Store) -> None:
    """Sessions of a format that never records a checkpoint: their compactions are one
    informational line (n/a), not a warning each; a format that records checkpoints is still
    judged, and its bare compaction warns."""
    add_session(store, "cc", n=4)
    store.record_compaction("cc", 150_000, ts=ts(100), trigger="auto")
    store.record_compaction("cc", 160_000, ts=ts(90), trigger="auto")
    sig = store.health(now=NOW).signal("compaction_without_checkpoint")
    assert sig.status == "n/a" and RANK[sig.status] < RANK["warn"]
    assert "2 compactions in sessions of a harness that records no checkpoints" in \
        sig.explanation and sig.offending == []
    # another harness (another format) that does record checkpoints is judged
    store.append_entries(NewSession("mx", "mindstone-agent", started_at=ts(300)),
                         [NewEntry("user", "a turn", "mx", source_offset=0, ts=ts(300))])
    store.record_checkpoint("mx", trigger="pre-compact", ts=ts(310), entries_added=1,
                            chunks_embedded=1)
    bare = store.record_compaction("mx", 150_000, ts=ts(50), trigger="auto")
    sig = store.health(now=NOW).signal("compaction_without_checkpoint")
    assert sig.status == "warn" and [r.id for r in sig.offending] == [bare]
    assert "not judged, information only" in sig.explanation


def test_not_applicable_survives_the_stored_trend(store: Store) -> None:
    add_session(store)
    store.health(now=NOW)
    from store.health.scan import trends

    points = trends(store)["threshold_order"]
    assert points[-1].status == "n/a"


# -- source support: a differing number is no support -------------------------------------------
def test_port_number_contradicted_by_its_evidence_fails_source_support(store: Store) -> None:
    (entry,) = add_entries(store, "s1", [("assistant", "The stack is up: PostgreSQL 16 on "
                                                       "port 5433 in docker compose.")])
    info = _propose(store, {"op": "add", "type": "project",
                            "content": "Local dev runs PostgreSQL 16 in docker compose on "
                                       "port 5434.",
                            "evidence": [{"entry": entry}]})
    support = info.check("source_support")
    assert support.result == "fail", support.detail
    assert "contradicted by the evidence" in support.detail and "5434" in support.detail
    (sentence,) = support.evidence["sentences"]
    assert sentence["inference"] and sentence["contradicted_by"]["entry_id"] == entry
    # the same sentence with the evidence's number passes, said in good English
    same = _propose(store, {"op": "add", "type": "project",
                            "content": "Local dev runs PostgreSQL 16 in docker compose on "
                                       "port 5433.",
                            "evidence": [{"entry": entry}]})
    assert same.check("source_support").result == "pass"
    assert same.check("source_support").detail == "the one sentence is traced to the evidence"


def test_reinforce_not_offered_for_the_memory_it_contradicts(store: Store,
                                                             tmp_path: Path) -> None:
    import_memories(store, tmp_path / "mem", [
        ("local-dev", PORT_BODY, {"name": "Local dev database", "type": "project",
                                  "tags": ["local-dev"]})])
    info = _propose(store, {"op": "add", "type": "project",
                            "content": PORT_BODY.replace("5432", "5434"),
                            "metadata": {"tags": ["local-dev"]}})
    assert info.check("contradiction").result == "fail"
    assert info.check("duplicate").suggestion == "reinforce"  # a near-copy but for the port
    (reinforce,) = [o for o in info.options if o.as_op == "reinforce"]
    assert not reinforce.allowed and "contradiction check failed" in reinforce.why
    with pytest.raises(ProposalError):
        approve(store, info.id, as_="reinforce")


# -- the budget at the gate is graded as Health grades it ----------------------------------------
def test_over_budget_fails_at_the_gate_and_needs_a_recorded_reason(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s.db", **{"governance.critical_budget_chars": 200,
                                             "health.critical_budget_chars": 200})
    try:
        big = _propose(store, {"op": "add", "content": "A long critical rule. " * 12,
                               "metadata": {"critical": True}})
        assert big.check("budget").result == "fail"
        as_proposed = next(o for o in big.options if o.as_op is None)
        assert as_proposed.allowed and as_proposed.needs_reason
        with pytest.raises(ProposalError, match="needs --reason"):
            approve(store, big.id)
        done = approve(store, big.id, reason="the budget grows next release")
        assert done.status == "applied"
        assert "the budget grows next release" in {d.reason for d in done.decisions}
        assert store.health(now=NOW).signal("critical_budget").status == "fail"
    finally:
        store.close()


# -- provenance: the approval of the person who supplied the text ---------------------------------
def test_an_approved_evidence_less_proposal_is_no_orphan(store: Store) -> None:
    info = _propose(store, {"op": "add", "type": "feedback",
                            "content": "I prefer short commit messages in the imperative."})
    done = approve(store, info.id, reason="I said so myself")
    assert done.status == "applied" and done.memory_id is not None
    sig = store.health(now=NOW).signal("evidence_orphans")
    assert sig.status == "ok", sig.explanation
    assert done.memory_id not in {r.id for r in sig.offending}
    # a memory with no evidence at all is still an orphan
    with store.write() as conn:
        conn.exec_driver_sql("DELETE FROM evidence WHERE memory_id = ?", (done.memory_id,))
    sig = store.health(now=NOW).signal("evidence_orphans")
    assert sig.status == "warn" and {r.id for r in sig.offending} == {done.memory_id}


# -- consolidation does not re-propose what is already a memory ----------------------------------
def test_consolidation_skips_what_a_memory_quotes_or_has_as_evidence(store: Store,
                                                                    tmp_path: Path) -> None:
    (quoted, own) = add_entries(store, "s1", [
        ("user", "From now on use pytest -x so the suite stops at the first failure."),
        ("user", "I prefer short commit messages.")])
    import_memories(store, tmp_path / "mem", [
        ("pytest", "Dana said: \"From now on use pytest -x so the suite stops at the first "
                   "failure.\" Keep it that way in CI too.",
         {"name": "pytest -x", "type": "feedback"})])
    info = _propose(store, {"op": "add", "type": "feedback",
                            "content": "Keep commit messages short.",
                            "evidence": [{"entry": own}]})
    approve(store, info.id, reason="said in the session")
    before = {p.id for p in store.proposals()}
    report = store.consolidate()
    new = [p for p in store.proposals() if p.id not in before]
    assert new == [], [p.name for p in new]
    assert report.skipped.get("duplicate_memory", 0) >= 1  # quoted in memory "pytest -x"
    assert report.skipped.get("duplicate_memory_evidence", 0) >= 1  # its own evidence
    assert quoted != own


def test_a_negation_in_another_clause_of_the_evidence_is_no_contradiction(store: Store) -> None:
    """The demo's release checklist: the evidence's "(no manual docker push)" belongs to
    another clause than "Add the changelog entry and bump the version"."""
    (entry,) = add_entries(store, "s1", [("assistant", "I'll add the 0.3.0 changelog entry and "
                                          "version bump, commit, then release with `make "
                                          "release` as usual (no manual `docker push`).")])
    info = _propose(store, {"op": "add", "type": "procedure",
                            "content": "Add the changelog entry and bump the version.",
                            "evidence": [{"entry": entry}]})
    assert info.check("source_support").result == "pass", info.check("source_support").detail


def test_consolidation_skips_a_correction_whose_sentence_a_memory_already_says(
        store: Store, tmp_path: Path) -> None:
    """The demo's memory 5 case: the candidate (a correction, with its framing) is longer than
    the memory, so it is not inside it; but a sentence of the memory is inside the candidate."""
    add_entries(store, "s1", [
        ("assistant", "I started the staging database on port 5432 for you."),
        ("user", "No, that's wrong. The staging database listens on port 5433.")])
    import_memories(store, tmp_path / "mem", [
        ("ports", "Ports in dev. The staging database listens on port 5433. Dana corrected "
                  "this twice.", {"name": "staging port", "type": "feedback"})])
    before = {p.id for p in store.proposals()}
    report = store.consolidate()
    new = [p for p in store.proposals() if p.id not in before]
    assert new == [], [p.content for p in new]
    assert report.skipped.get("duplicate_memory", 0) >= 1
