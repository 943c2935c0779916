"""Gemini CLI sessions (``~/.gemini/tmp/<project hash>/chats/``), both layouts:

- the chats JSON (``session-<time>-<id>.json``): one object ``{sessionId, projectHash,
  startTime, lastUpdated, messages[], summary?, kind?}``, rewritten whole as the session goes;
- the newer JSONL (0.4x): a header line ``{sessionId, projectHash, startTime, lastUpdated,
  kind}``, one line per message, and ``{"$set": {...}}`` lines updating the header's fields.

A message ``{id, timestamp, type, content, thoughts?, toolCalls?, tokens?, model?}`` gives
its entries in order, keyed by the message id and their place in it (a message written again
unchanged adds nothing): each ``thoughts`` item (``subject: description``) → ``reasoning``;
the text (a string, or ``[{text}]`` parts; ``parts`` in place of ``content`` in some
copies) → ``user`` for ``type: user``, ``assistant`` for
``gemini``, ``system`` for ``info``/``error``/``warning``; each tool call → ``tool_call``
(its ``args``) and, when it has a ``result`` (``functionResponse.response``) or a
``resultDisplay``, a ``tool_result``. ``tokens.input`` (the prompt, cached tokens included) is
the context a ``gemini`` message used: stored as its usage, so it is a context snapshot.
A ``$set`` of ``summary`` titles the session. A message type, part or line shape not known
here is counted as skipped-unknown (a note per file, never an error per line).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, update
from sqlmodel import col

from store.core.models import Session as SessionRow
from store.core.textsafe import storable
from store.core.timeutil import normalise_iso
from store.core.writes import NewEntry, NewSession
from store.ingest import fields
from store.ingest.base import ImportContext, LineImporter, Skip, record_skips
from store.ingest.lines import Position, load_position, save_position
from store.ingest.write_batch import prepare, write_into
from store.core.vocab import plural

FORMAT = "gemini"
CHAT_FORMAT = "gemini-chat"
MESSAGE_TYPES = {"user": "user", "gemini": "assistant", "model": "assistant", "info": "system",
                 "error": "system", "warning": "system"}
HEADER_KEYS = {"projectHash", "startTime", "lastUpdated"}
MAX_JSON_BYTES = 256 * 1024 * 1024


def is_header(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("sessionId"), str) and bool(HEADER_KEYS & set(obj)) \
        and "uuid" not in obj and "message" not in obj


def is_message(obj: dict[str, Any]) -> bool:
    return (obj.get("type") in MESSAGE_TYPES and "id" in obj
            and ("content" in obj or "parts" in obj)
            and "uuid" not in obj and "payload" not in obj and "role" not in obj)


def looks_like(obj: dict[str, Any]) -> bool:
    """A Gemini CLI JSONL line: its header, a message, or a ``$set`` update."""
    return is_header(obj) or is_message(obj) or (
        isinstance(obj.get("$set"), dict) and len(obj) == 1)


def _not_chat(doc: Any) -> str:
    """What a document lacks to be a chats file, and the keys it has."""
    if not isinstance(doc, dict):
        return f"a JSON {fields.kind(doc)}, not an object"
    missing = [name for name, ok in (
        ("no sessionId (a string)", isinstance(doc.get("sessionId"), str)),
        ("no messages[]", isinstance(doc.get("messages"), list)),
        ("none of " + ", ".join(sorted(HEADER_KEYS)), bool(HEADER_KEYS & set(doc)))) if not ok]
    keys = ", ".join(str(k) for k in sorted(doc, key=str)[:8]) or "no keys"
    return f"{'; '.join(missing)}; it has: {keys}"


def looks_like_chat(obj: Any) -> bool:
    """A Gemini CLI chats JSON document."""
    return isinstance(obj, dict) and isinstance(obj.get("messages"), list) and isinstance(
        obj.get("sessionId"), str) and bool(HEADER_KEYS & set(obj))


def _parts_text(content: Any) -> tuple[str, list[str]]:
    if isinstance(content, str):
        return content, []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return "", ([fields.kind(content)] if content is not None else [])
    texts: list[str] = []
    left: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict):
            left.append(next(iter(part), "empty part"))
        else:
            left.append(fields.kind(part))
    return "\n".join(texts), left


def _result_text(call: dict[str, Any]) -> str | None:
    result = call.get("result")
    outputs: list[str] = []
    if isinstance(result, list):
        for item in result:
            response = item.get("functionResponse") if isinstance(item, dict) else None
            if isinstance(response, dict):
                body = response.get("response")
                if isinstance(body, dict) and set(body) <= {"output", "error"}:
                    outputs.append("\n".join(str(v) for v in body.values()))
                elif body is not None:
                    outputs.append(json.dumps(body, ensure_ascii=False, sort_keys=True))
            elif item is not None:
                outputs.append(json.dumps(item, ensure_ascii=False, sort_keys=True))
    elif result is not None:
        outputs.append(result if isinstance(result, str)
                       else json.dumps(result, ensure_ascii=False, sort_keys=True))
    if outputs:
        return "\n".join(outputs)
    display = call.get("resultDisplay")
    if isinstance(display, str):
        return display
    return None


class _Session:
    """What a Gemini file says of its session so far."""

    def __init__(self, path: Path) -> None:
        self.id: str | None = None
        self.project_hash: str | None = None
        self.title: str | None = None
        self.started: str | None = None
        self.meta: dict[str, Any] = {}
        self.path = path

    def header(self, obj: dict[str, Any]) -> None:
        sid = obj.get("sessionId")
        if isinstance(sid, str) and sid and self.id is None:
            self.id = sid
        for key in ("projectHash", "kind"):
            if isinstance(obj.get(key), str):
                self.meta[key] = obj[key]
        if isinstance(obj.get("startTime"), str):
            self.started = normalise_iso(obj["startTime"])
        if isinstance(obj.get("summary"), str) and obj["summary"].strip():
            self.title = obj["summary"].strip()

    def row(self, ts: str | None) -> NewSession:
        sid = self.id or self.path.stem
        return NewSession(id=sid, format=FORMAT, agent="gemini", surface="gemini-cli",
                          title=self.title, started_at=self.started or ts, ended_at=ts,
                          source=str(self.path), meta=dict(self.meta))


def message_entries(ctx: ImportContext, session: _Session, obj: dict[str, Any], path: Path,
                    line_no: int | None, offset: int | None) -> list[NewEntry] | Skip:
    """The entries of one Gemini message, in order."""
    mtype = obj.get("type")
    kind = MESSAGE_TYPES.get(mtype) if isinstance(mtype, str) else None
    if kind is None:
        return Skip(f"message type {mtype}", unknown=True)
    mid = obj.get("id")
    mid = mid if isinstance(mid, str) and mid else f"@{offset if offset is not None else '?'}"
    try:
        raw_ts = fields.timestamp(obj, "timestamp")
    except fields.FieldProblem:
        raw_ts = None
    ts = normalise_iso(raw_ts) if raw_ts else None
    sid = session.id or path.stem
    common: dict[str, Any] = dict(source_key=f"{FORMAT}:{sid}", agent="main", ts=ts,
                                  source_path=str(path), source_offset=offset,
                                  source_line=line_no, line_id=mid, message_id=mid)
    out: list[NewEntry] = []
    meta: dict[str, Any] = {"type": mtype}
    if isinstance(obj.get("model"), str):
        meta["model"] = obj["model"]
    thoughts = obj.get("thoughts")
    for thought in thoughts if isinstance(thoughts, list) else []:
        if not isinstance(thought, dict):
            ctx.skip("thought (not an object)", unknown=True, block=True)
            continue
        subject, desc = thought.get("subject"), thought.get("description")
        text = ": ".join(str(x) for x in (subject, desc) if isinstance(x, str) and x)
        if text:
            out.append(NewEntry(kind="reasoning", content=text, block=len(out),
                                meta=dict(meta), **common))
    text, left = _parts_text(obj["content"] if "content" in obj else obj.get("parts"))
    for part in left:
        ctx.skip(f"part {part}", unknown=part not in ("inlineData", "fileData"), block=True)
    tokens = obj.get("tokens")
    usage: dict[str, Any] | None = None
    if isinstance(tokens, dict):
        figures = {k: ctx.optional(path, line_no or 0, fields.tokens, tokens, k, f"tokens.{k}")
                   for k in ("input", "output", "cached", "thoughts", "tool", "total")
                   if k in tokens}
        meta["tokens"] = {k: v for k, v in figures.items() if v is not None}
        if figures.get("input"):
            usage = {"input_tokens": figures["input"]}
    if text.strip() or kind == "user" or (kind != "assistant" and not out):
        out.append(NewEntry(kind=kind, content=text, block=len(out), meta=dict(meta),
                            **common))
    calls = obj.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            ctx.skip("toolCall (not an object)", unknown=True, block=True)
            continue
        name = call.get("name") if isinstance(call.get("name"), str) else None
        cid = call.get("id") if isinstance(call.get("id"), str) else None
        call_meta = {k: call[k] for k in ("status", "displayName") if isinstance(call.get(k),
                                                                               str)}
        out.append(NewEntry(kind="tool_call", content=json.dumps(
            call.get("args", {}), ensure_ascii=False, sort_keys=True), block=len(out),
            tool_name=name, tool_use_id=cid, meta={**meta, **call_meta}, **common))
        result = _result_text(call)
        if result is not None:
            out.append(NewEntry(kind="tool_result", content=result, block=len(out),
                                tool_name=name, tool_use_id=cid,
                                meta={**meta, **call_meta}, **common))
    if not out:
        return Skip(f"message {mtype} (no text, thoughts or tool calls)")
    if usage is not None:  # the context this reply used: one snapshot per message
        last = next((e for e in out if e.kind == "assistant"), out[-1])
        last.meta["usage"] = usage
    return out


def set_title(conn: Connection, session_id: str, title: str | None) -> None:
    """Gemini's own summary of the session is its title (the latest one written)."""
    if title:
        conn.execute(update(SessionRow).where(col(SessionRow.id) == session_id)
                     .values(title=storable(title)))


class GeminiImporter(LineImporter):
    """The JSONL layout."""

    format = FORMAT

    def __init__(self) -> None:
        self._session: _Session | None = None

    def source_key(self, obj: dict[str, Any]) -> str:
        return f"{FORMAT}:{self._session.id if self._session else None}"

    def convert(self, ctx: ImportContext, path: Path, line_no: int, offset: int,
                obj: dict[str, Any]
                ) -> tuple[NewSession | None, list[NewEntry]] | str | Skip | None:
        if self._session is None:
            self._session = _Session(path)
            if self.start.offset:  # resumed: the header is at the top of the file
                self._read_header(path)
        session = self._session
        if is_header(obj):
            session.header(obj)
            return session.row(None), []
        if "$set" in obj and len(obj) == 1:
            changes = obj["$set"]
            if not isinstance(changes, dict):
                return Skip("$set (not an object)", unknown=True)
            session.header(changes)
            return Skip("$set")
        if any(isinstance(k, str) and k.startswith("$") for k in obj):
            return Skip(f"{next(k for k in obj if k.startswith('$'))} update", unknown=True)
        entries = message_entries(ctx, session, obj, path, line_no, offset)
        if isinstance(entries, Skip):
            return entries
        return session.row(entries[0].ts), entries

    def on_flush(self, ctx: ImportContext, conn: Connection, path: Path, from_start: bool,
                 batch: dict[str, list[NewEntry]]) -> None:
        if self._session is not None and self._session.id is not None:
            set_title(conn, self._session.id, self._session.title)

    def _read_header(self, path: Path) -> None:
        assert self._session is not None
        with path.open("rb") as fh:
            first = fh.readline()
        try:
            obj = json.loads(first)
        except ValueError:
            return
        if isinstance(obj, dict) and is_header(obj):
            self._session.header(obj)


def is_chat_file(path: Path) -> bool:
    """A ``.json`` file that may be a Gemini chats document: in a ``chats`` folder, or with
    both of its keys near the start."""
    if path.suffix != ".json":
        return False
    if path.parent.name == "chats":
        return True
    try:
        with path.open("rb") as fh:
            head = fh.read(65536)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"messages"' in head and b'"sessionId"' in head


def import_chat_file(ctx: ImportContext, path: Path) -> bool:
    """Import a Gemini chats JSON file; False (nothing done) when it is not one."""
    store, report = ctx.store, ctx.report
    resolved = path.resolve()
    size = resolved.stat().st_size
    if size > MAX_JSON_BYTES:
        report.error(str(path), None, f"{size:,} bytes: larger than the {MAX_JSON_BYTES:,} a "
                     "Gemini chats file is read whole up to; not imported")
        return True
    data = resolved.read_bytes()
    fingerprint = hashlib.sha256(data).hexdigest()
    try:
        doc, _ = fields.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        report.error(str(path), None, f"not UTF-8 (byte {exc.start}): not imported")
        return True
    except json.JSONDecodeError as exc:
        if path.parent.name != "chats":
            return False
        report.error(str(path), exc.lineno, f"invalid JSON: {exc.msg} at column {exc.colno}")
        return True
    except RecursionError:
        report.error(str(path), None, "JSON nested too deeply to read: not imported")
        return True
    if not looks_like_chat(doc):
        if path.parent.name == "chats":
            report.error(str(path), None, f"not a Gemini CLI chats file ({_not_chat(doc)})"
                         ": not imported")
            return True
        return False
    with store.read() as conn:
        saved = load_position(conn, resolved)
    if saved is not None and saved.fingerprint == fingerprint and saved.offset == size:
        return True  # unchanged since its last import
    session = _Session(path)
    session.header(doc)
    ctx.pending_skips.clear()
    entries: list[NewEntry] = []
    for index, message in enumerate(doc["messages"]):
        if not isinstance(message, dict):
            ctx.skip(f"message ({fields.kind(message)}, not an object)", unknown=True)
            continue
        got = message_entries(ctx, session, message, path, None, index)
        if isinstance(got, Skip):
            ctx.skip(got.what, got.unknown, got.block)
        else:
            entries.extend(got)
    times = sorted(e.ts for e in entries if e.ts)
    row = session.row(times[-1] if times else None)
    if times:
        row.started_at = min(filter(None, [row.started_at, times[0]]))
    indexer, prepared = prepare(ctx, entries)
    with store.write() as conn:
        write_into(ctx, conn, path, row, entries, indexer, prepared)
        set_title(conn, row.id, session.title)
        record_skips(conn, resolved, ctx.pending_skips, True, store.writer,
                     store.writer_version)
        save_position(conn, resolved, CHAT_FORMAT, f"{FORMAT}:{row.id}",
                      Position(size, len(doc["messages"]), fingerprint), size, store.writer,
                      store.writer_version)
        ctx.persist(conn)
    unknown = {what: n for (what, unk, _), n in ctx.pending_skips.items() if unk}
    for what, n in sorted(unknown.items()):
        report.notes.append(f"{storable(str(path))}: {plural(n, 'item')} of a "
                            f"shape not known here ({what}) skipped")
    ctx.pending_skips.clear()
    return True
