"""Governed memory writes (LCA §4.6, §4.6.1, §6.3; Anamnesis §5.3): every durable write is
proposed, checked, decided by a person or an explicit policy, applied, and verified.

Owns the tables of migration 6 (``models``): proposals, their checks, edits and decisions,
supersession links and memory flags. Public API (plain dataclasses from ``records``)::

    parse_proposal(data, origin="api", source="") -> NewProposal
    submit(store, new, *, actor=None, auto_apply=True) -> ProposalInfo
    list_proposals(store, status=None, limit=None) -> list[ProposalSummary]
    get_proposal(store, proposal_id) -> ProposalInfo          # .options: approval choices
    edit(store, proposal_id, changes, *, actor=None, reason=None) -> ProposalInfo
    approve(store, proposal_id, as_=None, reason=None, *, actor=None) -> ProposalInfo
    reject(store, proposal_id, reason, *, actor=None) -> ProposalInfo
    list_memories(store, status=None, type=None) -> list[MemoryRow]
    memory_detail(store, memory_id) -> MemoryDetail
    chain(store, memory_id) -> list[ChainLink]                 # oldest first, whole chain
    integrity(store) -> list[IntegrityProblem]                 # the Health screen calls it
    audit_events(store, limit=50) -> list[AuditInfo]

and, inside a store transaction, ``chains.link(conn, store, old_id, new_id, ...)`` (importers
record a supersession with it) and ``files.write_back(conn, store, memory_id)`` (recall
feedback rewrites a bound memory file). ``events.derive`` reads MindStone ``approval_*``
events as content-less proposal history.

May import: ``store.core``. Never another capability (``store.ingest`` and ``store.recall``
import this package, not the other way round), never ``store.facade``.
"""

from __future__ import annotations

from store.governance.apply import approve, reject, submit
from store.governance.policy import approval_options, auto_apply_allowed
from store.governance.chains import chain, integrity, problems_of
from store.governance.proposals import (
    NewProposal,
    ProposalError,
    edit,
    get_proposal,
    list_proposals,
    parse_proposal,
)
from store.governance.views import audit_events, list_memories, memory_detail

__all__ = [
    "NewProposal", "ProposalError", "approval_options", "approve", "audit_events",
    "auto_apply_allowed", "chain", "edit", "get_proposal", "integrity", "list_memories",
    "list_proposals", "memory_detail", "parse_proposal", "problems_of", "reject", "submit",
]
