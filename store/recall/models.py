"""Recall-trace tables as SQLModel classes (created by migration 3)."""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field

from store.core.models import Who


class RecallTrace(Who, table=True):
    __tablename__ = "recall_trace"
    __table_args__ = (
        Index("recall_trace_by_ts", "ts"),
        Index("recall_trace_by_entry", "entry_id"),
        {"sqlite_autoincrement": True},  # ids never reused (migration 13)
    )

    id: int | None = Field(default=None, primary_key=True)
    ts: str
    query: str
    role: str | None = None
    project: str | None = None
    channel: str = "private"
    historical: int = 0
    settings: str = "{}"
    latency_ms: float | None = None
    model: str | None = None
    degraded: int = 0
    origin: str = "lca-tui"
    entry_id: int | None = Field(default=None, foreign_key="entry.id", ondelete="CASCADE")
    rerun_of: int | None = Field(default=None, foreign_key="recall_trace.id",
                                 ondelete="SET NULL")
    considered: int = 0
    injected: int = 0


class RecallCandidate(Who, table=True):
    __tablename__ = "recall_candidate"
    __table_args__ = (
        UniqueConstraint("trace_id", "rank"),
        Index("recall_candidate_by_source", "source_type", "source_id"),
        {"sqlite_autoincrement": True},  # ids never reused (migration 13)
    )

    id: int | None = Field(default=None, primary_key=True)
    trace_id: int = Field(foreign_key="recall_trace.id", ondelete="CASCADE")
    rank: int
    source_type: str
    source_id: int | None = None
    external_id: str | None = None
    chunk_id: int | None = None
    session_id: str | None = None
    seq: int | None = None
    kind: str | None = None
    label: str | None = None
    excerpt: str | None = None
    masked: int = 0
    s: float | None = None
    e: float | None = None
    t: float | None = None
    a: float | None = None
    q: float | None = None
    k: float | None = None
    cos: float | None = None
    lex: float | None = None
    adj: float | None = None  # adjacent support: the best own S of the entries beside it
    contributions: str = "{}"
    score: float | None = None
    decision: str
    reason: str
    hits: int | None = None
    prevented: int | None = None


class RecallFeedback(Who, table=True):
    __tablename__ = "recall_feedback"
    __table_args__ = (UniqueConstraint("candidate_id", "kind"),)

    id: int | None = Field(default=None, primary_key=True)
    trace_id: int = Field(foreign_key="recall_trace.id", ondelete="CASCADE")
    candidate_id: int = Field(foreign_key="recall_candidate.id", ondelete="CASCADE")
    kind: str
    ts: str
