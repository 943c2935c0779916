"""Governed memory writes: every check catches its seeded case and passes a clean one, the
approval rules, the auto-apply policy, apply + verify, supersession, the bound memory
directory, and a failure in the middle of apply leaving everything as it was."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.core import vec
from store.governance import (
    ProposalError,
    approve,
    chain,
    edit,
    get_proposal,
    list_proposals,
    memory_detail,
    parse_proposal,
    reject,
    submit,
)
from store.recall.run import recall
from tests.conftest import make_store
from tests.helpers_recall import NOW, add_entries, import_memories

PYTEST_BODY = "Always run the test suite with pytest -x so it stops at the first failure."
PORT_BODY = "Local dev and tests run on PostgreSQL 16 in docker compose on port 5433."


def _seed(store: Store, tmp_path: Path) -> dict[str, int]:
    return import_memories(store, tmp_path / "mem", [
        ("pytest-x", PYTEST_BODY, {"name": "Run tests with pytest -x", "type": "feedback",
                                   "tags": ["testing", "pytest"], "hits": 3}),
        ("local-dev", PORT_BODY, {"name": "Local dev database", "type": "project",
                                  "tags": ["local-dev", "database"]}),
        ("release", "Release only with make release, never with a raw docker push.",
         {"name": "Release process", "type": "procedure", "tags": ["release"]}),
        ("tax", "Quarterly tax filing deadlines and invoice reminders.",
         {"name": "Tax reminders", "type": "reference", "tags": ["finance"]}),
    ])


def _propose(store: Store, doc: dict[str, Any], **kw: Any) -> Any:
    return submit(store, parse_proposal(doc, "cli"), **kw)


def _dir_state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


def _store_state(store: Store) -> dict[str, Any]:
    with store.read() as conn:
        q = lambda sql: conn.exec_driver_sql(sql).all()  # noqa: E731
        return {"memory": q("SELECT * FROM memory ORDER BY id"),
                "evidence": q("SELECT * FROM evidence ORDER BY id"),
                "chunk": q("SELECT id, source_type, source_id, content_hash FROM chunk "
                           "ORDER BY id"),
                "indexed": vec.index_counts(conn),  # (vectors, text-search rows)
                "links": q("SELECT * FROM supersession_link ORDER BY id"),
                "flags": q("SELECT * FROM memory_flag ORDER BY id")}


# -- duplicate -------------------------------------------------------------------------------
def test_duplicate_add_is_flagged_and_approval_offers_reinforce(store: Store,
                                                                tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    info = _propose(store, {"op": "add", "type": "feedback", "content": PYTEST_BODY + " Really.",
                            "metadata": {"name": "Run tests with pytest -x",
                                         "tags": ["testing"]}})
    dup = info.check("duplicate")
    assert dup.result == "warn" and dup.suggestion == "reinforce"
    assert dup.evidence["memory_id"] == ids["Run tests with pytest -x"]
    reinforce = next(o for o in info.options if o.as_op == "reinforce")
    assert reinforce.allowed and reinforce.memory_id == ids["Run tests with pytest -x"]
    done = approve(store, info.id, "reinforce")
    assert done.status == "applied" and done.verified
    assert store.memory(ids["Run tests with pytest -x"]).hits == 4
    assert len(store.memories()) == 4  # reinforced, not added


def test_distinct_add_is_not_a_duplicate(store: Store, tmp_path: Path) -> None:
    _seed(store, tmp_path)
    info = _propose(store, {"op": "add", "type": "user", "content":
                            "Dana prefers dark roast coffee brewed in a French press."})
    assert info.check("duplicate").result == "pass"
    assert not any(o.as_op == "reinforce" for o in info.options)


# -- contradiction ---------------------------------------------------------------------------
def test_contradiction_blocks_plain_approval_until_supersede_or_keep_both(
        store: Store, tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    doc = {"op": "add", "type": "project",
           "content": "Local dev and tests run on PostgreSQL 16 in docker compose on port 5432.",
           "metadata": {"name": "Local dev port", "tags": ["local-dev"]}}
    info = _propose(store, doc)
    contra = info.check("contradiction")
    assert contra.result == "fail" and "heuristic" in contra.detail
    assert contra.evidence["memory_id"] == ids["Local dev database"]
    assert contra.evidence["conflicts"][0]["cues"][0]["kind"] == "number"
    with pytest.raises(ProposalError, match="supersede or keep-both"):
        approve(store, info.id)
    with pytest.raises(ProposalError, match="reason"):
        approve(store, info.id, "keep-both")
    assert get_proposal(store, info.id).status == "pending"  # nothing changed
    done = approve(store, info.id, "keep-both", "both ports are in use during the migration")
    assert done.status == "applied"
    new_id = done.memory_id
    for mid in (new_id, ids["Local dev database"]):
        assert memory_detail(store, mid).row.flagged
    # recall's K term penalises both (0.3 for an unresolved contradiction)
    result = recall(store, "local dev postgres docker compose port", now=NOW)
    ks = {c.source_id: c.terms["K"] for c in result.trace.candidates
          if c.source_type == "memory"}
    assert ks[new_id] == pytest.approx(0.3) and ks[ids["Local dev database"]] == pytest.approx(0.3)
    assert ks.get(ids["Tax reminders"], 0.0) == 0.0


def test_contradiction_as_supersede_retires_the_old_memory(store: Store, tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    info = _propose(store, {"op": "add", "type": "project", "content":
                            "Local dev and tests run on PostgreSQL 16 in docker compose on "
                            "port 5432.", "metadata": {"tags": ["local-dev"]}})
    done = approve(store, info.id, "supersede", "port changed in the compose file")
    old = store.memory(ids["Local dev database"])
    assert old.status == "superseded" and old.valid_to and old.superseded_by_id == done.memory_id
    assert [c.id for c in chain(store, old.id)] == [old.id, done.memory_id]


def test_value_contradiction_x_is_y_x_is_z(store: Store, tmp_path: Path) -> None:
    import_memories(store, tmp_path / "mem", [
        ("deploy", "The deploy target is fly.io.", {"name": "Deploy target", "tags": ["deploy"]})])
    info = _propose(store, {"op": "add", "content": "The deploy target is render.com.",
                            "metadata": {"tags": ["deploy"]}})
    cue = info.check("contradiction").evidence["conflicts"][0]["cues"]
    assert {"kind": "value", "candidate": "render.com", "memory": "fly.io",
            "key": "deploy target"} in cue


def test_a_clause_of_a_long_list_item_is_compared(store: Store, tmp_path: Path) -> None:
    """Issue 22, the demo's memory 17: the port is one clause of a long list item, so the two
    sentences share under half their words; the shorter one's words are all but two in the
    longer one, and the differing port is found."""
    import_memories(store, tmp_path / "mem", [
        ("db", "# Database setup\n\n- Local development and tests run on PostgreSQL 16 in "
               "docker compose, port 5433 (`docker compose up -d db`), databases `ledgerline` "
               "and `ledgerline_test`.\n- Every test runs in a rolled-back transaction.",
         {"name": "Database setup", "type": "project"})])
    info = _propose(store, {"op": "add", "content":
                            "docker compose up -d db starts PostgreSQL 16 on port 5434."})
    check = info.check("contradiction")
    assert check.result == "fail", check.detail
    (conflict,) = check.evidence["conflicts"]
    assert {"kind": "number", "candidate": "5434", "memory": "5433"} in conflict["cues"]
    same = _propose(store, {"op": "add", "content":
                            "docker compose up -d db starts PostgreSQL 16 on port 5433."})
    assert same.check("contradiction").result == "pass"


def test_agreeing_memory_is_no_contradiction(store: Store, tmp_path: Path) -> None:
    _seed(store, tmp_path)
    info = _propose(store, {"op": "add", "type": "feedback", "content":
                            "Run the test suite with pytest -x; it stops at the first failure.",
                            "metadata": {"tags": ["testing"]}})
    assert info.check("contradiction").result == "pass"


# -- source support --------------------------------------------------------------------------
def test_unsupported_sentence_is_marked_as_inference(store: Store, tmp_path: Path) -> None:
    _seed(store, tmp_path)
    (entry,) = add_entries(store, "s1", [("user", "From now on always squash merge feature "
                                                  "branches before the release.")])
    info = _propose(store, {"op": "add", "type": "feedback",
                            "content": "Always squash merge feature branches before the release. "
                                       "Dana hates merge commits because of a 2019 outage.",
                            "evidence": [{"entry": entry}]})
    support = info.check("source_support")
    assert support.result == "warn" and "inference" in support.detail
    marked = {s["text"]: s["inference"] for s in support.evidence["sentences"]}
    assert marked == {"Always squash merge feature branches before the release.": False,
                      "Dana hates merge commits because of a 2019 outage.": True}
    supported = next(s for s in support.evidence["sentences"] if not s["inference"])
    assert supported["entry_id"] == entry and supported["span"][1] > supported["span"][0]


def test_supported_candidate_passes_source_support(store: Store, tmp_path: Path) -> None:
    (entry,) = add_entries(store, "s1", [("user", "Remember that we deploy with make release.")])
    info = _propose(store, {"op": "add", "type": "feedback",
                            "content": "We deploy with make release.",
                            "evidence": [{"session": "s1", "seq": 0}]})
    assert info.check("source_support").result == "pass"
    assert info.evidence[0].entry_id == entry


# -- budget ----------------------------------------------------------------------------------
def test_critical_promotion_over_budget_is_flagged(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s.db", **{"governance.critical_budget_chars": 300})
    try:
        import_memories(store, tmp_path / "mem", [
            ("rule", "x " * 100, {"name": "Existing rule", "critical": True,
                                  "invariant": "Existing invariant that is always loaded."})])
        small = _propose(store, {"op": "add", "content": "A short rule.",
                                 "metadata": {"critical": True}})
        assert small.check("budget").result == "pass"
        big = _propose(store, {"op": "add", "content": "A long rule. " * 10,
                               "metadata": {"critical": True}})
        budget = big.check("budget")
        assert budget.result == "fail" and "over its 300-char budget" in budget.detail
        assert budget.evidence["after"] > 300
        plain = _propose(store, {"op": "add", "content": "A long note. " * 10})
        assert plain.check("budget").result == "pass"
    finally:
        store.close()


# -- procedure risk and the auto-apply policy -------------------------------------------------
def test_auto_apply_applies_a_clean_reinforce_never_a_procedure(store: Store,
                                                                tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    clean = _propose(store, {"op": "reinforce", "target": ids["Run tests with pytest -x"]})
    assert clean.status == "applied" and clean.verified
    assert clean.decisions[0].policy == "governance.auto_apply"
    assert store.memory(ids["Run tests with pytest -x"]).hits == 4
    proc = _propose(store, {"op": "reinforce", "target": ids["Release process"]})
    assert proc.status == "pending" and proc.summary.type == "procedure"
    assert proc.check("procedure_risk").result == "warn"
    add = _propose(store, {"op": "add", "content": "An ordinary note about invoices."})
    assert add.status == "pending"  # add is not in the default policy


def test_auto_apply_never_procedure_even_when_the_setting_names_add(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s.db", **{"governance.auto_apply": "add,reinforce,noop"})
    try:
        note = _propose(store, {"op": "add", "type": "reference",
                                "content": "The office wifi is called ledger-guest."})
        assert note.status == "applied"
        proc = _propose(store, {"op": "add", "type": "procedure",
                                "content": "Rotate the staging keys every month."})
        ident = _propose(store, {"op": "add", "type": "identity",
                                 "content": "I am the ledgerline coding agent."})
        assert proc.status == ident.status == "pending"
    finally:
        store.close()


# -- verifier --------------------------------------------------------------------------------
def _stub(tmp_path: Path, body: str) -> str:
    path = tmp_path / "verifier.py"
    path.write_text(body, encoding="utf-8")
    return f"{sys.executable} {path}"


@pytest.mark.parametrize("script,result,says", [
    ("import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({'result': 'fail', "
     "'detail': 'unsupported claim about ' + d['candidate']['name']}))\n", "fail",
     "verifier says fail: unsupported claim about Cats"),
    ("import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'verdict': 'pass'}))\n",
     "pass", "verifier says pass"),
    ("import time\ntime.sleep(600)\n", "warn", "timed out after 1 s"),
    ("print('looks good to me!')\n", "warn", "printed no JSON verdict"),
    ("import sys\nsys.exit(3)\n", "warn", "exited with status 3"),
    ("print('{\"result\": \"maybe\"}')\n", "warn", "no result of pass, warn or fail"),
])
def test_verifier_verdict_or_warn(tmp_path: Path, script: str, result: str, says: str) -> None:
    # 1 s only for the stub that never answers: the others get time to start a Python on a
    # loaded machine (their verdict must not depend on how fast it is)
    timeout = 1.0 if "timed out" in says else 120.0
    store = make_store(tmp_path / "s.db", **{"governance.verifier_command": _stub(tmp_path, script),
                                             "governance.verifier_timeout_s": timeout})
    try:
        info = _propose(store, {"op": "add", "content": "Cats sleep sixteen hours a day.",
                                "metadata": {"name": "Cats"}})
        check = info.check("verifier")
        assert check is not None and check.result == result and says in check.detail
    finally:
        store.close()


def test_verifier_that_cannot_start_is_a_warn(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s.db", **{"governance.verifier_command":
                                             str(tmp_path / "no-such-verifier")})
    try:
        info = _propose(store, {"op": "add", "content": "Cats sleep sixteen hours a day."})
        assert info.check("verifier").result == "warn"
        assert "could not start" in info.check("verifier").detail
    finally:
        store.close()


def test_no_verifier_check_unless_configured(store: Store) -> None:
    info = _propose(store, {"op": "add", "content": "Cats sleep sixteen hours a day."})
    assert info.check("verifier") is None


# -- supersede, chains, recall ---------------------------------------------------------------
def test_supersede_sets_link_valid_to_status_and_recall_says_superseded(
        store: Store, tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    old = ids["Tax reminders"]
    info = _propose(store, {"op": "supersede", "target": old, "content":
                            "Quarterly tax filing deadlines, invoice reminders and the new "
                            "VAT return dates.", "metadata": {"tags": ["finance"]}})
    done = approve(store, info.id)
    assert done.status == "applied" and done.verified
    assert [s["step"] for s in done.verification["steps"]] == ["reads back", "indexed",
                                                               "found by search"]
    before = store.memory(old)
    assert before.status == "superseded" and before.valid_to is not None
    assert before.superseded_by_id == done.memory_id
    assert store.memory(done.memory_id).supersedes_id == old
    links = chain(store, old)
    assert [(c.id, c.proposal_id) for c in links] == [(old, None), (done.memory_id, info.id)]
    result = recall(store, "quarterly tax filing deadlines invoice reminders", now=NOW)
    decided = {c.source_id: c.decision for c in result.trace.candidates
               if c.source_type == "memory"}
    assert decided[old] == "superseded" and decided[done.memory_id] == "injected"


def test_merge_of_two_memories_gives_a_chain_with_both(store: Store, tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    a, b = ids["Run tests with pytest -x"], ids["Release process"]
    info = _propose(store, {"op": "merge", "targets": [a, b], "type": "procedure",
                            "content": "Run pytest -x before every make release."})
    done = approve(store, info.id)
    assert done.status == "applied"
    whole = chain(store, a)
    assert {c.id for c in whole} == {a, b, done.memory_id}
    assert whole[-1].id == done.memory_id and set(whole[-1].supersedes) == {a, b}
    assert [c.to_json()["superseded_by"] for c in whole[:2]] == [done.memory_id] * 2
    assert chain(store, done.memory_id) == whole  # the whole chain from any link
    assert {store.memory(a).status, store.memory(b).status} == {"superseded"}


def test_three_link_chain_oldest_first(store: Store, tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    first = ids["Tax reminders"]
    made = [first]
    for i in range(2):
        info = _propose(store, {"op": "supersede", "target": made[-1],
                                "content": f"Tax reminders, version {i + 2}."})
        made.append(approve(store, info.id).memory_id)
    links = chain(store, made[1])
    assert [c.id for c in links] == made and [c.depth for c in links] == [0, 1, 2]
    assert [c.status for c in links] == ["superseded", "superseded", "active"]


# -- bound memory directory ------------------------------------------------------------------
def test_bound_directory_gets_the_file_and_its_hits(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    store = make_store(tmp_path / "s.db", **{"memory.dir": str(folder)})
    try:
        ids = _seed(store, tmp_path)
        info = _propose(store, {"op": "add", "type": "feedback", "content":
                                "Squash merge feature branches.", "metadata": {
                                    "name": "Squash merges", "tags": ["git"]}})
        done = approve(store, info.id)
        path = folder / "feedback_squash-merges.md"
        assert path.is_file() and done.verified
        assert any(s["step"] == "file" and s["ok"] for s in done.verification["steps"])
        import yaml
        head = yaml.safe_load(path.read_text().split("---\n")[1])
        assert head["name"] == "Squash merges" and head["hits"] == 0 and head["tags"] == ["git"]
        assert head["status"] == "active" and head["authority"] == "approved"
        reinforce = _propose(store, {"op": "reinforce", "target": ids["Run tests with pytest -x"]})
        assert reinforce.status == "applied"
        pytest_file = folder / "feedback_pytest-x.md"
        assert "hits: 4" in pytest_file.read_text()
        # recall feedback is written back too
        result = recall(store, "squash merge feature branches", now=NOW)
        rank = next(c.rank for c in result.trace.candidates if c.source_id == done.memory_id)
        store.feedback(result.trace_id, str(rank), "prevented")
        head = yaml.safe_load(path.read_text().split("---\n")[1])
        assert head["prevented"] == 1
        # re-importing the directory keeps the figures and adds nothing
        before = len(store.memories())
        store.ingest([folder])
        assert len(store.memories()) == before
        assert store.memory(done.memory_id).prevented == 1
    finally:
        store.close()


def test_supersede_rewrites_both_files(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    store = make_store(tmp_path / "s.db", **{"memory.dir": str(folder)})
    try:
        ids = _seed(store, tmp_path)
        info = _propose(store, {"op": "supersede", "target": ids["Tax reminders"],
                                "content": "Tax reminders now include VAT."})
        done = approve(store, info.id)
        old_text = (folder / "reference_tax.md").read_text()
        assert "status: superseded" in old_text and "valid_to:" in old_text
        new_file = Path(store.memory(done.memory_id).source_file or "")
        assert new_file.parent == folder and "supersedes: reference_tax" in new_file.read_text()
        # the importer reads the written files back as the same supersession
        store.ingest([folder])
        assert store.memory(ids["Tax reminders"]).status == "superseded"
    finally:
        store.close()


@pytest.mark.parametrize("where", ["second file", "link", "verify-free commit"])
def test_failure_in_the_middle_of_apply_changes_nothing(tmp_path: Path, where: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "mem"
    store = make_store(tmp_path / "s.db", **{"memory.dir": str(folder)})
    try:
        ids = _seed(store, tmp_path)
        info = _propose(store, {"op": "supersede", "target": ids["Tax reminders"],
                                "content": "Tax reminders now include VAT."})
        store_before, dir_before = _store_state(store), _dir_state(folder)
        import store.governance.apply as apply_mod
        import store.governance.files as files_mod

        if where == "second file":
            real = os.replace
            calls = {"n": 0}

            def flaky(src: Any, dst: Any) -> None:
                calls["n"] += 1
                if calls["n"] == 2:
                    raise OSError(28, "No space left on device")
                real(src, dst)

            monkeypatch.setattr(files_mod.os, "replace", flaky)
        elif where == "link":
            def broken(*a: Any, **k: Any) -> None:
                raise RuntimeError("injected failure while linking")

            monkeypatch.setattr(apply_mod, "link", broken)
        else:
            real_set = apply_mod._set_status

            def late(conn: Any, pid: int, status: str, *a: Any) -> None:
                real_set(conn, pid, status, *a)
                if status == "applied":
                    raise RuntimeError("injected failure after the files were written")

            monkeypatch.setattr(apply_mod, "_set_status", late)
        done = approve(store, info.id)
        assert done.status == "failed" and done.status_reason
        assert _store_state(store) == store_before
        assert _dir_state(folder) == dir_before
        assert [d.decision for d in done.decisions] == ["approved", "failed"]
        monkeypatch.undo()
        again = approve(store, info.id)  # a failed proposal can be approved again
        assert again.status == "applied" and again.verified
    finally:
        store.close()


# -- states, edits, rejections ---------------------------------------------------------------
def test_reject_needs_a_reason_and_is_audited(store: Store) -> None:
    info = _propose(store, {"op": "add", "content": "Cats sleep sixteen hours a day."})
    with pytest.raises(ProposalError, match="reason"):
        reject(store, info.id, "  ")
    done = reject(store, info.id, "not about this project")
    assert done.status == "rejected" and done.status_reason == "not about this project"
    assert store.audit_events(1)[0].action == "proposal_rejected"
    with pytest.raises(ProposalError, match="rejected"):
        approve(store, info.id)


def test_edit_keeps_history_and_checks_again(store: Store, tmp_path: Path) -> None:
    _seed(store, tmp_path)
    info = _propose(store, {"op": "add", "type": "project", "content":
                            "Local dev and tests run on PostgreSQL 16 in docker compose on "
                            "port 5432.", "metadata": {"tags": ["local-dev"]}})
    assert info.check("contradiction").result == "fail"
    edited = edit(store, info.id, {"content": "The ledger API returns amounts in cents."},
                  reason="wrong memory")
    assert edited.revision == 1 and edited.check("contradiction").result == "pass"
    assert edited.edits[0].before["content"].endswith("port 5432.")
    assert edited.edits[0].after["content"] == "The ledger API returns amounts in cents."
    with pytest.raises(ProposalError, match="not editable"):
        edit(store, info.id, {"status": "applied"})
    assert [p.id for p in list_proposals(store, "pending")] == [info.id]


def test_stale_target_refuses_approval(store: Store, tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    info = _propose(store, {"op": "revise", "target": ids["Tax reminders"],
                            "content": "Tax reminders, revised."})
    other = _propose(store, {"op": "revise", "target": ids["Tax reminders"],
                             "content": "Tax reminders, revised differently."})
    approve(store, other.id)
    with pytest.raises(ProposalError, match="changed"):
        approve(store, info.id)


@pytest.mark.parametrize("doc,says", [
    ({"op": "delete"}, "op: must be one of"),
    ({"op": "add"}, "content: a add needs"),
    ({"op": "add", "content": "x", "target": 3}, "has no target"),
    ({"op": "merge", "content": "x", "targets": [1]}, "two or more"),
    ({"op": "revise", "content": "x", "target": "twelve"}, "a memory id is a number"),
    ({"op": "add", "content": "x", "metadata": {"critical": "yes"}}, "metadata.critical"),
    ({"op": "add", "content": "x", "evidence": [{"span": [1, 2]}]}, "evidence[0]"),
    ({"op": "add", "content": "x", "colour": "red"}, "colour: unknown key"),
])
def test_bad_proposals_say_what_is_wrong(doc: dict[str, Any], says: str) -> None:
    with pytest.raises(ProposalError, match=says.replace("[", r"\[")):
        parse_proposal(doc, "cli", "p.json")


def test_secret_candidate_is_masked(store: Store) -> None:
    info = _propose(store, {"op": "add", "content": "The vault token is hunter2.",
                            "metadata": {"sensitivity": "secret"}})
    assert info.masked and "hunter2" not in str(info.to_json())


def test_successor_of_a_secret_memory_stays_secret(store: Store, tmp_path: Path) -> None:
    ids = import_memories(store, tmp_path / "mem", [
        ("vault", "Staging keys live in vault at secret/staging.",
         {"name": "Vault path", "sensitivity": "secret"})])
    info = _propose(store, {"op": "supersede", "target": ids["Vault path"],
                            "content": "Staging keys moved to vault at secret/staging-v2."})
    assert info.masked and "staging-v2" not in str(info.to_json())
    assert "staging-v2" not in str([p.to_json() for p in list_proposals(store)])
    done = approve(store, info.id)
    assert store.memory(done.memory_id).sensitivity == "secret"


def test_failed_verifier_needs_a_reason_and_blocks_auto_apply(tmp_path: Path) -> None:
    script = "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'result': 'fail'}))\n"
    store = make_store(tmp_path / "s.db", **{"governance.verifier_command":
                                             _stub(tmp_path, script)})
    try:
        ids = _seed(store, tmp_path)
        held = _propose(store, {"op": "reinforce", "target": ids["Tax reminders"]})
        assert held.status == "pending"  # reinforce, but a check failed
        with pytest.raises(ProposalError, match="needs --reason"):
            approve(store, held.id)
        assert approve(store, held.id, reason="the verifier has no context").status == "applied"
    finally:
        store.close()


def test_quarantine_holds_a_memory_back_from_recall(store: Store, tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    info = _propose(store, {"op": "quarantine", "target": ids["Tax reminders"],
                            "rationale": "came from an untrusted file"})
    done = approve(store, info.id)
    assert done.verified and store.memory(ids["Tax reminders"]).status == "quarantined"
    result = recall(store, "quarterly tax filing deadlines", now=NOW)
    cand = next(c for c in result.trace.candidates if c.source_id == ids["Tax reminders"])
    assert cand.decision == "policy_filtered"


def test_a_proposal_decided_meanwhile_by_another_process_is_not_applied_twice(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _seed(store, tmp_path)
    info = _propose(store, {"op": "revise", "target": ids["Tax reminders"],
                            "content": "Tax reminders, revised."})
    other = make_store(store.opened_as)  # another process's connection to the same file
    import store.governance.apply as apply_mod

    real = apply_mod.stored_candidate

    def meanwhile(st: Any, pid: int) -> Any:
        reject(other, pid, "decided elsewhere first")
        return real(st, pid)

    monkeypatch.setattr(apply_mod, "stored_candidate", meanwhile)
    try:
        with pytest.raises(ProposalError, match="changed while it was being decided"):
            approve(store, info.id)
    finally:
        other.close()
    assert get_proposal(store, info.id).status == "rejected"
    assert store.memory(ids["Tax reminders"]).body.startswith("Quarterly")
