"""The core tables as SQLModel classes: the schema's one description in Python.

The migrations (``store.core.migrations``) create the tables; these classes describe them for
reads and writes (``select(Entry)``, ``session.add(...)``), and
``tests/store/test_schema.py`` checks that every class matches the migrated schema column by
column, index by index. Capabilities keep their own tables in their own ``models`` module on
the same ``SQLModel.metadata``.

SQLite has no boolean type: flags are ``int`` (0 / 1) as the migrations declare them. JSON
columns are ``str`` holding JSON; the plain dataclasses in ``records`` decode them.
"""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field, SQLModel


class Who(SQLModel):
    """Every written row records its writer, that writer's code version and when."""

    writer: str
    writer_version: str
    created_at: str


class SchemaMigration(SQLModel, table=True):
    __tablename__ = "schema_migration"

    version: int | None = Field(default=None, primary_key=True)
    name: str
    applied_at: str
    code_version: str


class StoreMeta(SQLModel, table=True):
    __tablename__ = "store_meta"

    key: str | None = Field(default=None, primary_key=True)
    value: str


class Session(Who, table=True):
    __tablename__ = "session"

    id: str = Field(primary_key=True)
    agent: str | None = None
    surface: str | None = None
    project: str | None = None
    title: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    source: str | None = None
    format: str
    meta: str | None = None
    sensitivity: str = "public"  # the default of the session's entries


class Entry(Who, table=True):
    __tablename__ = "entry"
    __table_args__ = (
        UniqueConstraint("session_id", "seq"),
        Index("entry_by_session", "session_id", "agent", "seq"),
        Index("entry_by_kind", "kind"),
        Index("entry_by_uuid", "uuid"),
        {"sqlite_autoincrement": True},  # ids never reused (migration 13)
    )

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="session.id")
    agent: str = "main"
    seq: int
    ts: str | None = None
    kind: str
    content: str
    content_hash: str
    tokens: int
    source_path: str | None = None
    source_offset: int | None = None
    source_line: int | None = None
    block: int = 0
    idem_key: str = Field(unique=True)
    uuid: str | None = None
    parent_uuid: str | None = None
    message_id: str | None = None
    tool_name: str | None = None
    tool_use_id: str | None = None
    meta: str | None = None
    sensitivity: str = "public"


class Memory(Who, table=True):
    __tablename__ = "memory"
    # ids never reused (migration 13)
    __table_args__ = (Index("memory_by_name", "name"), {"sqlite_autoincrement": True})

    id: int | None = Field(default=None, primary_key=True)
    name: str
    description: str | None = None
    type: str | None = None
    body: str
    tags: str = "[]"
    projects: str = "[]"
    role: str | None = None
    created: str | None = None
    last_applied: str | None = None
    hits: int = 0
    prevented: int = 0
    half_life_days: float | None = None
    critical: int = 0
    evergreen: int = 0
    invariant: str | None = None
    authority: str = "unreviewed"
    sensitivity: str = "public"
    valid_from: str | None = None
    valid_to: str | None = None
    supersedes_ref: str | None = None
    supersedes_id: int | None = Field(default=None, foreign_key="memory.id")
    superseded_by_id: int | None = Field(default=None, foreign_key="memory.id")
    status: str = "active"
    source_file: str | None = Field(default=None, unique=True)
    loadable: int = 1
    load_error: str | None = None
    front_matter: str | None = None
    content_hash: str
    updated_at: str
    review_reason: str | None = None  # set when an erasure took part of its evidence


class Evidence(Who, table=True):
    __tablename__ = "evidence"
    __table_args__ = (
        Index("evidence_by_memory", "memory_id"),
        Index("evidence_by_entry", "entry_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    memory_id: int = Field(foreign_key="memory.id", ondelete="CASCADE")
    entry_id: int | None = Field(default=None, foreign_key="entry.id")
    span_start: int | None = None
    span_end: int | None = None
    file_path: str | None = None
    note: str | None = None


class Chunk(Who, table=True):
    __tablename__ = "chunk"
    __table_args__ = (Index("chunk_by_source", "source_type", "source_id", "span_start"),
                      {"sqlite_autoincrement": True})  # ids never reused (migration 13)

    id: int | None = Field(default=None, primary_key=True)
    source_type: str
    source_id: int
    span_start: int
    span_end: int
    text: str
    content_hash: str
    source_hash: str
    model: str
    dim: int
    status: str
    error: str | None = None
    tokens: int
    nn_similarity: float | None = None
    nn_chunk_id: int | None = None
    lexical_only: int = 0  # a window past a long tool entry's embedded head: FTS, no vector


class EmbedQueue(Who, table=True):
    """An entry stored without its chunks, waiting for the daemon or a checkpoint to embed
    it; meanwhile its text is in the ``embed_queue_fts`` index (migration 12)."""

    __tablename__ = "embed_queue"

    entry_id: int | None = Field(default=None, primary_key=True, foreign_key="entry.id",
                                 ondelete="CASCADE")
    queued_at: str


class SecretFinding(Who, table=True):
    """What the detector found in an entry or a memory: the kind and how many, never the
    value (migration 17)."""

    __tablename__ = "secret_finding"
    __table_args__ = (Index("secret_finding_by_source", "source_type", "source_id"),
                      Index("secret_finding_by_time", "found_at"),
                      {"sqlite_autoincrement": True})

    id: int | None = Field(default=None, primary_key=True)
    source_type: str
    source_id: int
    kind: str
    count: int = 1
    via: str
    found_at: str
    dismissed_at: str | None = None
    dismissed_by: str | None = None


class Checkpoint(Who, table=True):
    __tablename__ = "checkpoint"
    __table_args__ = (Index("checkpoint_by_session_ts", "session_id", "ts"),)

    id: int | None = Field(default=None, primary_key=True)
    session_id: str | None = Field(default=None, foreign_key="session.id")
    ts: str
    trigger: str
    status: str = "ok"
    entries_added: int = 0
    memories_written: int = 0
    chunks_embedded: int = 0
    chunks_failed: int = 0
    archive_verified: int | None = None
    index_verified: int | None = None
    duration_ms: float | None = None
    source: str | None = None
    idem_key: str | None = Field(default=None, unique=True)
    through_entry_id: int | None = None  # the highest entry a consolidation pass covered


class ImportPosition(Who, table=True):
    __tablename__ = "import_position"

    path: str = Field(primary_key=True)
    source_key: str | None = None
    format: str
    byte_offset: int
    line_count: int
    fingerprint: str
    size: int
    updated_at: str


class AuditEvent(Who, table=True):
    """Approvals, rejections, erasures, fixes: ids and counts, never content."""

    __tablename__ = "audit_event"

    id: int | None = Field(default=None, primary_key=True)
    ts: str
    actor: str
    action: str
    target_kind: str | None = None
    target_ids: str = "[]"
    counts: str = "{}"


class ErasureFingerprint(Who, table=True):
    """A keyed hash (HMAC with the store's secret) of an erased or redacted record's
    idempotency key or content hash: importers refuse to write it again."""

    __tablename__ = "erasure_fingerprint"

    fingerprint: str = Field(primary_key=True)
    kind: str
    tombstone_id: int | None = None  # the tombstone of the erasure (never deleted)
