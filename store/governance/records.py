"""Plain dataclasses the governance API hands out (no ORM object leaves ``store/``).

``to_json`` gives the shapes the command line prints (DESIGN "Command line"; issue 10's
"JSON that scripts rely on"). Text of a ``secret`` memory or candidate is never put in a
record: ``masked`` says it was withheld.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
# the audit record lives in core (``StoreBase.audit_in`` makes one); re-exported for views
from store.core.records import AuditInfo as AuditInfo
from store.core.vocab import plural

OPS = ("add", "reinforce", "revise", "supersede", "merge", "noop", "quarantine", "expire")
ORIGINS = ("api", "cli", "file", "consolidation", "proposer", "mindstone-event")
STATUSES = ("pending", "approved", "applied", "failed", "rejected")
CHECK_KINDS = ("duplicate", "contradiction", "source_support", "budget", "procedure_risk",
               "verifier")
RESULTS = ("pass", "warn", "fail")
APPROVE_AS = ("reinforce", "supersede", "keep-both")
PERSON_ONLY_TYPES = ("procedure", "identity")
MASK = "[secret: text withheld]"


@dataclass(frozen=True)
class EvidencePointer:
    """Where a candidate comes from: a transcript entry (and span), or a file."""

    entry_id: int | None = None
    span: tuple[int, int] | None = None
    file: str | None = None
    note: str | None = None
    # resolved for display (None when the entry is gone or is a file pointer)
    session_id: str | None = None
    seq: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"entry_id": self.entry_id, "span": list(self.span) if self.span else None,
                "file": self.file, "note": self.note, "session_id": self.session_id,
                "seq": self.seq}


@dataclass(frozen=True)
class CheckInfo:
    """One check of a proposal: its verdict, a one-line detail and its evidence.

    ``evidence`` by kind: duplicate ``{"matches": [{"memory_id", "name", "cos"}]}``;
    contradiction ``{"heuristic": True, "conflicts": [{"memory_id", "name", "cos", "cues":
    [{"kind", "candidate", "memory"}], "candidate_sentence", "memory_sentence"}]}``;
    source_support ``{"sentences": [{"start", "end", "text", "supported", "inference",
    "entry_id", "span", "overlap", "cos"}]}``; budget ``{"current", "adding", "budget"}``;
    procedure_risk ``{"type"}``; verifier ``{"command", "verdict" | "error", "stdout"}``.
    """

    kind: str
    result: str
    detail: str
    evidence: dict[str, Any] = field(default_factory=dict)
    suggestion: str | None = None
    revision: int = 0

    def to_json(self, full: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "result": self.result, "detail": self.detail}
        if full:
            out.update(evidence=self.evidence, suggestion=self.suggestion,
                       revision=self.revision)
        return out


@dataclass(frozen=True)
class EditInfo:
    revision: int
    ts: str
    actor: str
    before: dict[str, Any]
    after: dict[str, Any]
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        return {"revision": self.revision, "ts": self.ts, "actor": self.actor,
                "before": self.before, "after": self.after, "reason": self.reason}


@dataclass(frozen=True)
class DecisionInfo:
    ts: str
    actor: str
    decision: str
    as_op: str | None
    reason: str | None
    policy: str | None
    connector: str | None

    def to_json(self) -> dict[str, Any]:
        return {"ts": self.ts, "actor": self.actor, "decision": self.decision,
                "as": self.as_op, "reason": self.reason, "policy": self.policy,
                "connector": self.connector}


@dataclass(frozen=True)
class TargetInfo:
    """A memory a proposal acts on: as it is now, and as it was when proposed."""

    memory_id: int
    name: str | None
    status: str | None  # None: the memory no longer exists
    body: str | None  # None when secret (masked) or gone
    proposed_body: str | None  # the body when the proposal was made (None when masked)
    changed_since: bool  # the memory changed after the proposal was made
    masked: bool = False


@dataclass(frozen=True)
class ApprovalOption:
    """A way to approve a proposal, whether the checks allow it now, and what it needs."""

    as_op: str | None  # None: approve as proposed
    allowed: bool
    needs_reason: bool
    why: str
    memory_id: int | None = None  # reinforce: the duplicate memory; supersede: the conflict

    def to_json(self) -> dict[str, Any]:
        return {"as": self.as_op, "allowed": self.allowed, "needs_reason": self.needs_reason,
                "why": self.why, "memory_id": self.memory_id}


@dataclass(frozen=True)
class ProposalSummary:
    """A row of the queue: what ``proposals --json`` prints per proposal."""

    id: int
    op: str | None
    type: str | None
    status: str
    origin: str
    targets: tuple[int, ...]
    created: str
    name: str | None
    checks: tuple[CheckInfo, ...]
    proposer: str | None = None
    kind: str | None = None  # a harness's own kind (content-less event history)
    external_id: str | None = None
    decided: str | None = None
    """When it was approved, rejected or failed (None while pending)."""
    applied_as: str | None = None  # approved `--as reinforce` / `--as supersede`
    applied_to: tuple[int, ...] = ()  # the memories that approval wrote to or replaced

    @property
    def shown_op(self) -> str | None:
        """The operation as applied: ``add → reinforce`` for an add approved as reinforce."""
        if self.applied_as and self.applied_as != self.op:
            return f"{self.op} → {self.applied_as}"
        return self.op

    @property
    def shown_targets(self) -> tuple[int, ...]:
        """The memories it targeted, or those the approval applied it to."""
        return self.targets or self.applied_to

    @property
    def target(self) -> int | None:
        """The first target (a ``merge`` has several; see ``targets``)."""
        return self.targets[0] if self.targets else None

    @property
    def worst(self) -> str:
        """The worst check result: fail > warn > pass (pass when there are none)."""
        results = {c.result for c in self.checks}
        return "fail" if "fail" in results else "warn" if "warn" in results else "pass"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "op": self.op, "type": self.type, "status": self.status,
                "origin": self.origin, "target": self.target, "targets": list(self.targets),
                "created": self.created, "checks": [c.to_json() for c in self.checks]}


@dataclass(frozen=True)
class ProposalInfo:
    """A proposal in full: candidate, checks (current revision), edits, decisions, targets,
    the memory it made and the verification of that write."""

    summary: ProposalSummary
    content: str | None  # None when masked (secret) or content-less event history
    metadata: dict[str, Any]
    rationale: str | None
    evidence: tuple[EvidencePointer, ...]
    status_reason: str | None
    revision: int
    updated_at: str
    decided_at: str | None
    actor: str | None
    memory_id: int | None
    verified: bool | None
    verification: dict[str, Any] | None
    targets: tuple[TargetInfo, ...]
    edits: tuple[EditInfo, ...]
    decisions: tuple[DecisionInfo, ...]
    options: tuple[ApprovalOption, ...]
    masked: bool = False
    entry_id: int | None = None

    @property
    def id(self) -> int:
        return self.summary.id

    @property
    def status(self) -> str:
        return self.summary.status

    @property
    def checks(self) -> tuple[CheckInfo, ...]:
        return self.summary.checks

    def check(self, kind: str) -> CheckInfo | None:
        return next((c for c in self.checks if c.kind == kind), None)

    def to_json(self) -> dict[str, Any]:
        s = self.summary
        return {"id": s.id, "op": s.op, "type": s.type, "status": s.status,
                "origin": s.origin, "target": s.target, "targets": list(s.targets),
                "created": s.created, "name": s.name, "proposer": s.proposer,
                "content": self.content, "masked": self.masked, "metadata": self.metadata,
                "rationale": self.rationale, "evidence": [e.to_json() for e in self.evidence],
                "status_reason": self.status_reason, "revision": self.revision,
                "updated_at": self.updated_at, "decided_at": self.decided_at,
                "actor": self.actor, "memory_id": self.memory_id, "verified": self.verified,
                "verification": self.verification, "kind": s.kind,
                "external_id": s.external_id, "entry_id": self.entry_id,
                "checks": [c.to_json(full=True) for c in s.checks],
                "options": [o.to_json() for o in self.options],
                "targets_detail": [{"memory_id": t.memory_id, "name": t.name,
                                    "status": t.status, "changed_since": t.changed_since,
                                    "masked": t.masked} for t in self.targets],
                "edits": [e.to_json() for e in self.edits],
                "decisions": [d.to_json() for d in self.decisions]}


@dataclass(frozen=True)
class MemoryPage:
    """One page of the Memories table (``Store.memory_page``): ``rows`` by type, name and
    id; how many matching memories come ``before`` the first; the ``total`` that match; and
    the store's memories ``active`` (filter or not)."""

    rows: list[MemoryRow]
    before: int
    total: int
    active: int

    @property
    def key(self) -> tuple[str, str, int] | None:
        """The last row's key: the next page comes ``after`` it."""
        last = self.rows[-1] if self.rows else None
        return None if last is None else (last.type or "", last.name, last.id)


@dataclass(frozen=True)
class MemoryRow:
    """A row of the Memories table: what ``memories --json`` prints per memory."""

    id: int
    name: str
    type: str | None
    status: str
    critical: bool
    loadable: bool
    sensitivity: str
    hits: int
    prevented: int
    valid_from: str | None
    valid_to: str | None
    text: str | None  # None when secret
    tags: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    authority: str = "unreviewed"
    description: str | None = None
    flagged: bool = False  # an unresolved contradiction flag
    source_file: str | None = None

    @property
    def masked(self) -> bool:
        return self.sensitivity == "secret"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type, "status": self.status,
                "critical": self.critical, "loadable": self.loadable,
                "sensitivity": self.sensitivity, "hits": self.hits,
                "prevented": self.prevented, "valid_from": self.valid_from,
                "valid_to": self.valid_to, "text": self.text}


@dataclass(frozen=True)
class ChainLink:
    """One memory of a supersession chain, oldest first: ``chain --json`` per element.

    ``supersedes`` lists the memories this one replaced (several after a ``merge``);
    ``superseded_by`` is its successor (a fork — two successors — is an integrity problem and
    ``successors`` names them all); ``proposal_id`` made the link(s) into this memory."""

    id: int
    name: str
    status: str
    valid_from: str | None
    valid_to: str | None
    supersedes: tuple[int, ...]
    superseded_by: int | None
    proposal_id: int | None
    successors: tuple[int, ...] = ()
    depth: int = 0  # generations after the oldest memory of the chain
    link_ts: str | None = None
    # a link into this memory bridges memories erased between (``erase`` keeps the chain
    # whole with a link of source ``erasure``: ids only, nothing of what was erased)
    erased_between: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "valid_from": self.valid_from,
                "valid_to": self.valid_to, "supersedes": list(self.supersedes),
                "superseded_by": self.superseded_by, "successors": list(self.successors),
                "fork": len(self.successors) > 1, "proposal_id": self.proposal_id,
                "erased_between": self.erased_between}


@dataclass(frozen=True)
class IntegrityProblem:
    """A supersession problem: ``cycle``, ``dangling``, ``superseded_but_active``, ``fork``,
    ``pointer_mismatch`` (pointer columns disagree with the links)."""

    kind: str
    memory_ids: tuple[int, ...]
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "memory_ids": list(self.memory_ids), "detail": self.detail}


@dataclass(frozen=True)
class MemoryEvidence:
    id: int
    entry_id: int | None
    session_id: str | None
    seq: int | None
    span: tuple[int, int] | None
    file: str | None
    note: str | None
    excerpt: str | None  # the entry's text (span) — None when gone or the memory is secret

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "entry_id": self.entry_id, "session_id": self.session_id,
                "seq": self.seq, "span": list(self.span) if self.span else None,
                "file": self.file, "note": self.note, "excerpt": self.excerpt}


@dataclass(frozen=True)
class FlagInfo:
    kind: str
    other_id: int | None
    proposal_id: int | None
    reason: str | None
    ts: str
    resolved_at: str | None


@dataclass(frozen=True)
class MemoryDetail:
    """A memory with everything the detail view shows: ``memory ID --json``."""

    row: MemoryRow
    body: str | None  # None when secret
    invariant: str | None
    role: str | None
    created: str | None
    last_applied: str | None
    load_error: str | None
    evidence: tuple[MemoryEvidence, ...]
    chain: tuple[ChainLink, ...]
    flags: tuple[FlagInfo, ...]
    problems: tuple[IntegrityProblem, ...]
    proposals: tuple[int, ...]  # proposals that targeted or made this memory
    # how Claude Code loads it (scope, load, how, cut…) for a memory imported from Claude
    # Code's own memory files (``store.ingest.claude_memory``); None for others
    loading: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out = self.row.to_json()
        out.update(body=self.body, invariant=self.invariant, role=self.role,
                   created=self.created, last_applied=self.last_applied,
                   tags=list(self.row.tags), projects=list(self.row.projects),
                   authority=self.row.authority, description=self.row.description,
                   source_file=self.row.source_file, load_error=self.load_error,
                   evidence=[e.to_json() for e in self.evidence],
                   chain=[c.to_json() for c in self.chain],
                   flags=[{"kind": f.kind, "other_id": f.other_id,
                           "proposal_id": f.proposal_id, "reason": f.reason, "ts": f.ts,
                           "resolved_at": f.resolved_at} for f in self.flags],
                   problems=[p.to_json() for p in self.problems],
                   proposals=list(self.proposals), loading=self.loading)
        return out


@dataclass(frozen=True)
class PassSummary:
    """The latest consolidation pass, from its checkpoints (trigger ``consolidation``) and
    the proposals it submitted (origin ``consolidation`` or ``proposer``, made while it ran).

    ``found`` counts what it proposed by type (an ``add``) or operation (the others);
    ``statuses`` where those proposals stand now; ``total`` / ``pending`` count every
    proposal any pass ever made."""

    ts: str  # when it finished (its last checkpoint)
    started: str
    sessions: int
    entries: int  # new entries it read
    found: dict[str, int]
    statuses: dict[str, int]
    total: int
    pending: int

    @property
    def proposals(self) -> int:
        return sum(self.statuses.values())

    def to_json(self) -> dict[str, Any]:
        return {"ts": self.ts, "started": self.started, "sessions": self.sessions,
                "entries": self.entries, "proposals": self.proposals, "found": self.found,
                "statuses": self.statuses, "total": self.total, "pending": self.pending}


def loading_line(meta: dict[str, Any]) -> str:
    """How Claude Code loads a memory, in one line: its scope, when, where an index is cut,
    its paths, where it is imported, the imports not followed."""
    parts = [f"Claude Code {meta.get('scope', '?')} scope", f"loads {meta.get('how', '?')}"]
    if meta.get("load") == "cut":
        parts.append(f"CUT: lines {int(meta.get('loaded_lines', 0)) + 1}–{meta.get('lines')} "
                     "never loaded at start" if meta.get("cut") else
                     f"all {meta.get('lines')} lines fit the cap")
    if meta.get("paths"):
        parts.append("paths " + ", ".join(map(str, meta["paths"])))
    if meta.get("imported_from"):
        parts.append(f"imported at {meta['imported_from']}")
    bad = [i for i in meta.get("imports", []) if i.get("problem")]
    if bad:
        parts.append(f"{plural(len(bad), '@import')} not followed")
    return " · ".join(parts)
