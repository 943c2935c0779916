"""The importers' own tables as SQLModel classes (created by migrations 9 and 10)."""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field

from store.core.models import Who

BY_DESIGN = "by-design"
UNKNOWN = "unknown"


class ImportSkip(Who, table=True):
    """How many lines of one type an imported file had that were left out, and why (a
    ``line_type`` of ``block/<type>`` counts content blocks of imported lines instead)."""

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


class ImportRun(Who, table=True):
    """One ingest batch (migration 10): its paths, when it ran, how it ended, what it added."""

    __tablename__ = "import_run"

    id: int | None = Field(default=None, primary_key=True)
    started_at: str
    finished_at: str | None = None
    status: str = "running"
    paths: str = "[]"
    format: str | None = None
    pid: int | None = None
    host: str | None = None
    counts: str = "{}"
    error: str | None = None


class ImportProblem(Who, table=True):
    """A problem (or note) an ingest met (migration 10): file, line, field and reason."""

    __tablename__ = "import_problem"
    __table_args__ = (Index("import_problem_by_run", "run_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="import_run.id", ondelete="CASCADE")
    kind: str = "problem"
    path: str
    line: int | None = None
    field: str | None = None
    reason: str
