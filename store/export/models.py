"""Export tables as SQLModel classes (created by migration 4)."""

from __future__ import annotations

from sqlalchemy import Index
from sqlmodel import Field

from store.core.models import Who


class Export(Who, table=True):
    __tablename__ = "export"

    id: int | None = Field(default=None, primary_key=True)
    ts: str
    scope: str
    path: str
    files: str = "[]"
    counts: str = "{}"
    format: str = "lca-export"


class ExportItem(Who, table=True):
    __tablename__ = "export_item"
    __table_args__ = (Index("export_item_by_item", "item_type", "item_id"),)

    export_id: int = Field(foreign_key="export.id", ondelete="CASCADE", primary_key=True)
    item_type: str = Field(primary_key=True)
    item_id: str = Field(primary_key=True)
    file: str | None = None
