"""Reading memories for the Memories screen and ``lca-tui memories`` / ``memory ID``, and the
audit log for ``lca-tui audit``. Secret memories' text is withheld in every record."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, func, tuple_
from sqlmodel import col, select

from store.core.db import orm
from store.core.errors import NotFound
from store.core.models import AuditEvent, Entry, Evidence, Memory
from store.governance.chains import chain, problems_of
from store.governance.models import MemoryFlag, Proposal, SupersessionLink
from store.governance.rows import audit_info, check_memory_filters, memory_row
from store.governance.records import (
    AuditInfo,
    FlagInfo,
    MemoryDetail,
    MemoryEvidence,
    MemoryPage,
    MemoryRow,
)

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

EXCERPT_CHARS = 400


def _flagged(s: Any) -> set[int]:
    return {int(r) for r in s.exec(select(MemoryFlag.memory_id).where(
        col(MemoryFlag.resolved_at).is_(None))).all()}


def memory_types(store: Store) -> list[str]:
    """The memory types the store holds, sorted (a ``--type`` filter names one of them)."""
    with store.read() as conn:
        with orm(conn) as s:
            found = s.exec(select(Memory.type).distinct()).all()
    return sorted(t for t in found if t)


def list_memories(store: Store, status: str | None = None, type: str | None = None,
                  ids: Sequence[int] | None = None) -> list[MemoryRow]:
    """Memories by type and name, filtered by ``status`` and ``type`` when given (``ids``:
    those only, what a following screen updates in place). A type no memory has is an error
    (``ValueError``) naming the types there are."""
    check_memory_filters(status, type, lambda: memory_types(store))
    query = select(Memory).order_by(col(Memory.type), col(Memory.name), col(Memory.id))
    if status:
        query = query.where(Memory.status == status)
    if type:
        query = query.where(Memory.type == type)
    if ids is not None:
        query = query.where(col(Memory.id).in_(list(ids)))
    with store.read() as conn:
        with orm(conn) as s:
            rows = s.exec(query).all()
            flagged = _flagged(s)
    return [memory_row(m, m.id in flagged) for m in rows]


def memory_page(store: Store, *, after: tuple[str, str, int] | None = None,
                at: int | None = None, last: bool = False, limit: int = 500,
                words: Sequence[str] = ()) -> MemoryPage:
    """A page of memories by type, name and id (``list_memories``' order), read by key and
    never by offset: the first ``limit``, those ``after`` a row's ``(type, name, id)``, those
    from memory ``at`` on, or with ``last`` the last ``limit``. ``words``: only memories whose
    type, status, name, description, tags or text (a secret one's excepted) contain every
    word, case-insensitively, as the table's ``/`` filter matches."""
    kind, name, mid = func.coalesce(col(Memory.type), ""), col(Memory.name), col(Memory.id)
    text = case((col(Memory.sensitivity) == "secret", ""), else_=col(Memory.body))
    haystack = func.lower(kind + " " + col(Memory.status) + " " + name + " "
                          + func.coalesce(col(Memory.description), "") + " "
                          + col(Memory.tags) + " " + text)
    where = [haystack.contains(w.lower(), autoescape=True) for w in words]
    with store.read() as conn, orm(conn) as s:
        if at is not None:
            found = s.get(Memory, at)
            if found is not None:
                after = (found.type or "", found.name, at - 1)
        query = select(Memory).where(*where)
        if after is not None:
            query = query.where(tuple_(kind, name, mid) > tuple_(*after))
        backwards = last and after is None
        order = (kind.desc(), name.desc(), mid.desc()) if backwards else (kind, name, mid)
        rows = list(s.exec(query.order_by(*order).limit(int(limit))).all())
        if backwards:
            rows.reverse()
        total = int(s.exec(select(func.count(mid)).where(*where)).one())
        before = 0
        if rows:
            first = rows[0]
            before = int(s.exec(select(func.count(mid)).where(
                *where, tuple_(kind, name, mid) < tuple_(first.type or "", first.name,
                                                        first.id))).one())
        active = int(s.exec(select(func.count(mid)).where(Memory.status == "active")).one())
        flagged = _flagged(s)
    return MemoryPage([memory_row(m, m.id in flagged) for m in rows], before, total, active)


def memory_detail(store: Store, memory_id: int) -> MemoryDetail:
    """A memory with its evidence, supersession chain, flags, integrity problems and the
    proposals that touched it."""
    with store.read() as conn:
        with orm(conn) as s:
            m = s.get(Memory, memory_id)
            if m is None:
                raise NotFound(f"no memory {memory_id}: `lca-tui memories` lists them")
            secret = m.sensitivity == "secret"
            ev_rows = s.exec(select(Evidence, Entry).join(
                Entry, col(Entry.id) == Evidence.entry_id, isouter=True)
                .where(Evidence.memory_id == memory_id).order_by(col(Evidence.id))).all()
            flags = s.exec(select(MemoryFlag).where(MemoryFlag.memory_id == memory_id)
                           .order_by(col(MemoryFlag.id))).all()
            proposals = s.exec(select(Proposal.id, Proposal.targets, Proposal.memory_id)
                               .order_by(col(Proposal.id))).all()
            linked = set(s.exec(select(SupersessionLink.proposal_id).where(
                (SupersessionLink.old_id == memory_id)
                | (SupersessionLink.new_id == memory_id))).all())
            flagged = _flagged(s)
    evidence = []
    for ev, entry in ev_rows:
        assert ev.id is not None
        span = (ev.span_start, ev.span_end) if ev.span_start is not None and \
            ev.span_end is not None else None
        excerpt = None
        if entry is not None and not secret:
            body = entry.content[span[0]:span[1]] if span else entry.content
            excerpt = body[:EXCERPT_CHARS]
        evidence.append(MemoryEvidence(ev.id, ev.entry_id, entry.session_id if entry else None,
                                       entry.seq if entry else None, span, ev.file_path,
                                       ev.note, excerpt))
    # made it, named it as a target, superseded it (an approval `--as supersede` links the
    # old memory without naming it a target) or flagged it (keep-both)
    linked |= {f.proposal_id for f in flags}
    touched = tuple(int(pid or 0) for pid, targets, made in proposals
                    if made == memory_id or memory_id in json.loads(targets or "[]")
                    or pid in linked)
    return MemoryDetail(
        memory_row(m, memory_id in flagged), None if secret else m.body,
        None if secret else m.invariant, m.role, m.created, m.last_applied, m.load_error,
        tuple(evidence), tuple(chain(store, memory_id)),
        tuple(FlagInfo(f.kind, f.other_id, f.proposal_id, f.reason, f.ts, f.resolved_at)
              for f in flags),
        tuple(problems_of(store, memory_id)), touched, _loading(m.front_matter))


def _loading(front_matter: str | None) -> dict[str, Any] | None:
    """The ``claude_code`` metadata a Claude Code memory file was imported with."""
    try:
        data = json.loads(front_matter or "{}")
    except ValueError:
        return None
    meta = data.get("claude_code") if isinstance(data, dict) else None
    return meta if isinstance(meta, dict) else None


def audit_events(store: Store, limit: int | None = 50, action: str | None = None
                 ) -> list[AuditInfo]:
    """The audit log, newest first: who did what to which ids (never content)."""
    query = select(AuditEvent).order_by(col(AuditEvent.id).desc())
    if action:
        query = query.where(AuditEvent.action == action)
    if limit:
        query = query.limit(limit)
    with store.read() as conn:
        with orm(conn) as s:
            rows = s.exec(query).all()
    return [audit_info(r) for r in rows]
