"""What changed in the store since a point: what a following screen reads on a tick, so it
applies the change in place instead of reading its data again whole (issue 28).

``changes_since(store, mark)`` reads the highest id of every append-mostly table (entries,
traces, proposals, memories, audit events, health scans, tombstones, context snapshots) and the
latest ``updated_at`` of memories and proposals: one query of scalar subqueries, each an index
lookup (the primary key's ``MAX``). Given the ``ChangeMark`` of an earlier read it also names
what moved since: the sessions with entries newer than the mark, the memory and proposal ids
written or updated since (``updated_at`` after the mark's, or at the mark's millisecond and not
among the rows the mark saw stamped then: none missed, none named twice), those an audit event
named since (feedback counts, which leave ``updated_at`` alone), and the audit actions since.

``Changes.in_place`` says whether a reader may apply the change in place: not after an erasure
or a redaction (a tombstone: rows are gone or rewritten), nor after an action that rewrites
records without naming them (``RESHAPING``: a reindex, a sensitivity mark, a health fix,
an import of an export). Then a screen reads its data again whole, keeping its cursor on the
same record. The same on SQLite and PostgreSQL (plain SQLAlchemy, no raw SQL).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, ScalarSelect, func, select
from sqlmodel import col

from store.context.models import ContextSnapshot
from store.core.base import StoreBase
from store.core.models import AuditEvent, Entry, Memory
from store.governance.models import Proposal
from store.health.models import HealthScan
from store.privacy.models import Tombstone
from store.recall.models import RecallTrace

RESHAPING = ("reindex", "mark-", "unmark-detected", "import-export", "compact-duplicates",
             "erase", "redact")
"""Audit actions (by prefix) that rewrite records without naming each: a reader reads again."""
TOUCHED_LIMIT = 5000
"""More touched ids than this in one change: a reader reads again whole (``in_place`` False)."""


@dataclass(frozen=True)
class ChangeMark:
    """Where the store stood at one read: the highest ids, the latest ``updated_at``."""

    entry: int = 0
    trace: int = 0
    proposal: int = 0
    memory: int = 0
    audit: int = 0
    scan: int = 0
    tombstone: int = 0
    snapshot: int = 0
    memory_updated: str = ""
    proposal_updated: str = ""
    memories_at: tuple[int, ...] = ()
    """The memories stamped at ``memory_updated`` exactly (already seen)."""
    proposals_at: tuple[int, ...] = ()


@dataclass(frozen=True)
class Changes:
    """What moved between ``since`` (None: the first read, nothing named) and ``now``."""

    now: ChangeMark
    since: ChangeMark | None = None
    sessions: tuple[str, ...] = ()
    """Sessions with entries newer than ``since`` (new sessions among them)."""
    memories: tuple[int, ...] = ()
    """Memories written or updated since (new ones among them), or named by an audit event."""
    proposals: tuple[int, ...] = ()
    """Proposals written or updated since (new ones among them), or named by an audit event."""
    actions: tuple[str, ...] = ()
    """The audit actions recorded since, oldest first."""
    too_many: bool = False

    @property
    def erased(self) -> bool:
        """An erasure or a redaction since (a new tombstone): rows went or were rewritten."""
        return self.since is not None and self.now.tombstone != self.since.tombstone

    @property
    def in_place(self) -> bool:
        """Whether a reader can apply this change in place (else it reads again whole)."""
        return self.since is not None and not self.erased and not self.too_many and not any(
            a.startswith(RESHAPING) for a in self.actions)

    @property
    def any(self) -> bool:
        return self.since is None or self.now != self.since

    def moved(self, what: str) -> bool:
        """Whether the mark's ``what`` (``entry``, ``trace``, ``scan``…) moved since."""
        return self.since is None or getattr(self.now, what) != getattr(self.since, what)


def _mark(conn: Connection) -> ChangeMark:
    def top(column: Any) -> ScalarSelect[Any]:
        return select(func.coalesce(func.max(column), 0)).scalar_subquery()

    def latest(column: Any) -> ScalarSelect[Any]:
        return select(func.coalesce(func.max(column), "")).scalar_subquery()

    row = conn.execute(select(
        top(col(Entry.id)), top(col(RecallTrace.id)), top(col(Proposal.id)), top(col(Memory.id)),
        top(col(AuditEvent.id)), top(col(HealthScan.id)), top(col(Tombstone.id)),
        top(col(ContextSnapshot.id)), latest(col(Memory.updated_at)),
        latest(col(Proposal.updated_at)))).one()
    ids = [int(v or 0) for v in row[:8]]
    memory_updated, proposal_updated = str(row[8] or ""), str(row[9] or "")
    memories_at = tuple(int(i or 0) for i in conn.execute(
        select(col(Memory.id)).where(col(Memory.updated_at) == memory_updated)
        .order_by(col(Memory.id))).scalars()) if memory_updated else ()
    proposals_at = tuple(int(i or 0) for i in conn.execute(
        select(col(Proposal.id)).where(col(Proposal.updated_at) == proposal_updated)
        .order_by(col(Proposal.id))).scalars()) if proposal_updated else ()
    return ChangeMark(entry=ids[0], trace=ids[1], proposal=ids[2], memory=ids[3], audit=ids[4],
                      scan=ids[5], tombstone=ids[6], snapshot=ids[7],
                      memory_updated=memory_updated, proposal_updated=proposal_updated,
                      memories_at=memories_at, proposals_at=proposals_at)


def changes_since(store: StoreBase, mark: ChangeMark | None = None) -> Changes:
    """Where the store stands now and, given an earlier ``mark``, what moved since (see the
    module's docstring). Nothing moved: ``Changes.any`` is False and no further query runs."""
    with store.read() as conn:
        now = _mark(conn)
        if mark is None or now == mark:  # (an empty not_in: SQLAlchemy writes it as true)
            return Changes(now, mark)
        sessions: list[str] = []
        if now.entry > mark.entry:
            sessions = [str(s) for s in conn.execute(
                select(col(Entry.session_id)).where(col(Entry.id) > mark.entry)
                .group_by(col(Entry.session_id)).order_by(func.min(col(Entry.id))))
                .scalars()]
        memories: set[int] = set()
        if now.memory != mark.memory or now.memory_updated != mark.memory_updated:
            memories.update(int(i or 0) for i in conn.execute(
                select(col(Memory.id)).where(
                    (col(Memory.id) > mark.memory)
                    | (col(Memory.updated_at) > mark.memory_updated)
                    | ((col(Memory.updated_at) == mark.memory_updated)
                       & col(Memory.id).not_in(list(mark.memories_at))))
                .limit(TOUCHED_LIMIT + 1)).scalars())
        proposals: set[int] = set()
        if now.proposal != mark.proposal or now.proposal_updated != mark.proposal_updated:
            proposals.update(int(i or 0) for i in conn.execute(
                select(col(Proposal.id)).where(
                    (col(Proposal.id) > mark.proposal)
                    | (col(Proposal.updated_at) > mark.proposal_updated)
                    | ((col(Proposal.updated_at) == mark.proposal_updated)
                       & col(Proposal.id).not_in(list(mark.proposals_at))))
                .limit(TOUCHED_LIMIT + 1)).scalars())
        actions: list[str] = []
        if now.audit > mark.audit:
            for action, kind, ids in conn.execute(
                    select(col(AuditEvent.action), col(AuditEvent.target_kind),
                           col(AuditEvent.target_ids)).where(col(AuditEvent.id) > mark.audit)
                    .order_by(col(AuditEvent.id))).all():
                actions.append(str(action))
                named = _ids(ids)
                if kind == "memory":
                    memories.update(named)
                elif kind == "proposal":
                    proposals.update(named[:1])  # [proposal, memory it made]
                    memories.update(named[1:])
    too_many = len(memories) > TOUCHED_LIMIT or len(proposals) > TOUCHED_LIMIT
    return Changes(now, mark, tuple(sessions), tuple(sorted(memories)),
                   tuple(sorted(proposals)), tuple(actions), too_many)


def _ids(raw: object) -> list[int]:
    try:
        found = json.loads(str(raw or "[]"))
    except ValueError:
        return []
    return [int(i) for i in found if isinstance(i, int) and not isinstance(i, bool)] \
        if isinstance(found, list) else []
