"""``checkpoint_noop`` on stores the real machinery wrote: the consolidation pass's checkpoints
are not embedding checkpoints, a hook checkpoint whose only new entries are blank had nothing
to embed — and a checkpoint that left new indexable entries unembedded still fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.core.writes import NewEntry, NewSession
from tests.conftest import CLAUDE_CODE, make_store, needs_shared_data
from tests.helpers_harness import run_hook, runtime_dir  # noqa: F401


def _noop(store: Store) -> Any:
    return store.health(save="never").signal("checkpoint_noop")


def test_a_consolidation_pass_is_not_an_embedding_checkpoint(cc_store: Store) -> None:
    report = cc_store.consolidate()
    assert report.checkpoint_ids, "the pass recorded its checkpoints"
    sig = _noop(cc_store)
    assert sig.status == "ok" and sig.offending == []
    # a real no-op still fails: new indexable turns stored, a checkpoint that embedded nothing
    sid = cc_store.checkpoints()[0].session_id
    cc_store.append_entries(NewSession(sid, "claude-code"), [
        NewEntry("user", "the migration must run before the deploy", sid, source_offset=10**9)])
    bad = cc_store.record_checkpoint(sid, trigger="PreCompact:auto", entries_added=1,
                                     chunks_embedded=0)
    sig = _noop(cc_store)
    assert sig.status == "fail" and [r.id for r in sig.offending] == [bad]
    assert "1 new indexable entries stored" in sig.offending[0].note


def _line(sid: str, uuid: str, kind: str, content: Any, ts: str) -> str:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=f"msg_{uuid[-4:]}", type="message", model="claude-opus-4-6")
    return json.dumps({"parentUuid": None, "isSidechain": False, "userType": "external",
                       "cwd": "/home/USER/p", "sessionId": sid, "type": kind,
                       "message": message, "uuid": uuid, "timestamp": ts}) + "\n"


@needs_shared_data
def test_hook_checkpoints_whose_new_entries_are_blank_are_not_noops(
        tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    lines = (CLAUDE_CODE / "short.jsonl").read_text(encoding="utf-8")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(lines, encoding="utf-8")
    sid = next(json.loads(line)["sessionId"] for line in lines.splitlines()
               if "sessionId" in line)
    store_path = tmp_path / "s.db"
    end = {"session_id": sid, "transcript_path": str(transcript),
           "hook_event_name": "SessionEnd", "reason": "exit"}
    run_hook("SessionEnd", end, store_path, monkeypatch, capsys)
    # an empty tool result and a whitespace-only assistant turn: stored, nothing to embed
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write(_line(sid, "aaaaaaaa-0000-4000-8000-000000000001", "user",
                       [{"type": "tool_result", "content": "", "tool_use_id": "toolu_x1"}],
                       "2026-02-10T21:20:00.000Z"))
        fh.write(_line(sid, "aaaaaaaa-0000-4000-8000-000000000002", "assistant",
                       [{"type": "text", "text": "  \n "}], "2026-02-10T21:20:01.000Z"))
    run_hook("SessionEnd", end, store_path, monkeypatch, capsys)
    s = make_store(store_path)
    try:
        ours = [c for c in s.checkpoints(sid) if c.trigger == "SessionEnd:exit"]
        assert len(ours) == 2 and ours[0].chunks_embedded == 0 and ours[0].entries_added == 2
        sig = _noop(s)
        assert sig.status == "ok" and sig.offending == [], sig.offending
        # a stale hook's checkpoint after a real turn was stored: it had work and did none
        with transcript.open("a", encoding="utf-8") as fh:
            fh.write(_line(sid, "aaaaaaaa-0000-4000-8000-000000000003", "user",
                           "keep the ledger in integer cents", "2026-02-10T21:21:00.000Z"))
        s.ingest([transcript])
        bad = s.record_checkpoint(sid, trigger="PreCompact:auto", entries_added=1,
                                  chunks_embedded=0)
        sig = _noop(s)
        assert sig.status == "fail" and [r.id for r in sig.offending] == [bad]
    finally:
        s.close()
