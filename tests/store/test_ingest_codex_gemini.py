"""Codex CLI rollouts and Gemini CLI sessions (chats JSON and JSONL) imported, and
format detection that never confuses them (or Qwen Code) with Claude Code.

Two kinds of input: the project's own fixtures (``tests/data/codex-shapes/``,
``tests/data/gemini-shapes/``, ``tests/data/other-shapes/``), written for every shape, with
exact expectations; and the real files of public agent-session tools in ``../shared/data``
(read there, never copied), whose counts are checked against a counter written here from the
formats' own rules, independently of the importers.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from store import Store
from store.ingest import detect_file
from tests.conftest import CLAUDE_CODE, DATA

CODEX = DATA / "codex-shapes"
GEMINI = DATA / "gemini-shapes"
OTHER = DATA / "other-shapes"
MAIN_ID = "0199a0b1-1111-7222-8333-944445555666"
LEGACY_ID = "02f3baa6-e4d8-46ad-9590-6cd34fdd8ac1"
CHAT_ID = "5e0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
JSONL_ID = "b7d3e4f5-0000-4111-8222-933344445555"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def _kinds(store: Store, session: str, agent: str | None = None) -> list[tuple[str, str]]:
    return [(e.kind, e.content) for e in store.entries(session, agent)]


def _snapshots(store: Store, session: str) -> list[int]:
    return [p.used_tokens for p in store.series(session).snapshots]


# -- Codex fixtures ---------------------------------------------------------------------------
def test_codex_rollout_every_shape(store: Store) -> None:
    report = store.ingest([CODEX])
    assert report.errors == []
    main = store.session(MAIN_ID)
    assert (main.format, main.project) == ("codex", "/home/ana/shop")
    assert main.workers == ("codex-0199a0b2",)
    kinds = [k for k, _ in _kinds(store, MAIN_ID, "main")]
    assert kinds == ["system", "system", "user", "reasoning", "tool_call", "tool_result",
                     "tool_call", "tool_result", "tool_call", "tool_call", "event",
                     "assistant", "user", "system", "compaction", "event"]
    entries = store.entries(MAIN_ID, "main")
    # what Codex writes itself into user messages is not the person's
    assert entries[0].content.startswith("# AGENTS.md instructions")
    assert entries[1].content.startswith("<environment_context>")
    # a prompt written twice (event_msg + response_item) is stored once per turn; the same
    # words typed again in the next turn are a second prompt
    users = [e.content for e in entries if e.kind == "user"]
    assert users == ["Why does checkout fail?", "Why does checkout fail?"]
    assert [e.content for e in entries if e.kind == "assistant"] == [
        "The idempotency key was reused across retries; fixed in src/checkout.ts."]
    assert [e.content for e in entries if e.kind == "reasoning"] == [
        "**Reading the checkout code**"]
    calls = [e.tool_name for e in entries if e.kind == "tool_call"]
    assert calls == ["shell", "apply_patch", "local_shell", "web_search"]
    assert [e.content for e in entries if e.kind == "compaction"] == [
        "Summary: fixed the reused idempotency key in checkout; tests pass."]
    assert "Codex error: stream disconnected before completion" in [
        e.content for e in entries if e.kind == "system"]
    # token_count (last request's input) and 0.51's turn.completed usage are snapshots;
    # the rate-limit-only token_count is not
    assert _snapshots(store, MAIN_ID) == [15100, 16000]
    # the spawned worker's rollout is that worker's entries in the parent's session
    assert _kinds(store, MAIN_ID, "codex-0199a0b2") == [
        ("user", "List the checkout tests."), ("assistant", "tests/checkout.test.ts has 4 tests.")]
    # unknown shapes are counted, reported once a file, never an error per line
    assert report.skipped_unknown == {"brand_new_envelope": 1, "event_msg/brand_new_event": 1,
                                      "response_item/brand_new_item": 1}
    assert report.blocks_skipped_by_type == {"input_image": 1}
    assert report.skipped_by_type["event_msg/token_count (no usage: a rate-limit update)"] == 1


def test_codex_pre_0_4_layout(store: Store) -> None:
    store.ingest([CODEX])
    legacy = store.session(LEGACY_ID)
    assert legacy.project == "/home/ana/old"  # from its first <environment_context>
    assert [k for k, _ in _kinds(store, LEGACY_ID)] == [
        "system", "user", "assistant", "tool_call", "tool_result"]


def test_codex_0_89_prompt_event_before_its_turn_context(store: Store) -> None:
    sid = "019b2ea4-3333-7444-8555-c66667777888"
    report = store.ingest([CODEX / f"rollout-2025-12-18T10-00-00-{sid}.jsonl"])
    assert report.errors == [] and report.skipped_unknown == {}
    # each prompt and reply written twice is one entry; the same words said again are more
    assert [(e.kind, e.content) for e in store.entries(sid)] == [
        ("user", "Start"), ("assistant", "Ok"), ("user", "continue"), ("assistant", "Ok"),
        ("user", "continue"), ("assistant", "Ok")]


def test_codex_same_words_twice_in_a_turn_are_two_prompts(store: Store, tmp_path: Path) -> None:
    src = CODEX / f"rollout-2025-09-11T16-38-04-{LEGACY_ID}.jsonl"
    again = json.dumps({"type": "message", "role": "user",
                        "content": [{"type": "input_text", "text": "Rename the model loader."}]})
    path = tmp_path / src.name
    path.write_text(src.read_text(encoding="utf-8") + again + "\n", encoding="utf-8")
    store.ingest([path])
    users = [e.content for e in store.entries(LEGACY_ID) if e.kind == "user"]
    assert users == ["Rename the model loader.", "Rename the model loader."]


def test_codex_reimport_and_growth_add_nothing_twice(store: Store, tmp_path: Path) -> None:
    src = CODEX / f"rollout-2025-11-02T09-00-00-{MAIN_ID}.jsonl"
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    grown = tmp_path / src.name
    # cut between the event_msg user_message and the response_item repeating it
    cut = next(i for i, ln in enumerate(lines) if '"user_message"' in ln) + 1
    grown.write_text("".join(lines[:cut]), encoding="utf-8")
    store.ingest([grown])
    grown.write_text("".join(lines), encoding="utf-8")
    store.ingest([grown])
    again = store.ingest([grown])
    assert again.entries_added == 0
    users = [e.content for e in store.entries(MAIN_ID) if e.kind == "user"]
    assert users == ["Why does checkout fail?", "Why does checkout fail?"]


# -- Gemini fixtures --------------------------------------------------------------------------
def test_gemini_chats_json_every_shape(store: Store) -> None:
    report = store.ingest([GEMINI / "chats"])
    assert report.errors == []
    session = store.session(CHAT_ID)
    assert (session.format, session.title) == ("gemini", "Fix the flaky upload test")
    assert _kinds(store, CHAT_ID) == [
        ("user", "The upload test fails one run in five."),
        ("reasoning", "Reproducing: Run the test in a loop first."),
        ("assistant", "Let me look at the test."),
        ("tool_call", '{"absolute_path": "/srv/app/tests/upload.test.ts"}'),
        ("tool_result", "it('uploads', async () => { ... })"),
        ("tool_call", '{"command": "npm test"}'),
        ("tool_result", "Command exited with 1"),
        ("system", "Request cancelled."),
        ("system", "API error: quota exceeded"),
        ("assistant", "The timer is not awaited.")]
    assert _snapshots(store, CHAT_ID) == [9120]
    assert report.skipped_unknown == {"message type brand_new_type": 1,
                                      "message (string, not an object)": 1}
    assert report.blocks_skipped_by_type == {"part inlineData": 1}
    assert store.ingest([GEMINI / "chats"]).entries_added == 0


def test_gemini_chats_json_rewritten_adds_only_the_new_message(store: Store,
                                                              tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    src = next((GEMINI / "chats").glob("*.json"))
    doc = json.loads(src.read_text(encoding="utf-8"))
    target = chats / src.name
    target.write_text(json.dumps(doc), encoding="utf-8")
    store.ingest([chats])
    doc["messages"].append({"id": "c-9", "timestamp": "2025-12-01T08:09:00.000Z",
                            "type": "user", "content": "Thanks"})
    doc["summary"] = "Fixed the flaky upload test"
    target.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    report = store.ingest([chats])
    assert report.entries_added == 1
    assert store.session(CHAT_ID).title == "Fixed the flaky upload test"


def test_a_chats_file_short_of_the_header_keys_names_what_it_lacks(store: Store,
                                                                   tmp_path: Path) -> None:
    chats = tmp_path / "tmp" / "abc" / "chats"
    chats.mkdir(parents=True)
    (chats / "session-1.json").write_text(json.dumps(
        {"sessionId": "s-1", "messages": [], "title": "x"}), encoding="utf-8")
    (chats / "session-2.json").write_text(json.dumps({"startTime": "2026-01-01"}),
                                          encoding="utf-8")
    report = store.ingest([chats])
    reasons = {Path(e.path).name: e.reason for e in report.errors}
    assert reasons["session-1.json"] == (
        "not a Gemini CLI chats file (none of lastUpdated, projectHash, startTime; it has: "
        "messages, sessionId, title): not imported")
    assert reasons["session-2.json"] == (
        "not a Gemini CLI chats file (no sessionId (a string); no messages[]; it has: "
        "startTime): not imported")
    assert report.entries_added == 0


def test_gemini_jsonl_header_messages_and_set(store: Store) -> None:
    report = store.ingest([GEMINI / "session-2026-04-29T21-39-b7d3e4f5.jsonl"])
    assert report.errors == []
    session = store.session(JSONL_ID)
    assert (session.format, session.title) == ("gemini", "Say hello and list the files")
    # the message written twice is stored once
    assert _kinds(store, JSONL_ID) == [
        ("user", "Say hello and list files."), ("tool_call", '{"command": "ls -F"}'),
        ("tool_result", "README.md\nsrc/"), ("assistant", "Hello! There are README.md and src/.")]
    assert _snapshots(store, JSONL_ID) == [11855, 12069]
    assert report.skipped_unknown == {"$rewindTo update": 1}


# -- detection --------------------------------------------------------------------------------
def test_detection_never_confuses_formats() -> None:
    for path in sorted(CODEX.glob("*.jsonl")):
        assert detect_file(path) == "codex", path
    assert detect_file(GEMINI / "session-2026-04-29T21-39-b7d3e4f5.jsonl") == "gemini"
    for path in sorted(CLAUDE_CODE.glob("*.jsonl")):
        assert detect_file(path) == "claude-code", path
    for path in sorted((DATA / "mindstone").rglob("*.jsonl"))[:5]:
        assert detect_file(path) == "mindstone", path
    # Qwen Code's lines look like Claude Code's (uuid, sessionId, type) but are not
    assert detect_file(OTHER / "qwen-code-session.jsonl") is None
    # ... even when its first lines are housekeeping (type system, subtype ui_telemetry) that
    # no line of parts[] has shown to be Qwen Code's yet
    assert detect_file(OTHER / "qwen-code-telemetry-first.jsonl") is None


def test_qwen_and_unknown_files_are_reported_by_what_they_are(store: Store) -> None:
    report = store.ingest([OTHER])
    reasons = {Path(e.path).name: e.reason for e in report.errors}
    assert reasons["qwen-code-session.jsonl"].startswith("a Qwen Code session")
    assert "not read as Claude Code" in reasons["qwen-code-session.jsonl"]
    assert reasons["qwen-code-telemetry-first.jsonl"].startswith("a Qwen Code session")
    assert "its first keys: {event, at, tool}" in reasons["unknown-tool.jsonl"]
    assert report.entries_added == 0


# -- real files of public projects, against an independent counter ----------------------------
def _shared(sub: str) -> list[Path]:
    folder = SHARED / sub
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (it sits beside the clone in CI)")
    return sorted(p for p in folder.iterdir() if p.suffix in (".jsonl", ".json"))


def _count_codex(path: Path) -> Counter[str]:
    """Codex's own rules, read straight off the lines: the person's prompts are the
    ``event_msg`` ``user_message`` lines (a file without any has them only as user
    ``response_item`` messages not starting with Codex's own ``<tag>`` or ``# AGENTS.md``);
    the replies likewise from ``agent_message``; calls, outputs and compactions one a line;
    a context snapshot per token figure with input tokens."""
    c: Counter[str] = Counter()
    items = []
    events = Counter()
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        line = json.loads(raw)
        payload = line.get("payload") if isinstance(line.get("payload"), dict) else line
        kind, ptype = line.get("type"), payload.get("type")
        if kind == "event_msg":
            events[ptype] += 1
            info = payload.get("info")
            usage = (info or {}).get("last_token_usage") or (info or {}).get(
                "total_token_usage") or ({"input_tokens": info.get("prompt")}
                                         if isinstance(info, dict) and "prompt" in info
                                         else None)
            if ptype == "token_count" and usage and usage.get("input_tokens"):
                c["snapshots"] += 1
            if ptype == "turn.completed" and (payload.get("usage") or {}).get("input_tokens"):
                c["snapshots"] += 1
            # an ``event`` entry per token figure (a rate-limit update has none)
            c["event"] += (ptype == "token_count" and isinstance(usage, dict)) or (
                ptype == "turn.completed" and isinstance(payload.get("usage"), dict))
        elif kind == "compacted":
            c["compaction"] += 1
        elif kind in ("response_item", "request_item", "message", "function_call",
                      "function_call_output"):
            items.append(payload)
    for item in items:
        t = item.get("type") or ("message" if "role" in item else None)
        if t in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call",
                 "tool_search_call", "image_generation_call"):
            c["tool_call"] += 1
        elif t in ("function_call_output", "custom_tool_call_output", "tool_search_output"):
            c["tool_result"] += 1
        elif t == "message" and item.get("role") in ("user", "assistant"):
            text = "".join(b.get("text", "") for b in item.get("content") or []
                           if isinstance(b, dict))
            if item["role"] == "user" and not events["user_message"] and not \
                    text.lstrip().startswith(("<", "# AGENTS.md")):
                c["user"] += 1
            if item["role"] == "assistant" and not events["agent_message"] and text:
                c["assistant"] += 1
    c["user"] += events["user_message"]
    c["assistant"] += events["agent_message"]
    return +c


def _count_gemini(path: Path) -> Counter[str]:
    """Gemini's messages: a ``user`` one is a prompt, a ``gemini``/``model`` one with text a
    reply, ``info``/``error``/``warning`` notices; each thought, tool call and tool result
    (``result`` or ``resultDisplay``) one more; a snapshot per reply with input tokens."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        messages = json.loads(text)["messages"]
    else:
        seen: dict[str, str] = {}
        messages = []
        for raw in text.splitlines():
            line = json.loads(raw)
            if "type" in line and "id" in line and raw not in seen.values():
                seen[line["id"]] = raw
                messages.append(line)
    c: Counter[str] = Counter()
    for m in messages:
        body = m.get("content", m.get("parts"))
        said = body if isinstance(body, str) else "".join(
            p.get("text", "") for p in body or [] if isinstance(p, dict))
        if m["type"] == "user":
            c["user"] += 1
        elif m["type"] in ("gemini", "model") and said:
            c["assistant"] += 1
        elif m["type"] in ("info", "error", "warning"):
            c["system"] += 1
        c["reasoning"] += sum(1 for t in m.get("thoughts") or [] if t.get("description"))
        for call in m.get("toolCalls") or []:
            c["tool_call"] += 1
            c["tool_result"] += bool(call.get("result") or isinstance(
                call.get("resultDisplay"), str))
        c["snapshots"] += bool((m.get("tokens") or {}).get("input"))
    return +c


def _stored(store: Store, path: Path) -> Counter[str]:
    c: Counter[str] = Counter()
    sessions = set()
    for session in store.sessions():
        for e in store.entries(session.id):
            if e.source_path and Path(e.source_path).name == path.name:
                c[e.kind] += 1
                sessions.add(session.id)
    c["snapshots"] = sum(len(_snapshots(store, sid)) for sid in sessions)
    return +c


@pytest.mark.parametrize("sub", ["codex", "gemini"])
def test_real_files_match_an_independent_count(store: Store, sub: str) -> None:
    files = _shared(sub)
    projects = {p.name.split("-")[0] for p in files}
    assert len(projects) >= 2, projects  # files of at least two public projects
    for path in files:  # read where they are, one at a time: counts per file
        report = store.ingest([path])
        assert report.errors == [], (path.name, report.errors)
        expected = _count_codex(path) if sub == "codex" else _count_gemini(path)
        got = _stored(store, path)
        for kind in ("user", "assistant", "tool_call", "tool_result", "compaction",
                     "reasoning", "snapshots", "event", "system"):
            if sub == "codex" and kind in ("reasoning", "system"):
                continue  # reasoning is often encrypted only; Codex's own messages: not here
            if sub == "gemini" and kind == "event":
                continue  # Gemini writes no usage-only lines
            assert got[kind] == expected[kind], (path.name, kind, got, expected)
        assert store.ingest([path]).entries_added == 0


# -- hidden folders (``ingest ~``) -------------------------------------------------------------
def test_hidden_folders_are_walked_and_the_never_session_ones_reported(store: Store,
                                                                     tmp_path: Path) -> None:
    home = tmp_path / "home"
    rollout = CODEX / f"rollout-2025-09-11T16-38-04-{LEGACY_ID}.jsonl"
    sessions = home / ".codex" / "sessions" / "2025" / "09" / "11"
    sessions.mkdir(parents=True)
    (sessions / rollout.name).write_bytes(rollout.read_bytes())
    for never in (".git", "node_modules", "venv-x"):
        folder = home / "proj" / never
        folder.mkdir(parents=True)
        (folder / rollout.name).write_bytes(rollout.read_bytes().replace(
            LEGACY_ID.encode(), b"99999999-e4d8-46ad-9590-6cd34fdd8ac1"))
    (home / "proj" / "venv-x" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    report = store.ingest([home])
    assert report.errors == []
    assert [s.id for s in store.sessions()] == [LEGACY_ID]  # found under ~/.codex
    assert "folders that never hold sessions, not walked: .git (1), node_modules (1), " \
           "virtual environments (1)" in report.notes


def test_only_known_memory_layouts_below_the_named_folder(store: Store, tmp_path: Path) -> None:
    home = tmp_path / "home"
    blog = home / "blog"  # front matter, but a blog's: not memories
    blog.mkdir(parents=True)
    (blog / "post.md").write_text("---\ntitle: Hello\nlayout: post\n---\nHi.\n")
    (blog / "about.md").write_text("---\ntitle: About\n---\nMe.\n")
    auto = home / ".claude" / "projects" / "-srv-app" / "memory"  # Claude Code's, not MindStone's
    auto.mkdir(parents=True)
    (auto / "MEMORY.md").write_text("- build with make\n")
    mind = home / "agent" / "memories"  # MindStone's layout
    mind.mkdir(parents=True)
    (mind / "procedure_deploy.md").write_text(
        "---\nname: deploy\ndescription: how to deploy\ntype: procedure\n---\nRun make deploy.\n")
    report = store.ingest([home])
    assert report.errors == []
    # Claude Code's auto memory is recognised as such (store.ingest.claude_memory), not as
    # MindStone's: its index is a memory loaded cut at start
    assert sorted(m.name for m in store.list_memories()) == ["MEMORY.md (auto: -srv-app)",
                                                             "deploy"]
    note = next(n for n in report.notes if "no known memory layout" in n)
    assert "Markdown files of no known memory layout, skipped: 2" in note
    assert "Claude Code" not in note
    # named on the command line, a folder is taken in the layout it has
    assert store.ingest([blog]).memories_added == 2


def test_a_home_folder_with_every_harness(store: Store, tmp_path: Path) -> None:
    """``ingest ~``: ~/.claude/projects, ~/.codex/sessions and ~/.gemini/tmp, all hidden."""
    home = tmp_path / "home"
    day = home / ".codex" / "sessions" / "2025" / "11" / "02"
    day.mkdir(parents=True)
    for src in CODEX.glob("*.jsonl"):
        (day / src.name).write_bytes(src.read_bytes())
    chats = home / ".gemini" / "tmp" / ("9f2c0d7e" * 8) / "chats"
    chats.mkdir(parents=True)
    for src in [*(GEMINI / "chats").glob("*.json"), *GEMINI.glob("*.jsonl")]:
        (chats / src.name).write_bytes(src.read_bytes())
    project = home / ".claude" / "projects" / "-srv-app"
    project.mkdir(parents=True)
    for src in (DATA / "claude-code-warmup").glob("*.jsonl"):
        (project / src.name).write_bytes(src.read_bytes())
    report = store.ingest([home])
    assert report.errors == []
    by_format = sorted((s.format, s.id) for s in store.sessions())
    assert by_format == [("claude-code", "8b9c0d1e-2222-4333-8444-a55556666777"),
                         ("codex", MAIN_ID), ("codex", "019b2ea4-3333-7444-8555-c66667777888"),
                         ("codex", LEGACY_ID),
                         ("gemini", CHAT_ID), ("gemini", JSONL_ID)]
    assert store.session(MAIN_ID).workers == ("codex-0199a0b2",)
    again = store.ingest([home])
    assert (again.entries_added, again.sessions_added, again.errors) == (0, 0, [])
