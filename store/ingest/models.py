"""Import-run tables as SQLModel classes (created by migration 10)."""

from __future__ import annotations

from sqlalchemy import Index
from sqlmodel import Field

from store.core.models import Who


class ImportRun(Who, table=True):
    """One ingest batch: its paths, when it ran, how it ended and what it added."""

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
    """A problem (or note) an ingest met: file, line, field and reason."""

    __tablename__ = "import_problem"
    __table_args__ = (Index("import_problem_by_run", "run_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="import_run.id", ondelete="CASCADE")
    kind: str = "problem"
    path: str
    line: int | None = None
    field: str | None = None
    reason: str
