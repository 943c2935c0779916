"""The one write path for memories: create, update, upsert, supersede, evidence, status.

Every importer that writes memories (memory directories, ACP, lca-tui exports) and, later,
governed apply (a proposal a person approved, landing as add / revise / supersede / merge)
writes through these functions. Each takes the caller's ``Connection`` — so several writes
land in one transaction, and the caller's ``store.write()`` block commits or rolls back — and
the ``StoreBase`` whose ``writer`` / ``writer_version`` stamp the rows and whose indexer
embeds the memory's chunks. Each returns ids (or a ``MemoryWrite`` carrying one).

``fields`` are ``memory`` columns by name (``tags`` / ``projects`` as JSON text, flags as
0 / 1); the store manages ``id``, the supersession links and the writer columns itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, or_
from sqlmodel import col, select

from store.core.db import orm
from store.core.detected import dismissed, record
from store.core.secrets import kinds
from store.core.erasure import erased
from store.core.index import Source, drop_chunks_of
from store.core.models import Evidence, Memory
from store.core.timeutil import now_iso

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

# Columns the store manages: never taken from ``fields``.
MANAGED = frozenset({"id", "supersedes_id", "superseded_by_id", "writer", "writer_version",
                     "created_at"})
# Columns a caller may set.
COLUMNS = frozenset(Memory.model_fields) - MANAGED
# What a memory's content hash covers: what the agent loads and how it is weighed. Not where
# it came from or how its file spelled it (source file, front matter, supersedes reference,
# whether the loader could read it), nor the hash itself or when it was written. An importer
# that must notice a change in those too passes its own ``content_hash`` (the memory-directory
# importer hashes the whole parsed file).
HASHED = tuple(sorted(COLUMNS - {"source_file", "content_hash", "updated_at", "front_matter",
                                 "supersedes_ref", "loadable", "load_error"}))
# A write that sets any of these runs the secrets detector (what ``index_text`` reads).
CAUGHT = frozenset({"name", "description", "body", "invariant"})
# Evidence identical in these is the same evidence (``add_evidence(..., once=True)``).
_EVIDENCE_SAME = ("memory_id", "entry_id", "span_start", "span_end", "file_path", "note")


@dataclass(frozen=True)
class MemoryWrite:
    """What one write did: ``action`` is ``created``, ``updated``, ``unchanged`` or
    ``erased`` (refused: erased earlier)."""

    memory_id: int
    action: str
    chunks: int = 0
    failed: int = 0


def index_text(name: str, description: str | None, body: str, invariant: str | None) -> str:
    """What is embedded for a memory: its name, description, invariant and body."""
    parts = [name]
    if description:
        parts.append(description)
    if invariant:
        parts.append(invariant)
    parts.append(body)
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def content_hash(memory: Memory) -> str:
    """The hash of a memory's content (``HASHED`` columns): equal hashes, nothing to write."""
    body = json.dumps({k: getattr(memory, k) for k in HASHED}, sort_keys=True)
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def _checked(fields: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(fields) - COLUMNS
    if unknown:
        raise ValueError(f"not memory columns a writer may set: {', '.join(sorted(unknown))}")
    return dict(fields)


def get(conn: Connection, memory_id: int) -> Memory | None:
    """The memory row with this id (a detached model), or None."""
    with orm(conn) as s:
        return s.get(Memory, memory_id)


def find(conn: Connection, *, source_file: str | None = None, name: str | None = None,
         content_hash: str | None = None) -> Memory | None:
    """The memory of ``source_file``; without one, the first memory with no source file and
    this name and content hash (how an exported memory is found again)."""
    query = select(Memory)
    if source_file is not None:
        query = query.where(Memory.source_file == source_file)
    else:
        query = query.where(col(Memory.source_file).is_(None), Memory.name == name,
                            Memory.content_hash == content_hash)
    with orm(conn) as s:
        return s.exec(query.order_by(col(Memory.id)).limit(1)).first()


def with_source_prefix(conn: Connection, prefix: str) -> list[Memory]:
    """Every memory whose source file starts with ``prefix`` (e.g. ``<path>#`` for the
    sections of one file)."""
    with orm(conn) as s:
        rows = s.exec(select(Memory).where(col(Memory.source_file).startswith(
            prefix, autoescape=True)).order_by(col(Memory.id))).all()
    return list(rows)


def reindex(conn: Connection, store: Store, memory: Memory) -> tuple[int, int]:
    """Replace a memory's chunks with fresh ones; returns (chunks written, chunks failed)."""
    assert memory.id is not None
    drop_chunks_of(conn, "memory", memory.id)
    result = store.indexer().index(conn, [Source(
        "memory", memory.id,
        index_text(memory.name, memory.description, memory.body, memory.invariant),
        memory.content_hash)])
    return result.chunks, result.failed


def _caught(conn: Connection, store: Store, memory: Memory) -> None:
    """The secrets detector on a memory just written: a hit makes it ``secret`` (its name
    masked too when the name holds the value) and records the kinds found, unless a person
    dismissed its findings before (``mark --unmark-detected``). The content hash stays the
    input's, so importing the same file again finds it unchanged."""
    assert memory.id is not None
    det = store.detector()
    hits = det.detect(index_text(memory.name, memory.description, memory.body,
                                 memory.invariant))
    if not hits or memory.id in dismissed(conn, "memory", [memory.id]):
        return
    with orm(conn) as s:
        row = s.get(Memory, memory.id)
        assert row is not None
        row.sensitivity = memory.sensitivity = "secret"
        if det.detect(row.name):
            row.name = memory.name = det.mask(row.name)
        s.flush()
    record(conn, "memory", {memory.id: kinds(hits)}, "write", store.writer,
           store.writer_version)


def create(conn: Connection, store: Store, fields: Mapping[str, Any], *,
           index: bool = True) -> MemoryWrite:
    """Insert a memory (``content_hash`` computed from ``fields`` when not given) and index
    its chunks."""
    now = now_iso()
    memory = Memory(**_checked(fields), writer=store.writer,
                    writer_version=store.writer_version, created_at=now)
    memory.content_hash = memory.content_hash or content_hash(memory)
    memory.updated_at = memory.updated_at or now
    with orm(conn) as s:
        s.add(memory)
        s.flush()
    assert memory.id is not None
    _caught(conn, store, memory)
    chunks, failed = reindex(conn, store, memory) if index else (0, 0)
    return MemoryWrite(memory.id, "created", chunks, failed)


def update(conn: Connection, store: Store, memory_id: int, fields: Mapping[str, Any], *,
           index: bool = True) -> MemoryWrite:
    """Set ``fields`` on a memory (stamped with this writer) and re-index it. Its content
    hash is recomputed from the merged columns unless ``fields`` gives one."""
    values = _checked(fields)
    with orm(conn) as s:
        memory = s.get(Memory, memory_id)
        if memory is None:
            raise LookupError(f"no memory {memory_id}")
        for key, value in values.items():
            setattr(memory, key, value)
        if "content_hash" not in values:
            memory.content_hash = content_hash(memory)
        memory.updated_at = values.get("updated_at") or now_iso()
        memory.writer, memory.writer_version = store.writer, store.writer_version
        s.flush()
    if CAUGHT & set(values):
        _caught(conn, store, memory)
    chunks, failed = reindex(conn, store, memory) if index else (0, 0)
    return MemoryWrite(memory_id, "updated", chunks, failed)


def erased_earlier(conn: Connection, fields: Mapping[str, Any]) -> bool:
    """True when an erasure fingerprint names this content (``fields`` as ``upsert`` takes
    them): a file that still says what was erased or redacted must not come back, neither
    written nor proposed."""
    values = _checked(fields)
    digest = values.get("content_hash") or content_hash(Memory(**values))
    return bool(erased(conn, "memory", [str(digest)]))


def upsert(conn: Connection, store: Store, fields: Mapping[str, Any]) -> MemoryWrite:
    """Create the memory, or update the one found again (by ``source_file``, else by name and
    content hash); ``unchanged`` when its content hash is already the stored one; ``erased``
    (id 0, nothing written) when an erasure fingerprint names that content: an importer
    never brings back what was erased or redacted, from the same file or a copy of it."""
    values = _checked(fields)
    values.setdefault("content_hash", content_hash(Memory(**values)))
    if erased(conn, "memory", [str(values["content_hash"])]):
        return MemoryWrite(0, "erased")  # erased or redacted here: never written again
    found = find(conn, source_file=values.get("source_file"), name=values.get("name"),
                 content_hash=values["content_hash"])
    if found is None:
        return create(conn, store, values)
    assert found.id is not None
    if found.content_hash == values["content_hash"]:
        return MemoryWrite(found.id, "unchanged")
    return update(conn, store, found.id, values)


def set_status(conn: Connection, store: Store, memory_id: int, status: str, *,
               valid_to: str | None = None) -> None:
    """Change a memory's status (and ``valid_to``) without touching its content or chunks."""
    with orm(conn) as s:
        memory = s.get(Memory, memory_id)
        if memory is None:
            raise LookupError(f"no memory {memory_id}")
        memory.status, memory.valid_to, memory.updated_at = status, valid_to, now_iso()
        memory.writer, memory.writer_version = store.writer, store.writer_version
        s.flush()


def count_applied(conn: Connection, memory_id: int, *, prevented: bool, at: str
                  ) -> tuple[int, int] | None:
    """A harness reported the memory was used (``hits`` + 1) or prevented a mistake
    (``prevented`` + 1): count it and set ``last_applied``; returns (hits, prevented), or None
    when the memory is gone. Content, hash and chunks stay as they are."""
    with orm(conn) as s:
        memory = s.get(Memory, memory_id)
        if memory is None:
            return None
        if prevented:
            memory.prevented += 1
        else:
            memory.hits += 1
        memory.last_applied = memory.updated_at = at
        s.flush()
        return memory.hits, memory.prevented


def _link(s: Any, newer_id: int, older_id: int | None) -> None:
    newer = s.get(Memory, newer_id)
    if newer is None:
        raise LookupError(f"no memory {newer_id}")
    newer.supersedes_id = older_id
    if older_id is not None:
        older = s.get(Memory, older_id)
        if older is None:
            raise LookupError(f"no memory {older_id}")
        older.superseded_by_id = newer_id


def supersede(conn: Connection, newer_id: int, older_id: int | None) -> None:
    """Link ``newer_id`` as superseding ``older_id`` (both directions); ``None`` clears the
    newer memory's link. Statuses are the caller's to change (``set_status``)."""
    with orm(conn) as s:
        _link(s, newer_id, older_id)
        s.flush()


def resolve_supersedes_refs(conn: Connection) -> int:
    """Link every memory naming what it supersedes (``supersedes_ref``: a name, or a file
    name with or without ``.md``) to the first other memory of that name or file; returns
    how many were linked."""
    linked = 0
    with orm(conn) as s:
        naming = s.exec(select(Memory.id, Memory.supersedes_ref).where(
            col(Memory.supersedes_ref).is_not(None))).all()
        for memory_id, ref in naming:
            assert memory_id is not None and ref is not None
            stem = ref[:-3] if ref.endswith(".md") else ref
            target = s.exec(select(Memory.id).where(
                Memory.id != memory_id,
                or_(col(Memory.name) == ref, col(Memory.source_file).endswith(
                    f"/{stem}.md", autoescape=True))).order_by(col(Memory.id)).limit(1)).first()
            _link(s, memory_id, target)
            linked += target is not None
        s.flush()
    return linked


def add_evidence(conn: Connection, store: Store, memory_id: int, *,
                 entry_id: int | None = None, span_start: int | None = None,
                 span_end: int | None = None, file_path: str | None = None,
                 note: str | None = None, once: bool = False) -> int | None:
    """Record what supports a memory (an entry span, a file, a note); returns the evidence
    id. With ``once``, identical evidence already recorded is not added again (None)."""
    row = Evidence(memory_id=memory_id, entry_id=entry_id, span_start=span_start,
                   span_end=span_end, file_path=file_path, note=note, writer=store.writer,
                   writer_version=store.writer_version, created_at=now_iso())
    with orm(conn) as s:
        if once:
            same = select(Evidence.id).where(*(
                col(getattr(Evidence, k)).is_not_distinct_from(getattr(row, k))
                for k in _EVIDENCE_SAME))
            if s.exec(same.limit(1)).first() is not None:
                return None
        s.add(row)
        s.flush()
        return row.id


def evidence_of(conn: Connection, memory_ids: Iterable[int]) -> list[Evidence]:
    """The evidence rows of these memories, by id."""
    with orm(conn) as s:
        return list(s.exec(select(Evidence).where(col(Evidence.memory_id).in_(
            list(memory_ids))).order_by(col(Evidence.id))).all())
