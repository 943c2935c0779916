"""The shared write path for transcript entries and sessions, used by every importer and by
the harness API: idempotent (by idempotency key), append-only, indexed in the same
transaction, and followed by the derivers that interpret stored entries."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, text

from store.core.index import Indexer, Prepared, Source, sha256_text
from store.core.textsafe import storable
from store.core.timeutil import now_iso

KINDS = ("user", "assistant", "tool_call", "tool_result", "reasoning", "system", "compaction",
         "checkpoint", "event")


def token_estimate(content: str) -> int:
    """The reference implementation's estimate: ceil(chars / 4) + 4."""
    return math.ceil(len(content) / 4) + 4


def idem_key(source_key: str, position: int | str | None, block: int, content_hash: str
             ) -> str:
    """source + position + content hash (DESIGN "Getting data in").

    The position is the line's own stable id where the format has one (Claude Code's
    ``uuid``, MindStone's ``id``), else its byte offset: a file rewritten with a changed line
    then adds that line alone instead of every line after it.
    """
    raw = f"{source_key}|{position}|{block}|{content_hash}"
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (ValueError, TypeError, RecursionError):  # mixed-type keys, nesting too deep
        return repr(value)[:10000]


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def meta_json(meta: dict[str, Any]) -> str | None:
    """Meta as JSON text SQLite's JSON functions read: a non-finite number (which
    ``json.dumps`` would write as ``NaN``/``Infinity``, not JSON) becomes null."""
    if not meta:
        return None
    try:
        return json.dumps(meta, default=str, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(meta), default=str, allow_nan=False)


@dataclass
class NewSession:
    id: str
    format: str
    agent: str | None = None
    surface: str | None = None
    project: str | None = None
    title: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    source: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Inputs are untrusted: the id must be text; other values of any JSON type are stored
        # as their JSON text, and a path that is not valid UTF-8 has its bytes as \xNN.
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"a session id must be a non-empty string, got {self.id!r}"[:200])
        self.id = storable(self.id)
        for name in ("format", "agent", "surface", "project", "title", "started_at",
                     "ended_at", "source"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, storable(value if isinstance(value, str)
                                             else _as_text(value)))
        if not isinstance(self.meta, dict):
            self.meta = {"value": self.meta}


@dataclass
class NewEntry:
    kind: str
    content: Any  # text; other JSON values are stored as their JSON, None as ""
    source_key: str
    agent: str = "main"
    ts: str | None = None
    source_path: str | None = None
    source_offset: int | None = None
    source_line: int | None = None
    block: int = 0
    uuid: str | None = None
    parent_uuid: str | None = None
    message_id: str | None = None
    tool_name: str | None = None
    tool_use_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    line_id: str | None = None  # the source line's stable id, when the format has one

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown entry kind {self.kind!r} (one of {', '.join(KINDS)})")
        # Inputs are untrusted: ids of any JSON type are stored as text, content None as "".
        self.content = "" if self.content is None else _as_text(self.content)
        for name in ("ts", "uuid", "parent_uuid", "message_id", "tool_name", "tool_use_id",
                     "line_id", "agent", "source_path"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, storable(value if isinstance(value, str)
                                             else _as_text(value)))
        for name in ("source_offset", "source_line", "block"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not -(2**63) <= value < 2**63):
                raise ValueError(f"{name} must be a 64-bit integer, got {value!r}"[:200])
        if not isinstance(self.meta, dict):
            self.meta = {"value": self.meta}

    @property
    def content_hash(self) -> str:
        return sha256_text(self.content)

    @property
    def key(self) -> str:
        position = f"id:{self.line_id}" if self.line_id else self.source_offset
        return idem_key(self.source_key, position, self.block, self.content_hash)


@dataclass
class WriteResult:
    sessions_added: int = 0
    entry_ids: list[int] = field(default_factory=list)
    chunks: int = 0
    chunks_failed: int = 0
    errors: list[str] = field(default_factory=list)


def upsert_session(conn: Connection, session: NewSession, writer: str, version: str) -> bool:
    """Insert the session, or widen its time range; True when it is new."""
    row = conn.execute(text("SELECT started_at, ended_at FROM session WHERE id = :id"),
                       {"id": session.id}).first()
    if row is None:
        conn.execute(text(
            "INSERT INTO session (id, agent, surface, project, title, started_at, ended_at, "
            "source, format, meta, writer, writer_version, created_at) VALUES (:id, :agent, "
            ":surface, :project, :title, :s, :e, :source, :format, :meta, :w, :wv, :c)"), {
            "id": session.id, "agent": session.agent, "surface": session.surface,
            "project": session.project, "title": session.title, "s": session.started_at,
            "e": session.ended_at, "source": session.source, "format": session.format,
            "meta": meta_json(session.meta) or "{}", "w": writer, "wv": version, "c": now_iso()})
        return True
    started = min(filter(None, [row[0], session.started_at]), default=None)
    ended = max(filter(None, [row[1], session.ended_at]), default=None)
    conn.execute(text(
        "UPDATE session SET started_at = :s, ended_at = :e, project = COALESCE(project, :p), "
        "title = COALESCE(title, :t), source = COALESCE(source, :src) WHERE id = :id"),
        {"s": started, "e": ended, "p": session.project, "t": session.title,
         "src": session.source, "id": session.id})
    return False


def existing_keys(conn: Connection, keys: list[str]) -> set[str]:
    found: set[str] = set()
    for i in range(0, len(keys), 500):
        part = keys[i:i + 500]
        marks = ", ".join(f":k{j}" for j in range(len(part)))
        rows = conn.execute(text(f"SELECT idem_key FROM entry WHERE idem_key IN ({marks})"),
                            {f"k{j}": k for j, k in enumerate(part)}).all()
        found.update(r[0] for r in rows)
    return found


def write_entries(conn: Connection, session_id: str, entries: list[NewEntry], indexer: Indexer,
                  writer: str, version: str,
                  prepared: dict[str, list[Prepared]] | None = None) -> WriteResult:
    """Append the entries not already stored (by idempotency key), index them, derive.

    ``prepared`` holds chunks already embedded (``embed_new``), so that the embedding work is
    done before the caller took the write lock.
    """
    result = WriteResult()
    if not entries:
        return result
    have = existing_keys(conn, [e.key for e in entries])
    seq = int(conn.execute(text("SELECT COALESCE(MAX(seq), -1) FROM entry WHERE "
                                "session_id = :s"), {"s": session_id}).scalar_one())
    created = now_iso()
    sources: list[Source] = []
    seen: set[str] = set()
    for entry in entries:
        key = entry.key
        if key in have or key in seen:
            continue
        seen.add(key)
        seq += 1
        content_hash = entry.content_hash
        new_id = conn.execute(text(
            "INSERT INTO entry (session_id, agent, seq, ts, kind, content, content_hash, tokens, "
            "source_path, source_offset, source_line, block, idem_key, uuid, parent_uuid, "
            "message_id, tool_name, tool_use_id, meta, writer, writer_version, created_at) "
            "VALUES (:sid, :agent, :seq, :ts, :kind, :content, :h, :tok, :sp, :so, :sl, :b, "
            ":k, :u, :pu, :mid, :tn, :tu, :meta, :w, :wv, :c) RETURNING id"), {
            "sid": session_id, "agent": entry.agent, "seq": seq, "ts": entry.ts,
            "kind": entry.kind, "content": entry.content, "h": content_hash,
            "tok": token_estimate(entry.content), "sp": entry.source_path,
            "so": entry.source_offset, "sl": entry.source_line, "b": entry.block, "k": key,
            "u": entry.uuid, "pu": entry.parent_uuid, "mid": entry.message_id,
            "tn": entry.tool_name, "tu": entry.tool_use_id,
            "meta": meta_json(entry.meta), "w": writer,
            "wv": version, "c": created}).scalar_one()
        result.entry_ids.append(int(new_id))
        sources.append(Source("entry", int(new_id), entry.content, content_hash))
    times = [e.ts for e in entries if e.ts and e.key not in have]
    if times:  # the session spans its entries, whoever wrote them
        conn.execute(text(
            "UPDATE session SET started_at = CASE WHEN started_at IS NULL OR started_at > :a "
            "THEN :a ELSE started_at END, ended_at = CASE WHEN ended_at IS NULL OR "
            "ended_at < :b THEN :b ELSE ended_at END WHERE id = :s"),
            {"a": min(times), "b": max(times), "s": session_id})
    indexed = indexer.index(conn, sources, prepared)
    result.chunks, result.chunks_failed, result.errors = (indexed.chunks, indexed.failed,
                                                         indexed.errors)
    if result.entry_ids:
        from store.core.derive import run_derivers

        run_derivers(conn, result.entry_ids)
    return result


def embed_new(conn: Connection, entries: list[NewEntry], indexer: Indexer,
              progress: Callable[[int, int], None] | None = None
              ) -> dict[str, list[Prepared]]:
    """Chunk and embed the entries not stored yet; run it outside the write transaction."""
    have = existing_keys(conn, [e.key for e in entries])
    texts = {e.content_hash: e.content for e in entries if e.key not in have}
    return indexer.prepare(texts, progress)
