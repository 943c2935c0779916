"""Context-pressure tables as SQLModel classes (created by migrations 2 and 5)."""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from store.core.models import Who


class ContextSnapshot(Who, table=True):
    __tablename__ = "context_snapshot"
    __table_args__ = (
        UniqueConstraint("session_id", "agent", "message_id"),
        Index("context_snapshot_by_series", "session_id", "agent", "ts", "id"),
        Index("context_snapshot_by_source", "source_entry_id"),
        Index("context_snapshot_by_revision", "revision"),
    )

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="session.id")
    agent: str = "main"
    ts: str
    window_tokens: int | None = None
    used_tokens: int
    segments: str | None = None
    checkpoint_threshold: int | None = None
    auto_compact_threshold: int | None = None
    event: str = "turn"
    source_entry_id: int | None = Field(default=None, foreign_key="entry.id",
                                        ondelete="CASCADE")
    message_id: str | None = None
    revision: int = 0


class PruneEvent(Who, table=True):
    __tablename__ = "prune_event"
    __table_args__ = (
        Index("prune_event_by_series", "session_id", "agent", "ts", "id"),
        Index("prune_event_by_source", "source_entry_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    snapshot_id: int | None = Field(default=None, foreign_key="context_snapshot.id",
                                    ondelete="CASCADE")
    session_id: str = Field(foreign_key="session.id")
    agent: str = "main"
    ts: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    entries_pruned: int = 0
    preserved: int | None = None
    verified: int | None = None
    mode: str | None = None
    source_entry_id: int | None = Field(default=None, foreign_key="entry.id",
                                        ondelete="CASCADE")


class PruneEntry(SQLModel, table=True):
    """An entry that left the live window in a prune (``ref`` as the harness named it)."""

    __tablename__ = "prune_entry"
    __table_args__ = (
        Index("prune_entry_by_prune", "prune_id"),
        Index("prune_entry_by_entry", "entry_id"),
    )

    id: int | None = Field(default=None, primary_key=True)  # migration 14; was the rowid
    prune_id: int = Field(foreign_key="prune_event.id", ondelete="CASCADE")
    ref: str | None = None
    entry_id: int | None = Field(default=None, foreign_key="entry.id", ondelete="SET NULL")


class Handoff(Who, table=True):
    __tablename__ = "handoff"
    __table_args__ = (
        Index("handoff_by_series", "session_id", "agent", "ts", "id"),
        Index("handoff_by_source", "source_entry_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="session.id")
    agent: str = "main"
    ts: str
    action: str = "written"
    path: str | None = None
    sha256: str | None = None
    token_estimate: int | None = None
    source_entry_id: int | None = Field(default=None, foreign_key="entry.id",
                                        ondelete="CASCADE")


class Compaction(Who, table=True):
    __tablename__ = "compaction"
    __table_args__ = (
        Index("compaction_by_series", "session_id", "agent", "ts", "id"),
        Index("compaction_by_source", "source_entry_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="session.id")
    agent: str = "main"
    ts: str
    pre_tokens: int | None = None
    trigger: str | None = None
    summary_entry_id: int | None = Field(default=None, foreign_key="entry.id",
                                         ondelete="SET NULL")
    handoff_id: int | None = Field(default=None, foreign_key="handoff.id", ondelete="SET NULL")
    handoff_path: str | None = None
    source_entry_id: int | None = Field(default=None, foreign_key="entry.id",
                                        ondelete="CASCADE")
