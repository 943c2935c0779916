"""Which stored values hold user content: the one definition a text scope matches against.

A text scope (``--match`` / ``--regex``) finds, erases, redacts and marks content: what a user
or an agent wrote (an entry's text, a memory's body, a proposal's content, a recall's query,
a snapshot's segments, a handoff's path, a session's title and project). It never matches the
columns the store fills with identifiers, kinds, times, hashes, paths of the files it read or
who wrote a row — ``--match main`` must not take every entry whose ``agent`` is ``main``, nor
rewrite an enum a CHECK guards.

The definition is a deny-list: every text column of every table is content unless it is
named here as metadata (``METADATA``, or a name in ``METADATA_NAMES``; keys are never
rewritten), so a table a later capability adds is matched in full until someone classifies
its columns (``tests/store/test_privacy_scopes.py`` asks for every column of the schema to be
classified). Meta-like JSON columns (``JSON_META``: an entry's ``meta``, a session's ``meta``,
a trace's ``settings``) are matched in their string values and unknown keys, skipping the
values of keys that name a model, a usage figure, an id or a time; a memory's JSON
``front_matter`` likewise skips its dates, figures and flags (``META_KEYS``); their
other strings (MindStone's copy of the content, an attachment's file name, a tool input) are
content.
"""

from __future__ import annotations

from store.privacy.tables import TableInfo

# Column names that are metadata in any table.
METADATA_NAMES = frozenset({
    "writer", "writer_version", "created_at", "updated_at", "ts", "applied_at",
    "code_version", "queued_at", "started_at", "finished_at", "ended_at", "resolved_at",
    "decided_at", "valid_from", "valid_to", "created", "last_applied", "uuid", "parent_uuid",
    "leaf_uuid", "idem_key", "content_hash", "source_hash", "sha256", "fingerprint",
    "sensitivity", "status", "kind", "agent", "surface", "format", "channel", "origin",
    "model", "source_type", "item_type", "message_id", "tool_use_id", "external_id",
})

# Per table: its other metadata columns (ids, enums, file paths the store read, figures).
METADATA: dict[str, frozenset[str]] = {
    "audit_event": frozenset({"actor", "action", "target_kind", "target_ids", "counts"}),
    "checkpoint": frozenset({"session_id", "trigger", "source"}),
    "chunk": frozenset({"error"}),
    "claude_code_summary": frozenset({"path"}),
    "compaction": frozenset({"session_id", "trigger"}),
    "context_snapshot": frozenset({"session_id", "event"}),
    "entry": frozenset({"session_id", "source_path", "tool_name"}),
    "export": frozenset({"counts"}),
    "export_item": frozenset({"file"}),
    "handoff": frozenset({"session_id", "action"}),
    "health_scan": frozenset(),
    "health_signal": frozenset({"name"}),
    "hook_run": frozenset({"event", "session_id", "via"}),
    "import_position": frozenset({"path", "source_key"}),
    "import_problem": frozenset({"path", "field"}),
    "import_run": frozenset({"paths", "host", "counts"}),
    "import_skip": frozenset({"path", "line_type"}),
    "memory": frozenset({"type", "role", "authority", "source_file", "review_reason"}),
    "memory_flag": frozenset(),
    "proposal": frozenset({"op", "type", "targets", "proposer", "actor"}),
    "proposal_check": frozenset({"result"}),
    "proposal_decision": frozenset({"actor", "decision", "as_op", "policy", "connector"}),
    "proposal_edit": frozenset({"actor"}),
    "prune_entry": frozenset({"ref"}),
    "prune_event": frozenset({"session_id", "mode"}),
    "recall_candidate": frozenset({"session_id", "contributions", "decision", "reason"}),
    "recall_feedback": frozenset(),
    "recall_trace": frozenset({"role"}),
    "schema_migration": frozenset({"name"}),
    "session": frozenset({"id", "source"}),
    "store_meta": frozenset({"key"}),
    "supersession_link": frozenset({"source"}),
    "tombstone": frozenset({"action", "scope_kind", "counts", "actor"}),
    "erasure_fingerprint": frozenset(),
    "erasure_verification": frozenset(),
    "erasure_probe": frozenset({"name"}),
    "embed_queue": frozenset(),
    "secret_finding": frozenset({"via", "found_at", "dismissed_at", "dismissed_by"}),
    "evidence": frozenset(),
}

# JSON columns whose values are mostly bookkeeping; matched by string value and unknown key.
JSON_META = frozenset({("entry", "meta"), ("session", "meta"), ("recall_trace", "settings"),
                       ("memory", "front_matter")})
# Keys (at any depth) of those columns whose values are metadata.
META_KEYS = frozenset({
    "model", "usage", "subtype", "preTokens", "trigger", "boundary", "is_error", "block",
    "attachment", "hookEvent", "origin", "role", "runId", "id", "sessionKey", "agentId",
    "parentId", "event", "source", "version", "gitBranch", "slug", "toolUseID",
    "commandMode", "section", "platform", "isMeta", "summary", "timestamp", "type", "uuid",
    "parentUuid", "requestId", "stop_reason", "service_tier",
    # a memory's front matter: its figures, flags and dates
    "created", "last_applied", "hits", "prevented", "critical", "evergreen", "half_life_days",
    "valid_from", "valid_to", "authority", "sensitivity", "status",
})
# Keys whose own name is structure (their values may be content: ``content``, ``text``...).
KNOWN_KEYS = META_KEYS | frozenset({
    "content", "text", "metadata", "wire", "command", "filename", "path", "uri", "server",
    "hookName", "cwd", "name", "description", "tags", "projects", "query",
})


def is_content(table: str, column: str, info: TableInfo | None = None) -> bool:
    """True when ``table.column`` may hold user content (a text scope matches it)."""
    if column in METADATA_NAMES or column in METADATA.get(table, frozenset()):
        return False
    if info is not None and (column in info.keys or column not in info.text_columns):
        return False
    return not column.endswith("_id")


def content_columns(info: TableInfo) -> list[str]:
    """The text columns of a table a text scope matches, in schema order."""
    return [c for c in info.text_columns if is_content(info.name, c, info)]


def metadata_columns(info: TableInfo) -> list[str]:
    """The text columns a text scope never matches (ids, kinds, times, paths, writers)."""
    return [c for c in info.text_columns if not is_content(info.name, c, info)]


def is_json_meta(table: str, column: str) -> bool:
    return (table, column) in JSON_META
