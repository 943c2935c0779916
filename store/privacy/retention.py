"""Retention of transcript entries (issue 30): ``transcript.retention_days.<kind>`` says how
long an entry of that kind is kept after its time — its own timestamp (``entry.ts``), else when
it was imported (``created_at``). ``due`` lists the entries past it (nothing changes);
``erase_due`` erases exactly those through the privacy erasure: one ``entries`` scope, its
closure (chunks, vectors, evidence, a session emptied, memories losing all their evidence, …)
removed in one transaction, verified with the probes ``lca-tui erase`` runs, one tombstone
with its verdict. Never a row deleted directly.

An erasure is the privacy path's, not the gate's (the gate governs memories): it is confirmed
like ``erase`` (``lca-tui expire --yes``, or typing ``erase``), and acts on exactly the closure
the person saw (``PlanStale`` when the store changed in between).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlmodel import col

from store.core.db import columns
from store.core.models import Entry
from store.core.timeutil import parse_iso, to_iso
from store.core.vocab import ENTRY_KINDS
from store.privacy.scope import Scope

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store
    from store.privacy.api import PrivacyResult
    from store.privacy.closure import Closure


@dataclass(frozen=True)
class EntryExpiry:
    """A transcript entry past its kind's retention."""

    entry_id: int
    session_id: str
    kind: str
    since: str
    days: int
    age_days: float

    def to_json(self) -> dict[str, Any]:
        return {"entry_id": self.entry_id, "session_id": self.session_id, "kind": self.kind,
                "since": self.since, "days": self.days, "age_days": round(self.age_days, 2)}


@dataclass
class TranscriptDue:
    """The entries past their kind's retention, and the limits that put them there."""

    entries: list[EntryExpiry] = field(default_factory=list)
    limits: dict[str, int] = field(default_factory=dict)

    def by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(e.kind for e in self.entries).items()))

    def by_session(self) -> dict[str, dict[str, int]]:
        """session → kind → how many of its entries are due."""
        out: dict[str, Counter[str]] = {}
        for e in self.entries:
            out.setdefault(e.session_id, Counter())[e.kind] += 1
        return {s: dict(sorted(c.items())) for s, c in sorted(out.items())}

    def scope(self) -> Scope:
        """The one erasure scope of every due entry (``ValueError`` when none is due)."""
        if not self.entries:
            raise ValueError("no transcript entry is past its retention")
        return Scope.of_entries([e.entry_id for e in self.entries])

    def reason(self) -> str:
        """The tombstone's reason: the settings that applied, no text of the entries."""
        used = ", ".join(f"transcript.retention_days.{k}={self.limits[k]}"
                         for k in self.by_kind())
        return f"retention: {used}"

    def to_json(self) -> dict[str, Any]:
        return {"limits": self.limits, "count": len(self.entries), "by_kind": self.by_kind(),
                "by_session": self.by_session(),
                "entries": [e.to_json() for e in self.entries]}


def limits(store: Store) -> dict[str, int]:
    """kind → retention days, for the kinds with a retention (a setting above 0)."""
    out = {}
    for k in ENTRY_KINDS:
        days = int(store.settings[f"transcript.retention_days.{k}"] or 0)
        if days > 0:
            out[k] = days
    return out


def due(store: Store, now: datetime | None = None) -> TranscriptDue:
    """Every entry past its kind's retention; a read, nothing changes."""
    now = now or datetime.now(UTC)
    report = TranscriptDue(limits=limits(store))
    if not report.limits:
        return report
    with store.read() as conn:
        rows = conn.execute(columns(
            col(Entry.id), col(Entry.session_id), col(Entry.kind), col(Entry.ts),
            col(Entry.created_at))
            .where(col(Entry.kind).in_(list(report.limits)))
            .order_by(col(Entry.id))).all()
    for eid, sid, kind, ts, created in rows:
        since = parse_iso(ts) or parse_iso(created)
        if eid is None or since is None:
            continue
        limit = report.limits[kind]
        if now - since > timedelta(days=limit):
            report.entries.append(EntryExpiry(int(eid), str(sid), kind, to_iso(since), limit,
                                              (now - since).total_seconds() / 86400))
    return report


def closure(store: Store, report: TranscriptDue) -> Closure:
    """What erasing the due entries touches (the preview to confirm); nothing changes."""
    from store.privacy.closure import compute

    return compute(store, report.scope(), "erase")


def erase_due(store: Store, report: TranscriptDue, *, confirmed: Closure | None = None,
              actor: str | None = None, delete_exports: bool = False) -> PrivacyResult:
    """Erase the entries of ``report`` through the privacy erasure, then verify (one
    tombstone). ``confirmed``: the closure the person saw — the erasure refuses
    (``PlanStale``, nothing changed) unless the store still lists exactly that."""
    from store.privacy.api import run

    return run(store, report.scope(), "erase", delete_exports=delete_exports, actor=actor,
               reason=report.reason(), closure=confirmed)
