"""Claude Code session JSONL (``~/.claude/projects/*/*.jsonl`` and ``subagents/*.jsonl``), as
every version from 1.0.x to 2.1.x writes it.

The rules (DESIGN "Getting data in"): ``user``/``assistant`` lines give one entry per content
block (``text`` → user/assistant, ``thinking`` → reasoning, ``tool_use`` → tool_call,
``tool_result`` → tool_result, a server tool's use and result likewise; a string content is
one block); a user line with ``isCompactSummary`` is a ``compaction`` (the summary), one with
``isMeta`` (text the harness wrote) is ``system``; ``system`` lines give ``compaction`` for
``compact_boundary`` (``preTokens`` kept) and ``system`` for ``local_command``; an
``attachment`` whose text reached the model is ``system``, a prompt the person queued while the
agent worked ``user`` (``claude_code_text.attachment_role``). Everything else known is skipped
by design and counted per type; a line type or attachment subtype not known here is counted as
skipped-unknown (a note, not an error). Content blocks left out of an imported line (empty
``thinking``, images) are counted apart from lines, per block type.

Agents: a worker transcript's lines carry their ``agentId``; lines with ``isSidechain: true``
and no ``agentId`` (Claude Code 1.0.x writes a Task subagent into the main file) are the worker
``sidechain-<first 8 of the sidechain's first line's uuid>``, followed through ``parentUuid``.
``summary`` lines (``{summary, leafUuid}``) are kept: the one naming the latest leaf of a session
(by the leaf line's time, then its line) is its title, whichever file it sits in and whichever
arrives first — unless the person named the
session (``custom-title`` lines, ``/rename``): the latest custom title wins.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import Connection
from sqlmodel import col, delete, select

from store.core.db import orm
from store.core.models import Entry
from store.core.models import Session as SessionRow
from store.core.records import SIDECHAIN_PREFIX, WARMUP_PREFIX, loads
from store.core.textsafe import storable
from store.core.timeutil import normalise_iso, now_iso
from store.core.writes import NewEntry, NewSession
from store.ingest import fields
from store.ingest.base import ImportContext, LineImporter, Skip
from store.ingest.claude_code_text import (
    attachment_meta,
    attachment_role,
    attachment_text,
    server_result_text,
    tool_result_text,
)
from store.ingest.claude_code_queue import (
    QueuedPrompts,
    is_warmup,
    said,
    warmup_in_prefix,
    worker_message,
)
from store.ingest.models import ClaudeCodeSummary
from store.core.vocab import plural

FORMAT = "claude-code"
# Housekeeping line types: not entries, skipped by design (``summary`` is kept for titles).
HOUSEKEEPING = {"progress", "file-history-snapshot", "queue-operation", "summary",
                "permission-mode", "last-prompt", "custom-title"}
ENTRY_TYPES = {"user", "assistant", "system", "attachment"}
KNOWN_TYPES = HOUSEKEEPING | ENTRY_TYPES
CUSTOM_TITLE = "custom_title"  # the session meta key holding the title the person gave it
ENTRY_SYSTEM_SUBTYPES = {"compact_boundary": "compaction", "local_command": "system"}
_BLOCK_KINDS = {"thinking": "reasoning", "tool_use": "tool_call", "tool_result": "tool_result",
                # tools the API runs itself (web search, web fetch, code execution, MCP)
                "server_tool_use": "tool_call", "mcp_tool_use": "tool_call"}
_SKIPPED_BLOCKS = {"image", "document", "redacted_thinking"}
# A server tool's result (``web_search_tool_result``, ``web_fetch_tool_result``, ...).
_SERVER_RESULT = "_tool_result"


def looks_like(obj: dict[str, Any]) -> bool:
    kind = obj.get("type") if isinstance(obj.get("type"), str) else None
    return ("sessionId" in obj or (kind in KNOWN_TYPES and "uuid" in obj)
            or (kind == "summary" and "leafUuid" in obj)
            or (kind == "file-history-snapshot" and "snapshot" in obj))


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _label(value: Any) -> str:
    return value if isinstance(value, str) and value else "?"


# Fields a line can be stored without: checked where read (``_checked``); a bad value is
# reported (file, line, field, reason) and left out, and the line is stored.
_OPTIONAL_TEXT = ("agentId", "uuid", "parentUuid", "timestamp", "cwd", "version", "gitBranch",
                  "slug", "subtype")
_MESSAGE_TEXT = ("id", "model", "stop_reason")
_FLAGS = ("isMeta", "isCompactSummary", "isSidechain")
USAGE_TOKENS = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                "cache_read_input_tokens")


def _checked(ctx: ImportContext, path: Path, line_no: int, obj: dict[str, Any]
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``obj`` with each optional field of the wrong type or out of range reported and left
    out: text fields (``timestamp`` an ISO-8601 time), ``compactMetadata`` (``preTokens`` a
    token figure), ``message.usage`` (its token figures), ``message.id``/``model``/
    ``stop_reason``; and the values left out by field (kept in the entries' meta under
    ``invalid``, so nothing is lost)."""
    out = dict(obj)
    dropped: dict[str, Any] = {}
    for key in _FLAGS:
        value = out.get(key)
        if value is None or isinstance(value, bool) or (isinstance(value, str) and
                                                        value.lower() in ("true", "false")):
            continue
        ctx.report.error(str(path), line_no, f"a JSON {fields.kind(value)}, not a boolean: "
                         "read as false, the value kept in the entry's meta", key)
        dropped[key] = value
    for key in _OPTIONAL_TEXT:
        check = fields.timestamp if key == "timestamp" else fields.text
        if ctx.optional(path, line_no, check, out, key) is None:
            if out.get(key) is not None:
                dropped[key] = out[key]
            out.pop(key, None)
    if "compactMetadata" in out:
        cm = ctx.optional(path, line_no, fields.mapping, out, "compactMetadata")
        if cm is not None:
            cm = dict(cm)
            if ctx.optional(path, line_no, fields.tokens, cm, "preTokens",
                            "compactMetadata.preTokens") is None:
                if cm.get("preTokens") is not None:
                    dropped["compactMetadata.preTokens"] = cm["preTokens"]
                cm.pop("preTokens", None)
            if ctx.optional(path, line_no, fields.text, cm, "trigger",
                            "compactMetadata.trigger") is None:
                cm.pop("trigger", None)
        out["compactMetadata"] = cm
    message = out.get("message")
    if isinstance(message, dict):
        message = dict(message)
        role = message.get("role")
        if role is not None and role != obj.get("type"):
            ctx.report.error(str(path), line_no, f"{fields.kind(role)} {str(role)[:40]!r} is "
                             f"not the line's type {str(obj.get('type'))[:40]!r}: the type "
                             "decides, the role is kept in the entry's meta", "message.role")
            dropped["message.role"] = role
        for key in _MESSAGE_TEXT:
            if ctx.optional(path, line_no, fields.text, message, key,
                            f"message.{key}") is None:
                if message.get(key) is not None:
                    dropped[f"message.{key}"] = message[key]
                message.pop(key, None)
        if "usage" in message:
            usage = ctx.optional(path, line_no, fields.mapping, message, "usage",
                                 "message.usage")
            if usage is None:
                message.pop("usage")
            else:
                message["usage"] = {k: v for k, v in usage.items() if k not in USAGE_TOKENS
                                    or ctx.optional(path, line_no, fields.tokens, usage, k,
                                                    f"message.usage.{k}") is not None}
        out["message"] = message
    return out, dropped


class ClaudeCodeImporter(LineImporter):
    format = FORMAT

    def __init__(self) -> None:
        self._sidechains: dict[str, str] = {}  # line uuid → its sidechain's agent
        self._prefix_read = False  # sidechain lines before this import's start were read
        self._summaries: list[tuple[str, str, int]] = []  # (leaf uuid, summary, line)
        self._custom_titles: dict[str, str] = {}  # session id → its latest custom title
        self._queue = QueuedPrompts()  # prompts enqueued while the agent worked
        self._warmups: dict[str, bool] = {}  # agentId → its sidechain is a Warmup

    def source_key(self, obj: dict[str, Any]) -> str:
        return f"{FORMAT}:{obj.get('sessionId')}:{obj.get('agentId') or 'main'}"

    # -- agents ----------------------------------------------------------------------------
    def _agent(self, path: Path, obj: dict[str, Any], line_no: int) -> str:
        """``agentId``; for a sidechain line without one, its sidechain's name; else main. A
        sidechain that starts with Claude Code's own ``Warmup`` prompt is ``warmup-<id>``."""
        if obj.get("agentId"):
            agent_id = str(obj["agentId"])
            if agent_id not in self._warmups:
                warm = is_warmup(obj)
                if not warm and self.start.offset > 0 and _id(obj.get("parentUuid")):
                    warm = warmup_in_prefix(path, agent_id, self.start.offset)
                self._warmups[agent_id] = warm
            return WARMUP_PREFIX + agent_id if self._warmups[agent_id] else agent_id
        if not _truthy(obj.get("isSidechain")):
            return "main"
        uuid, parent = _id(obj.get("uuid")), _id(obj.get("parentUuid"))
        agent = self._sidechains.get(parent) if parent else None
        if agent is None and parent and not self._prefix_read and self.start.offset > 0:
            self._read_prefix(path)  # resumed mid-file: the parent may be before the start
            agent = self._sidechains.get(parent)
        if agent is None:  # the sidechain's first line
            prefix = WARMUP_PREFIX if is_warmup(obj) else SIDECHAIN_PREFIX
            agent = prefix + (uuid[:8] if uuid else f"line{line_no}")
        if uuid:
            self._sidechains[uuid] = agent
        return agent

    def _read_prefix(self, path: Path) -> None:
        """Learn the sidechains of the lines before where this import started (once)."""
        self._prefix_read = True
        end, offset = self.start.offset, 0
        with path.open("rb") as fh:
            for line_no, raw in enumerate(fh, start=1):
                offset += len(raw)
                if offset > end:
                    break
                if b'"isSidechain"' not in raw:
                    continue
                try:
                    obj = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(obj, dict):
                    self._agent(path, obj, line_no)

    # -- lines -----------------------------------------------------------------------------
    def convert(self, ctx: ImportContext, path: Path, line_no: int, offset: int,
                obj: dict[str, Any]
                ) -> tuple[NewSession | None, list[NewEntry]] | str | Skip | None:
        """Entries of one line; a string is an error reason; a ``Skip`` a line left out."""
        kind = obj.get("type")
        if not isinstance(kind, str) or not kind:
            raise fields.FieldProblem("type", "line has no type" if kind is None
                                      else f"a JSON {fields.kind(kind)}, not a string")
        if kind == "progress":  # a worker's message, kept in its orchestrator's file
            inner = worker_message(obj)
            if inner is not None:
                kind, obj = str(inner["type"]), inner
        if not self._queue.prefix_read and self.start.offset > 0:
            self._queue.read_prefix(path, self.start.offset)
        if kind == "queue-operation" and self._queue.enqueue(obj, line_no, offset):
            # its prompt is stored from this line at the end of the file, or its words
            # arrive later (counted as a skip then): not a skip now, nor counted twice
            return None, []
        if kind in ("user", "attachment") and isinstance(obj.get("sessionId"), str):
            for _ in range(self._queue.arrived(obj["sessionId"], said(obj))):
                ctx.skip("queue-operation")  # the enqueue line its words made redundant
        obj, dropped = _checked(ctx, path, line_no, obj)
        outcome = self._convert(ctx, path, line_no, offset, kind, obj)
        if dropped and isinstance(outcome, tuple):
            for entry in outcome[1]:
                entry.meta = {**(entry.meta or {}),
                              "invalid": {**(entry.meta or {}).get("invalid", {}), **dropped}}
        return outcome

    def _convert(self, ctx: ImportContext, path: Path, line_no: int, offset: int, kind: str,
                 obj: dict[str, Any]
                 ) -> tuple[NewSession | None, list[NewEntry]] | str | Skip | None:
        agent = self._agent(path, obj, line_no)  # every sidechain line, skipped ones too
        if kind == "summary":
            leaf, text = _id(obj.get("leafUuid")), obj.get("summary")
            if leaf and isinstance(text, str) and text.strip():
                self._summaries.append((leaf, text.strip(), line_no))
            return Skip(kind)
        if kind == "custom-title":  # /rename: the title the person gave the session
            sid, text = _id(obj.get("sessionId")), obj.get("customTitle")
            if sid and isinstance(text, str) and text.strip():
                self._custom_titles.pop(sid, None)  # the latest wins, in file order
                self._custom_titles[sid] = text.strip()
            return Skip(kind)
        if kind in HOUSEKEEPING:
            return Skip(kind)
        if kind not in ENTRY_TYPES:
            return Skip(kind, unknown=True)
        if kind == "system" and str(obj.get("subtype")) not in ENTRY_SYSTEM_SUBTYPES:
            return Skip(f"system/{_label(obj.get('subtype'))}")
        attachment = obj.get("attachment")
        role = ""
        if kind == "attachment":
            if not isinstance(attachment, dict):
                return "attachment line has no attachment object"
            subtype = _label(attachment.get("type"))
            role = attachment_role(subtype, attachment)
            if role in ("housekeeping", "unknown"):
                return Skip(f"attachment/{subtype}", unknown=role == "unknown")
        session_id = fields.text(obj, "sessionId", required=True, empty_ok=False) or ""
        ts = normalise_iso(obj.get("timestamp"))
        session = NewSession(
            id=session_id, format=FORMAT, agent="claude-code", surface="claude-code",
            project=obj.get("cwd"), started_at=ts, ended_at=ts,
            # the main file (inline sidechains included) is the session's source
            source=None if obj.get("agentId") or path.parent.name == "subagents" else str(path),
            meta={k: obj[k] for k in ("version", "gitBranch", "slug") if k in obj})
        common: dict[str, Any] = dict(source_key=self.source_key(obj), agent=agent, ts=ts,
                      source_path=str(path), source_offset=offset, source_line=line_no,
                      uuid=obj.get("uuid"), parent_uuid=obj.get("parentUuid"),
                      line_id=obj.get("uuid") if isinstance(obj.get("uuid"), str) else None)
        if isinstance(attachment, dict) and kind == "attachment":
            # text the model read: ``system``; a prompt the person queued while the agent
            # worked: ``user``, their own words (usually no ``user`` line carries them)
            subtype = str(attachment["type"])
            text = attachment_text(subtype, attachment)
            if not text.strip():
                return Skip(f"attachment/{subtype} (empty)")
            return session, [NewEntry(kind=role, content=text,
                                      meta=attachment_meta(subtype, attachment), **common)]
        if kind == "system":
            system_subtype = obj.get("subtype")
            meta: dict[str, Any] = {"subtype": system_subtype}
            if system_subtype == "compact_boundary":
                cm = obj.get("compactMetadata")
                cm = cm if isinstance(cm, dict) else {}
                meta.update({"preTokens": cm.get("preTokens"), "trigger": cm.get("trigger"),
                             "boundary": True})
            content = obj.get("content")
            return session, [NewEntry(kind=ENTRY_SYSTEM_SUBTYPES[str(system_subtype)],
                                      content=str(content or ""), meta=meta, **common)]
        return self._message(ctx, path, line_no, kind, obj, session, common)

    def _message(self, ctx: ImportContext, path: Path, line_no: int, kind: str,
                 obj: dict[str, Any], session: NewSession, common: dict[str, Any]
                 ) -> tuple[NewSession | None, list[NewEntry]] | str:
        message = fields.mapping(obj, "message", required=True) or {}
        content = message.get("content")
        blocks: Any = [content] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise fields.FieldProblem("message.content", f"a JSON {fields.kind(content)}, "
                                      "neither a string nor a list of blocks")
        if not blocks:
            ctx.report.error(str(path), line_no, "an empty list of blocks: the line holds no "
                             "content, nothing to store", "message.content")
            return None, []
        meta: dict[str, Any] = {}
        if kind == "assistant":
            meta = {k: message[k] for k in ("model", "usage", "stop_reason") if k in message}
        text_kind = kind
        if kind == "user" and _truthy(obj.get("isCompactSummary")):
            meta["summary"] = True
            text_kind = "compaction"
        elif kind == "user" and _truthy(obj.get("isMeta")):
            text_kind = "system"  # a caveat or a skill's text the harness wrote, not a person
        if _truthy(obj.get("isMeta")):
            meta["isMeta"] = True
        entries: list[NewEntry] = []
        for index, block in enumerate(blocks):
            entry = self._block(text_kind, block, index, message, meta, common)
            if isinstance(block, dict) and block.get("type") in ("tool_use",
                                                                  "server_tool_use"):
                entry = self._tool_fields(ctx, path, line_no, index, block, entry)
            if isinstance(entry, str):
                ctx.report.error(str(path), line_no, entry)
            elif isinstance(entry, Skip):
                ctx.skip(entry.what, entry.unknown, block=True)
            else:
                entries.append(entry)
        return session, entries

    @staticmethod
    def _tool_fields(ctx: ImportContext, path: Path, line_no: int, index: int,
                     block: dict[str, Any], entry: NewEntry | str | Skip
                     ) -> NewEntry | str | Skip:
        """A tool call's ``name`` and ``id`` must be text: another type is reported (field
        ``message.content[i].name``) and stored as its JSON text (``NewEntry`` does that)."""
        if not isinstance(entry, NewEntry):
            return entry
        for key in ("name", "id"):
            value = block.get(key)
            if value is None or isinstance(value, str):
                continue
            ctx.report.error(str(path), line_no, f"a JSON {fields.kind(value)}, not a string: "
                             "stored as its JSON text", f"message.content[{index}].{key}")
        return entry

    def _block(self, text_kind: str, block: Any, index: int, message: dict[str, Any],
               meta: dict[str, Any], common: dict[str, Any]) -> NewEntry | str | Skip:
        mid = message.get("id")
        if isinstance(block, str):
            return NewEntry(kind=text_kind, content=block, block=index, message_id=mid,
                            meta=dict(meta), **common)
        if not isinstance(block, dict):
            return f"content block {index} is not an object"
        btype = block.get("type")
        if not isinstance(btype, str):
            return f"content block {index} has no type"
        if btype == "text":
            return NewEntry(kind=text_kind, content=block.get("text"), block=index,
                            message_id=mid, meta=dict(meta), **common)
        if btype in _SKIPPED_BLOCKS:
            return Skip(btype, block=True)
        if btype.endswith(_SERVER_RESULT) and btype != "tool_result":
            extra = {**meta, "block": btype}
            result = block.get("content")
            if isinstance(result, dict) and str(result.get("type", "")).endswith("_error"):
                extra["is_error"] = True
            return NewEntry(kind="tool_result", content=server_result_text(block), block=index,
                            tool_use_id=block.get("tool_use_id"), message_id=mid, meta=extra,
                            **common)
        if btype not in _BLOCK_KINDS:
            return Skip(btype, unknown=True, block=True)
        entry_kind = _BLOCK_KINDS[btype]
        if btype == "thinking":
            thinking = block.get("thinking")
            if thinking is None or (isinstance(thinking, str) and not thinking.strip()):
                return Skip("thinking (empty)", block=True)  # 2.1.x: only a signature
            return NewEntry(kind=entry_kind, content=thinking, block=index, message_id=mid,
                            meta=dict(meta), **common)
        if entry_kind == "tool_call":
            body = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
            extra = dict(meta) if btype == "tool_use" else {**meta, "block": btype}
            return NewEntry(kind=entry_kind, content=body, block=index, message_id=mid,
                            tool_name=block.get("name"), tool_use_id=block.get("id"),
                            meta=extra, **common)
        extra = dict(meta)
        if block.get("is_error"):
            extra["is_error"] = True
        return NewEntry(kind=entry_kind, content=tool_result_text(block.get("content")),
                        block=index, tool_use_id=block.get("tool_use_id"), message_id=mid,
                        meta=extra, **common)

    def import_file(self, ctx: ImportContext, path: Path) -> None:
        self._queue = QueuedPrompts()
        super().import_file(ctx, path)
        self._queue.finish(ctx, path, FORMAT, FORMAT + ":{}:main")

    # -- titles ----------------------------------------------------------------------------
    def on_flush(self, ctx: ImportContext, conn: Connection, path: Path, from_start: bool,
                 batch: dict[str, list[NewEntry]]) -> None:
        """Keep this batch's summary lines; retitle the sessions they or the batch touch. A
        custom title (``/rename``) is kept in the session's meta and wins over summaries;
        one read before its session has a line stored waits for a later batch."""
        store, now = ctx.store, now_iso()
        name = storable(str(path))  # a file name that is not valid UTF-8: its bytes as \xNN
        with orm(conn) as s:
            if from_start:
                s.exec(delete(ClaudeCodeSummary)  # type: ignore[call-overload]
                       .where(col(ClaudeCodeSummary.path) == name))
            for leaf, text, line in self._summaries:
                s.add(ClaudeCodeSummary(leaf_uuid=leaf, summary=text, path=name, line=line,
                                        writer=store.writer, writer_version=store.writer_version,
                                        created_at=now))
            s.flush()
            touched = set(self._sessions_of(s, [leaf for leaf, _, _ in self._summaries]))
            self._summaries.clear()
            for session_id, entries in batch.items():
                uuids = sorted({e.uuid for e in entries if e.uuid})
                if uuids and self._named(s, uuids):
                    touched.add(session_id)
            for session_id, title in list(self._custom_titles.items()):
                row = s.get(SessionRow, session_id)
                if row is not None and row.format == FORMAT:
                    meta = loads(row.meta, {})
                    meta = meta if isinstance(meta, dict) else {}
                    row.meta = json.dumps({**meta, CUSTOM_TITLE: title}, ensure_ascii=False,
                                          sort_keys=True)
                    s.add(row)
                    touched.add(session_id)
                    del self._custom_titles[session_id]
            for session_id in sorted(touched):
                _retitle(s, session_id)
            s.flush()

    @staticmethod
    def _sessions_of(s: Any, uuids: list[str]) -> list[str]:
        found: set[str] = set()
        for i in range(0, len(uuids), 500):
            found.update(s.exec(select(Entry.session_id).where(
                col(Entry.uuid).in_(uuids[i:i + 500]))).all())
        return sorted(found)

    @staticmethod
    def _named(s: Any, uuids: list[str]) -> bool:
        for i in range(0, len(uuids), 500):
            if s.exec(select(ClaudeCodeSummary.id).where(
                    col(ClaudeCodeSummary.leaf_uuid).in_(uuids[i:i + 500])).limit(1)).first():
                return True
        return False

    def on_end(self, ctx: ImportContext, path: Path, with_session: int, skipped: int) -> None:
        self._custom_titles.clear()  # of a session with nothing stored: nothing to title
        if with_session == 0 and skipped:
            ctx.report.notes.append(f"{path}: a Claude Code file with nothing to import "
                                    f"({plural(skipped, 'housekeeping line')}"
                                    ")")


def _retitle(s: Any, session_id: str) -> None:
    """Title a Claude Code session with its custom title, else the latest summary naming one
    of its lines."""
    row = s.get(SessionRow, session_id)
    meta = loads(row.meta, {}) if row is not None else {}
    latest = meta.get(CUSTOM_TITLE) if isinstance(meta, dict) else None
    if not isinstance(latest, str):
        # the summary whose leaf is latest in the session (its time, then its line), whatever
        # order the files holding the summaries were imported in
        latest = s.exec(
            select(ClaudeCodeSummary.summary)
            .join(Entry, col(Entry.uuid) == col(ClaudeCodeSummary.leaf_uuid))
            .where(Entry.session_id == session_id)
            .order_by(col(Entry.ts).desc(), col(Entry.source_line).desc(),
                      col(ClaudeCodeSummary.path).desc(), col(ClaudeCodeSummary.line).desc())
            .limit(1)).first()
    if row is not None and row.format == FORMAT and latest is not None and row.title != latest:
        row.title = latest
        s.add(row)
