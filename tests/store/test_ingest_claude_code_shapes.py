"""Claude Code transcripts as every version writes them (1.0.x to 2.1.x).

The fixtures in ``tests/data/claude-code-shapes/`` follow Claude Code's line format: inline
sidechains (1.0.x), 2.x ``attachment`` / ``permission-mode`` / ``last-prompt`` lines, a line type
nobody knows yet, a file of housekeeping lines only, ``tool_reference`` and image blocks in a
``tool_result``, empty thinking blocks, ``isMeta`` lines, ``summary`` lines, a worker file
imported before its main file and Claude Code's prompt suggester.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from sqlmodel import col, select

from store import Store
from store.core.db import orm
from store.core.models import Entry
from store.context.series import series, series_keys
from store.core.records import agent_label
from store.ingest import detect_file
from tests.conftest import CLAUDE_CODE, DATA, needs_shared_data
from widgets.fmt import agents_mark

SHAPES = DATA / "claude-code-shapes"
INLINE = SHAPES / "inline-sidechains-1.0.jsonl"
ATTACH = SHAPES / "attachments-2.1.jsonl"
MODEL_ATTACH = SHAPES / "attachments-model-2.1.jsonl"
INLINE_ID = SHAPES / "inline-agentid-1.0.jsonl"
HOUSEKEEPING = SHAPES / "housekeeping-only.jsonl"
WORKER_FIRST = SHAPES / "worker-first"
S1, S2, S3, S4, S5 = "1a2b3c4d", "2b3c4d5e", "3c4d5e6f", "4d5e6f70", "5e6f7081"
SIDE, TESTS, DOCS = "sidechain-c0ffee01", "sidechain-7e570001", "sidechain-d0c50001"


def _lines(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()]


# -- inline sidechains ------------------------------------------------------------------------
def test_inline_sidechains_are_workers_of_their_own(store: Store) -> None:
    report = store.ingest([INLINE])
    assert report.errors == []
    session = store.session(S1)
    assert session.agents == ("main", TESTS, SIDE, DOCS)
    assert session.workers == (TESTS, SIDE, DOCS) and agents_mark(session) == "main + 3 workers"
    main_user = [e.content for e in store.entries(S1, "main") if e.kind == "user"]
    assert main_user == ["Find where the config is loaded and summarise it",
                         "Now check the tests and the docs, in parallel."]
    side = store.entries(S1, SIDE)
    assert [(e.kind, e.source_line) for e in side] == [
        ("user", 4), ("tool_call", 5), ("tool_result", 6), ("assistant", 7)]
    assert side[0].content == "Search the code base for where the config is loaded."
    # parallel sidechains, their lines interleaved, each followed through parentUuid
    assert [e.content for e in store.entries(S1, TESTS)] == [
        "Check the tests for load_config.", "tests/test_config.py covers load_config."]
    assert [e.content for e in store.entries(S1, DOCS)] == [
        "Check the docs for load_config.", "docs/config.md documents load_config."]


def test_inline_sidechains_have_their_own_context_series(store: Store) -> None:
    store.ingest([INLINE])
    keys = {k.agent: k.snapshots for k in series_keys(store) if k.session_id.startswith(S1)}
    assert keys == {"main": 4, SIDE: 2, TESTS: 1, DOCS: 1}
    main = [s.used_tokens for s in series(store, store.session(S1).id, "main").snapshots]
    assert main == [15_010, 15_322, 15_730, 15_840]  # no zig-zag through the subagent's
    side = [s.used_tokens for s in series(store, store.session(S1).id, SIDE).snapshots]
    assert side == [3_004, 3_206]


def test_inline_sidechain_followed_across_an_incremental_import(store: Store,
                                                               tmp_path: Path) -> None:
    """A file read on from the middle of a sidechain: its parent lies before the new start."""
    lines = INLINE.read_text(encoding="utf-8").splitlines(keepends=True)
    live = tmp_path / "live.jsonl"
    live.write_text("".join(lines[:5]), encoding="utf-8")
    store.ingest([live])
    live.write_text("".join(lines), encoding="utf-8")
    assert store.ingest([live]).errors == []
    sid = store.session(S1).id
    assert [e.source_line for e in store.entries(sid, SIDE)] == [4, 5, 6, 7]
    assert store.session(S1).agents == ("main", TESTS, SIDE, DOCS)


def test_recall_provenance_names_the_worker(store: Store) -> None:
    store.ingest([INLINE])
    result = store.recall("tests/test_config.py covers load_config")
    labels = {c.label for c in result.trace.candidates if c.source_type == "entry"}
    assert f"assistant from {TESTS}" in labels
    assert "assistant" in labels  # the main agent's own entries keep the plain kind


# -- 2.x line types ---------------------------------------------------------------------------
def test_attachment_and_housekeeping_lines_of_2x(store: Store) -> None:
    report = store.ingest([ATTACH])
    assert report.errors == []
    entries = store.entries(S2)
    assert [(e.kind, e.source_line) for e in entries] == [
        ("system", 4),  # hook_additional_context
        ("system", 7),  # isMeta caveat
        ("user", 8),
        ("system", 9),  # task_reminder
        ("tool_call", 11),  # line 10 held an empty thinking block only
        ("tool_result", 12),
        ("reasoning", 14), ("assistant", 14), ("tool_call", 14),
        ("tool_result", 15),
        ("assistant", 17)]
    assert entries[0].content == "Project rules: run make check before every commit."
    assert entries[0].meta["attachment"] == "hook_additional_context"
    assert entries[0].meta["hookEvent"] == "SessionStart"
    assert entries[1].content.startswith("<local-command-caveat>")
    assert json.loads(entries[3].content) == {"id": "1", "subject": "List the GitHub tools",
                                              "status": "in_progress"}
    assert report.skipped_by_type == {
        "permission-mode": 1, "file-history-snapshot": 1, "attachment/hook_success": 1,
        "attachment/skill_listing": 1, "attachment/deferred_tools_delta": 1,
        "attachment/hook_additional_context (empty)": 1,
        "system/turn_duration": 1, "last-prompt": 1}
    assert report.skipped_by_design == 8  # lines; the empty thinking block is not a line
    assert report.blocks_skipped_by_type == {"thinking (empty)": 1}
    assert report.skipped_unknown == {"future-line-type": 1}
    assert any("future-line-type" in n and "not known" in n for n in report.notes)


def test_empty_thinking_skipped_and_ismeta_is_system(store: Store, tmp_path: Path) -> None:
    """The user and assistant lines of the 2.1.x fixture alone (no attachment lines)."""
    path = tmp_path / "messages.jsonl"
    path.write_text("".join(json.dumps(ln) + "\n" for ln in _lines(ATTACH)
                            if ln.get("type") in ("user", "assistant")), encoding="utf-8")
    assert store.ingest([path]).errors == []
    entries = store.entries(S2)
    assert [e.content for e in entries if e.kind == "reasoning"] == [
        "The search found one GitHub tool."]  # the empty one (a signature only) is not stored
    caveat = next(e for e in entries if e.content.startswith("<local-command-caveat>"))
    assert caveat.kind == "system" and caveat.meta["isMeta"] is True
    assert [e.content for e in entries if e.kind == "user"] == [
        "Which tools do I have for GitHub?"]


def test_tool_result_blocks_keep_what_they_say(store: Store) -> None:
    store.ingest([ATTACH])
    results = [e.content for e in store.entries(S2) if e.kind == "tool_result"]
    assert results[0] == "mcp__github__get_pr"
    image = json.loads(results[1])
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert "not stored" in image["source"]["data"]  # the base64 payload is left out
    assert not any(r.startswith("[") and r.endswith("]") for r in results)


@needs_shared_data
def test_ingest_json_and_stats_give_skipped_counts_per_type(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    env = {**os.environ, "LCA_EMBEDDER": "fallback"}

    def cli(*args: str) -> dict:  # type: ignore[type-arg]
        out = subprocess.run([sys.executable, "-m", "lca_tui.cli", "--store", str(db), *args,
                              "--json"], capture_output=True, text=True, env=env, check=True,
                             timeout=120)
        return json.loads(out.stdout)  # type: ignore[no-any-return]

    report = cli("ingest", str(ATTACH), str(CLAUDE_CODE))
    assert report["errors"] == []
    assert report["skipped"]["unknown"] == {"future-line-type": 1}
    # 1,722 progress lines, of which 25 (agent_progress) carry a worker's messages: imported
    assert report["skipped"]["by_design"]["progress"] == 1722 - 25
    assert report["skipped"]["by_design"]["attachment/hook_success"] == 1
    assert report["skipped_blocks"] == {"by_design": {"thinking (empty)": 1}, "unknown": {}}
    assert not any(k.startswith("block/") for k in report["skipped"]["by_design"])
    assert report["skipped_by_design"] == sum(report["skipped"]["by_design"].values())
    again = cli("ingest", str(ATTACH), str(CLAUDE_CODE))  # nothing new: nothing counted twice
    assert again["skipped"] == {"by_design": {}, "unknown": {}}
    assert again["skipped_blocks"] == {"by_design": {}, "unknown": {}}
    stats = cli("stats")
    assert stats["skipped"]["unknown"] == {"future-line-type": 1}
    assert stats["skipped"]["by_design"]["progress"] == 1722 - 25
    assert stats["skipped"]["by_design"]["last-prompt"] == 1
    assert not any(k.startswith("block/") for k in stats["skipped"]["by_design"])
    assert stats["skipped_blocks"] == {"by_design": {"thinking (empty)": 1}, "unknown": {}}
    text = subprocess.run([sys.executable, "-m", "lca_tui.cli", "--store", str(db), "stats"],
                          capture_output=True, text=True, env=env, check=True, timeout=120)
    assert "lines skipped, type unknown" in text.stdout and "future-line-type" in text.stdout
    totals = dict(re.findall(r"^(\S.*?)\s{2,}([\d,]+)\s*$", text.stdout, re.MULTILINE))
    lines = sum(stats["skipped"]["by_design"].values())
    assert totals["lines skipped by design"] == f"{lines:,}"  # blocks not among them
    assert totals["content blocks skipped by design"] == "1"


def test_a_rewritten_file_replaces_its_skip_counts(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copyfile(ATTACH, path)
    store.ingest([path])
    path.write_text(ATTACH.read_text(encoding="utf-8").replace("default", "plan"),
                    encoding="utf-8")
    store.ingest([path])  # read again from the start
    assert store.stats().skipped_by_design["permission-mode"] == 1
    assert store.stats().skipped_unknown == {"future-line-type": 1}


def test_lines_appended_add_to_the_skip_counts(store: Store, tmp_path: Path) -> None:
    """A hook's import of the lines appended since: their skips are added to the file's
    counts (one upsert per import), never counted twice or replacing them."""
    path = tmp_path / "s.jsonl"
    shutil.copyfile(ATTACH, path)
    store.ingest([path])
    before = store.stats()
    unknown = next(line for line in ATTACH.read_text(encoding="utf-8").splitlines()
                   if '"future-line-type"' in line)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(unknown + "\n" + unknown + "\n")
    store.ingest([path])
    store.ingest([path])  # nothing new
    after = store.stats()
    assert after.skipped_unknown == {"future-line-type": before.skipped_unknown[
        "future-line-type"] + 2}
    assert after.skipped_by_design == before.skipped_by_design


# -- a file of housekeeping only; summaries as titles -----------------------------------------
def test_a_file_of_housekeeping_lines_only(store: Store) -> None:
    assert detect_file(HOUSEKEEPING) == "claude-code"
    report = store.ingest([HOUSEKEEPING])
    assert report.errors == [] and report.sessions_added == 0 and report.entries_added == 0
    assert report.skipped_by_type == {"summary": 3, "file-history-snapshot": 1}
    assert any("nothing to import" in n for n in report.notes)


def test_latest_summary_naming_a_leaf_is_the_title(tmp_path: Path) -> None:
    from tests.conftest import make_store

    for order in ([HOUSEKEEPING, ATTACH], [ATTACH, HOUSEKEEPING]):
        s = make_store(tmp_path / f"{order[0].stem}.db")
        for path in order:  # one ingest each: summaries and sessions arrive separately
            s.ingest([path])
        assert s.session(S2).title == "GitHub tools and a PR screenshot", order
        s.close()


def test_a_summary_in_the_session_file_titles_it(store: Store) -> None:
    store.ingest([INLINE])
    assert store.session(S1).title == "Where the shop's config is loaded"


# -- workers, helpers, sources ----------------------------------------------------------------
def test_worker_file_first_then_main_sets_the_source(store: Store) -> None:
    sid = "3c4d5e6f-3333-4333-8333-000000000003"
    worker = WORKER_FIRST / sid / "subagents" / "agent-a1b2c3d.jsonl"
    store.ingest([worker])
    assert store.session(S3).source is None
    store.ingest([WORKER_FIRST / f"{sid}.jsonl"])
    assert store.session(S3).source == str(WORKER_FIRST / f"{sid}.jsonl")


@needs_shared_data
def test_claude_code_helpers_are_named_and_not_counted_as_workers(store: Store) -> None:
    assert store.ingest([WORKER_FIRST, CLAUDE_CODE]).errors == []
    s3 = store.session(S3)
    assert s3.workers == ("a1b2c3d",) and s3.helpers == ("aprompt_suggestion-5d1c2e",)
    assert agents_mark(s3) == "main + 1 worker"
    big = store.session("ae4a77f8")
    assert big.workers == ("aac57f5",) and big.helpers == ("acompact-946d2b",)
    assert agent_label("acompact-946d2b") == "compaction summariser (acompact-946d2b)"
    assert agent_label("aprompt_suggestion-5d1c2e", short=True) == "suggester"
    assert agent_label(SIDE, short=True) == "c0ffee01" and agent_label("aac57f5") == "aac57f5"


# -- everything together ----------------------------------------------------------------------
@needs_shared_data
def test_every_fixture_and_the_real_sessions_import_without_errors(store: Store) -> None:
    report = store.ingest([SHAPES, CLAUDE_CODE])
    assert report.errors == []
    again = store.ingest([SHAPES, CLAUDE_CODE])
    assert (again.entries_added, again.errors) == (0, [])
    per_session = {s.id[:8]: s.entries for s in store.sessions()}
    assert per_session[S1] == 19 and per_session[S2] == 11 and per_session[S3] == 8
    assert per_session[S4] == 18 and per_session[S5] == 6
    assert sum(per_session.values()) == 723 + 19 + 11 + 8 + 18 + 6
    blocks = sum(1 if isinstance(ln["message"]["content"], str) else len(ln["message"]["content"])
                 for ln in _lines(INLINE) if ln["type"] in ("user", "assistant"))
    assert blocks == 19  # every block of the 1.0.x file is an entry


# -- attachments the model read, blocks apart from lines, custom titles (review of issue 15) ---
def _by_attachment(store: Store, session: str) -> dict[str, list]:  # type: ignore[type-arg]
    out: dict[str, list] = {}  # type: ignore[type-arg]
    for e in store.entries(store.session(session).id):
        if "attachment" in e.meta:
            out.setdefault(e.meta["attachment"], []).append(e)
    return out


def test_attachments_the_model_read_become_entries_with_their_text(store: Store) -> None:
    report = store.ingest([MODEL_ATTACH])
    assert report.errors == []
    got = _by_attachment(store, S4)
    expected = {  # subtype → (kind, a piece of the text the model read)
        "nested_memory": ("system", "Contents of /home/dev/projects/shop/checkout/CLAUDE.md:\n\n"
                                    "Checkout tests use the fake payment gateway."),
        "opened_file_in_ide": ("system", "opened the file /home/dev/projects/shop/checkout/"
                                         "test_cart.py in the IDE"),
        "selected_lines_in_ide": ("system", "lines 40 to 41 of /home/dev/projects/shop/checkout/"
                                            "test_cart.py:\n    time.sleep(0.1)"),
        "plan_mode": ("system", '"planFilePath": "/home/dev/.claude/plans/checkout.md"'),
        "mcp_resource": ("system", "docs://checkout/gateway from server docs:\nThe fake gateway "
                                   "settles after 50 ms."),
        "diagnostics": ("system", "2:7 [Hint] \"time\" is not accessed (Pylance)"),
        "edited_text_file": ("system", "test_cart.py was modified (by the user or a linter)"),
    }
    for subtype, (kind, text) in expected.items():
        assert [e.kind for e in got[subtype]] == [kind], subtype
        assert text in got[subtype][0].content, subtype
    assert got["edited_text_file"][0].content.endswith("4\tfrom shop.clock import clock")
    assert got["edited_text_file"][0].meta["filename"].endswith("test_cart.py")
    assert "hook_cancelled" not in got  # housekeeping: nothing reached the model
    assert report.skipped_by_type["attachment/hook_cancelled"] == 1


def test_a_prompt_queued_by_the_person_is_their_user_turn(store: Store) -> None:
    from store.governance.detect import is_typed_turn, scan

    store.ingest([MODEL_ATTACH])
    queued = _by_attachment(store, S4)["queued_command"]
    human, notification = queued
    assert (human.kind, human.agent) == ("user", "main")
    assert human.content == "Also, from now on always run the checkout tests twice."
    assert human.meta == {"attachment": "queued_command", "commandMode": "prompt",
                          "origin": "human"}
    assert notification.kind == "system" and notification.meta["origin"] == "task-notification"
    assert notification.content.startswith("<task-notification>")
    entries = store.entries(store.session(S4).id)
    assert is_typed_turn(human) and not is_typed_turn(notification)
    requests = [f for f in scan(entries) if f.kind == "request"]
    assert [f.content for f in requests] == [human.content]  # the consolidation pass sees it


def test_hook_blocking_error_and_todo_reminder_are_system_entries(store: Store) -> None:
    store.ingest([MODEL_ATTACH])
    got = _by_attachment(store, S4)
    blocking = got["hook_blocking_error"][0]
    assert blocking.kind == "system"
    assert blocking.content == "ruff: checkout/test_cart.py:3: F401 'time' imported but unused"
    assert (blocking.meta["hookName"], blocking.meta["command"]) == (
        "PostToolUse:Edit", "~/.claude/hooks/lint.sh")
    todo = got["todo_reminder"][0]
    assert todo.kind == "system"
    assert json.loads(todo.content)["content"] == "Run the checkout tests twice"


def test_an_attachment_subtype_nobody_has_seen_is_skipped_unknown(store: Store) -> None:
    report = store.ingest([MODEL_ATTACH])
    assert report.errors == []
    assert report.skipped_unknown == {"attachment/brand_new_attachment_kind": 1}
    assert "attachment/brand_new_attachment_kind" not in report.skipped_by_type
    assert any("brand_new_attachment_kind" in n and "not known" in n for n in report.notes)
    assert store.stats().skipped_unknown == {"attachment/brand_new_attachment_kind": 1}


def test_skipped_blocks_are_counted_apart_from_lines(store: Store) -> None:
    report = store.ingest([MODEL_ATTACH])
    assert report.skipped_by_type == {"custom-title": 2, "attachment/hook_cancelled": 1,
                                      "last-prompt": 1, "summary": 1}
    assert report.skipped_by_design == 5  # lines only
    assert report.blocks_skipped_by_type == {"thinking (empty)": 1}
    assert report.blocks_skipped_unknown == {"future_block_kind": 1}
    note = next(n for n in report.notes if "future_block_kind" in n)
    assert "1 content block of a type not known here" in note and "its line was imported" in note
    assert "1 line" not in note
    stats = store.stats()
    assert stats.blocks_skipped_by_design == {"thinking (empty)": 1}
    assert stats.blocks_skipped_unknown == {"future_block_kind": 1}
    assert not any(k.startswith("block/") or "thinking" in k
                   for k in {**stats.skipped_by_design, **stats.skipped_unknown})


def test_a_web_search_keeps_its_query_and_results(store: Store) -> None:
    store.ingest([MODEL_ATTACH])
    line9 = [e for e in store.entries(store.session(S4).id) if e.source_line == 9]
    assert [e.kind for e in line9] == ["tool_call", "tool_result", "assistant", "tool_call"]
    search, results = line9[0], line9[1]
    assert search.tool_name == "web_search" and search.meta["block"] == "server_tool_use"
    assert json.loads(search.content) == {"query": "pytest flaky sleep fake clock"}
    with store.read() as conn, orm(conn) as s:  # the result answers the search's id
        ids = s.exec(select(Entry.tool_use_id).where(
            col(Entry.id).in_([search.id, results.id])).order_by(col(Entry.id))).all()
    assert ids == ["srvtoolu_04Web", "srvtoolu_04Web"]
    assert results.content == ("Freezing time in tests <https://example.org/freeze-time> "
                               "(2025-11-02)\nFlaky tests and sleep <https://example.org/"
                               "flaky-sleep>")
    assert results.meta["block"] == "web_search_tool_result"


def test_the_latest_custom_title_is_the_title_over_summaries(store: Store,
                                                            tmp_path: Path) -> None:
    report = store.ingest([MODEL_ATTACH])
    assert "custom-title" not in report.skipped_unknown
    assert store.session(S4).title == "Checkout: the flaky test"  # not the summary's
    later = tmp_path / "later.jsonl"  # a summary in another file, naming the session's leaf
    leaf = next(ln["leafUuid"] for ln in _lines(MODEL_ATTACH) if ln["type"] == "summary")
    later.write_text(json.dumps({"type": "summary", "summary": "Another summary",
                                 "leafUuid": leaf}) + "\n", encoding="utf-8")
    store.ingest([later])
    assert store.session(S4).title == "Checkout: the flaky test"
    live = tmp_path / "live.jsonl"  # renamed again: the file grows by a custom-title line
    shutil.copyfile(MODEL_ATTACH, live)
    store.ingest([live])
    with live.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "custom-title", "customTitle": "Checkout, renamed",
                             "sessionId": store.session(S4).id}) + "\n")
    store.ingest([live])
    assert store.session(S4).title == "Checkout, renamed"


def test_an_inline_sidechain_with_an_agent_id_is_named_by_it(store: Store) -> None:
    assert store.ingest([INLINE_ID]).errors == []
    session = store.session(S5)
    assert session.agents == ("main", "5a6b7c8d") and session.workers == ("5a6b7c8d",)
    assert session.source == str(INLINE_ID)
    side = store.entries(session.id, "5a6b7c8d")
    assert [(e.kind, e.source_line) for e in side] == [("user", 3), ("assistant", 4)]
    assert [e.content for e in store.entries(session.id, "main") if e.kind == "user"] == [
        "Which endpoints have no tests?"]  # the subagent's prompt is not the person's
    keys = {k.agent: k.snapshots for k in series_keys(store) if k.session_id == session.id}
    assert keys == {"main": 2, "5a6b7c8d": 1}


def test_helper_labels_fit_the_narrow_agent_columns() -> None:
    from store.core.records import HELPER_SHORT

    assert agent_label("acompact-946d2b", short=True) == "compactor"
    assert all(len(label) <= 9 for label in HELPER_SHORT.values())  # Transcript: 9 wide
