"""Health tables as SQLModel classes (created by migration 7)."""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field

from store.core.models import Who


class HealthScan(Who, table=True):
    """One health scan: when, its worst status, how long it took."""

    __tablename__ = "health_scan"
    __table_args__ = (Index("health_scan_by_ts", "ts"),)

    id: int | None = Field(default=None, primary_key=True)
    ts: str
    status: str
    duration_ms: float | None = None


class HealthSignal(Who, table=True):
    """One signal of a scan: figures, ids and an explanation free of stored content."""

    __tablename__ = "health_signal"
    __table_args__ = (
        UniqueConstraint("scan_id", "name"),
        Index("health_signal_by_name", "name", "scan_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    scan_id: int = Field(foreign_key="health_scan.id", ondelete="CASCADE")
    name: str
    status: str
    value: float | None = None
    warn: float | None = None
    fail: float | None = None
    explanation: str
    offending_count: int = 0
    offending: str = "[]"
