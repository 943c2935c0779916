"""Supersession links and integrity, verification failures, MindStone approval events, the
migration's pointer backfill, and the governance CLI's JSON contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlean
from sqlalchemy import text

from lca_tui.cli import main
from store import Store
from store.core import vec
from store.core.migrations import migrate
from store.governance import approve, chain, integrity, list_proposals, parse_proposal, submit
from store.governance.verify import verify
from tests.helpers_recall import import_memories


def _three(store: Store, tmp_path: Path) -> dict[str, int]:
    return import_memories(store, tmp_path / "mem", [
        (f"m{i}", f"Memory number {i} about topic {i}.", {"name": f"m{i}"}) for i in range(3)])


def _kinds(store: Store) -> set[str]:
    return {p.kind for p in integrity(store)}


# -- importers and integrity ---------------------------------------------------------------
def test_importer_sets_link_status_and_valid_to(store: Store, tmp_path: Path) -> None:
    ids = import_memories(store, tmp_path / "mem", [
        ("old", "Local dev runs on SQLite.", {"name": "old", "type": "project"}),
        ("new", "Local dev runs on Postgres.", {"name": "new", "type": "project",
                                                "supersedes": "project_old",
                                                "valid_from": "2026-01-20"})])
    old = store.memory(ids["old"])
    assert old.status == "superseded" and old.valid_to == "2026-01-20T00:00:00.000Z"
    assert [c.id for c in chain(store, ids["new"])] == [ids["old"], ids["new"]]
    assert integrity(store) == []


def test_fork_is_an_integrity_problem_not_last_writer_wins(store: Store, tmp_path: Path) -> None:
    ids = import_memories(store, tmp_path / "mem", [
        ("old", "Deploy with docker push.", {"name": "old"}),
        ("a", "Deploy with make release.", {"name": "a", "supersedes": "reference_old"}),
        ("b", "Deploy with the CI button.", {"name": "b", "supersedes": "reference_old"})])
    forks = [p for p in integrity(store) if p.kind == "fork"]
    assert len(forks) == 1 and set(forks[0].memory_ids) == {ids["old"], ids["a"], ids["b"]}
    links = chain(store, ids["old"])
    assert set(links[0].successors) == {ids["a"], ids["b"]}


def test_integrity_finds_cycle_dangling_ref_and_superseded_but_active(store: Store,
                                                                       tmp_path: Path) -> None:
    ids = _three(store, tmp_path)
    assert integrity(store) == []
    a, b, c = ids["m0"], ids["m1"], ids["m2"]
    with store.write() as conn:
        # a → b → a: a cycle (both still active: superseded but active too)
        for old, new in ((a, b), (b, a)):
            conn.execute(text(
                "INSERT INTO supersession_link (old_id, new_id, ts, source, writer, "
                "writer_version, created_at) VALUES (:o, :n, 't', 'import', 'w', 'v', 't')"),
                {"o": old, "n": new})
            conn.execute(text("UPDATE memory SET superseded_by_id = :n WHERE id = :o"),
                         {"o": old, "n": new})
        conn.execute(text("UPDATE memory SET supersedes_ref = 'nowhere' WHERE id = :c"),
                     {"c": c})
    problems = integrity(store)
    kinds = {p.kind for p in problems}
    assert {"cycle", "dangling", "superseded_but_active"} <= kinds
    cycle = next(p for p in problems if p.kind == "cycle")
    assert set(cycle.memory_ids) == {a, b}
    dangling = {p.detail for p in problems if p.kind == "dangling"}
    assert any("nowhere" in d for d in dangling)
    assert [x.id for x in chain(store, a)] == sorted([a, b])  # a cycle still reads


@pytest.mark.sqlite_only("writes a broken link through a raw SQLite connection with foreign "
                        "keys off (what an older tool could leave in the file)")
def test_integrity_finds_a_link_to_a_memory_that_is_gone(store: Store, tmp_path: Path) -> None:
    ids = _three(store, tmp_path)
    raw = sqlean.connect(str(store.path))  # foreign keys off: what an older tool could leave
    raw.execute("INSERT INTO supersession_link (old_id, new_id, ts, source, writer, "
                "writer_version, created_at) VALUES (?, 999, 't', 'import', 'w', 'v', 't')",
                (ids["m2"],))
    raw.commit()
    raw.close()
    dangling = {p.detail for p in integrity(store) if p.kind == "dangling"}
    assert any("999" in d for d in dangling)


def test_pointer_without_link_is_a_mismatch(store: Store, tmp_path: Path) -> None:
    ids = _three(store, tmp_path)
    with store.write() as conn:
        conn.execute(text("UPDATE memory SET supersedes_id = :o WHERE id = :n"),
                     {"o": ids["m0"], "n": ids["m1"]})
        conn.execute(text("UPDATE memory SET superseded_by_id = :n, status = 'superseded' "
                          "WHERE id = :o"), {"o": ids["m0"], "n": ids["m1"]})
    assert _kinds(store) == {"pointer_mismatch"}


def test_migration_copies_existing_pointers_into_links(tmp_path: Path) -> None:
    from store.core.db import ensure_file, make_engine

    path = tmp_path / "old.db"
    ensure_file(path)
    engine = make_engine(path)
    try:
        migrate(engine, target=5)  # a store from before links: pointers only
        with engine.begin() as conn:
            for i, name in ((1, "old"), (2, "new")):
                conn.exec_driver_sql(
                    "INSERT INTO memory (id, name, body, content_hash, updated_at, writer, "
                    "writer_version, created_at) VALUES (?, ?, 'b', 'h', 't', 'w', 'v', 't')",
                    (i, name))
            conn.exec_driver_sql("UPDATE memory SET supersedes_id = 1 WHERE id = 2")
            conn.exec_driver_sql("UPDATE memory SET superseded_by_id = 2 WHERE id = 1")
        assert migrate(engine, target=6) == [6]
        with engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT old_id, new_id, source FROM supersession_link"
                                        ).all()
    finally:
        engine.dispose()
    assert rows == [(1, 2, "pointer")]


# -- verification can fail ---------------------------------------------------------------
def test_verification_reports_each_failure(store: Store) -> None:
    done = store.propose({"op": "add", "content": "Cats sleep sixteen hours a day."})
    done = approve(store, done.id)
    mid = done.memory_id
    assert verify(store, "add", mid, {"body": "Cats sleep sixteen hours a day."}, [])["ok"]
    assert not verify(store, "add", mid, {"body": "something else"}, [])["ok"]
    with store.write() as conn:
        (cid,) = conn.execute(text("SELECT id FROM chunk WHERE source_type = 'memory' AND "
                                   "source_id = :m"), {"m": mid}).one()
        # its vector gone, its text row kept (sqlite-vec keys by rowid, pgvector by chunk_id)
        key = "chunk_id" if vec.on_server(conn) else "rowid"
        conn.execute(text(f"DELETE FROM chunk_vec WHERE {key} = :c"), {"c": cid})
    result = verify(store, "add", mid, {}, [])
    failed = {s["step"] for s in result["steps"] if not s["ok"]}
    assert failed == {"indexed", "found by search"}
    assert not verify(store, "add", 12345, {}, [])["ok"]


# -- MindStone approval events -----------------------------------------------------------
def _event(i: int, event: str, text_: str, md: dict[str, Any]) -> str:
    return json.dumps({"id": f"e{i}", "timestamp": f"2026-02-0{i}T10:00:00Z",
                       "sessionKey": "agent:default:main", "role": "event", "text": text_,
                       "metadata": {"event": event, **md}})


def test_mindstone_approval_events_become_content_less_history(store: Store,
                                                               tmp_path: Path) -> None:
    path = tmp_path / "YWdlbnQ6ZGVmYXVsdDptYWlu.jsonl"
    path.write_text("\n".join([
        _event(1, "approval_proposed", "approval proposed: memory_write ap-1 (remember the "
               "release rule)", {"approvalId": "ap-1", "kind": "memory_write",
                                 "origin": "consolidator"}),
        _event(2, "approval_proposed", "approval proposed: tool_call ap-2 (rm -rf build)",
               {"approvalId": "ap-2", "kind": "tool_call", "origin": "agent"}),
        _event(3, "approval_decided", "approval approved: memory_write ap-1 — looks right",
               {"approvalId": "ap-1", "kind": "memory_write", "decision": "approved",
                "connector": "slack"}),
    ]) + "\n", encoding="utf-8")
    report = store.ingest([path])
    assert not report.errors
    rows = {p.external_id: p for p in list_proposals(store)}
    assert rows["ap-1"].status == "approved" and rows["ap-2"].status == "pending"
    assert rows["ap-1"].op is None and rows["ap-1"].kind == "memory_write"
    info = store.proposal(rows["ap-1"].id)
    assert info.content is None and info.decisions[0].connector == "slack"
    assert not any(o.allowed for o in info.options)
    with pytest.raises(ValueError, match="harness"):
        approve(store, rows["ap-2"].id)
    before = [(p.external_id, p.status) for p in list_proposals(store)]
    store.reindex()
    assert sorted(before) == sorted((p.external_id, p.status) for p in list_proposals(store))


# -- the command line ----------------------------------------------------------------------
def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    try:
        doc = json.loads(out.out) if "--json" in argv else out.out
    except ValueError:
        doc = out.out
    return code, doc, out.err


def test_cli_json_shapes(store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                         monkeypatch: pytest.MonkeyPatch) -> None:
    ids = import_memories(store, tmp_path / "mem", [
        ("tax", "Quarterly tax filing deadlines.", {"name": "Tax"}),
        ("vault", "Keys live in vault at secret/staging.", {"name": "Vault",
                                                             "sensitivity": "secret"})])
    doc_path = tmp_path / "p.json"
    doc_path.write_text(json.dumps({"op": "supersede", "target": ids["Tax"],
                                    "content": "Quarterly and yearly tax deadlines."}))
    st = ["--store", str(store.opened_as)]
    code, doc, _ = _cli(capsys, "propose", str(doc_path), *st, "--json")
    assert code == 0 and doc["status"] == "pending"
    pid = doc["id"]
    code, doc, _ = _cli(capsys, "proposals", *st, "--json")
    assert list(doc) == ["proposals"]
    assert set(doc["proposals"][0]) == {"id", "op", "type", "status", "origin", "target",
                                        "targets", "created", "checks"}
    assert doc["proposals"][0]["target"] == ids["Tax"]
    assert set(doc["proposals"][0]["checks"][0]) == {"kind", "result", "detail"}
    code, doc, _ = _cli(capsys, "approve", str(pid), *st, "--json")
    assert code == 0 and doc["status"] == "applied" and doc["verified"] is True
    new_id = doc["memory_id"]
    # reads never load the embedding model
    import store.core.base as base

    monkeypatch.setattr(base, "load_embedder", lambda *a: (_ for _ in ()).throw(
        AssertionError("the model was loaded")))
    code, doc, _ = _cli(capsys, "memories", *st, "--json")
    assert list(doc) == ["memories"]
    assert set(doc["memories"][0]) == {"id", "name", "type", "status", "critical", "loadable",
                                       "sensitivity", "hits", "prevented", "valid_from",
                                       "valid_to", "text"}
    vault = next(m for m in doc["memories"] if m["name"] == "Vault")
    assert vault["text"] is None
    code, doc, _ = _cli(capsys, "memories", *st, "--status", "superseded", "--json")
    assert [m["id"] for m in doc["memories"]] == [ids["Tax"]]
    code, doc, _ = _cli(capsys, "chain", str(new_id), *st, "--json")
    assert list(doc) == ["chain"] and [c["id"] for c in doc["chain"]] == [ids["Tax"], new_id]
    assert set(doc["chain"][0]) == {"id", "status", "valid_from", "valid_to", "supersedes",
                                    "superseded_by", "successors", "fork", "proposal_id",
                                    "erased_between"}
    assert doc["chain"][1]["proposal_id"] == pid and doc["chain"][0]["superseded_by"] == new_id
    code, doc, _ = _cli(capsys, "memory", str(ids["Vault"]), *st, "--json")
    assert doc["body"] is None and "secret/staging" not in json.dumps(doc)
    code, text_out, _ = _cli(capsys, "memory", str(ids["Vault"]), *st)
    assert "secret/staging" not in text_out and "withheld" in text_out
    code, doc, _ = _cli(capsys, "audit", *st, "--limit", "2", "--json")
    assert [e["action"] for e in doc["events"]] == ["proposal_approved", "proposal_submitted"]
    code, doc, _ = _cli(capsys, "proposal", str(pid), *st, "--json")
    assert doc["id"] == pid and doc["decisions"][0]["decision"] == "approved"


def test_cli_errors_are_one_line(store: Store, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    st = ["--store", str(store.opened_as)]
    bad = tmp_path / "bad.json"
    bad.write_text('{"op": "add", "content": ')
    code, _, err = _cli(capsys, "propose", str(bad), *st)
    assert code == 2 and "bad.json: not JSON: line 1" in err and err.count("\n") == 1
    code, _, err = _cli(capsys, "proposal", "42", *st)
    assert code == 2 and "no proposal 42" in err
    p = submit(store, parse_proposal({"op": "add", "content": "Cats nap a lot."}))
    code, _, err = _cli(capsys, "reject", str(p.id), *st, "--reason", "")
    assert code == 2 and "reason" in err
    code, _, err = _cli(capsys, "approve", str(p.id), "--as", "reinforce", *st)
    assert code == 2 and "cannot be approved as reinforce" in err


def test_cli_propose_from_stdin_edit_and_reject(store: Store, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    st = ["--store", str(store.opened_as)]
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(
        {"op": "add", "content": "Cats sleep sixteen hours a day."})))
    code, doc, _ = _cli(capsys, "propose", "-", *st, "--json")
    assert code == 0 and doc["origin"] == "cli"
    pid = str(doc["id"])
    changes = tmp_path / "edit.json"
    changes.write_text(json.dumps({"content": "Cats sleep about fifteen hours a day."}))
    code, doc, _ = _cli(capsys, "edit", pid, str(changes), "--reason", "checked", *st, "--json")
    assert code == 0 and doc["revision"] == 1 and doc["edits"][0]["reason"] == "checked"
    code, doc, _ = _cli(capsys, "reject", pid, "--reason", "not about the project", *st,
                        "--json")
    assert code == 0 and doc["status"] == "rejected"
    code, doc, _ = _cli(capsys, "proposals", "--status", "rejected", *st, "--json")
    assert [p["id"] for p in doc["proposals"]] == [int(pid)]


# -- what the chain and a memory's proposals say, in text ----------------------------------
PORT = "Local dev and tests run on PostgreSQL 16 in docker compose on port 5433."


def _port_store(store: Store, tmp_path: Path) -> dict[str, int]:
    return import_memories(store, tmp_path / "mem", [
        ("sqlite", "Local dev runs on SQLite.", {"name": "On SQLite", "type": "project"}),
        ("pg", "Local dev runs on Postgres in docker.", {"name": "On Postgres", "type":
                                                          "project", "supersedes":
                                                          "project_sqlite"}),
        ("psycopg", "Use psycopg 3, not psycopg2.", {"name": "psycopg 3", "type": "feedback"}),
        ("port", PORT, {"name": "Local dev database", "type": "project"}),
        ("tax", "Quarterly tax filing deadlines.", {"name": "Tax", "type": "reference"})])


def test_chain_text_shows_a_merged_memory_under_its_merge(
        store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A merge's second predecessor is no unconnected root: its line says where it went and
    the merge names both (the JSON said so already; the text did not)."""
    ids = _port_store(store, tmp_path)
    info = submit(store, parse_proposal({"op": "merge", "targets": [ids["On Postgres"],
                                                                    ids["psycopg 3"]],
                                         "type": "project", "content":
                                         "Postgres in docker, through psycopg 3."}, "cli"))
    merged = approve(store, info.id).memory_id
    code, out, _ = _cli(capsys, "chain", str(merged), "--store", str(store.opened_as))
    assert code == 0
    line = {int(ln.split("memory ")[1].split()[0]): ln for ln in out.splitlines()}
    assert f"→ merged into {merged}" in line[ids["psycopg 3"]]
    both = sorted((ids["On Postgres"], ids["psycopg 3"]))
    assert f"merges {both[0]}, {both[1]}" in line[merged]
    # a memory whose successor is the next line, one deeper, needs no pointer
    for name in ("On Postgres", "On SQLite"):
        assert "merged into" not in line[ids[name]] and "superseded by" not in line[ids[name]]


def test_a_memory_lists_the_proposals_that_superseded_or_flagged_it(
        store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An add approved `--as supersede` links the old memory without naming it a target; one
    approved `--as keep-both` flags it: both are proposals that touched it."""
    ids = _port_store(store, tmp_path)
    doc = {"op": "add", "type": "project", "content": PORT.replace("5433", "5432"),
           "metadata": {"name": "Port 5432"}}
    kept = approve(store, submit(store, parse_proposal(doc, "cli")).id, "keep-both",
                   "both ports in use while migrating")
    assert kept.status == "applied"
    assert kept.id in store.memory_detail(ids["Local dev database"]).proposals
    doc = {"op": "add", "type": "project", "content": PORT.replace("5433", "5434"),
           "metadata": {"name": "Port 5434"}}
    info = submit(store, parse_proposal(doc, "cli"))
    old = next(o.memory_id for o in info.options if o.as_op == "supersede")
    assert old is not None and info.summary.targets == ()
    done = approve(store, info.id, "supersede", "the port moved again")
    assert store.memory(old).superseded_by_id == done.memory_id
    assert done.id in store.memory_detail(old).proposals
    code, out, _ = _cli(capsys, "memory", str(old), "--store", str(store.opened_as))
    assert code == 0 and "proposals that made or touched it: " in out
    listed = out.split("proposals that made or touched it: ")[1].splitlines()[0]
    assert str(done.id) in listed.split(", "), listed
    assert kept.id in store.memory_detail(ids["Local dev database"]).proposals
    assert store.memory_detail(ids["Tax"]).proposals == ()


def test_an_add_approved_as_reinforce_shows_what_was_applied(
        store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not `add` with target `-`: the queue and the proposal say reinforce of the memory."""
    ids = _port_store(store, tmp_path)
    info = submit(store, parse_proposal({"op": "add", "type": "reference", "content":
                                         "Quarterly tax filing deadlines."}, "cli"))
    assert any(o.as_op == "reinforce" for o in info.options)
    done = approve(store, info.id, "reinforce")
    assert done.status == "applied" and done.memory_id == ids["Tax"]
    row = next(p for p in list_proposals(store) if p.id == info.id)
    assert row.shown_op == "add → reinforce" and row.shown_targets == (ids["Tax"],)
    assert row.to_json()["op"] == "add"  # the JSON contract keeps what was proposed
    st = ["--store", str(store.opened_as)]
    _, out, _ = _cli(capsys, "proposals", *st)
    mine = next(ln for ln in out.splitlines() if ln.split()[:1] == [str(info.id)])
    assert "add → reinforce" in mine and f" {ids['Tax']} " in mine
    _, out, _ = _cli(capsys, "proposal", str(info.id), *st)
    assert "add → reinforce reference  [applied]" in out.splitlines()[0]
    assert f"target memory {ids['Tax']}" in out.splitlines()[0]
