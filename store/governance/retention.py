"""Retention (issue 30): ``memory.retention_days.<type>`` says how long an active memory of that
type is kept after it was last written or applied; the pass (``lca-tui expire``) files one
``expire`` proposal — an operation of the gate — for exactly each memory past it. A critical
or evergreen memory never expires (the gate refuses an ``expire`` of one too). Applied like
any other write (by a person, or ``governance.auto_apply`` when it names ``expire``), the
memory becomes ``expired``: kept, with its history, and recalled only by a ``--historical``
recall.

A memory's age is counted from the later of when it became valid (``valid_from``, else
``created``: an imported file's own date) and when a harness last applied it
(``last_applied``); a supersede makes a new memory, so its age starts again. The idempotency
key names the memory and its content hash: a rejected expiry is not proposed again until the
memory changes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from store.core.db import columns, orm
from store.core.models import Memory
from store.core.settings import RETENTION_TYPES
from store.core.timeutil import parse_iso, to_iso

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

PROPOSER = "lca-tui:retention"


@dataclass(frozen=True)
class Expiry:
    """A memory past its type's retention: since when it counts, and the limit."""

    memory_id: int
    type: str
    since: str
    days: int
    age_days: float

    def to_json(self) -> dict[str, Any]:
        return {"memory_id": self.memory_id, "type": self.type, "since": self.since,
                "days": self.days, "age_days": round(self.age_days, 2)}


@dataclass
class RetentionReport:
    due: list[Expiry] = field(default_factory=list)
    proposals_added: int = 0
    proposal_ids: list[int] = field(default_factory=list)
    skipped: int = 0  # proposed before (pending, decided) for the same content
    errors: list[str] = field(default_factory=list)
    dry_run: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"due": [e.to_json() for e in self.due], "proposals_added": self.proposals_added,
                "proposal_ids": self.proposal_ids, "skipped": self.skipped,
                "errors": self.errors, "dry_run": self.dry_run}


def limits(store: Store) -> dict[str, int]:
    """type → retention days, for the types with a retention (a setting above 0)."""
    out = {}
    for t in RETENTION_TYPES:
        days = int(store.settings[f"memory.retention_days.{t}"] or 0)
        if days > 0:
            out[t] = days
    return out


def due(store: Store, now: datetime | None = None) -> list[Expiry]:
    """Every active memory past its type's retention (never a critical or evergreen one)."""
    now = now or datetime.now(UTC)
    days_of = limits(store)
    if not days_of:
        return []
    with store.read() as conn:
        rows = conn.execute(columns(
            col(Memory.id), col(Memory.type), col(Memory.valid_from), col(Memory.created),
            col(Memory.last_applied), col(Memory.critical), col(Memory.evergreen))
            .where(col(Memory.status) == "active", col(Memory.type).in_(list(days_of)))
            .order_by(col(Memory.id))).all()
    out = []
    for mid, mtype, valid_from, created, applied, critical, evergreen in rows:
        if critical or evergreen or mid is None or mtype is None:
            continue
        stamps = [t for t in (parse_iso(valid_from or created), parse_iso(applied))
                  if t is not None]
        if not stamps:
            continue
        since = max(stamps)
        limit = days_of[mtype]
        if now - since > timedelta(days=limit):
            out.append(Expiry(int(mid), mtype, to_iso(since), limit,
                              (now - since).total_seconds() / 86400))
    return out


def _key(memory_id: int, content_hash: str | None) -> str:
    raw = f"expire|{memory_id}|{content_hash}"
    return "retention:" + hashlib.sha256(raw.encode()).hexdigest()[:32]


def expire_pass(store: Store, *, now: datetime | None = None, dry_run: bool = False,
                actor: str | None = None) -> RetentionReport:
    """File one ``expire`` proposal per memory ``due`` lists (none with ``dry_run``). On a
    store opened read-only only ``dry_run`` runs: the pass is refused by name before it
    reads anything (not on the first proposal it could not file)."""
    if store.read_only and not dry_run:
        from store.core.errors import ReadOnly

        raise ReadOnly("expiring memories past their retention (--dry-run only lists them)")
    from store.governance.apply import submit
    from store.governance.models import Proposal
    from store.governance.proposals import NewProposal, ProposalError

    report = RetentionReport(due=due(store, now), dry_run=dry_run)
    if dry_run:
        return report
    for e in report.due:
        with store.read() as conn, orm(conn) as s:
            digest = s.exec(select(Memory.content_hash).where(Memory.id == e.memory_id)).first()
            key = _key(e.memory_id, digest)
            if s.exec(select(Proposal.id).where(Proposal.idem_key == key)).first() is not None:
                report.skipped += 1
                continue
        new = NewProposal(op="expire", targets=(e.memory_id,), origin="consolidation",
                          proposer=PROPOSER, idem_key=key,
                          rationale=(f"a {e.type} memory valid or last applied since "
                                     f"{e.since[:10]}, {e.age_days:.0f} days ago: past "
                                     f"memory.retention_days.{e.type} = {e.days}"))
        try:
            report.proposal_ids.append(int(submit(store, new, actor=actor).id))
            report.proposals_added += 1
        except (ProposalError, ValueError, LookupError) as exc:
            report.errors.append(f"memory {e.memory_id}: {exc}")
    return report
