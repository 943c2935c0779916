"""Claude Code content as text: ``tool_result`` and server-tool content blocks, and
``attachment`` lines.

Whatever a block or an attachment said is kept: a ``tool_reference`` is its tool name, a web
search result its title and address, a block of any other type its JSON (an image's or
document's base64 payload replaced by its size, never stored), never a bare type tag.

Attachments (Claude Code 2.x) are sorted by what Claude Code did with them (its
``normalizeAttachmentForAPI``): those it turned into a message the model read become an entry
with that message's substance (``attachment_role``); a queued prompt the person typed is
theirs (``user``); the rest are housekeeping, skipped by design; a subtype not named here is
skipped-unknown (a note), so a new kind of model text is noticed rather than silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_PAYLOAD_KEYS = ("data",)
# Opaque fields a block carries for the API only (a web search result's encrypted page).
_OPAQUE_KEYS = ("encrypted_content", "encrypted_index")


def _without_payload(value: Any) -> Any:
    """``value`` with every base64 ``data`` string replaced by its length."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in _PAYLOAD_KEYS and isinstance(item, str) and len(item) > 200:
                out[key] = f"<{len(item):,} characters of data, not stored>"
            elif key in _OPAQUE_KEYS and isinstance(item, str):
                continue
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


def server_result_text(block: dict[str, Any]) -> str:
    """A server tool's result block (``web_search_tool_result``, ...): each web search
    result as its title and address, one a line; anything else (an error) as its JSON."""
    content = block.get("content")
    if isinstance(content, list) and all(
            isinstance(r, dict) and r.get("type") == "web_search_result" for r in content):
        return "\n".join(f"{_text(r.get('title')) or '(untitled)'} <{_text(r.get('url'))}>"
                         + (f" ({r['page_age']})" if isinstance(r.get("page_age"), str) else "")
                         for r in content)
    return tool_result_text(content) if isinstance(content, (str, list)) else block_json(
        content if content is not None else block)


def _text(value: Any) -> str:
    """A field as text: a string as it is, nothing as empty, anything else its JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else block_json(value)


def _lines(value: Any) -> str:
    """A string as it is; a list one item a line (objects as their JSON)."""
    if isinstance(value, list):
        return "\n".join(v if isinstance(v, str) else block_json(v) for v in value)
    return _text(value)


def _fields(attachment: dict[str, Any]) -> str:
    """An attachment's fields besides its type, as JSON (its text is Claude Code's own)."""
    return block_json({k: v for k, v in attachment.items() if k != "type"})


# -- what each model-facing attachment said ------------------------------------------------
def _blocking_error(a: dict[str, Any]) -> str:
    err = a.get("blockingError")
    return _lines(err.get("blockingError")) if isinstance(err, dict) else _lines(err)


def _queued(a: dict[str, Any]) -> str:
    """A queued prompt: a string, or blocks (text kept, an image as its JSON sans payload)."""
    prompt = a.get("prompt")
    if isinstance(prompt, list):
        return "\n".join(str(b.get("text", "")) if isinstance(b, dict) and b.get("type") == "text"
                         else block_json(b) for b in prompt)
    return _text(prompt)


def _nested_memory(a: dict[str, Any]) -> str:
    content = a.get("content")
    if isinstance(content, dict):
        path, body = content.get("path") or a.get("path"), content.get("content")
    else:
        path, body = a.get("path"), content
    return f"Contents of {_text(path) or '?'}:\n\n{_text(body)}" if _text(body).strip() else ""


def _edited(a: dict[str, Any]) -> str:
    return (f"{_text(a.get('filename')) or '?'} was modified (by the user or a linter); the "
            f"changes, with line numbers:\n{_text(a.get('snippet'))}")


def _diagnostics(a: dict[str, Any]) -> str:
    files = a.get("files")
    if not isinstance(files, list) or not files:
        return ""
    out = ["New diagnostic issues:"]
    for f in files:
        if not isinstance(f, dict) or not isinstance(f.get("diagnostics"), list):
            out.append(block_json(f))
            continue
        out.append(_text(f.get("uri")) or "?")
        for d in f["diagnostics"]:
            if not isinstance(d, dict):
                out.append(f"  {block_json(d)}")
                continue
            span = d.get("range")
            start = span.get("start") if isinstance(span, dict) else None
            where = (f"{start.get('line')}:{start.get('character')} " if isinstance(start, dict)
                     else "")
            source = " ".join(_text(d.get(k)) for k in ("source", "code") if d.get(k) is not None)
            out.append(f"  {where}[{_text(d.get('severity')) or '?'}] {_text(d.get('message'))}"
                       + (f" ({source})" if source else ""))
    return "\n".join(out)


def _selected(a: dict[str, Any]) -> str:
    return (f"The user selected lines {_text(a.get('lineStart'))} to {_text(a.get('lineEnd'))} "
            f"of {_text(a.get('filename')) or '?'}:\n{_text(a.get('content'))}")


def _mcp_resource(a: dict[str, Any]) -> str:
    head = f"MCP resource {_text(a.get('uri')) or '?'} from server {_text(a.get('server')) or '?'}:"
    content = a.get("content")
    items = content.get("contents") if isinstance(content, dict) else None
    if not isinstance(items, list) or not items:
        return f"{head} (no content)"
    parts = [head]
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif isinstance(item, dict) and "blob" in item:
            parts.append(f"[binary content: {_text(item.get('mimeType')) or 'unknown type'}]")
        else:
            parts.append(block_json(item))
    return "\n".join(parts)


def _skills(a: dict[str, Any]) -> str:
    skills = a.get("skills")
    if not isinstance(skills, list):
        return ""
    return "\n\n---\n\n".join(
        f"### Skill: {_text(s.get('name'))}\nPath: {_text(s.get('path'))}\n\n"
        f"{_text(s.get('content'))}" if isinstance(s, dict) else block_json(s) for s in skills)


def _own_words(what: str) -> Callable[[dict[str, Any]], str]:
    """An attachment whose message is Claude Code's own fixed text: what it was, and its
    fields (the wording itself is not in the transcript)."""
    return lambda a: f"{what} (Claude Code's own instructions; their wording is not in the " \
                     f"transcript): {_fields(a)}"


# Attachment subtype → the substance of the message Claude Code made of it for the model.
MODEL_ATTACHMENTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "hook_additional_context": lambda a: _lines(a.get("content")),
    "hook_blocking_error": _blocking_error,
    "hook_success": lambda a: _text(a.get("content")),
    "hook_stopped_continuation": lambda a: _text(a.get("message")),
    "task_reminder": lambda a: _lines(a.get("content")),
    "todo_reminder": lambda a: _lines(a.get("content")),
    "queued_command": _queued,
    "nested_memory": _nested_memory,
    "edited_text_file": _edited,
    "plan_mode": _own_words("Plan mode is on"),
    "plan_mode_exit": _own_words("Plan mode was exited"),
    "plan_mode_reentry": _own_words("Plan mode was entered again"),
    "plan_file_reference": lambda a: (f"A plan file exists from plan mode at "
                                      f"{_text(a.get('planFilePath')) or '?'}:\n\n"
                                      f"{_text(a.get('planContent'))}"),
    "diagnostics": _diagnostics,
    "selected_lines_in_ide": _selected,
    "opened_file_in_ide": lambda a: (f"The user opened the file {_text(a.get('filename')) or '?'}"
                                     " in the IDE."),
    "mcp_resource": _mcp_resource,
    "critical_system_reminder": lambda a: _text(a.get("content")),
    "date_change": lambda a: f"The date has changed: today is {_text(a.get('newDate')) or '?'}.",
    "compact_file_reference": lambda a: (f"{_text(a.get('filename')) or '?'} was read before the "
                                         "last compaction; too large to include again."),
    "invoked_skills": _skills,
}
# Housekeeping Claude Code sends the model nothing for (its UI's records, hook outcomes shown
# to the person), and catalogues of skills, deferred tools, agent types and MCP servers'
# instructions (the harness's menu, like the system prompt, which no transcript holds):
# skipped by design, counted per subtype.
HOUSEKEEPING_ATTACHMENTS = frozenset({
    "skill_listing", "deferred_tools_delta", "agent_listing_delta", "mcp_instructions_delta",
    "already_read_file", "command_permissions", "edited_image_file", "hook_cancelled",
    "hook_error_during_execution", "hook_non_blocking_error", "hook_system_message",
    "hook_permission_decision", "structured_output", "dynamic_skill", "context_efficiency",
    "companion_intro", "autocheckpointing", "background_task_status", "todo", "task_progress",
    "ultramemory"})
# A hook's success output reaches the model only for these events, and only when not empty.
_HOOK_SUCCESS_EVENTS = ("SessionStart", "UserPromptSubmit")


def is_human_prompt(attachment: dict[str, Any]) -> bool:
    """A ``queued_command`` the person typed while the agent worked: ``origin.kind`` human,
    or (before origins were written) no origin and a plain prompt."""
    origin = attachment.get("origin")
    if isinstance(origin, dict):
        return origin.get("kind") == "human"
    return origin is None and attachment.get("commandMode") in (None, "prompt")


def attachment_role(subtype: str, attachment: dict[str, Any]) -> str:
    """What an attachment is: ``user`` (a queued prompt the person typed), ``system`` (text
    the model read), ``housekeeping`` or ``unknown``."""
    if subtype == "queued_command":
        return "user" if is_human_prompt(attachment) else "system"
    if subtype == "hook_success" and (attachment.get("hookEvent") not in _HOOK_SUCCESS_EVENTS
                                      or not _text(attachment.get("content")).strip()):
        return "housekeeping"
    if subtype in MODEL_ATTACHMENTS:
        return "system"
    return "housekeeping" if subtype in HOUSEKEEPING_ATTACHMENTS else "unknown"


def attachment_text(subtype: str, attachment: dict[str, Any]) -> str:
    """The text an attachment of a ``MODEL_ATTACHMENTS`` subtype put in front of the model."""
    return MODEL_ATTACHMENTS[subtype](attachment)


def attachment_meta(subtype: str, attachment: dict[str, Any]) -> dict[str, Any]:
    """What an attachment entry keeps besides its text: the subtype, the hook it came from,
    the file it names, a queued command's mode and origin."""
    meta: dict[str, Any] = {"attachment": subtype}
    for key in ("hookName", "hookEvent", "toolUseID", "commandMode", "filename", "path",
                "uri", "server"):
        if isinstance(attachment.get(key), str):
            meta[key] = attachment[key]
    origin = attachment.get("origin")
    if isinstance(origin, dict) and isinstance(origin.get("kind"), str):
        meta["origin"] = origin["kind"]
    err = attachment.get("blockingError")
    if isinstance(err, dict) and isinstance(err.get("command"), str):
        meta["command"] = err["command"]
    return meta
