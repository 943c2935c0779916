"""Import formats, property-based: any JSON value (of any type, NaN, infinities and huge numbers
included) in any field of any import format gives a reported problem or an import, never an
exception out of ``ingest``, and the other files of the batch land.

Each example is a whole batch; 40 per format by default (the suite runs on 2 shared cores),
``LCA_PROPERTY_EXAMPLES=N`` for more. The check can fail on a field dropped silently
(``test_the_check_fails_on_a_silently_dropped_field``).
"""

from __future__ import annotations

import copy
import json
import math
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import inspect
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store import Store
from tests.conftest import make_store

EXAMPLES = int(os.environ.get("LCA_PROPERTY_EXAMPLES", "40"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
    | st.sampled_from(["[/]", "\x1b]0;t\x07", "", "2026-01-01T00:00:00Z", "user", "event"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=6)


def _has(obj: Any, path: str) -> bool:
    """Does ``obj`` have a field at ``path``? (Only a field the line had is one the importer
    reads; one added to a line of another type is an extra nobody reads.)"""
    node = obj
    for part in path.replace("[", ".[").split("."):
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(node, list) or len(node) <= index:
                return False
            node = node[index]
        else:
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
    return True


def _set(obj: Any, path: str, value: Any) -> Any:
    """``obj`` with the field at ``path`` (``a.b``, ``a[0].b``) set to ``value`` (intermediate
    objects created, a non-object on the way replaced)."""
    obj = copy.deepcopy(obj)
    parts = path.replace("[", ".[").split(".")
    node = obj
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(node, list) or len(node) <= index:
                return obj  # the path does not exist in this template: unchanged
            if last:
                node[index] = value
            else:
                if not isinstance(node[index], dict | list):
                    node[index] = {}
                node = node[index]
        else:
            if not isinstance(node, dict):
                return obj
            if last:
                node[part] = value
            else:
                if not isinstance(node.get(part), dict | list):
                    node[part] = {}
                node = node[part]
    return obj


def _good_claude(sid: str) -> str:
    return json.dumps({"type": "user", "sessionId": sid, "uuid": str(uuid.uuid4()),
                       "timestamp": "2026-01-01T00:00:00Z",
                       "message": {"role": "user", "content": "this line must land"}}) + "\n"


def _other_file(folder: Path) -> str:
    """A good file beside the hostile one: it must land whatever the other does."""
    sid = f"other-{uuid.uuid4()}"
    (folder / "zz-other").mkdir(parents=True, exist_ok=True)
    (folder / "zz-other" / "good.jsonl").write_text(_good_claude(sid))
    return sid


def _leaves(value: Any) -> list[str | int | float]:
    """What of ``value`` must be findable in the store if it landed: its strings, finite
    numbers and object keys (null and booleans say too little to look for)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, int | float):
        return [value] if math.isfinite(value) else []
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in [*_leaves(k), *_leaves(v)]]
    return [str(value)]


def _stored_text(store: Store) -> str:
    """Every text and number the store holds in its tables (virtual and index tables left
    out), one blob to search a landed value in."""
    parts: list[str] = []
    with store.read() as conn:
        # the tables of either backend (SQLite's own, index and bookkeeping tables left out)
        tables = [n for n in sorted(inspect(conn).get_table_names())
                  if not n.startswith(("sqlite", "vec", "chunk", "import", "audit"))
                  and "fts" not in n]
        for table in tables:
            for row in conn.exec_driver_sql(f'SELECT * FROM "{table}"'):
                parts.extend(str(v) for v in row if v is not None and not isinstance(v, bytes))
    return "\n".join(parts)


def _gained(leaf: str | int | float, before: str, after: str) -> bool:
    """Did the store gain an occurrence of ``leaf`` (in any form it may be stored in)?"""
    forms = {str(leaf), json.dumps(leaf), json.dumps(leaf, ensure_ascii=False)}
    if isinstance(leaf, str):
        forms |= {json.dumps(leaf)[1:-1], json.dumps(leaf, ensure_ascii=False)[1:-1],
                  leaf.encode("utf-8", "surrogatepass").decode("utf-8", "backslashreplace")}
    if isinstance(leaf, float) and leaf.is_integer() and abs(leaf) < 2**63:
        forms.add(str(int(leaf)))
    if isinstance(leaf, int) and abs(leaf) < 2**53:
        forms.add(str(float(leaf)))
    return any(after.count(f) > before.count(f) for f in forms)


def _check(store: Store, folder: Path, other: str, hostile: Path, value: Any = None) -> None:
    """The property: ``ingest`` does not raise; the other file lands; the hostile value is
    either reported (a problem naming the hostile file, or its line counted as skipped) or
    it landed — every string, number and key of it is found in the store. A field dropped
    without a word fails."""
    before = store.stats(with_embedder=False)
    text_before = _stored_text(store)
    report = store.ingest([folder])  # must not raise, whatever the field held
    assert other in {s.id for s in store.sessions()}, report.to_json()
    after = store.stats(with_embedder=False)
    landed = (after.entries > before.entries + 1 or after.memories > before.memories
              or after.checkpoints > before.checkpoints or report.memories_updated
              or report.sessions_added > 1)
    reported = (any(str(hostile) in e.path for e in report.errors)
                or any(str(hostile) in n for n in report.notes)
                or report.skipped_by_design or report.skipped_unknown)
    assert landed or reported, report.to_json()
    assert store.import_run(report.run_id).status == "done"
    if reported:
        return
    text = _stored_text(store)
    lost = [leaf for leaf in _leaves(value) if not _gained(leaf, text_before, text)]
    assert not lost, f"dropped without a problem reported: {lost!r} of {value!r}"


@pytest.fixture
def shared(tmp_path_factory: pytest.TempPathFactory) -> Store:
    s = make_store(tmp_path_factory.mktemp("props") / "s.db")
    yield s  # type: ignore[misc]
    s.close()


# -- Claude Code ----------------------------------------------------------------------------
CLAUDE_TEMPLATES = [
    {"type": "user", "sessionId": "S", "uuid": "u1", "parentUuid": None, "cwd": "/w",
     "timestamp": "2026-01-01T00:00:00Z", "version": "2.1", "gitBranch": "main",
     "isMeta": False, "message": {"role": "user", "content": "hello there"}},
    {"type": "assistant", "sessionId": "S", "uuid": "u2", "timestamp": "2026-01-01T00:00:01Z",
     "agentId": "a1", "message": {"id": "m1", "role": "assistant", "model": "claude",
                                  "stop_reason": "end_turn",
                                  "usage": {"input_tokens": 10, "output_tokens": 2,
                                            "cache_read_input_tokens": 5,
                                            "cache_creation_input_tokens": 1},
                                  "content": [{"type": "text", "text": "hi"},
                                              {"type": "tool_use", "id": "t1", "name": "Bash",
                                               "input": {"command": "ls"}}]}},
    {"type": "user", "sessionId": "S", "uuid": "u3", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "out", "is_error": False}]}},
    {"type": "system", "subtype": "compact_boundary", "sessionId": "S", "uuid": "u4",
     "content": "Conversation compacted", "compactMetadata": {"trigger": "auto",
                                                              "preTokens": 142431}},
    {"type": "user", "sessionId": "S", "uuid": "u5", "isCompactSummary": True,
     "message": {"role": "user", "content": "summary of before"}},
]
CLAUDE_FIELDS = [
    "type", "sessionId", "uuid", "parentUuid", "timestamp", "cwd", "agentId", "version",
    "gitBranch", "slug", "isMeta", "isCompactSummary", "subtype", "content",
    "compactMetadata", "compactMetadata.preTokens", "compactMetadata.trigger", "message",
    "message.id", "message.role", "message.model", "message.stop_reason", "message.content",
    "message.usage", "message.usage.input_tokens", "message.usage.output_tokens",
    "message.usage.cache_read_input_tokens", "message.usage.cache_creation_input_tokens",
    "message.content[0]", "message.content[0].type", "message.content[0].text",
    "message.content[1].name", "message.content[1].id", "message.content[1].input",
    "message.content[0].tool_use_id", "message.content[0].content",
    "message.content[0].is_error"]


@SETTINGS
@given(template=st.sampled_from(CLAUDE_TEMPLATES), field=st.sampled_from(CLAUDE_FIELDS),
       value=JSON)
def test_claude_code_any_value_in_any_field(shared: Store, tmp_path_factory: Any,
                                            template: dict, field: str, value: Any) -> None:
    folder = tmp_path_factory.mktemp("cc")
    line = _set(dict(template, sessionId=f"s-{uuid.uuid4()}"), field, value)
    hostile = folder / "hostile.jsonl"
    hostile.write_text(json.dumps(line) + "\n" + _good_claude(f"g-{uuid.uuid4()}"))
    _check(shared, folder, _other_file(folder), hostile,
           value if _has(template, field) else None)


# -- MindStone-Agent NDJSON -----------------------------------------------------------------
def _ms(role: str, text: str | None, **metadata: Any) -> dict[str, Any]:
    line: dict[str, Any] = {"id": "e1", "timestamp": "2026-01-01T00:00:00Z",
                            "sessionKey": "agent:default:main", "agentId": "default",
                            "role": role, "runId": "run_x_0000", "source": {"substrate": "cli"}}
    if text is not None:
        line["text"] = text
    line["metadata"] = metadata
    return line


MINDSTONE_TEMPLATES = [
    _ms("user", "hello", event="user_message"),
    _ms("assistant", "hi", event="assistant_response", provider="p", model="m",
        usage={"input": 3}),
    _ms("event", "Context window pruned", event="context_window_pruned", tokensBefore=9000,
        tokensAfter=5000, contextWindowTokens=10000, prunedEntries=1, prunedEntryIds=["e0"],
        ceilingPercent=92, floorPercent=70),
    _ms("event", "compact", event="auto_compact_required", tokens=9300,
        contextWindowTokens=10000, checkpointWarningPercent=85, compactTargetPercent=92,
        action="compact", handoff={"written": True, "path": "/h.md"}),
    _ms("event", "recall", event="memory_recall_injected", query="q", hitCount=1,
        hits=[{"id": "feedback_x", "title": "x", "score": 0.7, "providerScore": 0.6}]),
    _ms("event", "replayed", event="handoff_replayed",
        handoff={"path": "/h.md", "sha256": "ab", "tokenEstimate": 40}),
    _ms("assistant", "restored", lca={"kind": "assistant", "agent": "main", "block": 0,
                                      "ts": "2026-01-01T00:00:00Z", "source_offset": 0,
                                      "idem_key": "k" * 64, "content_hash": "h",
                                      "session": {"id": "agent:default:main"}}),
]
MINDSTONE_FIELDS = [
    "id", "timestamp", "sessionKey", "agentId", "role", "text", "content", "source",
    "runId", "parentId", "metadata", "metadata.event", "metadata.tokensBefore",
    "metadata.tokensAfter", "metadata.contextWindowTokens", "metadata.prunedEntries",
    "metadata.prunedEntryIds", "metadata.tokens", "metadata.checkpointWarningPercent",
    "metadata.compactTargetPercent", "metadata.handoff", "metadata.handoff.path",
    "metadata.handoff.written", "metadata.handoff.tokenEstimate", "metadata.hits",
    "metadata.hits[0]", "metadata.hits[0].score", "metadata.hits[0].id", "metadata.query",
    "metadata.lca", "metadata.lca.kind", "metadata.lca.block", "metadata.lca.ts",
    "metadata.lca.source_offset", "metadata.lca.session", "metadata.lca.meta",
    "metadata.lca.idem_key", "metadata.lca.agent"]


@SETTINGS
@given(template=st.sampled_from(MINDSTONE_TEMPLATES), field=st.sampled_from(MINDSTONE_FIELDS),
       value=JSON)
def test_mindstone_any_value_in_any_field(shared: Store, tmp_path_factory: Any,
                                          template: dict, field: str, value: Any) -> None:
    folder = tmp_path_factory.mktemp("ms")
    key = f"agent:default:{uuid.uuid4()}"
    line = _set(dict(template, sessionKey=key), field, value)
    good = dict(MINDSTONE_TEMPLATES[0], sessionKey=key, id="good")
    hostile = folder / "hostile.jsonl"
    hostile.write_text(json.dumps(line) + "\n" + json.dumps(good) + "\n")
    _check(shared, folder, _other_file(folder), hostile,
           value if _has(template, field) else None)


# -- memory directories ---------------------------------------------------------------------
MEMORY_FIELDS = ["name", "description", "type", "tags", "projects", "hits", "prevented",
                 "last_applied", "created", "half_life_days", "critical", "evergreen",
                 "status", "author", "date", "supersedes", "invariant", "role", "authority",
                 "sensitivity", "valid_from", "valid_to", "metadata"]


@SETTINGS
@given(field=st.sampled_from(MEMORY_FIELDS), value=JSON)
def test_memory_dir_any_value_in_any_front_matter_key(shared: Store, tmp_path_factory: Any,
                                                      field: str, value: Any) -> None:
    folder = tmp_path_factory.mktemp("mem")
    mem = folder / "memories"
    mem.mkdir()
    front = {"name": f"m-{uuid.uuid4()}", "description": "d", "type": "feedback",
             "tags": ["a"], "hits": 1, "created": "2026-01-01", field: value}
    hostile = mem / "feedback_hostile.md"
    hostile.write_text("---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\nBody.\n")
    (mem / "feedback_good.md").write_text(f"---\nname: good-{uuid.uuid4()}\ntype: feedback\n"
                                          "---\nA good memory.\n")
    _check(shared, folder, _other_file(folder), hostile, value)


# -- ACP ------------------------------------------------------------------------------------
ACP_FIELDS = ["agentId", "heartbeat", "soulHash", "platform", "model"]


@SETTINGS
@given(field=st.sampled_from(ACP_FIELDS), value=JSON)
def test_acp_any_value_in_any_state_field(shared: Store, tmp_path_factory: Any, field: str,
                                          value: Any) -> None:
    folder = tmp_path_factory.mktemp("acp")
    agent = folder / "agent"
    (agent / "journal").mkdir(parents=True)
    (agent / "SOUL.md").write_text("# Soul\n\nWho I am.\n")
    state = {"agentId": f"a-{uuid.uuid4()}", "heartbeat": 3, "soulHash": None,
             "platform": "cli", field: value}
    (agent / "state.json").write_text(json.dumps(state))
    hostile = agent / "journal" / "2026-01-01.md"
    hostile.write_text("# Day\n\n## 09:30 work\n\nDid a thing.\n")
    _check(shared, folder, _other_file(folder), agent, value)


# -- lca-tui exports ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real export with a session, memories, evidence, a checkpoint and a recall trace."""
    root = tmp_path_factory.mktemp("export")
    mem = root / "mem"
    mem.mkdir()
    (mem / "feedback_a.md").write_text("---\nname: a\ntype: feedback\n---\nUse the lock.\n")
    (mem / "feedback_b.md").write_text("---\nname: b\ntype: feedback\nsupersedes: a\n---\n"
                                       "Use the lock, briefly.\n")
    (mem / "LOG.md").write_text("### Auto-archive — 2026-01-01T00:00:00Z\n"
                                "- Transcript chunks vectorized: 3\n")
    (root / "t.jsonl").write_text(_good_claude("exported"))
    s = make_store(root / "s.db")
    s.ingest([mem, root / "t.jsonl"])
    s.recall("the lock")
    s.export(root / "out")
    s.close()
    return root / "out"


EXPORT_FIELDS = [
    "sessions", "sessions[0]", "sessions[0].id", "sessions[0].file", "sessions[0].meta",
    "sessions[0].started_at", "sessions[0].format", "memories", "memories[0]",
    "memories[0].name", "memories[0].body", "memories[0].tags", "memories[0].ref",
    "memories[0].hits", "memories[0].half_life_days", "memories[0].source_file",
    "memories[0].content_hash", "evidence", "evidence[0].memory", "evidence[0].span_start",
    "evidence[0].entry", "evidence[0].note", "lineage", "lineage[0].memory",
    "lineage[0].supersedes", "checkpoints", "checkpoints[0].ts", "checkpoints[0].session",
    "checkpoints[0].chunks_embedded", "recall_traces", "recall_traces[0].query",
    "recall_traces[0].ts", "recall_traces[0].settings", "recall_traces[0].candidates",
    "recall_traces[0].candidates[0].rank", "recall_traces[0].candidates[0].source_id",
    "recall_traces[0].latency_ms", "recall_traces[0].rerun_of"]


@SETTINGS
@given(field=st.sampled_from(EXPORT_FIELDS), value=JSON)
def test_export_any_value_in_any_manifest_field(tmp_path_factory: Any, export_dir: Path,
                                                field: str, value: Any) -> None:
    folder = tmp_path_factory.mktemp("exp")
    target = folder / "export"
    shutil.copytree(export_dir, target)
    manifest = json.loads((target / "manifest.json").read_text())
    (target / "manifest.json").write_text(json.dumps(_set(manifest, field, value)))
    fresh = make_store(folder / "s.db")  # an export into a store that has it adds nothing
    try:
        _check(fresh, folder, _other_file(folder), target,
               value if _has(manifest, field) else None)
    finally:
        fresh.close()


def test_the_check_fails_on_a_silently_dropped_field(shared: Store, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The property's teeth: an importer that drops ``message.model`` without a word fails
    ``_check``; the real importer passes the same example."""
    import store.ingest.claude_code as cc

    def example(name: str) -> tuple[Path, str, Path]:
        folder = tmp_path / name
        folder.mkdir()
        line = _set(dict(CLAUDE_TEMPLATES[1], sessionId=f"s-{uuid.uuid4()}"),
                    "message.model", "model-zq81")
        hostile = folder / "hostile.jsonl"
        hostile.write_text(json.dumps(line) + "\n" + _good_claude(f"g-{uuid.uuid4()}"))
        return folder, _other_file(folder), hostile

    folder, other, hostile = example("real")
    _check(shared, folder, other, hostile, "model-zq81")  # the real importer keeps it
    real = cc._checked

    def dropping(ctx, path, line_no, obj):  # type: ignore[no-untyped-def]
        out, dropped = real(ctx, path, line_no, obj)
        out["message"] = {k: v for k, v in out["message"].items() if k != "model"}
        return out, dropped

    monkeypatch.setattr(cc, "_checked", dropping)
    folder, other, hostile = example("dropping")
    with pytest.raises(AssertionError, match="dropped without a problem reported"):
        _check(shared, folder, other, hostile, "model-zq81")
