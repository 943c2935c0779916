"""Privacy tables as SQLModel classes (created by migration 8): tombstones and the stored
verification of each erasure or redaction, probe by probe. Erasure fingerprints are core's
(``store.core.models.ErasureFingerprint``): the shared write path checks them."""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field

from store.core.models import Who


class Tombstone(Who, table=True):
    """What an erasure or redaction leaves: scope kind, counts, time, actor, reason — no
    content and no plain hash of content."""

    __tablename__ = "tombstone"

    id: int | None = Field(default=None, primary_key=True)
    ts: str
    action: str
    scope_kind: str
    counts: str = "{}"
    actor: str
    reason: str | None = None
    verified: int | None = None


class ErasureVerification(Who, table=True):
    """One run of the probes after an erasure or redaction, and whether all passed."""

    __tablename__ = "erasure_verification"
    __table_args__ = (Index("erasure_verification_by_tombstone", "tombstone_id"),)

    id: int | None = Field(default=None, primary_key=True)
    tombstone_id: int = Field(foreign_key="tombstone.id", ondelete="CASCADE")
    ts: str
    passed: int
    duration_ms: float | None = None


class ErasureProbe(Who, table=True):
    """One probe of a verification: its name, result and a content-free detail."""

    __tablename__ = "erasure_probe"
    __table_args__ = (UniqueConstraint("verification_id", "seq"),)

    id: int | None = Field(default=None, primary_key=True)
    verification_id: int = Field(foreign_key="erasure_verification.id", ondelete="CASCADE")
    seq: int
    name: str
    passed: int
    detail: str
