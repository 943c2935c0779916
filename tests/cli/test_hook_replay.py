"""A real Claude Code session played through the hooks: its lines fed into a growing file in
pieces, ``UserPromptSubmit`` after each piece, ``PreCompact`` at the compaction, ``SessionEnd``
at the end — and the store ends up as a one-shot import of the same files would."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from store import Store
from tests.conftest import BIG_SESSION, make_store, needs_shared_data
from tests.helpers_harness import check_hook_output, run_hook, runtime_dir  # noqa: F401

SESSION = BIG_SESSION.stem
WORKERS = BIG_SESSION.parent / SESSION / "subagents"
QUESTIONS = ("which tests failed last time", "how is the transcript parsed",
             "what did we decide about the hex packages", "where is the session list rendered")


def _prompt_of(line: bytes) -> str | None:
    obj = json.loads(line)
    if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isCompactSummary"):
        return None
    content = obj["message"]["content"]
    if isinstance(content, str):
        return content
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return texts[0] if texts else None


def _rows(store: Store) -> tuple[Counter[tuple[Any, ...]], dict[str, list[Any]]]:
    """Every entry, as a one-shot import would store it (its path aside), and each agent's
    entries in order."""
    with store.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT session_id, agent, kind, content_hash, uuid, block, ts, source_line, "
            "source_offset, tool_name, tool_use_id, message_id, meta, idem_key, tokens "
            "FROM entry ORDER BY seq").all()
    order: dict[str, list[Any]] = {}
    for r in rows:
        order.setdefault(r[1], []).append((r[4], r[5]))
    return Counter(tuple(r) for r in rows), order


def _derived(store: Store) -> tuple[Counter[tuple[Any, ...]], Counter[tuple[Any, ...]]]:
    with store.read() as conn:
        snaps = conn.exec_driver_sql(
            "SELECT session_id, agent, ts, used_tokens, event FROM context_snapshot").all()
        compactions = conn.exec_driver_sql(
            "SELECT session_id, agent, ts, pre_tokens, trigger FROM compaction").all()
    return Counter(map(tuple, snaps)), Counter(map(tuple, compactions))


def _chunks(store: Store) -> list[tuple[Any, ...]]:
    with store.read() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(
            "SELECT e.idem_key, c.span_start, c.span_end, c.status, c.lexical_only FROM chunk c "
            "JOIN entry e ON c.source_type = 'entry' AND e.id = c.source_id "
            "ORDER BY e.idem_key, c.span_start").all()]


@needs_shared_data
def test_a_real_session_played_through_the_hooks(tmp_path: Path, runtime_dir: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    lines = BIG_SESSION.read_bytes().splitlines(keepends=True)
    boundary = next(i for i, line in enumerate(lines)
                    if b'"compact_boundary"' in line and b'"system"' in line)
    prompts = {i: p for i, line in enumerate(lines) if (p := _prompt_of(line))}
    cuts = sorted({*range(150, len(lines), 150), *prompts, boundary, boundary + 1})
    project = tmp_path / "projects" / "-home-user-spotter"
    transcript = project / f"{SESSION}.jsonl"
    workers = project / SESSION / "subagents"
    workers.mkdir(parents=True)
    transcript.write_bytes(b"")
    worker = (WORKERS / "agent-aac57f5.jsonl").read_bytes().splitlines(keepends=True)
    store_path = tmp_path / "live.db"
    base = {"session_id": SESSION, "transcript_path": str(transcript),
            "cwd": "/home/USER/projects/spotter-worktrees/spotter-4te",
            "permission_mode": "default"}
    outputs: list[str] = []
    written = 0

    def feed(upto: int, half_line: bool = False) -> None:
        nonlocal written
        with transcript.open("ab") as fh:
            fh.write(b"".join(lines[written:upto]))
            if half_line:  # Claude Code is in the middle of writing the next line
                fh.write(lines[upto][: len(lines[upto]) // 2])
        written = upto

    for n, cut in enumerate(cuts):
        half = n % 5 == 3 and cut not in prompts and cut != boundary
        feed(cut, half)
        if half:  # complete the half-written line now, as Claude Code would
            with transcript.open("ab") as fh:
                fh.write(lines[cut][len(lines[cut]) // 2:])
            written = cut + 1
        if n == len(cuts) // 3:
            (workers / "agent-aac57f5.jsonl").write_bytes(b"".join(worker[: len(worker) // 2]))
        if n == len(cuts) // 2:
            (workers / "agent-aac57f5.jsonl").write_bytes(b"".join(worker))
        if cut == boundary:
            out = run_hook("PreCompact", {**base, "hook_event_name": "PreCompact",
                                          "trigger": "manual", "custom_instructions": ""},
                           store_path, monkeypatch, capsys)
            assert out == ""
            shutil.copy(WORKERS / "agent-acompact-946d2b.jsonl", workers)
            continue
        prompt = prompts.get(cut, QUESTIONS[n % len(QUESTIONS)])
        outputs.append(run_hook("UserPromptSubmit", {**base, "hook_event_name":
                                                     "UserPromptSubmit", "prompt": prompt},
                                store_path, monkeypatch, capsys))
    feed(len(lines))
    assert run_hook("Stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False},
                    store_path, monkeypatch, capsys) == ""
    assert run_hook("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "exit"},
                    store_path, monkeypatch, capsys) == ""

    docs = [check_hook_output(out) for out in outputs]
    assert len(outputs) > 15 and any(docs)

    once = make_store(tmp_path / "once.db")
    report = once.ingest([BIG_SESSION, WORKERS])
    assert report.errors == []
    live = make_store(store_path)
    assert _rows(live) == _rows(once)
    assert _derived(live) == _derived(once)
    assert live.waiting() == 0 and _chunks(live) == _chunks(once)

    with live.read() as conn:
        checkpoints = conn.exec_driver_sql(
            "SELECT trigger, status, entries_added, chunks_embedded, archive_verified, "
            "index_verified FROM checkpoint WHERE session_id = ? ORDER BY id",
            (SESSION,)).all()
        runs = conn.exec_driver_sql(
            "SELECT event, status, COUNT(*) FROM hook_run GROUP BY event, status").all()
    ours = [c for c in checkpoints if c[0] != "consolidation"]
    assert [c[0] for c in ours] == ["PreCompact:manual", "SessionEnd:exit"]
    assert len(checkpoints) - len(ours) == 2  # the consolidation pass ran at each
    for trigger, status, added, embedded, archived, indexed in ours:
        assert (status, archived, indexed) == ("ok", 1, 1), trigger
        assert added > 0 and embedded > 0
    assert {(e, s) for e, s, _ in runs} == {("UserPromptSubmit", "ok"), ("PreCompact", "ok"),
                                            ("Stop", "ok"), ("SessionEnd", "ok")}
    live.close()
    once.close()
