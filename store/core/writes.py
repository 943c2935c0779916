"""The shared write path for transcript entries and sessions, used by every importer and by
the harness API: idempotent (by idempotency key), append-only, indexed in the same
transaction, and followed by the derivers that interpret stored entries.

With ``defer=True`` the entries are stored without their chunks and queued for embedding
(``embed_queue``; ``store.core.waiting`` embeds them later): a hook before every prompt must
not wait for the model. A queued entry is searchable at once through ``embed_queue_fts``,
which the queue's triggers fill (migration 12).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, case, func, insert, or_, update
from sqlmodel import col, select

from store.core.db import orm
from store.core.erasure import erased
from store.core.index import TOOL_KINDS, Indexer, Prepared, Source, sha256_text
from store.core.detected import record
from store.core.secrets import DEFAULT, Detector, kinds, mask, redact_private
from store.core.vec import mask_queue_fts
from store.core.textsafe import storable
from store.core.models import EmbedQueue, Entry
from store.core.models import Session as SessionRow
from store.core.timeutil import now_iso
from store.core.vocab import ENTRY_KINDS, SENSITIVITIES
from store.core.db import insert_ignore

KINDS = ENTRY_KINDS


def token_estimate(content: str) -> int:
    """``entry.tokens``: the reference implementation's estimate, ceil(chars / 4) + 4, over
    the whole content (no cap: a 10 MB entry counts 2,500,004).

    It is an estimate, not the embedding model's token count, kept because the context
    accounting it feeds is the reference's (MindStone's ``tokenEstimate``) and because a hook
    must not load a tokenizer to store an entry. Bounds, measured with the model's WordPiece
    tokenizer: prose is within about ±30 %; text without spaces (base64, minified code, one
    repeated character) has up to about 2x more model tokens than estimated (10 MB of ``x``:
    5,039,372 model tokens in its chunks against 2,500,004). True model counts are on the
    entry's chunks (``chunk.tokens``)."""
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
    sensitivity: str | None = None  # None: the session's default
    # ``<private>`` spans redacted from ``content`` as it was built (recorded on write)
    private_spans: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown entry kind {self.kind!r} (one of {', '.join(KINDS)})")
        if self.sensitivity is not None and self.sensitivity not in SENSITIVITIES:
            raise ValueError(f"unknown sensitivity {self.sensitivity!r} (one of "
                             f"{', '.join(SENSITIVITIES)})")
        # Inputs are untrusted: ids of any JSON type are stored as text, content None as "".
        self.content = "" if self.content is None else _as_text(self.content)
        # ``<private>…</private>`` is stored already redacted; the key's position is still
        # the source line's (its id or offset), so a re-import finds the same entry
        self.content, self.private_spans = redact_private(self.content)
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
    queued: int = 0  # stored without chunks, waiting for embedding
    errors: list[str] = field(default_factory=list)
    erased_earlier: int = 0  # entries refused: an erasure fingerprint names them
    secret: list[int] = field(default_factory=list)  # new entries the detector marked secret
    private_spans: int = 0  # ``<private>`` spans redacted in the new entries


def upsert_session(conn: Connection, session: NewSession, writer: str, version: str) -> bool:
    """Insert the session, or widen its time range; True when it is new.

    The session's row is locked until the caller's transaction ends (FOR UPDATE; on SQLite
    the write lock already holds the store): writers appending to one session on a server
    take turns here, so each reads the session's last ``seq`` and its stored idempotency
    keys after the other's commit. Two writers creating one new session at once: the
    insert skips a row that is there already (unique key), then both lock it."""
    with orm(conn) as s:
        row = s.get(SessionRow, session.id, with_for_update=True)
        if row is None:
            added = conn.execute(insert_ignore(conn, SessionRow).values(
                id=session.id, agent=session.agent, surface=session.surface,
                project=session.project, title=session.title, started_at=session.started_at,
                ended_at=session.ended_at, source=session.source, format=session.format,
                meta=meta_json(session.meta) or "{}", writer=writer, writer_version=version,
                created_at=now_iso()).returning(col(SessionRow.id))).first()
            if added is not None:  # RETURNING, not rowcount: a skipped row returns none
                s.get(SessionRow, session.id, with_for_update=True)
                return True
            row = s.get(SessionRow, session.id, with_for_update=True, populate_existing=True)
            assert row is not None
        row.started_at = min(filter(None, [row.started_at, session.started_at]), default=None)
        row.ended_at = max(filter(None, [row.ended_at, session.ended_at]), default=None)
        row.project = row.project if row.project is not None else session.project
        row.title = row.title if row.title is not None else session.title
        row.source = row.source if row.source is not None else session.source
        s.flush()
    return False


def existing_keys(conn: Connection, keys: list[str]) -> set[str]:
    found: set[str] = set()
    for i in range(0, len(keys), 500):
        found.update(conn.execute(select(Entry.idem_key).where(
            col(Entry.idem_key).in_(keys[i:i + 500]))).scalars())
    return found


# One INSERT ... RETURNING per entry through SQLAlchemy Core on the ``Entry`` model: measured
# on a 20,000-chunk bench store as fast as the hand-written statement it replaced (118-144 µs
# a row vs 151-183 µs), so the entry write path needs no raw SQL.
_INSERT_ENTRY = insert(Entry).returning(col(Entry.id))


def drop_erased(conn: Connection, entries: list[NewEntry]) -> tuple[list[NewEntry], int]:
    """The entries no erasure fingerprint names, and how many were refused: content erased
    or redacted earlier is never written again, from the same file or a copy of it."""
    gone = erased(conn, "entry", [e.key for e in entries])
    if not gone:
        return entries, 0
    kept = [e for e in entries if e.key not in gone]
    return kept, len(entries) - len(kept)


def write_entries(conn: Connection, session_id: str, entries: list[NewEntry],
                  indexer: Indexer | None, writer: str, version: str,
                  prepared: dict[str, list[Prepared]] | None = None,
                  defer: bool = False, detector: Detector | None = None) -> WriteResult:
    """Append the entries not already stored (by idempotency key), index them, derive.

    Each new entry goes through the secrets detector (``store.core.secrets``; the
    indexer's, else ``detector``, else the default): a hit stores it ``secret``, records the
    kinds found (``secret_finding``), and its chunks, vectors and queued FTS row hold the
    text with placeholders in place of the values.

    ``prepared`` holds chunks already embedded (``embed_new``), so that the embedding work is
    done before the caller took the write lock. With ``defer`` (no indexer needed) the new
    entries with text are queued for embedding instead of indexed.
    """
    result = WriteResult()
    entries, result.erased_earlier = drop_erased(conn, entries)
    if not entries:
        return result
    have = existing_keys(conn, [e.key for e in entries])
    seq = int(conn.execute(select(func.coalesce(func.max(Entry.seq), -1)).where(
        Entry.session_id == session_id)).scalar_one())
    created = now_iso()
    session_sensitivity = conn.execute(select(SessionRow.sensitivity).where(
        SessionRow.id == session_id)).scalar()  # the default of the session's entries
    det = detector or (indexer.detector if indexer is not None else None) or DEFAULT
    sources: list[Source] = []
    seen: set[str] = set()
    found: dict[int, dict[str, int]] = {}
    masked: list[tuple[int, str]] = []
    for entry in entries:
        key = entry.key
        if key in have or key in seen:
            continue
        seen.add(key)
        seq += 1
        content_hash = entry.content_hash
        hits = det.detect(entry.content)
        sensitivity = ("secret" if hits else
                       entry.sensitivity or session_sensitivity or "public")
        new_id = conn.execute(_INSERT_ENTRY, {
            "session_id": session_id, "agent": entry.agent, "seq": seq, "ts": entry.ts,
            "kind": entry.kind, "content": entry.content, "content_hash": content_hash,
            "tokens": token_estimate(entry.content), "source_path": entry.source_path,
            "source_offset": entry.source_offset, "source_line": entry.source_line,
            "block": entry.block, "idem_key": key, "uuid": entry.uuid,
            "parent_uuid": entry.parent_uuid, "message_id": entry.message_id,
            "tool_name": entry.tool_name, "tool_use_id": entry.tool_use_id,
            "meta": meta_json(entry.meta),
            "sensitivity": sensitivity, "writer": writer,
            "writer_version": version, "created_at": created}).scalar_one()
        assert new_id is not None
        result.entry_ids.append(new_id)
        if hits or entry.private_spans:
            found[new_id] = kinds(hits)
            if entry.private_spans:
                found[new_id]["private-span"] = entry.private_spans
                result.private_spans += entry.private_spans
        if hits:
            result.secret.append(new_id)
            masked.append((new_id, mask(entry.content, hits)))
        sources.append(Source("entry", new_id, entry.content, content_hash, entry.kind))
    times = [e.ts for e in entries if e.ts and e.key not in have]
    if times:  # the session spans its entries, whoever wrote them
        first, last = min(times), max(times)
        conn.execute(update(SessionRow).where(col(SessionRow.id) == session_id).values(
            started_at=case((or_(col(SessionRow.started_at).is_(None),
                                 col(SessionRow.started_at) > first), first),
                            else_=SessionRow.started_at),
            ended_at=case((or_(col(SessionRow.ended_at).is_(None),
                               col(SessionRow.ended_at) < last), last),
                          else_=SessionRow.ended_at)))
    if found:
        record(conn, "entry", found, "write", writer, version, created)
    if defer:
        result.queued = queue_for_embedding(conn, [s.source_id for s in sources
                                                   if s.text.strip()], writer, version)
        mask_queue_fts(conn, masked)  # the trigger copied the stored text
    else:
        if indexer is None:
            raise ValueError("write_entries needs an indexer unless it defers embedding")
        indexed = indexer.index(conn, sources, prepared)
        result.chunks, result.chunks_failed, result.errors = (indexed.chunks, indexed.failed,
                                                             indexed.errors)
    if result.entry_ids:
        from store.core.derive import run_derivers

        run_derivers(conn, result.entry_ids)
    return result


def queue_for_embedding(conn: Connection, entry_ids: list[int], writer: str, version: str
                        ) -> int:
    """Queue stored entries for embedding; their text is searchable by FTS at once (the
    queue's trigger indexes it). Returns how many were queued."""
    if entry_ids:
        created = now_iso()
        conn.execute(insert(EmbedQueue), [
            {"entry_id": i, "queued_at": created, "writer": writer, "writer_version": version,
             "created_at": created} for i in entry_ids])
    return len(entry_ids)


def head_only(entries: list[NewEntry]) -> set[str]:
    """Content hashes that embed their head only: tool calls and results (unless the same
    text is also stored as another kind, which embeds it whole)."""
    tools = {e.content_hash for e in entries if e.kind in TOOL_KINDS}
    return tools - {e.content_hash for e in entries if e.kind not in TOOL_KINDS}


def embed_new(conn: Connection, entries: list[NewEntry], indexer: Indexer,
              progress: Callable[[int, int], None] | None = None
              ) -> dict[str, list[Prepared]]:
    """Chunk and embed the entries not stored yet; run it outside the write transaction."""
    entries, _ = drop_erased(conn, entries)
    have = existing_keys(conn, [e.key for e in entries])
    fresh = [e for e in entries if e.key not in have]
    return indexer.prepare({e.content_hash: e.content for e in fresh}, head_only(fresh),
                           progress)
