"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``), in the
layouts of the real files read here (0.50–0.53, 0.146) and as other tools' tests record them (the
pre-0.4 layout, 0.111).

A line is an envelope ``{timestamp, type, payload}`` (``ordinal`` in 0.14x). What each
becomes (DESIGN "Getting data in"; see ``docs/agent-formats.md``):

- ``session_meta`` names the session (``payload.id``; before the first one, the uuid of the
  file name) and its project (``cwd``); a rollout whose ``source`` is a ``subagent`` (or that
  has a ``parent_thread_id``) is a spawned worker: its entries are the worker
  ``codex-<first 8 of its id>`` of the parent thread's session. Later ``session_meta`` lines
  (a forked thread copies its parent's) are skipped by design.
- ``response_item`` (and ``request_item``, written by some tools' copies): ``message`` →
  ``user``/``assistant`` (a ``developer`` or ``system`` message, and the text Codex writes
  itself into a user message — ``<environment_context>``, ``<user_instructions>``,
  ``# AGENTS.md instructions`` … — are ``system``); ``function_call``/``custom_tool_call``/
  ``local_shell_call``/``web_search_call``/``tool_search_call``/``image_generation_call`` →
  ``tool_call``; their outputs → ``tool_result``; ``reasoning`` → ``reasoning`` (summary
  text, else its content; only encrypted → the line is counted as skipped); ``agent_message``
  (a message between agents) → ``system``.
- ``event_msg``: ``user_message``/``agent_message``/``agent_reasoning`` repeat a
  ``response_item``: both are keyed by (kind, text, k), k counting the same words from the
  same kind of line before them in the file, so the words are stored once whichever comes
  first (the turn boundaries are not where both sides agree: 0.89 writes the prompt's
  ``event_msg`` before its ``turn_context``), and stored when only one of the two was written;
  ``token_count`` → an ``event`` entry carrying the last request's input tokens as a context
  snapshot (``info: null`` lines are rate-limit updates, skipped); a ``turn.completed`` with
  ``usage`` (0.51) likewise; ``error`` → ``system``; every other known event (command,
  patch, MCP, review, collaboration…) repeats what a ``response_item`` holds and is skipped
  by design.
- ``compacted`` → ``compaction`` (its ``message``, the summary; the replaced history counted
  in meta).
- ``turn_context``, ``world_state``,
  ``inter_agent_communication_metadata``, ``ghost_snapshot``: skipped by
  design. The pre-0.4 layout (a first line ``{id, timestamp, instructions | cli_version}``,
  then bare items and ``{"record_type": "state"}`` lines) reads the same; its project is the
  ``<cwd>`` of its first ``<environment_context>``.

Anything else is counted per type as skipped-unknown (a note per file, never an error per
line). A timestamp that is not a time is left out and counted (one note per file).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, update
from sqlmodel import col

from store.core.models import Session as SessionRow
from store.core.timeutil import normalise_iso
from store.core.writes import NewEntry, NewSession
from store.ingest import fields
from store.ingest.base import SHAPE_ERRORS, ImportContext, LineImporter, Skip
from store.core.vocab import plural

FORMAT = "codex"
ENVELOPES = {"session_meta", "response_item", "request_item", "event_msg", "turn_context",
             "compacted", "world_state", "inter_agent_communication_metadata"}
_ITEM_TYPES = {"message", "function_call", "function_call_output", "custom_tool_call",
               "custom_tool_call_output", "local_shell_call", "local_shell_call_output",
               "web_search_call", "tool_search_call", "tool_search_output",
               "image_generation_call", "reasoning", "agent_message", "ghost_snapshot"}
_CALLS = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call",
          "tool_search_call", "image_generation_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output",
            "tool_search_output"}
_CALL_NAMES = {"local_shell_call": "local_shell", "web_search_call": "web_search",
               "tool_search_call": "tool_search", "image_generation_call": "image_generation"}
# event_msg types whose content a response_item also holds (or that are bookkeeping).
_EVENTS_BY_DESIGN = {
    "task_started", "task_complete", "turn_aborted", "exec_command_begin",
    "exec_command_end", "exec_command_output_delta", "patch_apply_begin", "patch_apply_end",
    "mcp_tool_call_begin", "mcp_tool_call_end", "web_search_begin", "web_search_end",
    "view_image_tool_call", "image_generation_begin", "image_generation_end",
    "dynamic_tool_call_request", "dynamic_tool_call_response", "entered_review_mode",
    "exited_review_mode", "guardian_assessment", "item_started", "item_completed",
    "context_compacted", "thread_settings_applied", "thread_name_updated",
    "thread_goal_updated", "undo_started", "undo_completed", "sub_agent_activity",
    "collab_agent_spawn_begin", "collab_agent_spawn_end", "collab_agent_interaction_begin",
    "collab_agent_interaction_end", "collab_waiting_begin", "collab_waiting_end",
    "collab_close_begin", "collab_close_end", "account/rateLimits/updated",
    "turn_diff", "plan_update", "background_event", "stream_error", "shutdown_complete",
    "session_configured", "agent_message_delta", "agent_reasoning_delta",
    "agent_reasoning_raw_content", "agent_reasoning_section_break",
    "user_message_delta", "turn.started", "warning", "mcp_list_tools_response",
    "list_custom_prompts_response", "get_history_entry_response", "deprecation_notice",
    "request_user_input", "elicitation_request", "apply_patch_approval_request",
    "exec_approval_request", "token_count_delta", "codex/event/raw_item"}
_EVENT_MESSAGES = {"user_message": "user", "agent_message": "assistant",
                   "agent_reasoning": "reasoning"}
_SKIPPED_ENVELOPES = {"turn_context", "world_state", "inter_agent_communication_metadata"}
# Text Codex writes into a user message itself: the environment, AGENTS.md, instructions.
_HARNESS_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                     "<permissions instructions>", "<user_shell_command>", "<turn_aborted>",
                     "<subagent_notification>", "<skill>", "<collaboration_mode>",
                     "<apps_instructions>", "<developer_instructions>")
_ROLLOUT_NAME = re.compile(r"rollout-.*?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                           r"[0-9a-f]{12})\.jsonl$")
_CWD = re.compile(r"<environment_context>.*?<cwd>([^<]+)</cwd>", re.S)
_TEXT_BLOCKS = {"input_text", "output_text", "text", "summary_text", "reasoning_text"}


def looks_like(obj: dict[str, Any]) -> bool:
    """A Codex rollout line: an envelope of a known type with an object payload, or the
    pre-0.4 header (``_legacy_header``)."""
    kind = obj.get("type")
    if isinstance(kind, str) and kind in ENVELOPES and isinstance(obj.get("payload"), dict):
        return True
    return _legacy_header(obj)


def _legacy_header(obj: dict[str, Any]) -> bool:
    """The first line of a pre-0.4 rollout: ``{id, timestamp, instructions | cli_version}``."""
    return "type" not in obj and {"id", "timestamp"} <= set(obj) and bool(
        {"instructions", "cli_version", "originator"} & set(obj))


def _blocks_text(content: Any) -> tuple[str, list[str]]:
    """Text of a content array (text blocks joined) and the types of blocks left out."""
    if isinstance(content, str):
        return content, []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ("" if content is None else json.dumps(content, ensure_ascii=False)), []
    parts: list[str] = []
    left: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str) and (
                block.get("type") in _TEXT_BLOCKS or block.get("type") is None):
            parts.append(block["text"])
        else:
            left.append(str(block.get("type")) if isinstance(block, dict) else "?")
    return "\n".join(parts), left


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, dict) and isinstance(value.get("text"), str) and len(value) <= 4:
        return value["text"]
    if isinstance(value, list):
        text, left = _blocks_text(value)
        if not left:
            return text
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _harness_text(text: str) -> bool:
    return text.lstrip().startswith(_HARNESS_PREFIXES)


class CodexImporter(LineImporter):
    format = FORMAT

    def __init__(self) -> None:
        self._session: str | None = None
        self._agent = "main"
        self._project: str | None = None
        self._meta: dict[str, Any] = {}
        self._said: Counter[tuple[str, str, str]] = Counter()
        self._replaying = False
        self._bad_ts = 0
        self._bad_ts_first: tuple[int, str] | None = None

    def source_key(self, obj: dict[str, Any]) -> str:
        return f"{FORMAT}:{self._session}:{self._agent}"

    # -- the session -------------------------------------------------------------------------

    def _ts(self, line_no: int, obj: dict[str, Any]) -> str | None:
        try:
            value = fields.timestamp(obj, "timestamp")
        except fields.FieldProblem:
            self._bad_ts += 1
            if self._bad_ts_first is None:
                self._bad_ts_first = (line_no, repr(obj.get("timestamp"))[:60])
            return None
        return normalise_iso(value) if value else None

    def _open_session(self, path: Path, payload: dict[str, Any]) -> None:
        sid = payload.get("id") if isinstance(payload.get("id"), str) and payload["id"] else None
        sid = sid or self._name_id(path)
        source = payload.get("source")
        parent = payload.get("parent_thread_id")
        if not isinstance(parent, str) and isinstance(source, dict):
            spawn = (source.get("subagent") or {}) if isinstance(source.get("subagent"),
                                                                 dict) else {}
            got = spawn.get("thread_spawn")
            thread: dict[str, Any] = got if isinstance(got, dict) else {}
            parent = thread.get("parent_thread_id")
        if isinstance(parent, str) and parent and parent != sid:
            self._session, self._agent = parent, f"codex-{sid[:8]}"
        elif isinstance(source, dict) and "subagent" in source:
            self._session, self._agent = sid, f"codex-{sid[:8]}"
        else:
            self._session, self._agent = sid, "main"
        cwd = payload.get("cwd")
        self._project = cwd if isinstance(cwd, str) and cwd else None
        self._meta = {k: payload[k] for k in ("cli_version", "originator", "model_provider",
                                              "version", "thread_source")
                      if isinstance(payload.get(k), str)}
        if isinstance(source, str):
            self._meta["source"] = source
        if self._agent != "main":
            self._meta = {}  # a worker's rollout does not describe the parent's session

    def _name_id(self, path: Path) -> str:
        match = _ROLLOUT_NAME.search(path.name)
        return match.group(1) if match else path.stem

    def _session_row(self, path: Path, ts: str | None) -> NewSession:
        assert self._session is not None
        main = self._agent == "main"
        return NewSession(id=self._session, format=FORMAT, agent="codex", surface="codex-cli",
                          project=self._project if main else None, started_at=ts, ended_at=ts,
                          source=str(path) if main else None, meta=dict(self._meta))

    # -- lines -------------------------------------------------------------------------------

    def convert(self, ctx: ImportContext, path: Path, line_no: int, offset: int,
                obj: dict[str, Any]
                ) -> tuple[NewSession | None, list[NewEntry]] | str | Skip | None:
        if self._session is None and self.start.offset and not self._replaying:
            self._resume(path)  # read from where the last import stopped
        return self._convert(ctx, path, line_no, offset, obj)

    def _convert(self, ctx: ImportContext, path: Path, line_no: int, offset: int,
                 obj: dict[str, Any]
                 ) -> tuple[NewSession | None, list[NewEntry]] | str | Skip | None:
        ts = self._ts(line_no, obj)
        kind = obj.get("type")
        payload = obj.get("payload")
        if _legacy_header(obj):
            if self._session is None:
                self._open_session(path, obj)
            return self._session_row(path, ts), []
        if kind is None and obj.get("record_type") == "state":
            return Skip("record_type/state")
        if kind in _ITEM_TYPES and payload is None:  # pre-0.4: a bare item
            kind, payload = "response_item", obj
        if not isinstance(kind, str):
            return Skip(f"line without a type (keys {', '.join(sorted(obj)[:5])})",
                        unknown=True)
        if kind not in ENVELOPES:
            return Skip(kind, unknown=True)
        if not isinstance(payload, dict):
            return Skip(f"{kind} (payload not an object)", unknown=True)
        if kind == "session_meta":
            if self._session is not None:
                return Skip("session_meta (a later one: a forked thread's copy)")
            self._open_session(path, payload)
            return self._session_row(path, ts), []
        if self._session is None:
            self._open_session(path, {})
        if kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and self._agent == "main":
                self._meta["model"] = model
            return Skip(kind)
        if kind in _SKIPPED_ENVELOPES:
            return Skip(kind)
        common: dict[str, Any] = dict(source_key=self.source_key(obj), agent=self._agent,
                                      ts=ts, source_path=str(path), source_offset=offset,
                                      source_line=line_no)
        session = self._session_row(path, ts)
        if kind == "compacted":
            history = payload.get("replacement_history")
            text = _as_text(payload.get("message"))
            return session, [NewEntry(kind="compaction", content=text, meta={
                "boundary": True, "summary": bool(text),
                "replaced_items": len(history) if isinstance(history, list) else None},
                **common)]
        if kind == "event_msg":
            return self._event(ctx, payload, session, common)
        return self._item(ctx, payload, session, common)

    def _resume(self, path: Path) -> None:
        """The session, worker, turn and message counts as the lines already imported left
        them (a resumed import starts after them): those lines are read again, nothing of
        them stored or reported."""
        self._replaying = True
        remaining = self.start.offset
        quiet = _Quiet()
        with path.open("rb") as fh:
            offset = 0
            for number, raw in enumerate(fh, start=1):
                if offset + len(raw) > remaining:
                    break
                try:
                    obj = json.loads(raw)
                except (ValueError, RecursionError):
                    obj = None
                if isinstance(obj, dict):
                    try:
                        self._convert(quiet, path, number, offset, obj)  # type: ignore[arg-type]
                    except (fields.FieldProblem, *SHAPE_ERRORS):
                        pass
                offset += len(raw)
        self._bad_ts, self._bad_ts_first = 0, None
        self._replaying = False

    def _message_entry(self, kind: str, text: str, common: dict[str, Any],
                       meta: dict[str, Any], message_id: str | None = None,
                       origin: str = "item") -> NewEntry:
        """A message keyed by its kind, text and how many times the same words came before in
        the file from the same kind of line: the k-th ``response_item`` saying them and the
        k-th ``event_msg`` repeating them give one entry (whichever comes first, whatever the
        turns), and the same words said twice (``continue``, ``continue``) are two."""
        seen = (origin, kind, text)
        self._said[seen] += 1
        n = self._said[seen]
        return NewEntry(kind=kind, content=text, line_id=f"msg:{kind}#{n}",
                        message_id=message_id, meta=meta, **common)

    def _item(self, ctx: ImportContext, item: dict[str, Any], session: NewSession,
              common: dict[str, Any]) -> tuple[NewSession, list[NewEntry]] | Skip:
        itype = item.get("type")
        if itype is None and isinstance(item.get("role"), str):
            itype = "message"  # agentsview's copies leave the item type out
        if not isinstance(itype, str) or itype not in _ITEM_TYPES:
            return Skip(f"response_item/{itype}", unknown=True)
        mid = item.get("id") if isinstance(item.get("id"), str) else None
        if itype == "ghost_snapshot":
            return Skip("response_item/ghost_snapshot")
        if itype == "message":
            role = item.get("role")
            text, left = _blocks_text(item.get("content"))
            for block in left:
                ctx.skip(block, unknown=block not in ("input_image", "image", "input_file"),
                         block=True)
            if role == "assistant":
                kind = "assistant"
            elif role == "user":
                kind = "system" if _harness_text(text) else "user"
                cwd = _CWD.search(text) if kind == "system" else None
                if cwd and self._project is None and self._agent == "main":
                    self._project = cwd.group(1).strip()  # pre-0.4: no cwd in the header
            elif role in ("developer", "system"):
                kind = "system"
            else:
                return Skip(f"response_item/message role {role}", unknown=True)
            if not text.strip() and kind != "user":
                return Skip(f"response_item/message ({role}, no text)")
            meta = {"role": role, **({"phase": item["phase"]} if isinstance(
                item.get("phase"), str) else {})}
            return session, [self._message_entry(kind, text, common, meta, mid)]
        if itype == "reasoning":
            text, _ = _blocks_text(item.get("summary"))
            if not text.strip():
                text, _ = _blocks_text(item.get("content"))
            if not text.strip():
                return Skip("response_item/reasoning (encrypted only)")
            return session, [self._message_entry("reasoning", text, common, {}, mid)]
        if itype == "agent_message":
            text, _ = _blocks_text(item.get("content"))
            meta = {k: item[k] for k in ("author", "recipient") if isinstance(item.get(k), str)}
            return session, [NewEntry(kind="system", content=text, message_id=mid,
                                      meta={"item": itype, **meta}, **common)]
        call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else None
        if itype in _CALLS:
            name = item.get("name") if isinstance(item.get("name"), str) else None
            name = name or _CALL_NAMES.get(itype, itype)
            body = next((item[k] for k in ("arguments", "input", "parameters", "action")
                         if item.get(k) is not None), None)
            meta = {"item": itype, **({"status": item["status"]} if isinstance(
                item.get("status"), str) else {})}
            return session, [NewEntry(kind="tool_call", content=_as_text(body), tool_name=name,
                                      tool_use_id=call_id, message_id=mid, meta=meta,
                                      **common)]
        output = item.get("output") if "output" in item else item.get("tools")
        return session, [NewEntry(kind="tool_result", content=_as_text(output),
                                  tool_use_id=call_id, message_id=mid,
                                  meta={"item": itype}, **common)]

    def _event(self, ctx: ImportContext, event: dict[str, Any], session: NewSession,
               common: dict[str, Any]) -> tuple[NewSession, list[NewEntry]] | Skip:
        etype = event.get("type")
        if not isinstance(etype, str):
            return Skip("event_msg (no type)", unknown=True)
        if etype in _EVENT_MESSAGES:
            text = event.get("message") if etype != "agent_reasoning" else event.get("text")
            if not isinstance(text, str) or not text.strip():
                return Skip(f"event_msg/{etype} (no text)")
            kind = _EVENT_MESSAGES[etype]
            if kind == "user" and _harness_text(text):
                kind = "system"
            return session, [self._message_entry(kind, text, common, {"event": etype},
                                                 origin="event")]
        if etype == "token_count":
            info = event.get("info")
            usage = None
            window = None
            if isinstance(info, dict):
                last = info.get("last_token_usage") or info.get("total_token_usage")
                if isinstance(last, dict):
                    usage = {"input_tokens": fields.tokens(last, "input_tokens",
                                                           "info.last_token_usage.input_tokens"),
                             "output_tokens": fields.tokens(
                                 last, "output_tokens", "info.last_token_usage.output_tokens"),
                             "cached_input_tokens": fields.tokens(
                                 last, "cached_input_tokens",
                                 "info.last_token_usage.cached_input_tokens")}
                elif "prompt" in info:  # 0.50
                    usage = {"input_tokens": fields.tokens(info, "prompt", "info.prompt"),
                             "output_tokens": fields.tokens(info, "completion",
                                                            "info.completion")}
                window = fields.tokens(info, "model_context_window",
                                       "info.model_context_window")
            if usage is None:
                return Skip("event_msg/token_count (no usage: a rate-limit update)")
            return session, [self._usage_entry(etype, usage, window, common)]
        if etype == "turn.completed":
            usage_in = event.get("usage")
            if not isinstance(usage_in, dict):
                return Skip("event_msg/turn.completed (no usage)")
            usage = {k: fields.tokens(usage_in, k, f"usage.{k}")
                     for k in ("input_tokens", "cached_input_tokens", "output_tokens")}
            return session, [self._usage_entry(etype, usage, None, common)]
        if etype == "error":
            got = event.get("error")
            err: dict[str, Any] = got if isinstance(got, dict) else (event or {})
            text = err.get("message") if isinstance(err.get("message"), str) else _as_text(err)
            return session, [NewEntry(kind="system", content=f"Codex error: {text}",
                                      meta={"event": etype, "error": err}, **common)]
        if etype in _EVENTS_BY_DESIGN:
            return Skip(f"event_msg/{etype}")
        return Skip(f"event_msg/{etype}", unknown=True)

    def _usage_entry(self, etype: str, usage: dict[str, int | None], window: int | None,
                     common: dict[str, Any]) -> NewEntry:
        """An ``event`` entry whose usage is a context snapshot (the deriver reads
        ``meta.usage`` of an entry with a message id). OpenAI's ``input_tokens`` already
        count the cached ones, so only they are the context used."""
        clean = {k: v for k, v in usage.items() if v is not None}
        parts = [f"{k.replace('_', ' ')} {v:,}" for k, v in clean.items()]
        if window:
            parts.append(f"context window {window:,}")
        meta: dict[str, Any] = {"event": etype,
                                "usage": {"input_tokens": clean.get("input_tokens", 0)},
                                "codex_usage": clean}
        if window:
            meta["context_window"] = window
        return NewEntry(kind="event", content=f"{etype}: " + ", ".join(parts),
                        message_id=f"{etype}@{common['source_offset']}", meta=meta, **common)

    def on_flush(self, ctx: ImportContext, conn: Connection, path: Path, from_start: bool,
                 batch: dict[str, list[NewEntry]]) -> None:
        """A project learnt after the session row was written (pre-0.4: from the first
        ``<environment_context>``) fills an empty one."""
        if self._session in batch and self._project and self._agent == "main":
            conn.execute(update(SessionRow).where(col(SessionRow.id) == self._session,
                                                  col(SessionRow.project).is_(None))
                         .values(project=self._project))

    def on_end(self, ctx: ImportContext, path: Path, with_session: int, skipped: int) -> None:
        if self._bad_ts and self._bad_ts_first is not None:
            line, shown = self._bad_ts_first
            ctx.report.notes.append(
                f"{path}: {plural(self._bad_ts, 'line')} with a "
                f"timestamp that is not an ISO-8601 time (first: line {line}, {shown}): stored "
                "without a time")


class _Quiet:
    """A context that counts and reports nothing: lines read again to restore state."""

    def skip(self, *args: Any, **kwargs: Any) -> None:
        return None
