"""TEMPORARY: a thin stand-in with the same signatures as ``store.core.memories`` (the one
memory-write module, being written on another branch). It is replaced by that module as soon
as it lands; nothing but ``store.governance.apply`` / ``links`` imports it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from store.core.db import orm
from store.core.index import Source, drop_chunks_of
from store.core.models import Evidence, Memory
from store.core.timeutil import now_iso

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

_HASHED = ("name", "description", "type", "body", "tags", "projects", "role", "critical",
           "invariant", "sensitivity", "authority", "status", "valid_from", "valid_to",
           "hits", "prevented", "last_applied", "evergreen", "half_life_days", "created")


@dataclass(frozen=True)
class MemoryWrite:
    memory_id: int
    action: str
    chunks: int = 0
    failed: int = 0


def index_text(name: str, description: str | None, body: str, invariant: str | None) -> str:
    parts = [name, description or "", invariant or "", body]
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def content_hash(memory: Memory) -> str:
    body = json.dumps({k: getattr(memory, k) for k in _HASHED}, sort_keys=True)
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def get(conn: Connection, memory_id: int) -> Memory | None:
    with orm(conn) as s:
        return s.get(Memory, memory_id)


def reindex(conn: Connection, store: Store, memory: Memory) -> tuple[int, int]:
    assert memory.id is not None
    drop_chunks_of(conn, "memory", memory.id)
    result = store.indexer().index(conn, [Source(
        "memory", memory.id,
        index_text(memory.name, memory.description, memory.body, memory.invariant),
        memory.content_hash)])
    return result.chunks, result.failed


def create(conn: Connection, store: Store, fields: Mapping[str, Any], *,
           index: bool = True) -> MemoryWrite:
    now = now_iso()
    memory = Memory(**dict(fields), writer=store.writer, writer_version=store.writer_version,
                    created_at=now, content_hash="", updated_at=now)
    memory.content_hash = content_hash(memory)
    with orm(conn) as s:
        s.add(memory)
        s.flush()
    assert memory.id is not None
    chunks, failed = reindex(conn, store, memory) if index else (0, 0)
    return MemoryWrite(memory.id, "created", chunks, failed)


def update(conn: Connection, store: Store, memory_id: int, fields: Mapping[str, Any], *,
           index: bool = True) -> MemoryWrite:
    with orm(conn) as s:
        memory = s.get(Memory, memory_id)
        if memory is None:
            raise LookupError(f"no memory {memory_id}")
        for key, value in fields.items():
            setattr(memory, key, value)
        memory.content_hash = content_hash(memory)
        memory.updated_at = now_iso()
        memory.writer, memory.writer_version = store.writer, store.writer_version
        s.flush()
    chunks, failed = reindex(conn, store, memory) if index else (0, 0)
    return MemoryWrite(memory_id, "updated", chunks, failed)


def set_status(conn: Connection, store: Store, memory_id: int, status: str, *,
               valid_to: str | None = None) -> None:
    with orm(conn) as s:
        memory = s.get(Memory, memory_id)
        if memory is None:
            raise LookupError(f"no memory {memory_id}")
        memory.status, memory.valid_to, memory.updated_at = status, valid_to, now_iso()
        memory.writer, memory.writer_version = store.writer, store.writer_version
        s.flush()


def supersede(conn: Connection, newer_id: int, older_id: int | None) -> None:
    with orm(conn) as s:
        newer = s.get(Memory, newer_id)
        if newer is None:
            raise LookupError(f"no memory {newer_id}")
        newer.supersedes_id = older_id
        if older_id is not None:
            older = s.get(Memory, older_id)
            if older is None:
                raise LookupError(f"no memory {older_id}")
            older.superseded_by_id = newer_id
        s.flush()


def add_evidence(conn: Connection, store: Store, memory_id: int, *,
                 entry_id: int | None = None, span_start: int | None = None,
                 span_end: int | None = None, file_path: str | None = None,
                 note: str | None = None, once: bool = False) -> int | None:
    with orm(conn) as s:
        row = Evidence(memory_id=memory_id, entry_id=entry_id, span_start=span_start,
                       span_end=span_end, file_path=file_path, note=note, writer=store.writer,
                       writer_version=store.writer_version, created_at=now_iso())
        s.add(row)
        s.flush()
        return row.id
