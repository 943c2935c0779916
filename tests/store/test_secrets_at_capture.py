"""Secrets and personal data caught at capture: the detector on every entry and
memory written, ``<private>`` spans stored redacted, ``mark --unmark-detected``,
``scan-secrets`` and the ``secrets_found`` health signal.

The fixtures' secrets are fake but well formed: AWS's documented example key, a GitHub token
of the right shape, a truncated key block, a made-up password."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from store import Store
from store.core.secrets import DEFAULT, Detector, redact_private
from store.harness.paths import failure_log
from tests.helpers_health import scan
from tests.conftest import CLAUDE_CODE, make_store, needs_shared_data, with_user_config
from tests.helpers_harness import run_hook
from tests.helpers_privacy import _cli

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "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"
KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
PASSWORD = "Zx9qP2wLm7Tq"
VALUES = (AWS, GITHUB, KEY_BODY, PASSWORD)
PRIVATE = "my salary is 91,500"
SESSION = "5ec2e7a0-0000-4000-8000-000000000030"


def _line(i: int, content: object, role: str = "user") -> dict[str, object]:
    return {"type": role, "uuid": f"00000000-0000-4000-8000-0000000000{i:02d}",
            "parentUuid": None, "sessionId": SESSION, "cwd": "/work/app",
            "timestamp": f"2026-12-01T10:00:{i:02d}.000Z", "version": "2.1.39",
            "message": {"role": role, "content": content}}


def seeded_transcript(folder: Path) -> Path:
    """A Claude Code session: four entries holding a secret each, one with a <private>
    span, and ordinary ones."""
    lines = [
        _line(1, f"the deploy uses aws_access_key_id = {AWS} for now"),
        _line(2, [{"type": "text", "text": f"push with token {GITHUB} please"}], "assistant"),
        _line(3, "here is the key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
                 f"{KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----\nuse it on the box"),
        _line(4, f"connect with postgres://admin:{PASSWORD}@db.internal:5432/app"),
        _line(5, f"remember <private>{PRIVATE}</private> but keep the rest"),
        _line(6, "which port does the database listen on"),
        _line(7, [{"type": "text", "text": "it listens on 5432"}], "assistant"),
    ]
    path = folder / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _entries(store: Store) -> dict[str, tuple[int, str]]:
    """needle → (entry id, sensitivity) of the entry holding it."""
    out = {}
    with store.read() as conn:
        for needle in (*VALUES, "keep the rest", "listens on 5432"):
            row = conn.execute(text("SELECT id, sensitivity FROM entry WHERE "
                                    "instr(content, :n)"), {"n": needle}).one()
            out[needle] = (int(row[0]), str(row[1]))
    return out


def test_the_detector_finds_each_kind_and_masks_only_the_value() -> None:
    found = DEFAULT.detect(f"key {AWS}, token {GITHUB}, url https://bob:{PASSWORD}@h.io/x")
    assert [f.kind for f in found] == ["aws-key", "github-token", "password-url"]
    masked = DEFAULT.mask(f"url https://bob:{PASSWORD}@h.io/x and API_KEY=abc123def456ghi")
    assert masked == ("url https://bob:[secret: password-url]@h.io/x and "
                      "API_KEY=[secret: keyword-value]")
    jwt = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
           "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
    assert DEFAULT.mask(f"Bearer {jwt} end") == "Bearer [secret: jwt] end"
    assert DEFAULT.mask(masked) == masked  # a placeholder is never taken for a value
    # detect-secrets' own false-positive heuristics: templated and indirect values stay
    for fine in ('password = "${DB_PASSWORD}"', "password: <your password here>",
                 "api_key = os.environ['API_KEY']", "the secret of good tests is patience"):
        assert DEFAULT.detect(fine) == (), fine


def test_email_and_phone_are_opt_in() -> None:
    line = "write to dana.r@example.com or call +44 20 7946 0958"
    assert DEFAULT.detect(line) == ()
    found = Detector(email=True, phone=True).detect(line)
    assert [f.kind for f in found] == ["email", "phone"]
    assert Detector(email=True, phone=True).mask(line) == (
        "write to [secret: email] or call [secret: phone]")


def test_private_spans_are_redacted_and_counted() -> None:
    assert redact_private("a <private>x\ny</private> b <PRIVATE>z") == ("a [private] b [private]",
                                                                      2)
    assert redact_private("nothing private") == ("nothing private", 0)


def test_seeded_transcript_secrets_are_caught_and_leave_no_copy(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's done-when: the four entries are secret after import; nothing of the
    values is in the FTS index, the chunks, a vector, a trace, an export, the audit or a log;
    the raw store file holds each value once (the stored entry); screens mask them."""
    path = seeded_transcript(tmp_path)
    report = store.ingest([path])
    assert report.entries_secret == 4 and report.private_spans == 1
    entries = _entries(store)
    assert {n: s for n, (_, s) in entries.items()} == {
        AWS: "secret", GITHUB: "secret", KEY_BODY: "secret", PASSWORD: "secret",
        "keep the rest": "public", "listens on 5432": "public"}
    kinds = {f.source_id: f.kinds for f in store.secret_findings()}
    assert kinds == {entries[AWS][0]: {"aws-key": 1}, entries[GITHUB][0]: {"github-token": 1},
                     entries[KEY_BODY][0]: {"private-key": 1},
                     entries[PASSWORD][0]: {"password-url": 1},
                     entries["keep the rest"][0]: {"private-span": 1}}
    # recall for the values themselves, and a hook's prompt holding one
    store.recall(f"which key is {AWS}", channel="private")
    store.recall(f"deploy token {GITHUB}", channel="private")
    run_hook("UserPromptSubmit", {"session_id": SESSION, "transcript_path": str(path),
                                  "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
                                  "prompt": f"is {AWS} still the deploy key?"},
             store.path, monkeypatch, capsys)
    out = tmp_path / "export"
    store.export(out)
    with store.read() as conn:
        chunk_text = " ".join(r[0] for r in conn.execute(text("SELECT text FROM chunk")))
        assert "[secret: aws-key]" in chunk_text and "[secret: private-key]" in chunk_text
        for value in (*VALUES, PRIVATE):
            assert value not in chunk_text
            hits = conn.execute(text("SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH "
                                     ":q"), {"q": json.dumps(value)}).scalar_one()
            assert hits == 0, value
        queries = [r[0] for r in conn.execute(text("SELECT query FROM recall_trace"))]
        assert len(queries) == 3 and "[secret: aws-key]" in queries[0]
        assert queries[2] == "is [secret: aws-key] still the deploy key?"
        trace_rows = json.dumps([list(r) for r in conn.execute(text(
            "SELECT query FROM recall_trace UNION ALL SELECT coalesce(excerpt, '') || "
            "coalesce(label, '') FROM recall_candidate"))])
        audit = json.dumps([list(r) for r in conn.execute(text("SELECT * FROM audit_event"))])
        # a vector is the embedding of the masked chunk text, not of the value
        cid, body = conn.execute(text(
            "SELECT id, text FROM chunk WHERE source_type = 'entry' AND source_id = :e"),
            {"e": entries[AWS][0]}).one()
        blob = conn.execute(text("SELECT embedding FROM chunk_vec WHERE rowid = :c"),
                            {"c": cid}).scalar_one()
    stored = np.frombuffer(blob, dtype=np.float32)
    assert np.allclose(stored, store.load_embedder().embed([body])[0], atol=1e-5)
    for value in (*VALUES, PRIVATE):
        assert value not in trace_rows and value not in audit
    exported = "".join(p.read_text("utf-8", "replace") for p in out.rglob("*") if p.is_file())
    # a hook whose store cannot be opened writes the failure log (under the test's
    # XDG_STATE_HOME): the logs checked below exist, they are not assumed
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database " * 100)
    run_hook("UserPromptSubmit", {"session_id": SESSION, "transcript_path": str(path),
                                  "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
                                  "prompt": f"is {AWS} still the deploy key?"},
             broken, monkeypatch, capsys)
    log_files = sorted(tmp_path.rglob("*.log"))
    assert failure_log() in log_files and failure_log().stat().st_size > 0
    logs = "".join(p.read_text("utf-8", "replace") for p in log_files)
    for value in (*VALUES, PRIVATE):
        assert value not in exported and value not in logs, value
    assert "[secret: github-token]" in exported
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("store.db*"))
    for value in VALUES:
        assert raw.count(value.encode()) == 1, value  # the stored entry itself, only
    assert PRIVATE.encode() not in raw
    # masked on screen: the transcript command shows the entry mask, not the text
    code, shown, _ = _cli(capsys, "--store", str(store.path), "entries", SESSION)
    assert code == 0 and AWS not in shown and GITHUB not in shown and "keep the rest" in shown


def test_a_hook_stores_the_session_masked_and_its_prompt_as_a_masked_query(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The hook stores the session's lines without embedding them (queued: searchable by
    FTS at once): the queue's FTS rows of the secret entries hold placeholders; the prompt
    is masked before it becomes the trace's query."""
    path = seeded_transcript(tmp_path)
    run_hook("UserPromptSubmit", {"session_id": SESSION, "transcript_path": str(path),
                                  "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
                                  "prompt": f"why does {AWS} fail with AccessDenied"},
             store.path, monkeypatch, capsys)
    assert {s for n, (_, s) in _entries(store).items() if n in VALUES} == {"secret"}
    with store.read() as conn:
        query = conn.execute(text("SELECT query FROM recall_trace ORDER BY id DESC")).scalar()
        queued = conn.execute(text("SELECT count(*) FROM embed_queue")).scalar_one()
        found = {v: conn.execute(text("SELECT count(*) FROM embed_queue_fts WHERE "
                                      "embed_queue_fts MATCH :q"),
                                 {"q": json.dumps(v)}).scalar_one() for v in VALUES}
        placeholders = conn.execute(text("SELECT count(*) FROM embed_queue_fts WHERE "
                                         "embed_queue_fts MATCH 'secret'")).scalar_one()
    assert query == "why does [secret: aws-key] fail with AccessDenied"
    assert queued == 7 and found == dict.fromkeys(VALUES, 0) and placeholders == 4


def test_unmark_detected_is_audited_and_sticks(
        store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store.ingest([seeded_transcript(tmp_path)])
    entry = _entries(store)[PASSWORD][0]
    code, out, _ = _cli(capsys, "--store", str(store.path), "mark", "--entry", str(entry),
                        "--unmark-detected")
    assert code == 0 and "1 entry" in out
    with store.read() as conn:
        level = conn.execute(text("SELECT sensitivity FROM entry WHERE id = :e"),
                             {"e": entry}).scalar()
        audit = conn.execute(text("SELECT target_ids, counts FROM audit_event WHERE action = "
                                  "'unmark-detected'")).one()
    assert level == "public"
    assert json.loads(audit[0]) == [f"entry {entry}"] and json.loads(audit[1])["entry"] == 1
    assert [f.dismissed for f in store.secret_findings() if f.source_id == entry] == [True]
    assert store.scan_secrets().entries_marked == 0  # a scan leaves a dismissed record be
    # only what the detector marked is turned back: a hand-marked entry stays secret
    plain = _entries(store)["listens on 5432"][0]
    store.mark("secret", entry=plain)
    assert store.unmark_detected(store.scope(entry=plain)) == {"entry": 0, "memory": 0}
    assert _cli(capsys, "--store", str(store.path), "mark", "--entry", "1")[0] == 2


def test_scan_secrets_marks_a_store_imported_before_the_detector(tmp_path: Path) -> None:
    """A store written without the detector (as before it existed) holds the values in its
    index; ``scan-secrets`` marks the entries, rebuilds their chunks with placeholders,
    masks the traces' copies, and the health signal stops warning."""
    path = seeded_transcript(tmp_path)
    old = make_store(tmp_path / "old.db", **{"privacy.detect_secrets": False})
    old.ingest([path])
    old.recall(f"token {GITHUB}", channel="private")
    with old.write() as conn:  # as migration 17 leaves a store that had entries
        conn.execute(text("INSERT INTO store_meta (key, value) VALUES "
                          "('secrets.unscanned_entries_through', '7')"))
    old.close()
    store = make_store(tmp_path / "old.db")
    assert scan(store).signal("secrets_found").status == "warn"
    with store.read() as conn:
        before = conn.execute(text("SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH "
                                   ":q"), {"q": json.dumps(GITHUB)}).scalar_one()
    assert before == 1
    dry = store.scan_secrets(dry_run=True)
    assert (dry.entries_marked, dry.chunks_rebuilt) == (4, 0)
    report = store.scan_secrets()
    assert report.entries_marked == 4 and report.kinds == {
        "aws-key": 1, "github-token": 1, "password-url": 1, "private-key": 1}
    assert report.chunks_rebuilt >= 4 and report.traces_masked >= 1
    assert {s for n, (_, s) in _entries(store).items() if n in VALUES} == {"secret"}
    with store.read() as conn:
        text_all = " ".join(r[0] for r in conn.execute(text("SELECT text FROM chunk")))
        query = conn.execute(text("SELECT query FROM recall_trace")).scalar()
        excerpts = [r[0] for r in conn.execute(text(
            "SELECT excerpt FROM recall_candidate WHERE excerpt IS NOT NULL"))]
    assert not any(v in text_all for v in VALUES) and GITHUB not in query
    assert not any(GITHUB in e for e in excerpts)
    signal = scan(store).signal("secrets_found")
    assert signal.status == "ok" and signal.value == 4
    again = store.scan_secrets()  # the records without findings are read again, unchanged
    assert (again.entries_scanned, again.entries_marked, again.chunks_rebuilt) == (2, 0, 0)


def test_a_memory_holding_a_secret_is_stored_secret(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "reference_deploy.md").write_text(
        "---\nname: deploy credentials\ndescription: how the deploy logs in\ntype: reference\n"
        f"---\nThe deploy logs in with aws_access_key_id = {AWS} from the CI box.\n",
        encoding="utf-8")
    (folder / "feedback_ports.md").write_text(
        "---\nname: ports\ndescription: the database port\ntype: feedback\n---\n"
        "The database listens on 5433 in dev.\n", encoding="utf-8")
    store.ingest([folder], fmt="memory-dir")
    with store.read() as conn:
        rows = dict(conn.execute(text("SELECT name, sensitivity FROM memory")).all())
        chunks = " ".join(r[0] for r in conn.execute(text(
            "SELECT text FROM chunk WHERE source_type = 'memory'")))
    assert rows == {"deploy credentials": "secret", "ports": "public"}
    assert AWS not in chunks and "[secret: aws-key]" in chunks
    again = store.ingest([folder], fmt="memory-dir")  # the same files: nothing changes
    assert again.memories_updated == 0 and again.memories_added == 0


@needs_shared_data
def test_the_real_transcripts_raise_no_secret_warning(cc_store: Store) -> None:
    """Issue 22's rule: a healthy store of the real transcripts is ok at --fail-on warn."""
    assert CLAUDE_CODE.is_dir()
    signal = scan(cc_store).signal("secrets_found")
    assert signal.status == "ok"


def test_a_proposal_holding_a_secret_is_a_secret_candidate(store: Store) -> None:
    """A write proposed through the gate: the candidate is secret (masked in the queue),
    and the memory it lands as is secret with its index masked."""
    info = store.propose({"op": "add", "type": "reference", "content":
                          f"The CI deploys with aws_access_key_id = {AWS} (rotate monthly).",
                          "rationale": "seen in the deploy logs"}, auto_apply=False)
    shown = store.proposal(info.id)
    assert shown.masked and AWS not in (shown.content or "")
    with store.read() as conn:
        meta = json.loads(conn.execute(text("SELECT meta FROM proposal WHERE id = :i"),
                                       {"i": info.id}).scalar_one())
    assert meta["sensitivity"] == "secret"
    done = store.approve(info.id, actor="dana")
    assert done.memory_id is not None
    with store.read() as conn:
        level = conn.execute(text("SELECT sensitivity FROM memory WHERE id = :m"),
                             {"m": done.memory_id}).scalar_one()
        chunks = " ".join(r[0] for r in conn.execute(text(
            "SELECT text FROM chunk WHERE source_type = 'memory' AND source_id = :m"),
            {"m": done.memory_id}))
    assert level == "secret" and AWS not in chunks and "[secret: aws-key]" in chunks


def _proposal_rows(store: Store, pid: int) -> str:
    """Everything stored of proposal ``pid``: its row and its checks' rows, as text."""
    with store.read() as conn:
        row = conn.execute(text("SELECT * FROM proposal WHERE id = :i"), {"i": pid}).one()
        checks = conn.execute(text("SELECT * FROM proposal_check WHERE proposal_id = :i"),
                              {"i": pid}).all()
    return json.dumps([list(row), [list(c) for c in checks]], default=str)


def test_consolidation_proposes_a_secret_entry_masked(store: Store, tmp_path: Path) -> None:
    """Issue 30 review: a "Remember: …" request holding a key is proposed with the key masked
    — nothing of the value in the proposal's content, rationale, metadata or checks."""
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_text(json.dumps(_line(1, f"Remember: the deploy AWS access key is {AWS} and "
                                        "it is rotated every month.")) + "\n",
                    encoding="utf-8")
    store.ingest([path])
    report = store.consolidate(use_proposer=False)
    assert report.proposal_ids, report.to_json()
    for pid in report.proposal_ids:
        stored = _proposal_rows(store, pid)
        assert AWS not in stored, pid
    shown = store.proposal(report.proposal_ids[0])
    assert "[secret: aws-key]" in (shown.content or "")
    assert "rotated every month" in (shown.content or "")


def test_a_proposal_holding_a_secret_stores_its_checks_masked(store: Store) -> None:
    """Issue 30 review: a hand-written proposal holding a value — its candidate is secret and
    the checks it stores (source_support's sentences of the candidate) mask the value."""
    doc: dict[str, object] = {"op": "add", "type": "reference", "content":
                              f"The deploy AWS access key is {AWS}.",
                              "rationale": "seen in the deploy logs"}
    info = store.propose(doc, auto_apply=False)
    assert store.proposal(info.id).masked
    with store.read() as conn:
        checks = json.dumps([list(r) for r in conn.execute(text(
            "SELECT kind, detail, evidence FROM proposal_check WHERE proposal_id = :i"),
            {"i": info.id})])
    assert "source_support" in checks
    assert AWS not in checks and "[secret: aws-key]" in checks


def test_traced_queries_and_hook_prompts_use_the_stores_detector(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30 review: a recall's trace query and a hook's prompt were masked with the
    default detector (secrets only); with ``privacy.detect_email`` on, the store's detector
    masks an address in both."""
    email = "ana.silva@example.com"
    config = tmp_path / "config.toml"
    config.write_text(with_user_config("[privacy]\ndetect_email = true\n"), encoding="utf-8")
    monkeypatch.setenv("LCA_CONFIG", str(config))  # what the hook's store reads
    store = make_store(tmp_path / "store.db", **{"privacy.detect_email": True})
    store.recall(f"what did {email} ask for")
    run_hook("UserPromptSubmit", {"session_id": SESSION,
                                  "transcript_path": str(seeded_transcript(tmp_path)),
                                  "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
                                  "prompt": f"mail {email} the deploy report"},
             store.path, monkeypatch, capsys)
    with store.read() as conn:
        queries = [r[0] for r in conn.execute(text(
            "SELECT query FROM recall_trace ORDER BY id"))]
    assert queries == ["what did [secret: email] ask for",
                       "mail [secret: email] the deploy report"]
    store.close()
