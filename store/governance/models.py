"""Governance tables as SQLModel classes (created by migration 6): proposals, their checks,
edits and decisions, supersession links, memory flags. JSON columns are ``str`` holding JSON;
``store.governance.records`` decodes them into the plain dataclasses handed out."""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field

from store.core.models import Who


class Proposal(Who, table=True):
    """A candidate durable write (or content-less history from a harness's approval events)."""

    __tablename__ = "proposal"
    __table_args__ = (
        Index("proposal_by_status", "status", "ts"),
        Index("proposal_by_entry", "entry_id"),
        Index("proposal_by_external", "external_id"),
        {"sqlite_autoincrement": True},  # ids never reused (migration 13)
    )

    id: int | None = Field(default=None, primary_key=True)
    op: str | None = None
    type: str | None = None
    targets: str = "[]"
    target_snapshot: str | None = None
    name: str | None = None
    content: str | None = None
    meta: str = "{}"
    rationale: str | None = None
    evidence: str = "[]"
    origin: str
    proposer: str | None = None
    status: str = "pending"
    status_reason: str | None = None
    revision: int = 0
    ts: str
    updated_at: str
    decided_at: str | None = None
    actor: str | None = None
    memory_id: int | None = Field(default=None, foreign_key="memory.id", ondelete="SET NULL")
    verified: int | None = None
    verification: str | None = None
    external_id: str | None = None
    kind: str | None = None
    entry_id: int | None = Field(default=None, foreign_key="entry.id", ondelete="CASCADE")
    idem_key: str | None = Field(default=None, unique=True)


class ProposalCheck(Who, table=True):
    __tablename__ = "proposal_check"
    __table_args__ = (Index("proposal_check_by_proposal", "proposal_id", "revision"),)

    id: int | None = Field(default=None, primary_key=True)
    proposal_id: int = Field(foreign_key="proposal.id", ondelete="CASCADE")
    revision: int = 0
    kind: str
    result: str
    detail: str
    evidence: str = "{}"
    suggestion: str | None = None


class ProposalEdit(Who, table=True):
    __tablename__ = "proposal_edit"
    __table_args__ = (UniqueConstraint("proposal_id", "revision"),)

    id: int | None = Field(default=None, primary_key=True)
    proposal_id: int = Field(foreign_key="proposal.id", ondelete="CASCADE")
    revision: int
    ts: str
    actor: str
    before: str
    after: str
    reason: str | None = None


class ProposalDecision(Who, table=True):
    __tablename__ = "proposal_decision"
    __table_args__ = (Index("proposal_decision_by_proposal", "proposal_id", "ts"),)

    id: int | None = Field(default=None, primary_key=True)
    proposal_id: int = Field(foreign_key="proposal.id", ondelete="CASCADE")
    ts: str
    actor: str
    decision: str
    as_op: str | None = None
    reason: str | None = None
    policy: str | None = None
    connector: str | None = None


class SupersessionLink(Who, table=True):
    """Old memory → new memory, and the proposal that made the link (None when imported)."""

    __tablename__ = "supersession_link"
    __table_args__ = (
        UniqueConstraint("old_id", "new_id"),
        Index("supersession_link_by_new", "new_id"),
        {"sqlite_autoincrement": True},  # ids never reused (migration 15)
    )

    id: int | None = Field(default=None, primary_key=True)
    old_id: int = Field(foreign_key="memory.id", ondelete="CASCADE")
    new_id: int = Field(foreign_key="memory.id", ondelete="CASCADE")
    proposal_id: int | None = Field(default=None, foreign_key="proposal.id",
                                    ondelete="SET NULL")
    ts: str
    source: str


class MemoryFlag(Who, table=True):
    """A flag on a memory that recall's K term reads (an unresolved contradiction)."""

    __tablename__ = "memory_flag"
    __table_args__ = (Index("memory_flag_by_memory", "memory_id", "kind"),)

    id: int | None = Field(default=None, primary_key=True)
    memory_id: int = Field(foreign_key="memory.id", ondelete="CASCADE")
    kind: str
    other_id: int | None = Field(default=None, foreign_key="memory.id", ondelete="CASCADE")
    proposal_id: int | None = Field(default=None, foreign_key="proposal.id",
                                    ondelete="SET NULL")
    reason: str | None = None
    ts: str
    resolved_at: str | None = None
