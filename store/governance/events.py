"""Proposal history derived from MindStone-Agent ``approval_proposed`` / ``approval_decided``
events (NOTES.md): ``approval proposed: <kind> <id> (<summary>)`` with metadata ``{approvalId,
kind, origin}``, and ``approval <approved|rejected>: <kind> <id> — <detail>`` with metadata
``{approvalId, kind, decision, connector}``.

These carry no memory content, so they become content-less proposals (``op`` NULL, origin
``mindstone-event``, the harness's ``kind`` and ``approvalId`` kept, the event entry as
``entry_id``): pending until a decision event arrives, then ``approved`` or ``rejected`` with a
decision row naming the connector. They cannot be approved from lca-tui (there is nothing to
apply); they show what the harness decided. Derived records: ``reindex`` rebuilds them.
"""

from __future__ import annotations

import json

from sqlalchemy import Connection, delete, func
from sqlmodel import col, select

from store.core.db import columns, orm
from store.core.models import Entry
from store.core.timeutil import normalise_iso, now_iso
from store.core.version import CODE_VERSION
from store.governance.models import Proposal, ProposalDecision

EVENTS = ("approval_proposed", "approval_decided")
WRITER = "lca-tui:approval-events"
DECISIONS = {"approved": "approved", "approve": "approved", "rejected": "rejected",
             "reject": "rejected", "denied": "rejected"}


def _summary(text_: str) -> str | None:
    """The ``(<summary>)`` of ``approval proposed: <kind> <id> (<summary>)``."""
    if "(" in text_ and text_.rstrip().endswith(")"):
        return text_[text_.index("(") + 1: text_.rstrip().rindex(")")].strip()[:200] or None
    return None


def _proposal_for(conn: Connection, approval_id: str, entry_id: int, kind: str | None,
                  origin: str | None, ts: str, note: str | None) -> Proposal:
    with orm(conn) as s:
        row = s.exec(select(Proposal).where(Proposal.origin == "mindstone-event",
                                            Proposal.external_id == approval_id)).first()
        if row is None:
            row = Proposal(op=None, type=None, name=note or f"{kind or 'approval'} "
                           f"{approval_id}", origin="mindstone-event", proposer=origin,
                           status="pending", ts=ts, updated_at=ts, external_id=approval_id,
                           kind=kind, entry_id=entry_id, rationale=note, writer=WRITER,
                           writer_version=CODE_VERSION, created_at=now_iso())
            s.add(row)
            s.flush()
        return row


def derive(conn: Connection, entry_ids: list[int] | None) -> dict[str, int]:
    """Proposal history for new ``approval_*`` entries; all of them when ``entry_ids`` is
    None (reindex), after deleting what was derived before."""
    query = columns(col(Entry.id), col(Entry.ts), col(Entry.content), col(Entry.meta)).where(
        col(Entry.kind) == "event",
        func.json_extract(col(Entry.meta), "$.event").in_(("approval_proposed",
                                                            "approval_decided")))
    if entry_ids is None:
        conn.execute(delete(Proposal).where(col(Proposal.origin) == "mindstone-event"))
    else:
        if not entry_ids:
            return {}
        # json_each keeps one bound parameter however many entries an import brought
        ids = func.json_each(json.dumps([int(i) for i in entry_ids])).table_valued("value")
        query = query.where(col(Entry.id).in_(select(ids.c.value)))
    proposed = decided = 0
    for entry_id, ts, content, raw in conn.execute(query.order_by(col(Entry.id))).all():
        try:
            meta = json.loads(raw or "{}")
        except ValueError:
            continue
        md = meta.get("metadata") if isinstance(meta, dict) else None
        if not isinstance(md, dict) or not md.get("approvalId"):
            continue
        approval_id = str(md["approvalId"])[:200]
        when = normalise_iso(ts) or now_iso()
        kind = str(md["kind"])[:80] if md.get("kind") is not None else None
        event = meta.get("event")
        row = _proposal_for(conn, approval_id, int(entry_id), kind,
                            str(md["origin"])[:80] if md.get("origin") else None, when,
                            _summary(content or "") if event == "approval_proposed" else None)
        if event == "approval_proposed":
            proposed += 1
            continue
        decision = DECISIONS.get(str(md.get("decision") or "").lower())
        if decision is None:
            continue
        with orm(conn) as s:
            row.status, row.decided_at, row.updated_at = decision, when, when
            row.actor = str(md.get("connector") or "harness")[:80]
            s.add(row)
            assert row.id is not None
            s.add(ProposalDecision(proposal_id=row.id, ts=when, actor=row.actor,
                                   decision=decision, connector=md.get("connector"),
                                   reason=(content or "").split("—", 1)[-1].strip()[:300]
                                   if "—" in (content or "") else None, writer=WRITER,
                                   writer_version=CODE_VERSION, created_at=now_iso()))
            s.flush()
        decided += 1
    return {"governance_events.proposals": proposed, "governance_events.decisions": decided}
