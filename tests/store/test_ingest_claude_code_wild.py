"""Claude Code sessions as found in the wild.

- prompts typed while the agent worked (2.0.x–2.1.3x), which exist only as
  ``queue-operation`` ``enqueue`` lines: stored once as ``user`` entries (a queued
  ``<bash-notification>`` as ``system``), never twice when the same words arrive later as a
  user line or a ``queued_command`` attachment; the three real sessions keep their 723 entries;
- 2.0.x "Warmup" sidechains named as the harness's own, not workers;
- the title is the summary whose leaf is latest, whatever the import order;
- a synthetic API-error reply with zero usage gives no context snapshot.
"""

from __future__ import annotations

import json
from pathlib import Path

from store import Store
from tests.conftest import CLAUDE_CODE, DATA, needs_shared_data

QUEUE = DATA / "claude-code-queue"
SID = "7a8b9c0d-1111-4222-8333-944445555666"
FILE = QUEUE / f"{SID}.jsonl"


def _said(store: Store) -> list[tuple[str, str]]:
    return [(e.kind, e.content) for e in store.entries(SID)]


def test_enqueued_prompts_are_stored_once(store: Store) -> None:
    report = store.ingest([QUEUE])
    assert report.errors == []
    said = _said(store)
    # the prompt that never arrived otherwise is the person's words
    assert said.count(("user", "also keep the old endpoint working")) == 1
    # the queued slash command and the queued_command attachment are the later lines only
    assert [c for k, c in said if "compact" in c] == [
        "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
        "<command-args></command-args>"]
    assert said.count(("user", "and add a test")) == 1
    # a queued bash notification is the harness's
    assert [k for k, c in said if c.startswith("<bash-notification>")] == ["system"]
    assert len(said) == 7
    # 8 queue-operation lines: the 2 enqueue lines stored as entries are not also skips
    assert report.skipped_by_type["queue-operation"] == 6
    assert store.ingest([QUEUE]).entries_added == 0


def test_a_hook_import_mid_queue_does_not_store_the_prompt_twice(store: Store,
                                                                 tmp_path: Path) -> None:
    lines = FILE.read_text(encoding="utf-8").splitlines(keepends=True)
    grown = tmp_path / FILE.name
    cut = next(i for i, ln in enumerate(lines) if '"and add a test"' in ln) + 1
    grown.write_text("".join(lines[:cut]), encoding="utf-8")
    store.ingest([grown], defer=True)  # a hook on the live session: the words may still come
    assert ("user", "and add a test") not in _said(store)
    grown.write_text("".join(lines), encoding="utf-8")
    store.ingest([grown])
    said = _said(store)
    assert said.count(("user", "and add a test")) == 1
    assert said.count(("user", "also keep the old endpoint working")) == 1
    assert len(said) == 7


def test_a_queued_prompt_is_not_dropped_by_a_later_prompt_that_merely_contains_it(
        store: Store, tmp_path: Path) -> None:
    sid = "9c0d1e2f-3333-4444-8555-b66667777888"

    def user(n: int, content: str) -> dict[str, object]:
        return {"parentUuid": None, "isSidechain": False, "userType": "external",
                "cwd": "/srv/app", "sessionId": sid, "version": "2.0.76", "type": "user",
                "message": {"role": "user", "content": content},
                "uuid": f"u000000{n}-0000-4000-8000-00000000000{n}",
                "timestamp": f"2025-12-20T10:00:0{n}.000Z"}

    def enqueue(n: int, content: str) -> dict[str, object]:
        return {"type": "queue-operation", "operation": "enqueue", "sessionId": sid,
                "timestamp": f"2025-12-20T10:00:0{n}.500Z", "content": content}

    lines = [user(1, "Refactor the upload handler."),
             enqueue(1, "yes"),                    # its letters are in line 2's words only
             enqueue(1, "fix  the\nflaky test"),   # arrives with other whitespace
             enqueue(1, "/mcp"),                   # arrives as the command form
             enqueue(1, "/review src"),            # a command whose args differ: not it
             user(2, "why did yesterday's deploy fail?"),
             user(3, "fix the flaky test"),
             user(4, "<command-name>/mcp</command-name>\n<command-message>mcp"
                     "</command-message>\n<command-args></command-args>"),
             user(5, "<command-name>/review</command-name>\n<command-message>review"
                     "</command-message>\n<command-args>tests</command-args>")]
    path = tmp_path / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    assert store.ingest([path]).errors == []
    said = [(e.kind, e.content) for e in store.entries(sid)]
    assert said.count(("user", "yes")) == 1
    assert said.count(("user", "/review src")) == 1
    assert said.count(("user", "fix the flaky test")) == 1
    assert not [c for _, c in said if c.startswith("fix  the")]
    assert ("user", "/mcp") not in said
    assert len(said) == 7


@needs_shared_data
def test_the_real_sessions_keep_their_723_entries(store: Store) -> None:
    report = store.ingest([CLAUDE_CODE])
    assert report.errors == []
    assert sum(s.entries for s in store.sessions()) == 723  # their queued /mcp arrives later


# -- Claude Code 2.0.x "Warmup" sidechains ------------------------------------------------------
WARMUP = DATA / "claude-code-warmup"
WARM_SID = "8b9c0d1e-2222-4333-8444-a55556666777"


def test_warmup_sidechains_are_the_harness_own_not_workers(store: Store) -> None:
    from store.core.records import agent_label

    report = store.ingest([WARMUP])
    assert report.errors == []
    session = store.session(WARM_SID)
    assert set(session.agents) == {"main", "warmup-w1000000", "warmup-5f3e2a1b"}
    assert session.workers == ()
    assert agent_label("warmup-5f3e2a1b") == "warmup sidechain (warmup-5f3e2a1b)"
    assert agent_label("warmup-5f3e2a1b", short=True) == "warmup"
    assert [e.content for e in store.entries(WARM_SID, "warmup-5f3e2a1b")] == ["Warmup", "Ready."]


def test_a_warmup_file_resumed_after_its_first_line_stays_one_agent(store: Store,
                                                                    tmp_path: Path) -> None:
    src = WARMUP / "agent-5f3e2a1b.jsonl"
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    grown = tmp_path / src.name
    grown.write_text(lines[0], encoding="utf-8")
    store.ingest([grown])
    grown.write_text("".join(lines), encoding="utf-8")
    store.ingest([grown])
    assert store.session(WARM_SID).agents == ("warmup-5f3e2a1b",)


# -- titles: the summary naming the latest leaf, whatever the import order ---------------------
def test_title_is_the_summary_of_the_latest_leaf_in_any_import_order(tmp_path: Path) -> None:
    from tests.conftest import make_store

    attach = DATA / "claude-code-shapes" / "attachments-2.1.jsonl"
    sid = "2b3c4d5e-2222-4222-8222-000000000002"
    early, late = tmp_path / "early.jsonl", tmp_path / "late.jsonl"
    early.write_text(json.dumps({"type": "summary", "summary": "Early title",
                                 "leafUuid": "00000000-bbbb-4bbb-8bbb-000000000006"}) + "\n")
    late.write_text(json.dumps({"type": "summary", "summary": "Late title",
                                "leafUuid": "00000000-bbbb-4bbb-8bbb-000000000015"}) + "\n")
    for order in ([attach, late, early], [attach, early, late], [late, attach, early],
                  [early, late, attach]):
        s = make_store(tmp_path / f"{'-'.join(p.stem for p in order)}.db")
        for path in order:
            s.ingest([path])
        assert s.session(sid).title == "Late title", [p.name for p in order]
        s.close()


# -- API-error replies --------------------------------------------------------------------------
def test_a_synthetic_api_error_reply_is_stored_without_a_snapshot(store: Store,
                                                                 tmp_path: Path) -> None:
    sid = "9c0d1e2f-3333-4444-8555-b66667777888"
    base = {"sessionId": sid, "version": "2.1.20", "cwd": "/srv", "isSidechain": False,
            "userType": "external"}
    lines = [
        {**base, "type": "user", "uuid": "e0000000-0000-4000-8000-000000000001",
         "parentUuid": None, "timestamp": "2026-01-10T10:00:00.000Z",
         "message": {"role": "user", "content": "Summarise the log."}},
        {**base, "type": "assistant", "uuid": "e0000000-0000-4000-8000-000000000002",
         "parentUuid": "e0000000-0000-4000-8000-000000000001", "isApiErrorMessage": True,
         "timestamp": "2026-01-10T10:00:03.000Z",
         "message": {"id": "msg_err", "role": "assistant", "model": "<synthetic>",
                     "content": [{"type": "text", "text": "API Error: 529 Overloaded"}],
                     "usage": {"input_tokens": 0, "output_tokens": 0,
                               "cache_creation_input_tokens": 0,
                               "cache_read_input_tokens": 0}}}]
    path = tmp_path / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(ln) + "\n" for ln in lines), encoding="utf-8")
    assert store.ingest([path]).errors == []
    assert [(e.kind, e.content) for e in store.entries(sid)][-1] == (
        "assistant", "API Error: 529 Overloaded")
    assert store.series(sid).snapshots == ()


# -- a Task worker whose subagents/ file is missing ---------------------------------------------
@needs_shared_data
def test_a_worker_seen_only_in_progress_lines_is_imported_once(tmp_path: Path) -> None:
    import shutil

    from tests.conftest import BIG_SESSION, make_store

    sid = BIG_SESSION.stem
    worker_file = BIG_SESSION.parent / sid / "subagents" / "agent-aac57f5.jsonl"
    progress = set()
    for number, raw in enumerate(BIG_SESSION.read_text(encoding="utf-8").splitlines(), 1):
        line = json.loads(raw)
        if line.get("type") == "progress" and line["data"].get("type") == "agent_progress":
            progress.add(number)
    assert len(progress) == 25
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(BIG_SESSION, alone / BIG_SESSION.name)
    s = make_store(tmp_path / "a.db")
    assert s.ingest([alone]).errors == []
    worker = s.entries(sid, "aac57f5")
    # the worker's messages, from its orchestrator's progress lines
    assert {e.source_line for e in worker} == progress
    assert "aac57f5" in s.session(sid).workers
    s.ingest([worker_file])  # the worker file turns up later: nothing twice
    both = s.session(sid).entries
    s.close()
    full = make_store(tmp_path / "b.db")
    full.ingest([worker_file])  # the other order: worker file first
    full.ingest([BIG_SESSION])
    assert full.session(sid).entries == both
    full.close()
    ref = make_store(tmp_path / "c.db")
    ref.ingest([BIG_SESSION, worker_file])
    assert ref.session(sid).entries == both
    ref.close()
