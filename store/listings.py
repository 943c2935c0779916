"""The listing commands' reads (``stats``, ``sessions``, ``memories``, ``proposals``, ``audit``)
on a store file, without importing SQLAlchemy, SQLModel or pydantic: a person's ``lca-tui
stats`` answers in about a third of the time (``docs/performance.md``).

``open_listings(path, settings)`` is a ``Listings`` with those five methods — named, called and
answering as the ``Store``'s — or None when the store is not a current SQLite file
(``store.core.lite.open_lite`` says which): the caller then opens the ``Store``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from store.core.lite import LiteFile, open_lite
from store.governance import lite as gov_lite

if TYPE_CHECKING:
    from store.core.records import AuditInfo
    from store.core.settings import Settings
    from store.governance.records import MemoryRow, ProposalSummary


class Listings(LiteFile):
    """The five listings of one store file, read through the bare DB-API (``stats`` and
    ``sessions`` are ``LiteFile``'s; the governance ones are added here)."""

    def list_memories(self, status: str | None = None, type: str | None = None
                      ) -> list[MemoryRow]:
        return gov_lite.list_memories(self, status, type)

    def proposals(self, status: str | None = None, limit: int | None = None
                  ) -> list[ProposalSummary]:
        return gov_lite.list_proposals(self, status, limit)

    def audit_events(self, limit: int | None = 50, action: str | None = None
                     ) -> list[AuditInfo]:
        return gov_lite.audit_events(self, limit, action)


def open_listings(path: Path | str | None, settings: Settings) -> Listings | None:
    """The listings of the store at ``path`` (else the default one), or None when it must be
    opened as a ``Store`` (a server, a store to migrate or to refuse, no store yet)."""
    return open_lite(path, settings, Listings)
