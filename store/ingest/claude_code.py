"""Claude Code session JSONL (``~/.claude/projects/*/*.jsonl`` and ``subagents/*.jsonl``).

The rules (DESIGN "Getting data in"): ``user``/``assistant`` lines give one entry per content
block (``text`` → user/assistant, ``thinking`` → reasoning, ``tool_use`` → tool_call,
``tool_result`` → tool_result; a string content is one block); a user line with
``isCompactSummary`` is a ``compaction`` (the summary); ``system`` lines give ``compaction``
for ``compact_boundary`` (``preTokens`` kept) and ``system`` for ``local_command``; other
system subtypes and ``progress``, ``file-history-snapshot``, ``queue-operation`` and
``summary`` lines are skipped by design. Worker transcripts carry their ``agentId``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store.ingest import fields
from store.ingest.base import ImportContext, LineImporter
from store.core.timeutil import normalise_iso
from store.core.writes import NewEntry, NewSession

FORMAT = "claude-code"
SKIPPED_TYPES = {"progress", "file-history-snapshot", "queue-operation", "summary"}
ENTRY_SYSTEM_SUBTYPES = {"compact_boundary": "compaction", "local_command": "system"}
KNOWN_TYPES = SKIPPED_TYPES | {"user", "assistant", "system"}
_BLOCK_KINDS = {"thinking": "reasoning", "tool_use": "tool_call", "tool_result": "tool_result"}
_SKIPPED_BLOCKS = {"image", "document", "redacted_thinking"}


def looks_like(obj: dict[str, Any]) -> bool:
    kind = obj.get("type")
    return "sessionId" in obj or (isinstance(kind, str) and kind in KNOWN_TYPES
                                  and "uuid" in obj)


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _tool_result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'block')}]")
            else:
                parts.append(str(block))
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


USAGE_TOKENS = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                "cache_read_input_tokens")


def _usage(ctx: ImportContext, path: Path, line_no: int, message: dict[str, Any]
           ) -> dict[str, Any] | None:
    """``message.usage`` with its token figures checked (whole numbers from 0 below 10^9); a
    bad figure is reported and left out, the others kept."""
    usage = ctx.optional(path, line_no, fields.mapping, message, "usage", "message.usage")
    if usage is None:
        return None
    bad = [key for key in USAGE_TOKENS if ctx.optional(
        path, line_no, fields.tokens, usage, key, f"message.usage.{key}") is None
        and usage.get(key) is not None]
    return {k: v for k, v in usage.items() if k not in bad}


class ClaudeCodeImporter(LineImporter):
    format = FORMAT

    def source_key(self, obj: dict[str, Any]) -> str:
        return f"{FORMAT}:{obj.get('sessionId')}:{obj.get('agentId') or 'main'}"

    def convert(self, ctx: ImportContext, path: Path, line_no: int, offset: int,
                obj: dict[str, Any]) -> tuple[NewSession | None, list[NewEntry]] | str | None:
        """Entries of one line; a string is an error reason; None is skipped by design."""
        kind = fields.text(obj, "type", required=True)
        if kind in SKIPPED_TYPES:
            return None
        if kind not in KNOWN_TYPES:
            return f"unknown Claude Code line type {kind!r}"
        session_id = fields.text(obj, "sessionId", required=True, empty_ok=False) or ""
        checked = ctx.optional  # a bad optional field is reported and left out
        ts = normalise_iso(checked(path, line_no, fields.text, obj, "timestamp"))
        agent = checked(path, line_no, fields.text, obj, "agentId") or "main"
        is_main = agent == "main"
        session = NewSession(
            id=session_id, format=FORMAT, agent="claude-code", surface="claude-code",
            project=checked(path, line_no, fields.text, obj, "cwd"), started_at=ts,
            ended_at=ts, source=str(path) if is_main else None,
            meta={k: v for k in ("version", "gitBranch", "slug")
                  if (v := checked(path, line_no, fields.text, obj, k)) is not None})
        uuid = checked(path, line_no, fields.text, obj, "uuid")
        common: dict[str, Any] = dict(source_key=self.source_key(obj), agent=agent, ts=ts,
                      source_path=str(path), source_offset=offset, source_line=line_no,
                      uuid=uuid, parent_uuid=checked(path, line_no, fields.text, obj,
                                                     "parentUuid"),
                      line_id=uuid)
        if kind == "system":
            subtype = checked(path, line_no, fields.text, obj, "subtype")
            entry_kind = ENTRY_SYSTEM_SUBTYPES.get(str(subtype))
            if entry_kind is None:
                return None
            meta: dict[str, Any] = {"subtype": subtype}
            if subtype == "compact_boundary":
                cm = checked(path, line_no, fields.mapping, obj, "compactMetadata") or {}
                meta.update({
                    "preTokens": checked(path, line_no, fields.tokens, cm, "preTokens",
                                         "compactMetadata.preTokens"),
                    "trigger": checked(path, line_no, fields.text, cm, "trigger",
                                       "compactMetadata.trigger"),
                    "boundary": True})
            content = obj.get("content")
            return session, [NewEntry(kind=entry_kind, content=str(content or ""), meta=meta,
                                      **common)]
        message = fields.mapping(obj, "message", required=True) or {}
        content = message.get("content")
        blocks: Any = [content] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise fields.FieldProblem("message.content", f"a JSON {fields.kind(content)}, "
                                      "neither a string nor a list of blocks")
        ctx.optional(path, line_no, fields.text, message, "id", "message.id")
        meta = {}
        if kind == "assistant":
            meta = {k: v for k in ("model", "stop_reason")
                    if (v := checked(path, line_no, fields.text, message, k,
                                     f"message.{k}")) is not None}
            usage = _usage(ctx, path, line_no, message)
            if usage is not None:
                meta["usage"] = usage
        summary = kind == "user" and _truthy(obj.get("isCompactSummary"))
        if summary:
            meta["summary"] = True
        if _truthy(obj.get("isMeta")):
            meta["isMeta"] = True
        entries: list[NewEntry] = []
        for index, block in enumerate(blocks):
            entry = self._block(kind, block, summary, index, message, meta, common)
            if isinstance(entry, str):
                ctx.report.error(str(path), line_no, entry)
            elif entry is not None:
                entries.append(entry)
            else:
                ctx.report.skipped_by_design += 1
        return session, entries

    def _block(self, kind: str, block: Any, summary: bool, index: int, message: dict[str, Any],
               meta: dict[str, Any], common: dict[str, Any]) -> NewEntry | str | None:
        mid = message.get("id") if isinstance(message.get("id"), str) else None  # checked
        if isinstance(block, str):
            entry_kind = "compaction" if summary else kind
            return NewEntry(kind=entry_kind, content=block, block=index, message_id=mid,
                            meta=dict(meta), **common)
        if not isinstance(block, dict):
            return f"content block {index} is not an object"
        btype = block.get("type")
        if btype == "text":
            entry_kind = "compaction" if summary else kind
            return NewEntry(kind=entry_kind, content=block.get("text"), block=index,
                            message_id=mid, meta=dict(meta), **common)
        if btype in _SKIPPED_BLOCKS:
            return None
        if btype not in _BLOCK_KINDS:
            return f"content block {index} has unknown type {btype!r}"
        entry_kind = _BLOCK_KINDS[btype]
        if btype == "thinking":
            return NewEntry(kind=entry_kind, content=block.get("thinking"),
                            block=index, message_id=mid, meta=dict(meta), **common)
        if btype == "tool_use":
            body = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
            return NewEntry(kind=entry_kind, content=body, block=index, message_id=mid,
                            tool_name=block.get("name"), tool_use_id=block.get("id"),
                            meta=dict(meta), **common)
        extra = dict(meta)
        if block.get("is_error"):
            extra["is_error"] = True
        return NewEntry(kind=entry_kind, content=_tool_result_text(block.get("content")),
                        block=index, tool_use_id=block.get("tool_use_id"), message_id=mid,
                        meta=extra, **common)
