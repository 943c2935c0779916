"""The listing commands' reads (``stats``, ``sessions``, ``memories``, ``proposals``, ``audit``)
on a store file, without importing SQLAlchemy, SQLModel or pydantic: a person's ``lca-tui
stats`` answers in about a third of the time (``docs/performance.md``).

``open_listings(path, settings)`` is a ``Listings`` with those five methods — named, called and
answering as the ``Store``'s — or None when the store is not a current SQLite file
(``store.core.lite.open_lite`` says which): the caller then opens the ``Store``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from store.core.lite import LiteFile, open_lite
from store.governance import lite as gov_lite

if TYPE_CHECKING:
    from store.core.records import AuditInfo, SessionInfo, Stats
    from store.core.settings import Settings
    from store.governance.records import MemoryRow, ProposalSummary


class Listings:
    """The five listings of one store file, read through the bare DB-API."""

    def __init__(self, lite: LiteFile) -> None:
        self.lite = lite
        self.settings = lite.settings

    @property
    def location(self) -> str:
        return self.lite.location

    def stats(self, with_embedder: bool = True) -> Stats:
        return self.lite.stats(with_embedder)

    def sessions(self, limit: int | None = None, ids: Sequence[str] | None = None
                 ) -> list[SessionInfo]:
        return self.lite.sessions(limit, ids)

    def list_memories(self, status: str | None = None, type: str | None = None
                      ) -> list[MemoryRow]:
        return gov_lite.list_memories(self.lite, status, type)

    def proposals(self, status: str | None = None, limit: int | None = None
                  ) -> list[ProposalSummary]:
        return gov_lite.list_proposals(self.lite, status, limit)

    def audit_events(self, limit: int | None = 50, action: str | None = None
                     ) -> list[AuditInfo]:
        return gov_lite.audit_events(self.lite, limit, action)

    def close(self) -> None:
        self.lite.close()

    def __enter__(self) -> Listings:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_listings(path: Path | str | None, settings: Settings) -> Listings | None:
    """The listings of the store at ``path`` (else the default one), or None when it must be
    opened as a ``Store`` (a server, a store to migrate or to refuse, no store yet)."""
    lite = open_lite(path, settings)
    return None if lite is None else Listings(lite)
