"""Context pressure: derived from Claude Code and MindStone imports, recorded by a harness,
rebuilt by reindex, and the CLI contract (`context --json`, `context record`, `checkpoints`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from store import Store
from store.context.api import (
    record_checkpoint,
    record_compaction,
    record_handoff,
    record_prune,
    record_snapshot,
    series,
    series_keys,
    snapshots_since,
)
from store.context.series import all_series, checkpoints
from store.core.writes import NewEntry, NewSession
from tests.conftest import BIG_SESSION, make_store

BIG = BIG_SESSION.stem
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _count(store: Store, table: str, where: str = "1 = 1") -> int:
    # text(), not the driver's own string: a ``%`` in ``where`` (LIKE 'abc%') is a literal on
    # both backends, and ``1 = 1`` is the boolean a server's WHERE wants
    with store.read() as conn:
        return int(conn.execute(text(f"SELECT COUNT(*) FROM {table} WHERE {where}")).scalar())


# -- Claude Code -----------------------------------------------------------------------------
def test_claude_code_main_curve_and_compaction(cc_store: Store) -> None:
    main = series(cc_store, BIG, "main")
    assert len(main.snapshots) == 217
    assert main.peak_used_tokens == 141_787
    assert {s.event for s in main.snapshots} == {"turn"}
    assert len({s.message_id for s in main.snapshots}) == 217
    (compaction,) = main.compactions
    assert compaction.pre_tokens == 142_431
    assert compaction.trigger == "manual"
    assert compaction.checkpoint_before is False
    summary = cc_store.entry(compaction.summary_entry_id)
    assert summary.kind == "compaction" and summary.meta.get("summary") is True
    assert summary.content.startswith("This session is being continued")
    # the peak is the last turn before the compaction; the next turn starts low again
    before = [s for s in main.snapshots if s.ts < compaction.ts]
    after = [s for s in main.snapshots if s.ts > compaction.ts]
    assert before[-1].used_tokens == 141_787
    assert after[0].used_tokens == 45_263
    assert main.window_tokens == 200_000 and "window_tokens" in main.settings_defaults
    assert main.checkpoint_threshold == 160_000 and main.auto_compact_threshold == 184_000


def test_claude_code_workers_are_their_own_series(cc_store: Store) -> None:
    keys = {(k.session_id, k.agent): k.snapshots for k in series_keys(cc_store)}
    assert keys[(BIG, "aac57f5")] == 3
    assert keys[(BIG, "acompact-946d2b")] == 1
    assert series(cc_store, BIG, "aac57f5").peak_used_tokens == 18_893
    assert series(cc_store, BIG, "acompact-946d2b").peak_used_tokens == 139_534
    assert len(keys) == 5
    assert series_keys(cc_store)[0].agent == "main"


def test_reindex_rebuilds_derived_and_keeps_harness_history(cc_store: Store) -> None:
    before = [(s.session_id, s.agent, s.peak_used_tokens, len(s.snapshots), len(s.compactions))
              for s in all_series(cc_store)]
    harness = record_snapshot(cc_store, BIG, 1234, ts="2026-02-12T15:00:00Z")
    with cc_store.write() as conn:
        conn.exec_driver_sql("DELETE FROM compaction")
        conn.exec_driver_sql("DELETE FROM context_snapshot WHERE source_entry_id IS NOT NULL")
    assert _count(cc_store, "context_snapshot") == 1
    report = cc_store.reindex()
    assert report.derived["context.snapshots"] == 226
    assert report.derived["context.compactions"] == 1
    after = [(s.session_id, s.agent, s.peak_used_tokens, len(s.snapshots) - (s.agent == "main"
              and s.session_id == BIG), len(s.compactions)) for s in all_series(cc_store)]
    assert after == before
    assert _count(cc_store, "context_snapshot", f"id = {harness}") == 1
    cc_store.reindex()  # twice: nothing doubles
    assert _count(cc_store, "context_snapshot") == 227


@pytest.mark.sqlite_only("a SQLite file from schema v1 migrated in place; a server store is "
                         "created at the current schema")
def test_store_from_before_this_issue_gets_its_pressure_on_reindex(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "store_v1.db", path)
    store = make_store(path)
    try:
        assert _count(store, "context_snapshot") == 0  # migrated, nothing derived yet
        store.reindex()
        (only,) = all_series(store)
        assert only.session_id.startswith("55604662") and only.peak_used_tokens == 25_353
    finally:
        store.close()


def _assistant(mid: str, used: int, offset: int, text: str) -> NewEntry:
    return NewEntry(kind="assistant", content=text, source_key="t:s1:main",
                    source_offset=offset, message_id=mid, ts=f"2026-03-01T10:00:0{offset}Z",
                    meta={"usage": {"input_tokens": 3, "cache_creation_input_tokens": used - 3,
                                    "cache_read_input_tokens": 0, "output_tokens": 9}})


def test_message_id_across_two_batches_makes_one_snapshot(store: Store) -> None:
    session = NewSession(id="s1", format="claude-code")
    store.append_entries(session, [_assistant("msg_1", 1000, 1, "thinking…")])
    store.append_entries(session, [_assistant("msg_1", 1000, 2, "answer"),
                                   _assistant("msg_2", 1500, 3, "next")])
    main = series(store, "s1", "main")
    assert [s.used_tokens for s in main.snapshots] == [1000, 1500]


def test_boundary_and_summary_in_separate_batches_are_linked(store: Store) -> None:
    session = NewSession(id="s2", format="claude-code")
    store.append_entries(session, [NewEntry(
        kind="compaction", content="Conversation compacted", source_key="t:s2", source_offset=1,
        ts="2026-03-01T10:00:00Z",
        meta={"subtype": "compact_boundary", "preTokens": 170000, "trigger": "auto",
              "boundary": True})])
    store.append_entries(session, [NewEntry(
        kind="compaction", content="Summary: we were fixing the parser", source_key="t:s2",
        source_offset=2, ts="2026-03-01T10:00:00Z", meta={"summary": True})])
    with store.read() as conn:
        row = conn.exec_driver_sql("SELECT pre_tokens, summary_entry_id FROM compaction").one()
    assert row[0] == 170000 and store.entry(row[1]).content.startswith("Summary:")


# -- MindStone-Agent -------------------------------------------------------------------------
def _line(i: int, role: str, text: str, event: str, ts: str, **metadata: object) -> dict:
    return {"id": f"e{i}", "timestamp": ts, "sessionKey": "agent:default:main",
            "agentId": "default", "role": role, "text": text, "runId": "run_m1abc_0badf00d",
            "metadata": {"event": event, **metadata}}


def _mindstone_lines() -> list[dict]:
    lines = [_line(i, "user" if i % 2 else "assistant", f"turn {i}",
                   "user_message" if i % 2 else "assistant_response",
                   f"2026-03-02T09:00:{i:02d}Z") for i in range(1, 7)]
    lines.append(_line(7, "event", "Context window pruned from 190000 to 120000 estimated "
                       "tokens. Transcript preserved.", "context_window_pruned",
                       "2026-03-02T09:01:00Z", mode="sliding_window", tokensBefore=190000,
                       tokensAfter=120000, contextWindowTokens=200000, ceilingPercent=92,
                       floorPercent=70, minRecentMessages=4, prunedEntries=2,
                       keptEntries=4, prunedEntryIds=["e1", "e2"], keptEntryIds=["e3"]))
    lines.append(_line(8, "event", "Context window pruned from 185000 to 130000 estimated "
                       "tokens.", "context_window_pruned", "2026-03-02T09:02:00Z",
                       mode="sliding_window", tokensBefore=185000, tokensAfter=130000,
                       contextWindowTokens=200000, prunedEntries=2,
                       prunedEntryIds=["e3", "e-never-stored"]))
    auto: dict[str, object] = {
        "mode": "auto_compact", "contextWindowTokens": 200000, "checkpointWarningPercent": 85,
        "compactTargetPercent": 92, "keepRecentTokens": 20000, "reserveTokens": 16000,
        "emergencyAutoHandoff": True}
    lines.append(_line(9, "event", "auto-compact warning", "auto_compact_warning",
                       "2026-03-02T09:03:00Z", tokens=172000, utilizationPercent=86,
                       action="handoff", handoff={"written": True, "path": "/h/handoff.md",
                                                  "latestPath": "/h/latest.md"}, **auto))
    lines.append(_line(10, "event", "auto-compact required", "auto_compact_required",
                       "2026-03-02T09:04:00Z", tokens=186000, utilizationPercent=93,
                       action="compact", compaction={"requested": True}, **auto))
    lines.append(_line(11, "event", "handoff replayed", "handoff_replayed",
                       "2026-03-02T09:05:00Z", durable=False,
                       handoff={"path": "/h/handoff.md", "sha256": "ab" * 32,
                                "updatedAt": "2026-03-02T09:03:00Z", "tokenEstimate": 900}))
    lines.append(_line(12, "event", "auto-compact warning", "auto_compact_warning",
                       "2026-03-02T09:06:00Z", tokens=171000, utilizationPercent=85.5,
                       action="warn", **auto))
    lines.append(_line(13, "event", "auto-compact required", "auto_compact_required",
                       "2026-03-02T09:07:00Z", tokens=187000, utilizationPercent=93.5,
                       action="compact", **auto))
    return lines


_KIND = {"user": "user", "assistant": "assistant", "event": "event"}


def _as_entries(lines: list[dict]) -> list[NewEntry]:
    """The entries the MindStone importer writes for these lines (its documented meta)."""
    return [NewEntry(kind=_KIND[o["role"]], content=o["text"], source_key="ms:test",
                     source_offset=n, ts=o["timestamp"],
                     meta={"event": o["metadata"]["event"], "metadata": o["metadata"],
                           "role": o["role"], "runId": o["runId"], "source": None,
                           "id": o["id"], "sessionKey": o["sessionKey"]})
            for n, o in enumerate(lines)]


def _check_mindstone(store: Store) -> None:
    (s,) = all_series(store)
    assert s.session_id == "agent:default:main" and s.agent == "main"
    # the warning that wrote a handoff is a turn: a handoff is not a checkpoint
    assert [x.event for x in s.snapshots] == ["prune", "prune", "turn", "compaction",
                                              "turn", "compaction"]
    assert s.window_tokens == 200000
    assert s.checkpoint_threshold == 170000 and s.auto_compact_threshold == 184000
    good, bad = s.prunes
    assert good.preserved and good.verified and good.preserved_verified
    assert good.tokens == 70000 and good.entries_pruned == 2 and good.refs == ("e1", "e2")
    assert [store.entry(i).content for i in good.entry_ids] == ["turn 1", "turn 2"]
    assert bad.preserved is None and bad.verified is False and not bad.preserved_verified
    assert bad.refs == ("e3", "e-never-stored") and len(bad.entry_ids) == 1
    first, second = s.compactions
    assert first.pre_tokens == 186000 and first.checkpoint_before is False
    assert first.handoff_path == "/h/handoff.md" and first.handoff_written is True
    assert second.pre_tokens == 187000 and second.checkpoint_before is False
    assert [(h.action, h.token_estimate) for h in s.handoffs] == [("written", None),
                                                                  ("replayed", 900)]


def test_mindstone_events_become_prunes_compactions_and_handoffs(store: Store) -> None:
    session = NewSession(id="agent:default:main", format="mindstone")
    store.append_entries(session, _as_entries(_mindstone_lines()))
    _check_mindstone(store)
    assert store.reindex().derived["context.prunes"] == 2
    _check_mindstone(store)


def test_mindstone_file_import(store: Store, tmp_path: Path) -> None:
    from store.ingest import FILE_FORMATS

    if "mindstone" not in FILE_FORMATS:
        pytest.skip("the MindStone importer is not registered in this tree yet")
    path = tmp_path / "YWdlbnQ6ZGVmYXVsdDptYWlu.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in _mindstone_lines()),
                    encoding="utf-8")
    report = store.ingest([path])
    assert not report.errors
    _check_mindstone(store)


# -- harness API -----------------------------------------------------------------------------
def test_harness_records_and_checkpoint_before_compaction(store: Store) -> None:
    t = "2026-04-01T12:00:{:02d}Z"
    record_snapshot(store, "h1", 100_000, ts=t.format(1), window_tokens=128_000,
                    checkpoint_threshold=96_000, auto_compact_threshold=115_000,
                    segments={"identity": 2_000, "conversation": 98_000})
    cp = record_checkpoint(store, "h1", trigger="pre-compact", ts=t.format(2),
                           used_tokens=101_000, archive_verified=True)
    record_compaction(store, "h1", 101_000, ts=t.format(3), trigger="auto")
    record_snapshot(store, "h1", 20_000, ts=t.format(4))
    record_compaction(store, "h1", 118_000, ts=t.format(5))
    s = series(store, "h1")
    assert s.window_tokens == 128_000 and s.checkpoint_threshold == 96_000
    assert s.snapshots[0].segments == {"identity": 2_000, "conversation": 98_000}
    assert [c.checkpoint_before for c in s.compactions] == [True, False]
    assert s.compactions[0].checkpoint_what == f"checkpoint {cp} (pre-compact)"
    assert {c.origin for c in checkpoints(store, "h1")} == {"checkpoint", "snapshot"}
    assert store.session("h1").format == "harness"


def test_harness_prune_is_verified_against_the_store(store: Store) -> None:
    session = NewSession(id="h2", format="harness")
    ids = store.append_entries(session, [NewEntry(kind="user", content=f"line {i}",
                                                  source_key="h2", source_offset=i)
                                         for i in range(3)])
    ok = record_prune(store, "h2", 90_000, 60_000, entry_ids=ids[:2], preserved=True)
    missing = record_prune(store, "h2", 90_000, 60_000, entry_ids=[ids[2], 10**9],
                           preserved=True)
    unclaimed = record_prune(store, "h2", 90_000, 60_000, entry_ids=ids[:1])
    by_id = {p.id: p for p in series(store, "h2").prunes}
    assert by_id[ok].preserved_verified and by_id[ok].entry_ids == tuple(ids[:2])
    assert by_id[missing].verified is False and not by_id[missing].preserved_verified
    assert by_id[unclaimed].verified is True and by_id[unclaimed].preserved is None
    assert not by_id[unclaimed].preserved_verified


def test_snapshots_since_returns_only_newer_rows(store: Store) -> None:
    first = record_snapshot(store, "h3", 10)
    second = record_snapshot(store, "h3", 20, agent="worker-1")
    third = record_snapshot(store, "h3", 30)
    assert [s.id for s in snapshots_since(store, "h3", "main", 0)] == [first, third]
    assert [s.used_tokens for s in snapshots_since(store, "h3", "main", first)] == [30]
    assert snapshots_since(store, "h3", "worker-1", second) == []


def test_record_rejects_bad_values(store: Store) -> None:
    with pytest.raises(ValueError, match="used_tokens"):
        record_snapshot(store, "h4", -5)
    with pytest.raises(ValueError, match="event"):
        record_snapshot(store, "h4", 5, event="nap")
    with pytest.raises(ValueError, match="segment"):
        record_snapshot(store, "h4", 5, segments={"mood": 3})
    with pytest.raises(ValueError, match="ISO"):
        record_handoff(store, "h4", "/x", ts="yesterday")


# -- CLI -----------------------------------------------------------------------------------
def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", *args], input=stdin, check=False,
                          capture_output=True, text=True, timeout=120)


def test_cli_context_json_contract(cc_store: Store) -> None:
    done = _cli("context", "--store", str(cc_store.opened_as), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    rows = {(s["session_id"], s["agent"]): s for s in data["sessions"]}
    assert len(rows) == 5
    main = rows[(BIG, "main")]
    assert {"session_id", "agent", "window_tokens", "peak_used_tokens", "snapshots",
            "compactions", "prunes"} <= set(main)
    assert main["peak_used_tokens"] == 141_787 and main["window_tokens"] == 200_000
    assert {"ts", "used_tokens", "event"} <= set(main["snapshots"][0])
    assert main["compactions"][0]["pre_tokens"] == 142_431
    assert main["compactions"][0]["checkpoint_before"] is False
    one = json.loads(_cli("context", "--store", str(cc_store.opened_as), "--session", "ae4a77f8",
                          "--agent", "aac57f5", "--json").stdout)
    assert [(s["agent"], s["peak_used_tokens"]) for s in one["sessions"]] == [("aac57f5",
                                                                               18_893)]


def test_cli_context_record_from_stdin(tmp_path: Path) -> None:
    db = str(tmp_path / "rec.db")
    records = [
        {"session_id": "r1", "used_tokens": 150_000, "window_tokens": 200_000,
         "checkpoint_percent": 75, "ts": "2026-05-01T10:00:00Z"},
        {"type": "prune", "session_id": "r1", "tokens_before": 170_000,
         "tokens_after": 100_000, "entries_pruned": 12, "ts": "2026-05-01T10:01:00Z"},
        {"type": "checkpoint", "session_id": "r1", "trigger": "pre-compact",
         "ts": "2026-05-01T10:02:00Z"},
        {"type": "compaction", "session_id": "r1", "pre_tokens": 180_000,
         "ts": "2026-05-01T10:03:00Z"},
        {"type": "snapshot", "session_id": "r1", "used_tokens": "lots"},
    ]
    stdin = "\n".join(json.dumps(r) for r in records) + "\nnot json\n"
    done = _cli("context", "--store", db, "record", "--json", stdin=stdin)
    assert done.returncode == 1
    out = json.loads(done.stdout)
    assert [r["type"] for r in out["recorded"]] == ["snapshot", "prune", "checkpoint",
                                                   "compaction"]
    assert [e["line"] for e in out["errors"]] == [5, 6]
    shown = json.loads(_cli("context", "--store", db, "--json").stdout)["sessions"][0]
    assert shown["snapshots"][0]["used_tokens"] == 150_000
    assert shown["prunes"][0]["preserved_verified"] is False
    assert shown["prunes"][0]["entries"] == 12 and shown["prunes"][0]["tokens"] == 70_000
    assert shown["compactions"][0]["checkpoint_before"] is True
    assert shown["checkpoint_threshold"] == 150_000
    cps = json.loads(_cli("checkpoints", "--store", db, "--json").stdout)
    assert [c["trigger"] for c in cps] == ["pre-compact"]
    text = _cli("context", "--store", db, "--session", "r1").stdout
    assert "not preserved before pruning" in text
    one = _cli("context", "record", "--store", db, stdin='{"session_id": "r1", '
               '"used_tokens": 1}')
    assert one.returncode == 0 and "recorded 1" in one.stdout


# -- review fixes ----------------------------------------------------------------------------
def _two_day_lines() -> list[dict]:
    """MindStone turns on 2026-03-01 and 2026-03-02, then a compaction at 10:04 on the 2nd."""
    lines = [_line(i, "user" if i % 2 else "assistant", f"turn {i}",
                   "user_message" if i % 2 else "assistant_response", ts)
             for i, ts in enumerate(["2026-03-01T09:00:00Z", "2026-03-01T09:05:00Z",
                                     "2026-03-02T10:00:00Z", "2026-03-02T10:01:00Z"], 1)]
    lines.append(_line(5, "event", "auto-compact required", "auto_compact_required",
                       "2026-03-02T10:04:00Z", tokens=186000, action="compact",
                       contextWindowTokens=200000))
    return lines


def test_checkpoint_before_the_previous_turn_does_not_count(store: Store) -> None:
    """MindStone turns are entries, not turn snapshots: a checkpoint a day before the last
    turn (or store-wide) is not a checkpoint before the compaction; one after it is."""
    session = NewSession(id="agent:default:main", format="mindstone")
    store.append_entries(session, _as_entries(_two_day_lines()))
    done = _cli("context", "record", "--store", str(store.opened_as), "--json", stdin=json.dumps(
        {"type": "checkpoint", "session_id": "agent:default:main", "trigger": "nightly",
         "ts": "2026-03-01T09:10:00Z"}))
    assert done.returncode == 0, done.stdout + done.stderr
    record_checkpoint(store, None, trigger="store-wide", ts="2026-03-01T09:20:00Z")
    (c,) = series(store, "agent:default:main").compactions
    assert c.checkpoint_before is False and c.checkpoint_what is None
    # a checkpoint between the last turn (10:01) and the compaction (10:04) does count
    record_checkpoint(store, None, trigger="pre-compact", ts="2026-03-02T10:03:00Z")
    (c,) = series(store, "agent:default:main").compactions
    assert c.checkpoint_before is True and "(pre-compact)" in str(c.checkpoint_what)


def test_store_wide_checkpoint_long_before_a_session_without_turns(store: Store) -> None:
    record_checkpoint(store, None, ts="2026-03-01")
    record_prune(store, "p1", 190_000, 120_000, ts="2026-03-08T10:00")
    record_compaction(store, "p1", 180_000, ts="2026-03-08T10:05")
    (c,) = series(store, "p1").compactions
    assert c.checkpoint_before is False
    record_checkpoint(store, None, ts="2026-03-08T10:03")
    assert series(store, "p1").compactions[0].checkpoint_before is True


def test_a_handoff_at_the_compaction_is_not_a_checkpoint(store: Store) -> None:
    record_snapshot(store, "hf", 150_000, ts="2026-04-01T10:00:00Z")
    record_handoff(store, "hf", "/h/handoff.md", ts="2026-04-01T10:01:00Z")
    record_compaction(store, "hf", 180_000, ts="2026-04-01T10:01:00Z")
    (c,) = series(store, "hf").compactions
    assert c.checkpoint_before is False and c.handoff_written is True
    assert c.handoff_path == "/h/handoff.md" and c.to_json()["handoff_written"] is True
    text = _cli("context", "--store", str(store.opened_as), "--session", "hf").stdout
    assert "✗ no checkpoint before this compaction (handoff written)" in text


BAD_LINES = [
    {"type": "checkpoint", "session_id": "b", "entries_added": "lots"},
    {"session_id": "b", "used_tokens": 5, "agent": ["x"]},
    {"session_id": "b", "used_tokens": 5, "agent": None},
    {"session_id": "b", "used_tokens": 1e300},
    {"type": "compaction", "session_id": "b", "pre_tokens": 5, "trigger": {"a": 1}},
    {"type": "checkpoint", "session_id": "b", "memories_written": None},
    {"session_id": "b", "used_tokens": 5, "window_tokens": 0},
    {"session_id": "b", "used_tokens": 10**9},
    {"session_id": "b", "used_tokens": 5, "event": "nap"},
    {"session_id": "b", "used_tokens": 5, "ts": 20260301},
    {"type": "prune", "session_id": "b", "tokens_before": 9, "tokens_after": 1,
     "entry_ids": "1,2"},
    {"type": "handoff", "session_id": "b", "path": "/h", "action": "lost"},
    {"session_id": "b", "used_tokens": 5, "window_tokens": 100, "checkpoint_percent": {}},
    {"session_id": ["b"], "used_tokens": 5},
]


def test_record_refuses_each_bad_line_and_keeps_the_rest(tmp_path: Path) -> None:
    db = str(tmp_path / "bad.db")
    good = {"session_id": "b", "used_tokens": 7, "ts": "2026-03-01T10:00:00Z"}
    lines = [good, *BAD_LINES, {**good, "used_tokens": 8, "ts": "2026-03-01T10:01:00Z"}]
    done = _cli("context", "--store", db, "record", "--json",
                stdin="\n".join(json.dumps(o) for o in lines))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    out = json.loads(done.stdout)  # one document, always
    assert [r["line"] for r in out["recorded"]] == [1, len(lines)]
    assert [e["line"] for e in out["errors"]] == list(range(2, len(lines)))
    reasons = {e["line"]: e["reason"] for e in out["errors"]}
    assert "entries_added" in reasons[2] and "agent" in reasons[3] and "agent" in reasons[4]
    assert "used_tokens" in reasons[5] and "trigger" in reasons[6]
    assert "memories_written" in reasons[7] and "window_tokens" in reasons[8]
    assert "ISO" in reasons[11] and "checkpoint_percent" in reasons[14]
    assert out["created_sessions"] == ["b"]
    for args in (("checkpoints",), ("context",)):
        shown = _cli(*args, "--store", db, "--json")
        assert shown.returncode == 0, shown.stderr
    (s,) = json.loads(_cli("context", "--store", db, "--json").stdout)["sessions"]
    assert [x["used_tokens"] for x in s["snapshots"]] == [7, 8]
    assert json.loads(_cli("checkpoints", "--store", db, "--json").stdout) == []


@pytest.mark.sqlite_only("SQLite keeps text in an INTEGER column (type affinity); a "
                         "server refuses that write itself, so no such value is stored")
def test_reads_survive_bad_stored_values(store: Store) -> None:
    """A value stored before the checks (or by hand) is reported, never raised."""
    record_snapshot(store, "bs", 100, ts="2026-03-01T10:00:00Z")
    record_snapshot(store, "bs", 200, ts="2026-03-01T10:01:00Z")
    record_checkpoint(store, "bs", ts="2026-03-01T10:02:00Z")
    record_compaction(store, "bs", 300, ts="2026-03-01T10:03:00Z")
    with store.write() as conn:
        conn.exec_driver_sql("UPDATE checkpoint SET entries_added = 'lots'")
        conn.exec_driver_sql("UPDATE context_snapshot SET used_tokens = 'many', "
                             "segments = '{bad' WHERE used_tokens = 200")
        conn.exec_driver_sql("UPDATE compaction SET pre_tokens = 'big'")
    s = series(store, "bs")
    assert [x.used_tokens for x in s.snapshots] == [100, 0]
    assert s.compactions[0].pre_tokens is None and s.compactions[0].checkpoint_before
    assert any("used_tokens" in p and "'many'" in p for p in s.problems)
    assert any("entries_added" in p for p in s.problems)
    (row,) = checkpoints(store, "bs")
    assert row.entries_added == 0 and "entries_added" in row.problems[0]
    for args in (("checkpoints",), ("context",), ("context", "--session", "bs")):
        done = _cli(*args, "--store", str(store.opened_as))
        assert done.returncode == 0 and "warning:" in done.stderr, done.stderr
    data = json.loads(_cli("context", "--store", str(store.opened_as), "--json").stdout)
    assert data["sessions"][0]["problems"]


def test_record_resolves_session_prefixes_and_names_created_sessions(store: Store) -> None:
    full = "ae4a77f8-1b2c-4d5e-9f00-123456789abc"
    record_snapshot(store, full, 1000, ts="2026-03-01T10:00:00Z")
    record_snapshot(store, "ab12-one", 1, ts="2026-03-01T10:00:00Z")
    record_snapshot(store, "ab12-two", 1, ts="2026-03-01T10:00:00Z")
    db = str(store.opened_as)
    done = _cli("context", "record", "--store", db, "--json", stdin=json.dumps(
        {"session_id": "ae4a77f8", "used_tokens": 2000, "ts": "2026-03-01T10:01:00Z"}))
    out = json.loads(done.stdout)
    assert done.returncode == 0 and out["created_sessions"] == []
    assert [x.used_tokens for x in series(store, full).snapshots] == [1000, 2000]
    assert {s.id for s in store.sessions()} == {full, "ab12-one", "ab12-two"}
    ambiguous = json.loads(_cli("context", "record", "--store", db, "--json", stdin=json.dumps(
        {"session_id": "ab12", "used_tokens": 3})).stdout)
    assert ambiguous["recorded"] == [] and "2 sessions" in ambiguous["errors"][0]["reason"]
    new = _cli("context", "record", "--store", db, stdin=json.dumps(
        {"session_id": "brand-new", "used_tokens": 3}) + "\n" + json.dumps(
        {"session_id": "brand-new", "used_tokens": 4}))
    assert new.returncode == 0 and "created session brand-new" in new.stdout
    assert new.stdout.count("created session") == 1


def test_tail_sees_a_snapshot_updated_through_its_message_id(store: Store) -> None:
    from store.context.series import max_revision, max_snapshot_id, tail

    record_snapshot(store, "up", 1000, ts="2026-03-01T10:00:00Z", message_id="msg_1")
    current = series(store, "up")
    top, rev = max_snapshot_id(store), max_revision(store)
    record_snapshot(store, "up", 1500, ts="2026-03-01T10:00:00Z", message_id="msg_1")
    seen = tail(store, current, top, rev)
    assert not seen.rebuilt and seen.added == ()
    assert [s.used_tokens for s in seen.updated] == [1500]
    assert [s.used_tokens for s in seen.series.snapshots] == [1500]
    assert seen.max_revision > rev
    assert tail(store, seen.series, seen.max_id, seen.max_revision).updated == ()


def test_chart_marks_a_checkpoint_after_the_last_snapshot(store: Store) -> None:
    from screens.context import chart_data

    record_snapshot(store, "mk", 150_000, ts="2026-03-01T10:00:00Z")
    record_snapshot(store, "mk", 170_000, ts="2026-03-01T10:01:00Z")
    record_checkpoint(store, "mk", trigger="pre-compact", ts="2026-03-01T10:02:00Z")
    record_checkpoint(store, None, trigger="nightly", ts="2026-03-09T00:00:00Z")
    data = chart_data(series(store, "mk"))
    assert data.checkpoints == ["2026-03-01T10:02:00.000Z"]  # not the later store-wide one
    assert data.mark_positions() == [("checkpoint", 2)]
