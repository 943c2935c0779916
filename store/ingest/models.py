"""The importers' own tables as SQLModel classes (created by migration 9)."""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field

from store.core.models import Who

BY_DESIGN = "by-design"
UNKNOWN = "unknown"


class ImportSkip(Who, table=True):
    """How many lines of one type an imported file had that were left out, and why."""

    __tablename__ = "import_skip"
    __table_args__ = (UniqueConstraint("path", "line_type", "reason"),)

    id: int | None = Field(default=None, primary_key=True)
    path: str
    line_type: str
    reason: str  # BY_DESIGN or UNKNOWN
    count: int
    updated_at: str


class ClaudeCodeSummary(Who, table=True):
    """A Claude Code ``summary`` line: the title of the session holding ``leaf_uuid``."""

    __tablename__ = "claude_code_summary"
    __table_args__ = (UniqueConstraint("path", "line"),
                      Index("claude_code_summary_by_leaf", "leaf_uuid"))

    id: int | None = Field(default=None, primary_key=True)
    leaf_uuid: str
    summary: str
    path: str
    line: int
