"""The governance listings on a store file read without the ORM (``store.core.lite``):
``lca-tui memories``, ``proposals`` and ``audit``. Each is the same query as its ORM read
(``views.list_memories``, ``proposals.list_proposals``, ``views.audit_events``) written in
SQLite's SQL, its records built by the same functions (``store.governance.rows``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from store.core.lite import IN_BATCH, LiteFile
from store.core.records import AuditInfo
from store.governance.records import CheckInfo, MemoryRow, ProposalSummary
from store.governance.rows import (
    applied_as,
    audit_info,
    check_info,
    check_memory_filters,
    check_proposal_status,
    memory_row,
    proposal_summary,
)


def _in_batches(lite: LiteFile, sql: str, ids: Sequence[int]) -> list[Any]:
    """``sql`` (with one ``IN ({})``) over ``ids``, a batch at a time, rows as objects."""
    out: list[Any] = []
    for i in range(0, len(ids), IN_BATCH):
        batch = list(ids[i:i + IN_BATCH])
        out += lite.objects(sql.format(", ".join("?" * len(batch))), batch)
    return out


def _select(table: str, where: dict[str, str | None], order: str, limit: int | None = None
            ) -> tuple[str, list[str]]:
    """``SELECT * FROM table`` with an equality filter per given value of ``where`` (column →
    value; None: no filter), ordered, and limited when ``limit`` is given: (SQL, parameters)."""
    given = {c: v for c, v in where.items() if v}
    sql = f"SELECT * FROM {table}"
    if given:
        sql += " WHERE " + " AND ".join(f"{c} = ?" for c in given)
    sql += f" ORDER BY {order}" + (f" LIMIT {int(limit)}" if limit else "")
    return sql, list(given.values())


def memory_types(lite: LiteFile) -> list[str]:
    """``views.memory_types``."""
    return sorted(str(t) for (t,) in lite.tuples("SELECT DISTINCT type FROM memory") if t)


def list_memories(lite: LiteFile, status: str | None = None, type: str | None = None
                  ) -> list[MemoryRow]:
    """``views.list_memories``: by type and name, filtered by ``status`` and ``type``."""
    with lite.read():
        check_memory_filters(status, type, lambda: memory_types(lite))
        rows = lite.objects(*_select("memory", {"status": status, "type": type},
                                     "type, name, id"))
        flagged = {int(r) for (r,) in lite.tuples(
            "SELECT memory_id FROM memory_flag WHERE resolved_at IS NULL")}
    return [memory_row(m, m.id in flagged) for m in rows]


def list_proposals(lite: LiteFile, status: str | None = None, limit: int | None = None
                   ) -> list[ProposalSummary]:
    """``proposals.list_proposals``: the queue, newest first."""
    check_proposal_status(status)
    with lite.read():
        rows = lite.objects(*_select("proposal", {"status": status}, "ts DESC, id DESC",
                                     limit))
        ids = [int(r.id) for r in rows]
        checks: dict[int, list[CheckInfo]] = {i: [] for i in ids}
        for c in sorted(_in_batches(
                lite, "SELECT c.* FROM proposal_check c JOIN proposal p ON p.id = "
                "c.proposal_id WHERE c.proposal_id IN ({}) AND c.revision = p.revision",
                ids), key=lambda c: c.id):
            checks[c.proposal_id].append(check_info(c))
        applied = [int(r.id) for r in rows if r.status == "applied"]
        decided = [(int(d.proposal_id), str(d.as_op)) for d in _in_batches(
            lite, "SELECT proposal_id, as_op FROM proposal_decision WHERE proposal_id IN ({}) "
            "AND decision = 'applied' AND as_op IN ('reinforce', 'supersede')", applied)]
        links = [(ln.proposal_id, ln.old_id) for ln in _in_batches(
            lite, "SELECT proposal_id, old_id FROM supersession_link WHERE proposal_id IN ({})",
            [pid for pid, _ in decided])]
    done = applied_as(rows, decided, links) if applied else {}
    return [proposal_summary(r, checks[r.id], applied=done.get(r.id)) for r in rows]


def audit_events(lite: LiteFile, limit: int | None = 50, action: str | None = None
                 ) -> list[AuditInfo]:
    """``views.audit_events``: the audit log, newest first."""
    with lite.read():
        rows = lite.objects(*_select("audit_event", {"action": action}, "id DESC", limit))
    return [audit_info(r) for r in rows]
