"""Defects a reviewer found in governed memory writes, each seeded and caught: forks made by
the gate, checks not run again at approval, a reinforce of a superseded memory, a type
declared to dodge the procedure rule, a duplicate check blind to another embedder's vectors,
non-finite numbers in JSON, the bound directory's files overwritten behind the agent's back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.governance import ProposalError, approve, chain, get_proposal, parse_proposal, submit
from tests.conftest import make_store
from tests.helpers_recall import import_memories

TAX = "Quarterly tax filing deadlines and invoice reminders."


def _propose(store: Store, doc: dict[str, Any], **kw: Any) -> Any:
    return submit(store, parse_proposal(doc, "cli"), **kw)


def _seed(store: Store, tmp_path: Path) -> dict[str, int]:
    return import_memories(store, tmp_path / "mem", [
        ("tax", TAX, {"name": "Tax reminders", "type": "reference", "tags": ["finance"]}),
        ("release", "Release only with make release, never with a raw docker push.",
         {"name": "Release process", "type": "procedure", "tags": ["release"]}),
        ("pytest-x", "Always run the test suite with pytest -x.",
         {"name": "Run tests with pytest -x", "type": "feedback", "tags": ["testing"]}),
    ])


# -- 2: the gate never forks a chain ---------------------------------------------------------
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


# -- 6: a reinforce of an inactive memory ----------------------------------------------------
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


# -- 5: the checks run again at approval -----------------------------------------------------
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


# -- 3: the duplicate check when the memories were embedded by another model ------------------
def _embedded_by_another_model(store: Store) -> None:
    with store.write() as conn:
        conn.exec_driver_sql("UPDATE chunk SET model = 'another-model' "
                             "WHERE source_type = 'memory'")


def test_same_text_is_a_duplicate_whatever_embedded_the_memories(store: Store,
                                                                 tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    _embedded_by_another_model(store)
    info = _propose(store, {"op": "add", "type": "reference",
                            "content": "  quarterly TAX filing deadlines and\ninvoice reminders."})
    dup = info.check("duplicate")
    assert dup.result == "warn" and dup.suggestion == "noop"
    assert dup.evidence["memory_id"] == ids["Tax reminders"] and "same text" in dup.detail
    assert any(o.as_op == "reinforce" and o.allowed for o in info.options)


def test_no_comparable_vectors_is_a_warn_that_says_so(store: Store, tmp_path: Path) -> None:
    _seed(store, tmp_path)
    _embedded_by_another_model(store)
    info = _propose(store, {"op": "add", "content": "The office wifi is called ledger-guest."})
    dup = info.check("duplicate")
    assert dup.result == "warn" and dup.suggestion is None
    assert "compared against 0 of 3 memories by meaning" in dup.detail
    assert "embedded by another model" in dup.detail
    assert dup.evidence["compared_by_meaning"] == 0


def test_duplicate_passes_when_every_memory_was_compared(store: Store, tmp_path: Path) -> None:
    _seed(store, tmp_path)
    info = _propose(store, {"op": "add", "content": "The office wifi is called ledger-guest."})
    dup = info.check("duplicate")
    assert dup.result == "pass" and dup.evidence["compared_by_meaning"] == 3


# -- 4: declaring another type does not dodge "never procedure / identity" -------------------
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


# -- 7: JSON scripts can parse -----------------------------------------------------------------
def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    from lca_tui.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, json.loads(out.out) if "--json" in argv and out.out else out.out, out.err


def test_proposals_json_lists_every_target_of_a_merge(store: Store, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    ids = _seed(store, tmp_path)
    both = [ids["Tax reminders"], ids["Run tests with pytest -x"]]
    _propose(store, {"op": "merge", "targets": both, "content": "Taxes and tests."})
    code, doc, _ = _cli(capsys, "proposals", "--store", str(store.path), "--json")
    assert code == 0 and doc["proposals"][0]["targets"] == both
    assert doc["proposals"][0]["target"] == both[0]


@pytest.mark.parametrize("days", [1e309, float("nan"), -1e309])
def test_non_finite_half_life_is_refused(days: float) -> None:
    with pytest.raises(ProposalError, match="metadata.half_life_days: a positive, finite"):
        parse_proposal({"op": "add", "content": "x y", "metadata": {"half_life_days": days}})


def test_json_output_never_has_nan_or_infinity(store: Store, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from store.governance.models import Proposal
    from store.core.db import orm

    info = _propose(store, {"op": "add", "content": "Long-lived note.",
                            "metadata": {"half_life_days": 30}})
    with store.write() as conn:  # a row written before validation refused infinity
        with orm(conn) as s:
            row = s.get(Proposal, info.id)
            assert row is not None
            row.meta = '{"half_life_days": Infinity, "name": "old"}'
            s.add(row)
            s.flush()
    from lca_tui.cli import main

    code = main(["proposal", str(info.id), "--store", str(store.path), "--json"])
    out = capsys.readouterr().out
    assert code == 0 and "Infinity" not in out and "NaN" not in out
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert doc["metadata"]["half_life_days"] is None


# -- 8: no quiet outputs -----------------------------------------------------------------------
def test_audit_and_proposals_refuse_a_limit_below_one(store: Store,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    for cmd in ("audit", "proposals"):
        code = main([cmd, "--store", str(store.path), "--limit", "0"])
        err = capsys.readouterr().err
        assert code != 0 and "--limit must be 1 or more (got 0)" in err


def test_empty_filters_say_so_and_an_unknown_type_names_the_types(
        store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    _seed(store, tmp_path)
    st = ["--store", str(store.path)]
    code = main(["memories", *st, "--type", "nope"])
    err = capsys.readouterr().err
    assert code != 0 and "no memories of type 'nope' (types: feedback, procedure, reference)" \
        in err
    assert main(["memories", *st, "--type", "feedback", "--status", "expired"]) == 0
    assert "no memories with status expired of type feedback" in capsys.readouterr().out
    assert main(["proposals", *st, "--status", "failed"]) == 0
    assert "no proposals with status failed" in capsys.readouterr().out
    assert main(["audit", *st, "--action", "nothing_like_it"]) == 0
    assert "no audit events with action nothing_like_it" in capsys.readouterr().out


# -- 1: a bound memory file the agent changed is never overwritten ---------------------------
def _bound(tmp_path: Path) -> tuple[Store, dict[str, int], Path]:
    folder = tmp_path / "mem"
    store = make_store(tmp_path / "s.db", **{"memory.dir": str(folder)})
    return store, _seed(store, tmp_path), folder


def test_approving_over_an_agents_edit_fails_and_keeps_the_file(tmp_path: Path) -> None:
    store, ids, folder = _bound(tmp_path)
    try:
        path = folder / "reference_tax.md"
        path.write_text(path.read_text() + "Also remind about the yearly VAT return.\n")
        edited = path.read_bytes()
        target = ids["Tax reminders"]
        done = _propose(store, {"op": "reinforce", "target": target})
        assert done.status == "failed"
        assert "changed on disk" in (done.status_reason or "") or "differs" in (
            done.status_reason or "")
        assert "not overwritten" in (done.status_reason or "")
        assert path.read_bytes() == edited  # the agent's line is still there
        assert store.memory(target).hits == 0  # and nothing was half-applied
        revise = _propose(store, {"op": "revise", "target": target,
                                  "content": TAX + " Monthly too."}, auto_apply=False)
        assert approve(store, revise.id).status == "failed"
        assert path.read_bytes() == edited
    finally:
        store.close()


def test_a_file_changed_after_lca_tui_wrote_it_is_caught_by_its_hash(tmp_path: Path) -> None:
    store, ids, folder = _bound(tmp_path)
    try:
        target = ids["Tax reminders"]
        first = _propose(store, {"op": "reinforce", "target": target})
        assert first.status == "applied" and first.verified
        path = folder / "reference_tax.md"
        text = path.read_text()
        assert "_lca_file_sha256" not in text  # the hash is the store's, never the file's
        path.write_text(text.replace("tags:", "owner: dana\ntags:"))  # a key of its own
        again = _propose(store, {"op": "reinforce", "target": target})
        assert again.status == "applied"  # nothing of the agent's is lost: its key is kept
        assert "owner: dana" in path.read_text() and "hits: 2" in path.read_text()
        path.write_text(path.read_text().replace("hits: 2", "hits: 7"))  # its loader counted
        edited = path.read_bytes()
        third = _propose(store, {"op": "reinforce", "target": target})
        assert third.status == "failed" and "changed on disk" in (third.status_reason or "")
        assert "hits" in (third.status_reason or "")
        path.write_text(path.read_text() + "An appended line.\n")
        edited = path.read_bytes()
        fourth = _propose(store, {"op": "reinforce", "target": target})
        assert fourth.status == "failed" and "body" in (fourth.status_reason or "")
        assert path.read_bytes() == edited and store.memory(target).hits == 2
    finally:
        store.close()


def test_recall_feedback_keeps_its_counts_but_not_over_an_agents_edit(tmp_path: Path) -> None:
    from store.governance import audit_events
    from store.recall.run import recall
    from tests.helpers_recall import NOW

    store, ids, folder = _bound(tmp_path)
    try:
        target = ids["Tax reminders"]
        path = folder / "reference_tax.md"
        path.write_text(path.read_text() + "Also remind about the yearly VAT return.\n")
        edited = path.read_bytes()
        result = recall(store, "quarterly tax filing deadlines invoice reminders", now=NOW)
        rank = next(c.rank for c in result.trace.candidates if c.source_id == target)
        store.feedback(result.trace_id, str(rank), "used")
        assert store.memory(target).hits == 1  # the feedback is kept
        assert path.read_bytes() == edited  # the file is not overwritten
        events = audit_events(store, 10, "memory_file_conflict")
        assert events and target in events[0].target_ids
    finally:
        store.close()


def test_a_deleted_file_is_not_brought_back_by_a_reinforce(tmp_path: Path) -> None:
    store, ids, folder = _bound(tmp_path)
    try:
        path = folder / "reference_tax.md"
        path.unlink()
        done = _propose(store, {"op": "reinforce", "target": ids["Tax reminders"]})
        assert done.status == "applied" and done.verified
        assert not path.exists()
        assert store.memory(ids["Tax reminders"]).hits == 1
    finally:
        store.close()


def test_an_unchanged_file_is_still_written(tmp_path: Path) -> None:
    store, ids, folder = _bound(tmp_path)
    try:
        done = _propose(store, {"op": "reinforce", "target": ids["Tax reminders"]})
        assert done.status == "applied"
        assert "hits: 1" in (folder / "reference_tax.md").read_text()
        again = _propose(store, {"op": "reinforce", "target": ids["Tax reminders"]})
        assert again.status == "applied" and "hits: 2" in (folder / "reference_tax.md"
                                                            ).read_text()
    finally:
        store.close()
