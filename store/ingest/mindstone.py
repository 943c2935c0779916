"""MindStone-Agent transcript NDJSON (the LCA reference implementation's wire format).

One file per session, named ``base64url(sessionKey).jsonl``; one JSON object a line with keys
``id, timestamp, sessionKey, agentId, role, text, content, source, runId, parentId, metadata``.
Every line is one entry. ``role`` maps ``user → user``, ``assistant → assistant``,
``tool → tool_result``, ``system → system``, ``event → event``; the entry's content is the
line's ``text`` (else its ``content``), and its meta is ``{"event", "metadata", "role",
"runId", "source", "id", "sessionKey"}`` (plus ``agentId``, ``parentId`` and ``content`` when
the line has them), which the derivers of context, recall, approvals and handoffs read.

Decisions where the format is silent:

- the session id is the ``sessionKey``; a line without one takes it from the file name;
- ``agentId`` names the agent that owns the session (``agent:<agentId>:…`` in the key, else
  the first ``agentId`` of the file): its lines are agent ``main``; a line whose ``agentId``
  names another agent is that worker's (LCA §4.7);
- a ``role: "event"`` line whose ``metadata.event`` is not a known type is reported with its
  file and line *and* stored as an ``event`` entry (nothing is lost; no deriver reads it);
- the entry is keyed by the line's ``id`` (when it is a non-empty string), not its byte
  offset, so a file rewritten with one line fixed adds that line alone;
- when the stored meta, content and time would not rebuild the line exactly (no ``text``, no
  ``metadata``, an epoch timestamp, keys of its own, key order…), the original line is kept
  in meta ``wire``, so that ``lca-tui export`` writes it back unchanged;
- a session key too long for a file name (more than ``MAX_NAME_CHARS`` characters of
  base64url) is written to ``sha256_<hex of the key>.jsonl``; such a name encodes nothing, so
  the importer takes the session key from the lines (every exported line has it);
- a line whose ``metadata.lca`` holds lca-tui's own record (written by ``lca-tui export``)
  is restored exactly: kind, agent, timestamp, meta, source pointers and idempotency key, so
  that importing an export into any store gives the same entries, and into the store it came
  from adds nothing.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store.core.index import sha256_text
from store.ingest import fields
from store.ingest.base import ImportContext, LineImporter
from store.core.timeutil import normalise_iso, to_iso
from store.core.writes import KINDS, NewEntry, NewSession
from store.export.wire_format import (
    LCA_KEY,
    LCA_NUMBER_FIELDS,
    LCA_TEXT_FIELDS,
    ROLE_KINDS,
    WIRE,
    native_line,
    session_key_from_name,
    wire_meta,
)

FORMAT = "mindstone"
KNOWN_EVENTS = frozenset({
    "user_message", "assistant_response", "context_window_pruned", "auto_compact_warning",
    "auto_compact_required", "memory_recall_injected", "memory_invariants_injected",
    "memory_index_injected", "approval_proposed", "approval_decided", "handoff_replayed"})


def looks_like(obj: dict[str, Any]) -> bool:
    """A MindStone-Agent line: a known role plus its session key, run id or metadata."""
    role = obj.get("role")
    return isinstance(role, str) and role in ROLE_KINDS and (
        "sessionKey" in obj or "runId" in obj or isinstance(obj.get("metadata"), dict))


def _timestamp(value: Any) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return to_iso(datetime.fromtimestamp(seconds, UTC))
        except (OverflowError, OSError, ValueError):
            return None
    return normalise_iso(value) if isinstance(value, str) else None


def line_text(obj: dict[str, Any]) -> str | None:
    """The line's ``text``, else its ``content`` as text (text blocks joined)."""
    text = obj.get("text")
    if isinstance(text, str):
        return text
    content = obj.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                parts.append(json.dumps(block, ensure_ascii=False, sort_keys=True))
        return "\n".join(parts)
    if content is not None:
        return json.dumps(content, ensure_ascii=False, sort_keys=True)
    return None


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal as written: same keys in the same order, same values."""
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


class RestoredEntry(NewEntry):
    """An entry read back from an lca-tui export: it keeps its original idempotency key."""

    restored_key: str | None = None

    @property
    def key(self) -> str:
        return self.restored_key or super().key


class MindStoneImporter(LineImporter):
    format = FORMAT

    def __init__(self) -> None:
        self._owner: dict[str, str] = {}
        self._name_key: str | None = None
        self._name_checked = False

    def source_key(self, obj: dict[str, Any]) -> str:
        return f"{FORMAT}:{obj.get('sessionKey') or self._name_key}"

    def _session_key(self, path: Path, obj: dict[str, Any]) -> str | None:
        key = obj.get("sessionKey")
        if isinstance(key, str) and key:
            return key
        if not self._name_checked:
            self._name_key, self._name_checked = session_key_from_name(path), True
        return self._name_key

    def _agent(self, key: str, agent_id: Any) -> str:
        owner = self._owner.get(key)
        if owner is None:
            parts = key.split(":")
            if len(parts) >= 3 and parts[0] == "agent" and parts[1]:
                owner = parts[1]
            elif isinstance(agent_id, str) and agent_id:
                owner = agent_id
            if owner is not None:
                self._owner[key] = owner
        if not isinstance(agent_id, str) or not agent_id or agent_id == owner:
            return "main"
        return agent_id

    def convert(self, ctx: ImportContext, path: Path, line_no: int, offset: int,
                obj: dict[str, Any]) -> tuple[NewSession | None, list[NewEntry]] | str | None:
        """The entry of one line; a string is the reason the line was not stored."""
        role = fields.text(obj, "role", required=True)
        if role not in ROLE_KINDS:
            raise fields.FieldProblem("role", f"role {role!r} is not one of "
                                      f"{', '.join(ROLE_KINDS)}")
        if ctx.optional(path, line_no, fields.text, obj, "sessionKey") is None:
            obj = {k: v for k, v in obj.items() if k != "sessionKey"}
        key = self._session_key(path, obj)
        if key is None:
            return "line has no sessionKey and the file name is not base64url(sessionKey)"
        metadata = fields.mapping(obj, "metadata")
        for name in ("id", "agentId", "runId", "parentId"):
            ctx.optional(path, line_no, fields.text, obj, name)
        ctx.optional(path, line_no, fields.mapping, obj, "source")
        ctx.optional(path, line_no, _check_timestamp, obj.get("timestamp"))
        if not isinstance(obj.get("text"), str | None):
            ctx.optional(path, line_no, fields.text, obj, "text")  # reported; content used
        if role == "event" and metadata:
            _check_event(ctx, path, line_no, metadata)
        content = line_text(obj)
        if content is None and role != "event":
            return f"{role} line has neither text nor content"
        content = content or ""
        if role == "event":
            event = (metadata or {}).get("event")
            if event is None:
                ctx.report.error(str(path), line_no, "event line has no metadata.event: "
                                 "stored as an event entry, not interpreted")
            elif event not in KNOWN_EVENTS:
                ctx.report.error(str(path), line_no, f"unknown MindStone event type {event!r}: "
                                 "stored as an event entry, not interpreted")
        ts = _timestamp(obj.get("timestamp"))
        lca = (metadata or {}).get(LCA_KEY)
        if isinstance(lca, dict):
            return self._restore(ctx, path, line_no, offset, obj, key, content, lca, ts)
        agent = self._agent(key, obj.get("agentId"))
        raw_source = obj.get("source")
        source: dict[str, Any] = raw_source if isinstance(raw_source, dict) else {}
        session = NewSession(
            id=key, format=FORMAT, agent=self._owner.get(key),
            surface=str(source.get("substrate") or "mindstone-agent"), started_at=ts,
            ended_at=ts, source=str(path), meta={"sessionKey": key})
        meta = wire_meta(obj, key)
        if not _same(native_line(meta, content, ts), obj):
            meta[WIRE] = obj
        line_id = obj.get("id")
        entry = NewEntry(
            kind=ROLE_KINDS[role], content=content, source_key=f"{FORMAT}:{key}",
            agent=agent, ts=ts, source_path=str(path),
            source_offset=offset, source_line=line_no, uuid=_str(obj.get("id")),
            parent_uuid=_str(obj.get("parentId")), tool_name=_tool_name(role, metadata),
            meta=meta, line_id=line_id if isinstance(line_id, str) and line_id else None)
        return session, [entry]

    def _restore(self, ctx: ImportContext, path: Path, line_no: int, offset: int,
                 obj: dict[str, Any], key: str, content: str, lca: dict[str, Any], ts: str | None
                 ) -> tuple[NewSession | None, list[NewEntry]] | str:
        """An entry exported by lca-tui: restore what ``metadata.lca`` records."""
        kind = fields.text(lca, "kind", "metadata.lca.kind", required=True)
        if kind not in KINDS:
            return f"metadata.lca.kind {kind!r} is not an entry kind: line skipped"
        for name in LCA_TEXT_FIELDS:
            fields.text(lca, name, f"metadata.lca.{name}")
        for name in LCA_NUMBER_FIELDS:
            fields.number(lca.get(name), f"metadata.lca.{name}", high=fields.MAX_INT)
        saved = lca.get("session")
        if isinstance(saved, dict) and saved.get("id") == key:
            session = NewSession(
                id=key, format=str(saved.get("format") or FORMAT), agent=saved.get("agent"),
                surface=saved.get("surface"), project=saved.get("project"),
                title=saved.get("title"), started_at=saved.get("started_at"),
                ended_at=saved.get("ended_at"), source=saved.get("source"),
                meta=dict(saved["meta"]) if isinstance(saved.get("meta"), dict) else {})
        else:
            session = NewSession(id=key, format=FORMAT, started_at=lca.get("ts", ts),
                                 ended_at=lca.get("ts", ts))
        restored_key = lca.get("idem_key")
        if restored_key is not None and lca.get("content_hash") != sha256_text(content):
            ctx.report.error(str(path), line_no, "text differs from the exported content hash: "
                             "imported as a new line, not as the exported entry")
            restored_key = None
        meta = lca["meta"] if isinstance(lca.get("meta"), dict) else wire_meta(obj, key)
        entry = RestoredEntry(
            kind=kind, content=content,
            source_key=str(lca.get("source_key") or f"{FORMAT}:{key}"),
            agent=str(lca.get("agent") or "main"), ts=lca.get("ts", ts),
            source_path=lca.get("source_path", str(path)),
            source_offset=lca.get("source_offset"),
            source_line=lca.get("source_line"), block=int(lca.get("block") or 0),
            uuid=lca.get("uuid"), parent_uuid=lca.get("parent_uuid"),
            message_id=lca.get("message_id"), tool_name=lca.get("tool_name"),
            tool_use_id=lca.get("tool_use_id"), meta=meta)
        if restored_key is None:
            entry.source_key, entry.source_path = f"{FORMAT}:{key}", str(path)
            entry.source_offset, entry.source_line = offset, line_no
        entry.restored_key = restored_key
        return session, [entry]


# Figures the derivers read from the bookkeeping events (store.context.derive): checked here
# so that a bad one is reported with its line; the line is stored as written (its export
# must give it back) and the deriver leaves the bad figure out.
_EVENT_TOKENS = {
    "context_window_pruned": ("tokensBefore", "tokensAfter", "contextWindowTokens",
                              "prunedEntries"),
    "auto_compact_warning": ("tokens", "contextWindowTokens"),
    "auto_compact_required": ("tokens", "contextWindowTokens"),
}
_EVENT_PERCENTS = ("checkpointWarningPercent", "compactTargetPercent", "ceilingPercent",
                   "floorPercent", "utilizationPercent")


def _check_timestamp(value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, str | int | float)):
        raise fields.FieldProblem("timestamp", f"a JSON {fields.kind(value)}, neither an "
                                  "ISO-8601 string nor epoch milliseconds")


def _check_event(ctx: ImportContext, path: Path, line_no: int, metadata: dict[str, Any]) -> None:
    """Report bad figures of a known bookkeeping event (the line is stored as written)."""
    event = metadata.get("event")
    if not isinstance(event, str):
        return
    for key in _EVENT_TOKENS.get(event, ()):
        ctx.optional(path, line_no, fields.tokens, metadata, key, f"metadata.{key}")
    if event in _EVENT_TOKENS:
        for key in _EVENT_PERCENTS:
            ctx.optional(path, line_no, fields.number, metadata.get(key), f"metadata.{key}",
                         high=10**6, integral=False)
    if event == "context_window_pruned" and metadata.get("prunedEntryIds") is not None \
            and not isinstance(metadata.get("prunedEntryIds"), list):
        ctx.optional(path, line_no, _not_list, metadata.get("prunedEntryIds"),
                     "metadata.prunedEntryIds")
    if event == "handoff_replayed" and isinstance(metadata.get("handoff"), dict):
        ctx.optional(path, line_no, fields.tokens, metadata["handoff"], "tokenEstimate",
                     "metadata.handoff.tokenEstimate")


def _not_list(value: Any, field: str) -> None:
    raise fields.FieldProblem(field, f"a JSON {fields.kind(value)}, not an array")


def _tool_name(role: str, metadata: dict[str, Any] | None) -> str | None:
    if role != "tool" or not metadata:
        return None
    name = metadata.get("toolName") or metadata.get("tool")
    return name if isinstance(name, str) else None


def _str(value: Any) -> str | None:
    return None if value is None else str(value)
