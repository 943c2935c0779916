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
    return "sessionId" in obj or (obj.get("type") in KNOWN_TYPES and "uuid" in obj)


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


class ClaudeCodeImporter(LineImporter):
    format = FORMAT

    def source_key(self, obj: dict[str, Any]) -> str:
        return f"{FORMAT}:{obj.get('sessionId')}:{obj.get('agentId') or 'main'}"

    def convert(self, ctx: ImportContext, path: Path, line_no: int, offset: int,
                obj: dict[str, Any]) -> tuple[NewSession | None, list[NewEntry]] | str | None:
        """Entries of one line; a string is an error reason; None is skipped by design."""
        kind = obj.get("type")
        if kind in SKIPPED_TYPES:
            return None
        if kind not in KNOWN_TYPES:
            return f"unknown Claude Code line type {kind!r}"
        session_id = obj.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            return "line has no sessionId"
        ts = normalise_iso(obj.get("timestamp"))
        agent = str(obj.get("agentId") or "main")
        is_main = agent == "main"
        session = NewSession(
            id=session_id, format=FORMAT, agent="claude-code", surface="claude-code",
            project=obj.get("cwd"), started_at=ts, ended_at=ts,
            source=str(path) if is_main else None,
            meta={k: obj[k] for k in ("version", "gitBranch", "slug") if k in obj})
        common: dict[str, Any] = dict(source_key=self.source_key(obj), agent=agent, ts=ts,
                      source_path=str(path), source_offset=offset, source_line=line_no,
                      uuid=obj.get("uuid"), parent_uuid=obj.get("parentUuid"),
                      line_id=obj.get("uuid") if isinstance(obj.get("uuid"), str) else None)
        if kind == "system":
            subtype = obj.get("subtype")
            entry_kind = ENTRY_SYSTEM_SUBTYPES.get(str(subtype))
            if entry_kind is None:
                return None
            meta: dict[str, Any] = {"subtype": subtype}
            if subtype == "compact_boundary":
                cm = obj.get("compactMetadata")
                cm = cm if isinstance(cm, dict) else {}
                meta.update({"preTokens": cm.get("preTokens"), "trigger": cm.get("trigger"),
                             "boundary": True})
            content = obj.get("content")
            return session, [NewEntry(kind=entry_kind, content=str(content or ""), meta=meta,
                                      **common)]
        message = obj.get("message")
        if not isinstance(message, dict):
            return f"{kind} line has no message object"
        content = message.get("content")
        blocks: Any = [content] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            return f"{kind} message content is neither a string nor a list"
        meta = {}
        if kind == "assistant":
            meta = {k: message[k] for k in ("model", "usage", "stop_reason") if k in message}
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
        mid = message.get("id")
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
