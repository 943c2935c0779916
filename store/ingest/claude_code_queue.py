"""Prompts typed while a Claude Code agent worked (2.0.x–2.1.3x): ``queue-operation`` lines;
Claude Code 2.0.x's "Warmup" sidechains (``is_warmup``), the harness's own; and a Task
worker's messages as its orchestrator's ``progress`` / ``agent_progress`` lines carry them
(``worker_message``).

There the person's words exist only as the ``content`` of an ``enqueue`` line (the ``remove``
or ``dequeue`` line that follows has none). Rules:

- an enqueued prompt is a ``user`` entry (a queued ``<bash-notification>`` or
  ``<task-notification>`` is ``system``: the harness's, not the person's), keyed by its line's
  byte offset, timed by it;
- unless the same words arrive later in the file as a ``user`` line or a ``queued_command``
  attachment of the same session — the whole prompt, whitespace normalised, never a part of a
  longer one ("yes" does not arrive in "why did yesterday's deploy fail?"); a queued slash
  command arrives as ``<command-name>/mcp</command-name>`` with its ``<command-args>`` —:
  then the later line is the one stored;
- whether they arrive is known only once the file has been read, so the enqueued prompts still
  waiting are written after its last line — by a normal import. A deferred import (a hook, on a
  live session) leaves them waiting: the next import reads them back from the lines already
  imported, so a prompt queued as a hook ran is not stored before its words can arrive.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.core.timeutil import normalise_iso
from store.core.writes import NewEntry, NewSession
from store.ingest.base import ImportContext
from store.ingest.write_batch import write_batch

HARNESS_PREFIXES = ("<bash-notification>", "<task-notification>")


@dataclass
class Queued:
    session_id: str
    text: str
    ts: str | None
    line: int
    offset: int


def queued_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content
                         if isinstance(b, dict) and b.get("type") == "text")
    return ""


class QueuedPrompts:
    """The enqueued prompts of one file whose words have not arrived yet."""

    def __init__(self) -> None:
        self.pending: list[Queued] = []
        self.prefix_read = False

    def enqueue(self, obj: dict[str, Any], line: int, offset: int) -> bool:
        """Note an ``enqueue`` line's prompt; False when it holds none."""
        if obj.get("operation") != "enqueue":
            return False
        sid, text = obj.get("sessionId"), queued_text(obj.get("content")).strip()
        if not isinstance(sid, str) or not sid or not text:
            return False
        ts = obj.get("timestamp")
        self.pending.append(Queued(sid, text, normalise_iso(ts) if isinstance(ts, str)
                                   else None, line, offset))
        return True

    def arrived(self, session_id: str, text: str) -> int:
        """A later user line or queued_command of ``session_id`` says ``text``: the prompts
        it is (the whole prompt, or its slash command) are not stored from their enqueue
        line."""
        if not (self.pending and text):
            return 0
        said_as = _forms(text)
        waiting = len(self.pending)
        self.pending = [q for q in self.pending
                        if q.session_id != session_id or _normal(q.text) not in said_as]
        return waiting - len(self.pending)

    def read_prefix(self, path: Path, end: int) -> None:
        """An import resumed at byte ``end``: the prompts enqueued before it and not arrived
        before it wait again (stored already, they are not stored twice: same key)."""
        self.prefix_read = True
        offset = 0
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                start, offset = offset, offset + len(raw)
                if offset > end:
                    break
                wanted = b'"queue-operation"' in raw or (self.pending and (
                    b'"user"' in raw or b'"queued_command"' in raw))
                if not wanted:
                    continue
                try:
                    obj = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(obj, dict):
                    continue
                if obj.get("type") == "queue-operation":
                    self.enqueue(obj, number, start)
                elif isinstance(obj.get("sessionId"), str):
                    self.arrived(obj["sessionId"], said(obj))

    def entries(self, source_key: str, path: Path) -> dict[str, list[NewEntry]]:
        out: dict[str, list[NewEntry]] = {}
        for q in self.pending:
            kind = "system" if q.text.lstrip().startswith(HARNESS_PREFIXES) else "user"
            out.setdefault(q.session_id, []).append(NewEntry(
                kind=kind, content=q.text, source_key=source_key.format(q.session_id),
                ts=q.ts, source_path=str(path), source_offset=q.offset, source_line=q.line,
                line_id=f"queue-operation@{q.offset}",
                meta={"queue_operation": "enqueue"}))
        return out

    def finish(self, ctx: ImportContext, path: Path, fmt: str, source_key: str) -> None:
        """After the file's last line: write the prompts whose words never arrived (a normal
        import; a deferred one leaves them waiting)."""
        if ctx.defer or not self.pending:
            self.pending.clear()
            return
        main = path.parent.name != "subagents"
        for sid, entries in self.entries(source_key, path).items():
            times = sorted(e.ts for e in entries if e.ts)
            session = NewSession(id=sid, format=fmt, agent="claude-code", surface="claude-code",
                                 started_at=times[0] if times else None,
                                 ended_at=times[-1] if times else None,
                                 source=str(path) if main else None)
            write_batch(ctx, path, session, entries)
        self.pending.clear()


def _normal(text: str) -> str:
    return " ".join(text.split())


_COMMAND = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)


def _forms(text: str) -> set[str]:
    """What a later line says, as an enqueued prompt would have been typed: its whole text
    (whitespace normalised) and, for a slash command, ``/name args``."""
    forms = {_normal(text)}
    command = _COMMAND.search(text)
    if command:
        name = _normal(command.group(1))
        name = name if name.startswith("/") else f"/{name}"
        args = _ARGS.search(text)
        forms.add(_normal(f"{name} {args.group(1) if args else ''}"))
    return forms


def said(obj: dict[str, Any]) -> str:
    """The words of a user line (its text blocks) or of a queued_command attachment."""
    if obj.get("type") == "attachment":
        attachment = obj.get("attachment")
        if isinstance(attachment, dict) and attachment.get("type") == "queued_command":
            return queued_text(attachment.get("prompt"))
        return ""
    if obj.get("type") != "user":
        return ""
    message = obj.get("message")
    return queued_text(message.get("content")) if isinstance(message, dict) else ""


def is_warmup(obj: dict[str, Any]) -> bool:
    """The first line of Claude Code 2.0.x's own "Warmup" sidechain: a root sidechain user line
    saying ``Warmup`` and nothing else."""
    return (obj.get("type") == "user" and _truthy(obj.get("isSidechain"))
            and obj.get("parentUuid") is None and said(obj).strip() == "Warmup")


def warmup_in_prefix(path: Path, agent_id: str, end: int) -> bool:
    """Whether the sidechain ``agent_id`` began, before byte ``end``, with a Warmup line (an
    import resumed after that line)."""
    needle = json.dumps(agent_id).encode()
    offset = 0
    with path.open("rb") as fh:
        for raw in fh:
            offset += len(raw)
            if offset > end:
                return False
            if needle not in raw:
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict) and obj.get("agentId") == agent_id:
                return is_warmup(obj)
    return False


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def worker_message(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The worker's own line that a ``progress`` line of ``type: agent_progress`` carries (its
    ``data.message``, a user or assistant line, and ``data.agentId``), shaped as the worker's
    ``subagents/agent-<id>.jsonl`` writes it: same session, agent, uuid and content, so the
    entries it gives are the ones that file gives (the same keys: stored once, in whichever
    order the two are read). None for any other progress line."""
    data = obj.get("data")
    if not isinstance(data, dict) or data.get("type") != "agent_progress":
        return None
    message, agent = data.get("message"), data.get("agentId")
    if not isinstance(message, dict) or not isinstance(agent, str) or not agent:
        return None
    if message.get("type") not in ("user", "assistant") or not isinstance(
            message.get("message"), dict) or not isinstance(message.get("uuid"), str):
        return None
    inner: dict[str, Any] = {k: obj[k] for k in ("sessionId", "cwd", "version", "gitBranch",
                                                 "userType") if k in obj}
    inner.update({"type": message["type"], "message": message["message"],
                  "uuid": message["uuid"], "parentUuid": None, "isSidechain": True,
                  "agentId": agent,
                  "timestamp": message.get("timestamp") or obj.get("timestamp")})
    return inner
