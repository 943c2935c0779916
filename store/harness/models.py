"""The harness's table as a SQLModel class (created by migration 12)."""

from __future__ import annotations

from sqlalchemy import Index
from sqlmodel import Field

import store.recall.models  # noqa: F401 - registers recall_trace, which hook_run points at
from store.core.models import Who


class HookRun(Who, table=True):
    """One ``lca-tui hook EVENT`` run: what it did, or why it failed."""

    __tablename__ = "hook_run"
    __table_args__ = (
        Index("hook_run_by_ts", "ts"),
        Index("hook_run_by_status", "status", "ts"),
    )

    id: int | None = Field(default=None, primary_key=True)
    ts: str
    event: str
    session_id: str | None = None
    status: str
    error: str | None = None
    via: str
    duration_ms: float | None = None
    entries_added: int = 0
    chunks_embedded: int = 0
    injected: int = 0
    trace_id: int | None = Field(default=None, foreign_key="recall_trace.id",
                                 ondelete="SET NULL")
    checkpoint_id: int | None = Field(default=None, foreign_key="checkpoint.id",
                                      ondelete="SET NULL")
