"""Issue 27: prompts typed while a Claude Code agent worked (2.0.x–2.1.3x), which exist only
as ``queue-operation`` ``enqueue`` lines: stored once as ``user`` entries (a queued
``<bash-notification>`` as ``system``), never twice when the same words arrive later as a
user line or a ``queued_command`` attachment; the three real sessions keep their 723 entries.
"""

from __future__ import annotations

from pathlib import Path

from store import Store
from tests.conftest import CLAUDE_CODE, DATA

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
