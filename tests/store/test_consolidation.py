"""The consolidation pass: proposals from what sessions state plainly, never
memories directly; precision and recall on a labelled transcript; real transcripts; a second
pass adds nothing; the external proposer command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from store import Store
from store.governance.detect import scan
from tests.conftest import make_store, with_user_config

DATA = Path(__file__).resolve().parents[1] / "data" / "consolidation"
LABELLED = DATA / "c0a5e1d0-0000-4000-8000-000000000001.jsonl"


def _user_turns(path: Path) -> list[tuple[int, str]]:
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        d = json.loads(line)
        if d["type"] == "user":
            out.append((n, d["message"]["content"]))
    return out


def test_labelled_transcript_precision_and_recall(store: Store) -> None:
    """Exactly one proposal for each request and correction, none for the other turns."""
    store.ingest([LABELLED])
    labels = {row["seq_text"]: row["label"]
              for row in json.loads((DATA / "labels.json").read_text())}
    sid = store.sessions()[0].id
    entries = store.entries(sid)
    by_id = {e.id: e for e in entries}
    found = scan(entries)
    # the user turn each finding is about (the last evidence entry)
    hit_turns = [by_id[f.evidence[-1][0]].content for f in found]
    expected = [t for t, lab in labels.items() if lab]
    true_pos = [t for t in hit_turns if labels.get(t)]
    assert len(hit_turns) == len(set(hit_turns)), "a turn gave two proposals"
    precision = len(true_pos) / len(hit_turns)
    recall = len(set(true_pos)) / len(expected)
    assert (precision, recall) == (1.0, 1.0), (hit_turns, expected)
    kinds = {by_id[f.evidence[-1][0]].content: f.kind for f in found}
    assert kinds["Use httpx, not requests."] == "correction"
    assert kinds["From now on, run the linter before every commit."] == "request"
    assert kinds["I prefer short commit messages in the imperative mood."] == "request"
    assert kinds["In future, ask before adding a dependency."] == "request"
    assert kinds["Revert that, the old template was fine."] == "correction"
    for negative in ("No, thanks, that's perfect.", "Actually, that looks great, ship it.",
                     "Stop the dev server and run the tests.",
                     "Revert the version bump in setup.cfg, then tag the release.",
                     "In future releases we may drop py3.8, what do you think"):
        assert labels[negative] is None and negative not in kinds, negative
    assert (len(expected), len(labels) - len(expected)) == (12, 13)
    prefer = next(f for f in found if "prefer" in f.content)
    assert prefer.type == "user"
    # a correction carries both turns as evidence: the assistant's and the user's
    fix = next(f for f in found if f.kind == "correction" and "02:00" in f.content)
    assert [by_id[e[0]].kind for e in fix.evidence] == ["assistant", "user"]


def test_pass_makes_pending_proposals_and_a_second_pass_adds_nothing(store: Store) -> None:
    store.ingest([LABELLED])
    first = store.consolidate()
    assert first.proposals_added == 12
    assert first.by_kind == {"request": 6, "correction": 6}
    assert len(first.checkpoint_ids) == 1
    props = store.proposals()
    assert {p.origin for p in props} == {"consolidation"}
    assert {p.status for p in props} == {"pending"}, "the pass itself applies nothing"
    assert store.memories() == [], "no proposal became a memory"
    second = store.consolidate()
    assert second.proposals_added == 0
    assert len(store.proposals()) == 12
    with store.read() as conn:
        per_session = conn.exec_driver_sql(
            "SELECT count(*) FROM checkpoint WHERE trigger = 'consolidation' "
            "AND session_id IS NOT NULL").scalar_one()
    assert per_session == 1, "a pass with nothing new writes no session checkpoint"


def test_pass_starts_after_its_checkpoint_and_sees_new_lines(tmp_path: Path,
                                                            store: Store) -> None:
    lines = LABELLED.read_text().splitlines()
    growing = tmp_path / LABELLED.name
    growing.write_text("\n".join(lines[:8]) + "\n")
    store.ingest([growing])
    assert store.consolidate().proposals_added == 2  # "Remember that …", "From now on …"
    growing.write_text("\n".join(lines) + "\n")
    store.ingest([growing])
    again = store.consolidate()
    assert again.proposals_added == 10
    with store.read() as conn:
        through = [r[0] for r in conn.exec_driver_sql(
            "SELECT through_entry_id FROM checkpoint WHERE trigger = 'consolidation' "
            "ORDER BY id").all()]
    assert through[0] < through[1]


def test_rejected_proposals_are_not_proposed_again(store: Store) -> None:
    store.ingest([LABELLED])
    store.consolidate()
    victim = store.proposals()[0]
    store.reject(victim.id, reason="not worth keeping")
    # forget the checkpoints and the idempotency keys: only the content dedup remains
    with store.write() as conn:
        conn.exec_driver_sql("DELETE FROM checkpoint WHERE trigger = 'consolidation'")
        conn.exec_driver_sql("UPDATE proposal SET idem_key = NULL")
    again = store.consolidate()
    assert again.proposals_added == 0
    assert again.skipped.get("duplicate_proposal") == 12


def test_real_transcripts_handoff_and_corrections(cc_store: Store) -> None:
    """The compaction summary becomes a handoff proposal linked to its compaction; the
    interruptions and "… still does not work" become corrections with both turns as
    evidence; ordinary instructions propose nothing."""
    report = cc_store.consolidate()
    props = [cc_store.proposal(p.id) for p in cc_store.proposals()]
    handoffs = [p for p in props if p.summary.type == "handoff"]
    assert len(handoffs) == 1
    with cc_store.read() as conn:
        summary_entry = conn.exec_driver_sql(
            "SELECT summary_entry_id FROM compaction WHERE summary_entry_id IS NOT NULL"
        ).scalar_one()
    assert [e.entry_id for e in handoffs[0].evidence] == [summary_entry]
    corrections = [p for p in props if p.summary.type == "feedback"]
    turns = []
    for p in corrections:
        user = cc_store.entry(p.evidence[-1].entry_id)
        prior = cc_store.entry(p.evidence[0].entry_id)
        assert prior.kind in ("assistant", "tool_call") and prior.seq < user.seq
        turns.append((user.source_path.rsplit("/", 1)[-1], user.source_line,
                      user.content[:30]))
    # found by reading the files: short.jsonl line 13, tool_heavy.jsonl lines 18, 26, 39
    assert sorted(turns) == [
        ("short.jsonl", 13, "[Request interrupted by user f"),
        ("tool_heavy.jsonl", 18, "[Request interrupted by user]"),
        ("tool_heavy.jsonl", 26, "scrolling back in xterm.js sti"),
        ("tool_heavy.jsonl", 39, "[Request interrupted by user]"),
    ]
    cited = {e.entry_id for p in props for e in p.evidence}
    ordinary = [e for s in cc_store.sessions() for e in cc_store.entries(s.id)
                if e.kind == "user" and e.content.startswith((
                    "Work on bead spotter-4te", "start phoenix in background",
                    "continue implementation", "mix phx.server doesnt seem to start"))]
    assert len(ordinary) == 4
    assert cited.isdisjoint(e.id for e in ordinary)
    assert report.by_kind["handoff"] == 1
    assert cc_store.consolidate().proposals_added == 0


def _stub(tmp_path: Path, body: str) -> str:
    script = tmp_path / "proposer.py"
    script.write_text(body)
    return f"{sys.executable} {script}"


def test_stub_proposer_proposals_arrive_checked(tmp_path: Path) -> None:
    cmd = _stub(tmp_path, (
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "n = sum(len(s['entries']) for s in data['sessions'])\n"
        "print(json.dumps({'proposals': [{'op': 'add', 'type': 'project', "
        "'content': f'The billing service has {n} new entries to review.', "
        "'rationale': 'stub'}]}))\n"))
    s = make_store(tmp_path / "p.db", **{"governance.proposer_command": cmd})
    try:
        s.ingest([LABELLED])
        report = s.consolidate()
        assert report.proposer == {"ran": True, "error": None, "proposals": 1}
        assert report.proposals_added == 13
        mine = [p for p in s.proposals() if p.origin == "proposer"]
        assert len(mine) == 1
        assert {c.kind for c in mine[0].checks} >= {"duplicate", "source_support"}
    finally:
        s.close()


@pytest.mark.parametrize("body,needle", [
    ("import sys\nsys.exit(3)\n", "exited 3"),
    ("print('this is not json')\n", "no JSON"),
    ("import time\ntime.sleep(30)\n", "ran past"),
])
def test_failing_proposer_leaves_the_rest(tmp_path: Path, body: str, needle: str) -> None:
    cmd = _stub(tmp_path, body)
    s = make_store(tmp_path / "p.db", **{"governance.proposer_command": cmd,
                                         "governance.proposer_timeout_s": 2})
    try:
        s.ingest([LABELLED])
        report = s.consolidate()
        assert report.proposer["ran"] and needle in report.proposer["error"]
        assert report.proposals_added == 12
    finally:
        s.close()


def test_cli_consolidate_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    db = str(tmp_path / "c.db")
    assert main(["ingest", "--store", db, str(LABELLED), "--json"]) == 0
    capsys.readouterr()
    assert main(["consolidate", "--store", db, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["proposals_added"] == 12
    assert set(out) >= {"proposals_added", "by_kind", "checkpoint_ids", "proposer"}
    assert out["proposer"] == {"ran": False, "error": None}


# -- the bound memory directory behind the gate -------------------------------------------

_FILE = """---
name: deploy-window
description: when deploys may run
type: feedback
tags: [deploy]
hits: 2
---
Deploys run only between 09:00 and 16:00 UTC on weekdays.
"""


def _bound(tmp_path: Path) -> tuple[Store, Path]:
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "feedback_deploy-window.md").write_text(_FILE)
    (folder / "MEMORY.md").write_text("# index\n- feedback_deploy-window.md\n")
    s = make_store(tmp_path / "b.db", **{"memory.dir": str(folder)})
    s.ingest([folder])
    return s, folder


def test_edit_outside_the_gate_becomes_a_revise_proposal(tmp_path: Path) -> None:
    s, folder = _bound(tmp_path)
    try:
        [m] = s.memories()
        assert "16:00" in m.body and not s.proposals()
        path = folder / "feedback_deploy-window.md"
        path.write_text(_FILE.replace("16:00", "18:00"))
        report = s.ingest([folder])
        assert any("outside the gate" in n for n in report.notes)
        [p] = s.proposals()
        info = s.proposal(p.id)
        assert (p.op, p.origin, p.target, p.status) == ("revise", "file", m.id, "pending")
        assert "-Deploys run only between 09:00 and 16:00" in info.rationale
        assert "+Deploys run only between 09:00 and 18:00" in info.rationale
        assert s.memory(m.id).body == m.body, "the stored memory waits for approval"
        # the same file again proposes nothing new
        s.ingest([folder])
        assert len(s.proposals()) == 1
        s.approve(p.id)
        [active] = [x for x in s.memories() if x.status == "active"]
        assert "18:00" in active.body
        # the approved write landed in the file; importing it again proposes nothing
        assert "18:00" in path.read_text()
        s.ingest([folder])
        assert [x.status for x in s.proposals()] == ["applied"]
    finally:
        s.close()


def test_counters_move_in_place_and_new_or_deleted_files_are_proposed(tmp_path: Path) -> None:
    s, folder = _bound(tmp_path)
    try:
        [m] = s.memories()
        path = folder / "feedback_deploy-window.md"
        path.write_text(_FILE.replace("hits: 2", "hits: 7"))
        s.ingest([folder])
        assert s.memory(m.id).hits == 7 and not s.proposals()
        (folder / "user_editor.md").write_text(
            "---\nname: editor\ntype: user\n---\nThe user edits in Helix.\n")
        s.ingest([folder])
        [add] = s.proposals()
        assert (add.op, add.origin) == ("add", "file")
        assert len(s.memories()) == 1, "a new file waits for approval"
        path.unlink()
        s.ingest([folder])
        ops = sorted(p.op for p in s.proposals())
        assert ops == ["add", "quarantine"]
        assert s.memory(m.id).status == "active"
    finally:
        s.close()


# -- review fixes ------------------------------------------------------------------------

_EDITOR = "---\nname: editor\ntype: user\nowner: agent\n---\nThe user edits in Helix.\n"


def test_approved_file_add_keeps_the_agents_file(tmp_path: Path) -> None:
    """Approving an ``add`` that came from a bound-dir file links the memory to that file:
    no second copy, no duplicate memory, no new proposal on the next ingest."""
    s, folder = _bound(tmp_path)
    try:
        path = folder / "user_editor.md"
        path.write_text(_EDITOR)
        s.ingest([folder])
        [add] = s.proposals()
        assert s.approve(add.id).status == "applied"
        assert sorted(p.name for p in folder.glob("*.md")) == [
            "MEMORY.md", "feedback_deploy-window.md", "user_editor.md"]
        editors = [m for m in s.memories() if m.name == "editor"]
        assert len(editors) == 1
        assert editors[0].source_file == str(path.resolve())
        assert "owner: agent" in path.read_text(), "keys lca-tui does not manage are kept"
        s.ingest([folder])
        assert [p.id for p in s.proposals()] == [add.id]
        assert len([m for m in s.memories() if m.name == "editor"]) == 1
    finally:
        s.close()


def test_an_unapproved_file_is_proposed_once(tmp_path: Path) -> None:
    """Counters the agent bumps in a file not yet approved make no second proposal; a later
    version of its content updates the pending proposal; the ingest note names only what is
    new."""
    s, folder = _bound(tmp_path)
    try:
        path = folder / "user_editor.md"
        path.write_text(_EDITOR)
        s.ingest([folder])
        [add] = s.proposals()
        path.write_text(_EDITOR.replace("owner: agent", "owner: agent\nhits: 4"))
        report = s.ingest([folder])
        assert [p.id for p in s.proposals()] == [add.id]
        assert not any("became proposals" in n for n in report.notes)
        path.write_text(_EDITOR.replace("Helix", "Neovim"))
        report = s.ingest([folder])
        [again] = s.proposals()
        assert again.id == add.id and again.status == "pending"
        info = s.proposal(add.id)
        assert "Neovim" in (info.content or "") and info.revision == 1
        assert any("updated to the file's latest version" in n for n in report.notes)
    finally:
        s.close()


def _used(store: Store, memory_id: int) -> None:
    from store.recall.run import recall
    from tests.helpers_recall import NOW

    result = recall(store, "run the test suite with pytest", now=NOW)
    rank = next(c.rank for c in result.trace.candidates
                if c.source_type == "memory" and c.source_id == memory_id
                and c.decision == "injected")
    assert store.feedback(result.trace_id, str(rank), "used").recorded


def test_reported_use_is_reinforced_once_and_counted_once(store: Store,
                                                         tmp_path: Path) -> None:
    from tests.helpers_recall import import_memories

    ids = import_memories(store, tmp_path / "mem", [(
        "pytest-x", "Always run the test suite with pytest -x so it stops at the first "
        "failure.", {"name": "pytest", "type": "feedback", "hits": 3})])
    mid = ids["pytest"]
    _used(store, mid)
    assert store.memory(mid).hits == 4
    first = store.consolidate()
    assert first.by_kind.get("reinforce") == 1
    [p1] = [p for p in store.proposals() if p.op == "reinforce"]
    assert p1.status == "applied", "reinforce is auto-applied by default"
    assert store.memory(mid).hits == 4, "the use was counted when reported, not again"
    assert store.consolidate().by_kind.get("reinforce", 0) == 0
    _used(store, mid)
    third = store.consolidate()
    assert third.by_kind.get("reinforce") == 1
    newest = max((p for p in store.proposals() if p.op == "reinforce"), key=lambda p: p.id)
    assert "used 1×" in (store.proposal(newest.id).rationale or ""), \
        "only the feedback since the last reinforce"
    assert store.memory(mid).hits == 5


def test_a_pass_does_not_move_a_sessions_end(store: Store) -> None:
    store.ingest([LABELLED])
    [before] = store.sessions()
    assert before.ended_at is not None
    report = store.consolidate()
    assert report.checkpoint_ids
    [after] = store.sessions()
    assert (after.started_at, after.ended_at) == (before.started_at, before.ended_at)


from dataclasses import dataclass as _dataclass  # noqa: E402


@_dataclass
class _E:
    """A stored entry's shape, for the detectors."""

    id: int
    kind: str
    content: str
    agent: str = "main"
    session_id: str = "s"
    seq: int = 0
    tool_name: str | None = None


@pytest.mark.parametrize("turn,expected", [
    ("From now on, use Node 18.17 for builds.", "From now on, use Node 18.17 for builds."),
    ("Never edit deploy/settings.py by hand.", "Never edit deploy/settings.py by hand."),
    ("Never commit .env files.", "Never commit .env files."),
    ("Always pin versions, e.g. requests==2.31, in requirements.",
     "Always pin versions, e.g. requests==2.31, in requirements."),
    ("Thanks. Remember that the i.e. style is banned here. Ok?",
     "Remember that the i.e. style is banned here."),
])
def test_request_sentences_end_only_at_a_sentence_end(turn: str, expected: str) -> None:
    from store.governance.detect import requests

    [found] = requests(_E(1, "user", turn))
    assert found.content == expected
    (_, start, end), = found.evidence
    assert turn[start:end] == expected


def test_two_requests_in_one_turn_are_two_proposals(store: Store) -> None:
    from tests.helpers_recall import add_entries

    add_entries(store, "two-requests", [("user", "Always run black. Always run isort.")])
    report = store.consolidate()
    assert report.by_kind == {"request": 2}
    assert sorted(p.content for p in [store.proposal(x.id) for x in store.proposals()]) == [
        "Always run black.", "Always run isort."]
    assert store.consolidate().proposals_added == 0


@pytest.mark.parametrize("fmt", ["acp", "acp-journal", "lca-export", None])
def test_the_bound_directory_goes_through_the_gate_whatever_the_format(
        tmp_path: Path, fmt: str | None) -> None:
    s, folder = _bound(tmp_path)
    try:
        [m] = s.memories()
        path = folder / "feedback_deploy-window.md"
        path.write_text(_FILE.replace("16:00", "18:00"))
        s.ingest([folder], fmt=fmt)
        assert s.memory(m.id).body == m.body, "the stored memory waits for approval"
        [p] = s.proposals()
        assert (p.op, p.origin, p.target) == ("revise", "file", m.id)
    finally:
        s.close()


def test_a_failed_proposer_sees_the_entries_again_next_pass(tmp_path: Path) -> None:
    flag, seen = tmp_path / "fail", tmp_path / "seen.txt"
    flag.write_text("1")
    cmd = _stub(tmp_path, (
        "import json, sys, pathlib\n"
        "data = json.load(sys.stdin)\n"
        "n = sum(len(s['entries']) for s in data['sessions'])\n"
        f"with open({str(seen)!r}, 'a') as fh: fh.write(f'{{n}}\\n')\n"
        f"if pathlib.Path({str(flag)!r}).exists(): sys.exit(3)\n"
        "print('[]')\n"))
    s = make_store(tmp_path / "p.db", **{"governance.proposer_command": cmd})
    try:
        s.ingest([LABELLED])
        first = s.consolidate()
        assert "exited 3" in first.proposer["error"] and first.proposals_added == 12
        with s.read() as conn:
            advanced = conn.exec_driver_sql(
                "SELECT count(*) FROM checkpoint WHERE trigger = 'consolidation' "
                "AND session_id IS NOT NULL").scalar_one()
        assert advanced == 0, "what the proposer did not see stays ahead of the checkpoint"
        flag.unlink()
        second = s.consolidate()
        assert second.proposer == {"ran": True, "error": None, "proposals": 0}
        assert second.proposals_added == 0 and len(second.checkpoint_ids) == 1
        counts = seen.read_text().split()
        assert len(counts) == 2 and counts[0] == counts[1] != "0"
        third = s.consolidate()
        assert third.proposer["ran"] is False, "no new entries: the proposer is not called"
        assert len(seen.read_text().split()) == 2
    finally:
        s.close()


def test_the_pass_scans_the_bound_directory_through_the_gate(tmp_path: Path) -> None:
    s, folder = _bound(tmp_path)
    try:
        [m] = s.memories()
        (folder / "feedback_deploy-window.md").write_text(_FILE.replace("16:00", "18:00"))
        (folder / "user_editor.md").write_text(_EDITOR)
        report = s.consolidate()
        assert report.by_kind.get("file") == 2 and report.proposals_added == 2
        assert sorted((p.op, p.origin) for p in s.proposals()) == [
            ("add", "file"), ("revise", "file")]
        assert s.memory(m.id).body == m.body and len(s.memories()) == 1
        again = s.consolidate()
        assert again.proposals_added == 0 and len(s.proposals()) == 2
    finally:
        s.close()


def test_garbage_from_the_proposer_is_its_error(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from lca_tui.cli import main

    cmd = _stub(tmp_path, "print('[1, {\"op\": \"add\", \"content\": \"x y z\", "
                          "\"status\": \"applied\"}]')\n")
    s = make_store(tmp_path / "p.db", **{"governance.proposer_command": cmd})
    try:
        s.ingest([LABELLED])
        report = s.consolidate()
        assert "2 of 2 proposals from the proposer command refused" in report.proposer["error"]
        assert report.proposals_added == 12
        assert not [p for p in s.proposals() if p.origin == "proposer"]
    finally:
        s.close()
    db = tmp_path / "cli.db"
    (tmp_path / "lca.toml").write_text(with_user_config(
        f"[governance]\nproposer_command = {cmd!r}\n"))
    monkeypatch.setenv("LCA_CONFIG", str(tmp_path / "lca.toml"))
    assert main(["ingest", "--store", str(db), str(LABELLED), "--json"]) == 0
    capsys.readouterr()
    assert main(["consolidate", "--store", str(db), "--json"]) == 1
    captured = capsys.readouterr()
    assert "refused" in json.loads(captured.out)["proposer"]["error"]
    assert "proposer command failed" in captured.err


def test_a_checkpoint_hook_keeps_the_consolidation_problems(tmp_path: Path) -> None:
    from store.harness.hook import run_event

    cmd = _stub(tmp_path, "import sys\nsys.exit(3)\n")
    s = make_store(tmp_path / "h.db", **{"governance.proposer_command": cmd})
    try:
        outcome = run_event(s, "PreCompact", {
            "session_id": LABELLED.stem, "transcript_path": str(LABELLED),
            "hook_event_name": "PreCompact", "trigger": "auto", "cwd": str(tmp_path)})
        assert outcome.checkpoint_id is not None
        assert outcome.error and "consolidation" in outcome.error and "exited 3" in outcome.error
    finally:
        s.close()


def test_a_file_the_agent_broke_marks_its_memory_not_loadable(tmp_path: Path) -> None:
    s, folder = _bound(tmp_path)
    try:
        [m] = s.memories()
        path = folder / "feedback_deploy-window.md"
        path.write_text(_FILE.replace("tags: [deploy]", "tags: [deploy"))
        s.ingest([folder])
        assert not s.proposals(), "an unreadable file is not a revise"
        broken = s.memory(m.id)
        assert (broken.name, broken.body) == (m.name, m.body)
        assert not broken.loadable and "not valid YAML" in (broken.load_error or "")
        path.write_text(_FILE)
        s.ingest([folder])
        fixed = s.memory(m.id)
        assert fixed.loadable and fixed.load_error is None and not s.proposals()
    finally:
        s.close()


def test_approving_a_deleted_files_quarantine_does_not_bring_it_back(tmp_path: Path) -> None:
    s, folder = _bound(tmp_path)
    try:
        [m] = s.memories()
        path = folder / "feedback_deploy-window.md"
        path.unlink()
        s.ingest([folder])
        [q] = s.proposals()
        assert q.op == "quarantine"
        assert s.approve(q.id).status == "applied"
        assert not path.exists(), "the file the agent deleted stays deleted"
        assert s.memory(m.id).status == "quarantined"
        s.ingest([folder])
        assert len(s.proposals()) == 1
    finally:
        s.close()


def test_an_empty_session_id_is_an_error(store: Store,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    store.ingest([LABELLED])
    with pytest.raises(ValueError, match="empty session"):
        store.consolidate("")
    assert not store.proposals()
    assert main(["consolidate", "", "--store", str(store.path), "--json"]) != 0
    assert "empty session" in capsys.readouterr().err


def test_corrections_describe_the_action_in_words() -> None:
    from store.governance.detect import correction

    history = [
        _E(1, "user", "Fix the scroll bug."),
        _E(2, "assistant", "I changed the scroll handler in term.js to keep the buffer."),
        _E(3, "tool_call", '{"command": "tail -5 /tmp/x.log", "description": "Check the log"}',
           tool_name="Bash"),
    ]
    fix = correction(_E(4, "user", "Scrolling back still does not work."), history)
    assert fix is not None and fix.evidence[0][0] == 2, "the assistant's turn, not its last tool"
    stop = correction(_E(5, "user", "[Request interrupted by user]"), history)
    assert stop is not None and stop.evidence[0][0] == 3
    assert "Bash (Check the log)" in stop.content and "{" not in stop.content
