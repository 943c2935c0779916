"""Governed memory writes (LCA §4.6, §4.6.1, §6.3; Anamnesis §5.3): every durable write is
proposed, checked, decided by a person or an explicit policy, applied, and verified.

Owns the tables of migration 6 (``models``): proposals, their checks, edits and decisions,
supersession links and memory flags. Public API (plain dataclasses from ``records``)::

    parse_proposal(data, origin="api", source="") -> NewProposal
    submit(store, new, *, actor=None, auto_apply=True, now=None) -> ProposalInfo
    list_proposals(store, status=None, limit=None) -> list[ProposalSummary]
    get_proposal(store, proposal_id) -> ProposalInfo          # .options: approval choices
    approval_options(summary) -> list[ApprovalOption]         # what approval the checks allow
    edit(store, proposal_id, changes, *, actor=None, reason=None) -> ProposalInfo
    approve(store, proposal_id, as_=None, reason=None, *, actor=None, now=None) -> ProposalInfo
    reject(store, proposal_id, reason, *, actor=None, now=None) -> ProposalInfo
    list_memories(store, status=None, type=None) -> list[MemoryRow]
    memory_page(store, *, after=None, at=None, last=False, limit=500, words=()) -> MemoryPage
    memory_detail(store, memory_id) -> MemoryDetail
    chain(store, memory_id) -> list[ChainLink]                 # oldest first, whole chain
    integrity(store) -> list[IntegrityProblem]                 # the Health screen calls it
    problems_of(store, memory_id) -> list[IntegrityProblem]
    audit_events(store, limit=50, action=None) -> list[AuditInfo]
    find_groups(store, conn=None) -> list[DuplicateGroup]      # near-duplicate memories
    sweep_duplicates(store, *, actor=None) -> SweepReport      # one merge proposal a group

Modules: ``proposals`` (parse, store, edit, read), ``checks`` + ``text`` + ``verifier`` (the
six checks), ``policy`` (approval options, auto-apply), ``apply`` (approve / reject / apply),
``verify``, ``chains`` (links, chains, integrity), ``files`` (the bound memory directory;
``file_guard`` refuses to overwrite a file the agent changed),
``views`` (memories, audit), ``events`` (MindStone ``approval_*`` events as content-less
history, a deriver), ``replay`` (a recorded history, the demo's); the consolidation pass
(``consolidate``, ``detect``, ``proposer``) and the bound directory's gate (``gate``) submit
through ``submit``. Inside a store transaction, ``chains.link`` / ``chains.sync_links``
record supersessions (importers call ``sync_links``); ``feedback`` takes a harness's recall
feedback (``hits`` / ``prevented``) and ``files.write_back`` rewrites the bound memory file.

May import: ``store.core``; ``store.recall`` (the consolidation pass reads what a harness
reported as used, ``feedback`` reads the trace) and ``store.context.api`` (the pass's
checkpoint). ``store.ingest`` (``chains.sync_links``) imports this package's modules, so no
governance module imports ``store.ingest``. Never ``store.facade``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from store.governance.apply import approve, reject, submit
    from store.governance.chains import chain, integrity, problems_of
    from store.governance.policy import approval_options, auto_apply_allowed
    from store.governance.proposals import (
        NewProposal,
        ProposalError,
        edit,
        get_proposal,
        list_proposals,
        parse_proposal,
    )
    from store.governance.sweep import find_groups, sweep_duplicates
    from store.governance.views import audit_events, list_memories, memory_detail, memory_page

# name → the module defining it, imported on first use: listing memories (``views``) costs
# ``views`` and what it imports, not the checks (NumPy) and the apply path
_WHERE = {
    "approve": "apply", "reject": "apply", "submit": "apply",
    "chain": "chains", "integrity": "chains", "problems_of": "chains",
    "approval_options": "policy", "auto_apply_allowed": "policy",
    "NewProposal": "proposals", "ProposalError": "proposals", "edit": "proposals",
    "get_proposal": "proposals", "list_proposals": "proposals", "parse_proposal": "proposals",
    "find_groups": "sweep", "sweep_duplicates": "sweep",
    "audit_events": "views", "list_memories": "views", "memory_detail": "views",
    "memory_page": "views",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "NewProposal", "ProposalError", "approval_options", "approve", "audit_events",
    "auto_apply_allowed", "chain", "edit", "find_groups", "get_proposal", "integrity",
    "list_memories", "list_proposals", "memory_detail", "memory_page", "parse_proposal",
    "problems_of", "reject", "submit", "sweep_duplicates",
]
