"""Claude Code content as text: ``tool_result`` content blocks and ``attachment`` lines.

Whatever a block or an attachment said is kept: a ``tool_reference`` is its tool name, a
block of any other type its JSON (an image's or document's base64 payload replaced by its
size, never stored), never a bare type tag.
"""

from __future__ import annotations

import json
from typing import Any

# Attachment subtypes whose text Claude Code put in front of the model (a hook's additional
# context, a hook's blocking error, a task or todo reminder): each becomes a ``system`` entry.
# Every other attachment (hook_success, skill_listing, deferred_tools_delta, ...) is
# housekeeping, skipped by design and counted per subtype.
MODEL_ATTACHMENTS = ("hook_additional_context", "hook_blocking_error", "task_reminder",
                     "todo_reminder")
_PAYLOAD_KEYS = ("data",)


def _without_payload(value: Any) -> Any:
    """``value`` with every base64 ``data`` string replaced by its length."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in _PAYLOAD_KEYS and isinstance(item, str) and len(item) > 200:
                out[key] = f"<{len(item):,} characters of data, not stored>"
            else:
                out[key] = _without_payload(item)
        return out
    if isinstance(value, list):
        return [_without_payload(v) for v in value]
    return value


def block_json(block: Any) -> str:
    """A content block as compact JSON, its binary payload left out."""
    return json.dumps(_without_payload(block), ensure_ascii=False, sort_keys=True)


def tool_result_text(content: Any) -> str:
    """The text of a ``tool_result``'s content: a string, or a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif (isinstance(block, dict) and block.get("type") == "tool_reference"
                  and isinstance(block.get("tool_name"), str)):
                parts.append(block["tool_name"])
            elif isinstance(block, dict):
                parts.append(block_json(block))
            else:
                parts.append(str(block))
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _lines(value: Any) -> str:
    """A string as it is; a list one item a line (objects as their JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(v if isinstance(v, str) else block_json(v) for v in value)
    return "" if value is None else block_json(value)


def attachment_text(subtype: str, attachment: dict[str, Any]) -> str:
    """The text an attachment of a ``MODEL_ATTACHMENTS`` subtype put in front of the model."""
    if subtype == "hook_blocking_error":
        err = attachment.get("blockingError")
        if isinstance(err, dict):
            return _lines(err.get("blockingError"))
        return _lines(err)
    return _lines(attachment.get("content"))


def attachment_meta(subtype: str, attachment: dict[str, Any]) -> dict[str, Any]:
    """What an attachment entry keeps besides its text: the subtype and the hook it came from."""
    meta: dict[str, Any] = {"attachment": subtype}
    for key in ("hookName", "hookEvent", "toolUseID"):
        if isinstance(attachment.get(key), str):
            meta[key] = attachment[key]
    err = attachment.get("blockingError")
    if isinstance(err, dict) and isinstance(err.get("command"), str):
        meta["command"] = err["command"]
    return meta
