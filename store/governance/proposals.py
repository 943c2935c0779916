"""Proposals: parsing what a harness or a person submits, storing it with its checks, reading
the queue back, and edits before approval (the edit history is kept).

A proposal document (``lca-tui propose FILE``, ``Store.propose``) is JSON::

    {"op": "add" | "reinforce" | "revise" | "supersede" | "merge" | "noop" | "quarantine",
     "type": "feedback",              # the memory type (default: the target's)
     "target": 12,                    # a memory id; "targets": [..] for merge (or a list)
     "content": "the memory's body",  # add / revise / supersede / merge
     "metadata": {"name", "description", "tags", "projects", "role", "critical", "evergreen",
                  "invariant", "sensitivity", "authority", "half_life_days", "valid_from",
                  "uses_counted"},                # uses_counted: reinforce only
     "rationale": "why",
     "evidence": [{"entry": 812, "span": [0, 120]}, {"session": "e88b…", "seq": 14},
                  {"file": "/path/notes.md"}],
     "proposer": "claude-code", "idempotency_key": "..."}   # both optional

Every key is checked with a message saying which one is wrong and why.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func
from sqlmodel import col, select

from store.core.db import columns, orm
from store.core.errors import NotFound
from store.core.models import Entry, Memory, StoreMeta
from store.core.textsafe import out_of_range
from store.core.timeutil import normalise_iso, now_iso
from store.governance.checks import Candidate, Checker, evidence_texts
from store.governance.models import (
    Proposal,
    ProposalCheck,
    ProposalDecision,
    ProposalEdit,
    SupersessionLink,
)
from store.governance.policy import approval_options
from store.governance.rows import (
    applied_as,
    check_info,
    check_proposal_status,
    loads,
    proposal_summary,
)
from store.governance.records import (
    MASK,
    OPS,
    ORIGINS,
    CheckInfo,
    DecisionInfo,
    EditInfo,
    EvidencePointer,
    ProposalInfo,
    ProposalSummary,
    TargetInfo,
)
from store.core.vocab import SENSITIVITIES, Progress

if TYPE_CHECKING:
    from store.core.secrets import Detector
    from store.core.base import StoreBase as Store

METADATA_KEYS = {"name": str, "description": str, "tags": list, "projects": list, "role": str,
                 "critical": bool, "evergreen": bool, "invariant": str, "sensitivity": str,
                 "authority": str, "half_life_days": float, "valid_from": str,
                 "uses_counted": bool}
"""``uses_counted`` (reinforce only): the uses it records were already counted in ``hits``
when a harness reported them (recall feedback), so applying it does not count them again."""
EDITABLE = ("op", "type", "targets", "content", "metadata", "rationale", "evidence")
NEEDS_CONTENT = ("add", "revise", "supersede", "merge")
ONE_TARGET = ("reinforce", "revise", "supersede", "quarantine", "expire")


class ProposalError(ValueError):
    """A proposal document that cannot be accepted; the message names the key."""


@dataclass
class NewProposal:
    """A candidate write as submitted (validated by ``parse_proposal`` or ``validate``)."""

    op: str
    content: str | None = None
    type: str | None = None
    targets: tuple[int, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    rationale: str | None = None
    evidence: tuple[dict[str, Any], ...] = ()  # {"entry"/"entry_id", "span"} | {"session",
    # "seq"} | {"file"}
    origin: str = "api"
    proposer: str | None = None
    idem_key: str | None = None

    def snapshot(self) -> dict[str, Any]:
        """The editable fields, as stored in the edit history."""
        return {"op": self.op, "type": self.type, "targets": list(self.targets),
                "content": self.content, "metadata": self.metadata,
                "rationale": self.rationale, "evidence": list(self.evidence)}


def _where(source: str, key: str) -> str:
    return f"{source}: {key}" if source else key


def _target_ids(value: Any, where: str) -> tuple[int, ...]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str) and item.startswith("memory:"):
            item = item[len("memory:"):]
        if isinstance(item, bool):
            raise ProposalError(f"{where}: a memory id is a number, got {item!r}")
        try:
            out.append(int(item))
        except (TypeError, ValueError):
            raise ProposalError(f"{where}: a memory id is a number (or memory:ID), got "
                                f"{item!r}") from None
    return tuple(dict.fromkeys(out))


def parse_proposal(data: Any, origin: str = "api", source: str = "") -> NewProposal:
    """A ``NewProposal`` from a proposal document (see the module docstring)."""
    if not isinstance(data, dict):
        raise ProposalError(f"{source or 'proposal'}: a proposal is a JSON object, got "
                            f"{type(data).__name__}")
    known = {"op", "type", "target", "targets", "content", "metadata", "rationale", "evidence",
             "proposer", "idempotency_key"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ProposalError(f"{_where(source, unknown[0])}: unknown key (known: "
                            f"{', '.join(sorted(known))})")
    too_big = out_of_range(data)
    if too_big:
        raise ProposalError(f"{source or 'proposal'}: {too_big}")
    targets: tuple[int, ...] = ()
    for key in ("target", "targets"):
        if data.get(key) is not None:
            targets += _target_ids(data[key], _where(source, key))
    new = NewProposal(
        op=str(data.get("op") or ""), content=data.get("content"), type=data.get("type"),
        targets=tuple(dict.fromkeys(targets)), metadata=data.get("metadata") or {},
        rationale=data.get("rationale"), evidence=data.get("evidence") or (),
        origin=origin, proposer=data.get("proposer"), idem_key=data.get("idempotency_key"))
    return validate(new, source)


def validate(new: NewProposal, source: str = "") -> NewProposal:
    """Check every field of ``new``; returns it normalised, or raises ``ProposalError``."""
    w = lambda key: _where(source, key)  # noqa: E731
    if new.op not in OPS:
        raise ProposalError(f"{w('op')}: must be one of {', '.join(OPS)}, got {new.op!r}")
    if new.origin not in ORIGINS:
        raise ProposalError(f"{w('origin')}: must be one of {', '.join(ORIGINS)}")
    if new.type is not None and (not isinstance(new.type, str) or not new.type.strip()):
        raise ProposalError(f"{w('type')}: a memory type is a non-empty string")
    for key in ("rationale", "proposer", "idem_key"):
        value = getattr(new, key)
        if value is not None and not isinstance(value, str):
            raise ProposalError(f"{w(key)}: must be a string")
    if new.op in NEEDS_CONTENT:
        if not isinstance(new.content, str) or not new.content.strip():
            raise ProposalError(f"{w('content')}: a {new.op} needs the memory's text")
    elif new.content is not None and not isinstance(new.content, str):
        raise ProposalError(f"{w('content')}: must be a string")
    if new.op == "add" and new.targets:
        raise ProposalError(f"{w('target')}: an add makes a new memory and has no target "
                            "(use revise or supersede to change one)")
    if new.op in ONE_TARGET and len(new.targets) != 1:
        raise ProposalError(f"{w('target')}: a {new.op} names exactly one memory, got "
                            f"{len(new.targets)}")
    if new.op == "merge" and len(new.targets) < 2:
        raise ProposalError(f"{w('targets')}: a merge names two or more memories")
    if not isinstance(new.metadata, dict):
        raise ProposalError(f"{w('metadata')}: must be an object")
    meta: dict[str, Any] = {}
    for key, value in new.metadata.items():
        kind = METADATA_KEYS.get(key)
        if kind is None:
            raise ProposalError(f"{w('metadata.' + key)}: unknown key (known: "
                                f"{', '.join(METADATA_KEYS)})")
        if value is None:
            continue
        if kind is list:
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ProposalError(f"{w('metadata.' + key)}: a list of strings")
        elif kind is bool and not isinstance(value, bool):
            raise ProposalError(f"{w('metadata.' + key)}: true or false, got {value!r}")
        elif kind is float:
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not math.isfinite(value) or value <= 0):
                raise ProposalError(f"{w('metadata.' + key)}: a positive, finite number of "
                                    f"days, got {value!r}")
            value = float(value)
        elif kind is str and not isinstance(value, str):
            raise ProposalError(f"{w('metadata.' + key)}: must be a string")
        meta[key] = value
    if meta.get("uses_counted") and new.op != "reinforce":
        raise ProposalError(f"{w('metadata.uses_counted')}: only a reinforce records uses "
                            "already counted")
    if meta.get("sensitivity", "public") not in SENSITIVITIES:
        raise ProposalError(f"{w('metadata.sensitivity')}: one of {', '.join(SENSITIVITIES)}")
    if "valid_from" in meta:
        stamp = normalise_iso(meta["valid_from"])
        if stamp is None:
            raise ProposalError(f"{w('metadata.valid_from')}: an ISO-8601 date or time")
        meta["valid_from"] = stamp
    new.metadata = meta
    if not isinstance(new.evidence, (list, tuple)):
        raise ProposalError(f"{w('evidence')}: a list of pointers")
    pointers = []
    for i, p in enumerate(new.evidence):
        pointers.append(_pointer(p, w(f"evidence[{i}]")))
    new.evidence = tuple(pointers)
    return new


def _pointer(p: Any, where: str) -> dict[str, Any]:
    if not isinstance(p, dict):
        raise ProposalError(f"{where}: a pointer is an object ({{\"entry\": ID}}, "
                            "{\"session\": S, \"seq\": N} or {\"file\": PATH})")
    out: dict[str, Any] = {}
    entry = p.get("entry", p.get("entry_id"))
    if entry is not None:
        if isinstance(entry, bool) or not isinstance(entry, int):
            raise ProposalError(f"{where}.entry: an entry id (a number)")
        out["entry_id"] = entry
    elif p.get("session") is not None:
        if not isinstance(p.get("seq"), int) or isinstance(p.get("seq"), bool):
            raise ProposalError(f"{where}.seq: a session pointer needs the entry's seq")
        out["session"], out["seq"] = str(p["session"]), int(p["seq"])
    elif p.get("file") is not None:
        out["file"] = str(p["file"])
    else:
        raise ProposalError(f"{where}: names no entry, session + seq, or file")
    span = p.get("span")
    if span is not None:
        if (not isinstance(span, list) or len(span) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in span)
                or not 0 <= span[0] <= span[1]):
            raise ProposalError(f"{where}.span: [start, end] character offsets, start ≤ end")
        out["span"] = list(span)
    if p.get("note") is not None:
        out["note"] = str(p["note"])
    return out


# -- resolving ------------------------------------------------------------------------------
def _resolve_evidence(store: Store, conn: Connection, pointers: tuple[dict[str, Any], ...]
                      ) -> list[dict[str, Any]]:
    """Session + seq pointers become entry ids; an entry that does not exist is an error."""
    out = []
    for i, p in enumerate(pointers):
        p = dict(p)
        if "session" in p:
            sid = store.session(p.pop("session")).id
            seq = p.pop("seq")
            row = conn.execute(columns(col(Entry.id)).where(
                col(Entry.session_id) == sid, col(Entry.seq) == seq)).first()
            if row is None:
                raise ProposalError(f"evidence[{i}]: session {sid} has no entry {seq}")
            p["entry_id"] = int(row[0])
        if "entry_id" in p:
            row = conn.execute(columns(func.length(col(Entry.content))).where(
                col(Entry.id) == p["entry_id"])).first()
            if row is None:
                raise ProposalError(f"evidence[{i}]: no entry {p['entry_id']}")
            if p.get("span") and p["span"][1] > int(row[0]):
                raise ProposalError(f"evidence[{i}].span: entry {p['entry_id']} has only "
                                    f"{row[0]} characters")
        out.append(p)
    return out


def _target_rows(conn: Connection, ids: tuple[int, ...]) -> list[dict[str, Any]]:
    rows = []
    for mid in ids:
        r = conn.execute(columns(
            col(Memory.id), col(Memory.name), col(Memory.type), col(Memory.body),
            col(Memory.critical), col(Memory.invariant), col(Memory.status),
            col(Memory.sensitivity), col(Memory.content_hash), col(Memory.tags),
            col(Memory.projects), col(Memory.description), col(Memory.superseded_by_id),
            col(Memory.evergreen))
            .where(col(Memory.id) == mid)).first()
        if r is None:
            raise ProposalError(f"target: no memory {mid} (`lca-tui memories` lists them)")
        with orm(conn) as s:
            links = s.exec(select(SupersessionLink.new_id).where(
                SupersessionLink.old_id == mid)).all()
        succ = sorted({int(x) for x in links} | ({int(r[12])} if r[12] is not None else set()))
        rows.append({"id": int(r[0]), "name": r[1], "type": r[2], "body": r[3],
                     "critical": bool(r[4]), "invariant": r[5], "status": r[6],
                     "sensitivity": r[7], "content_hash": r[8], "tags": json.loads(r[9] or
                                                                                   "[]"),
                     "projects": json.loads(r[10] or "[]"), "description": r[11],
                     "successors": succ, "evergreen": bool(r[13])})
    return rows


REPLACING = ("supersede", "merge")
LIVE = ("active", "disputed")


def refuse_target_state(op: str, targets: list[dict[str, Any]]) -> None:
    """Refuse (``ProposalError``, nothing stored) a write the targets' state makes wrong: a
    ``supersede`` / ``merge`` of a memory that already has a successor (it would fork the
    chain: supersede the successor instead), a ``reinforce`` of a memory that is not active
    (superseded, expired, quarantined: nothing to reinforce). Run at submission, at each
    edit and again at approval."""
    for t in targets:
        succ = t.get("successors") or []
        if op in REPLACING and succ:
            latest = ", ".join(map(str, succ))
            raise ProposalError(
                f"target: memory {t['id']} is already superseded by {latest}; a {op} of it "
                f"would fork the chain — supersede {succ[-1]} instead")
        if op == "expire" and t["status"] != "active":
            raise ProposalError(f"target: memory {t['id']} is {t['status']}, not active: "
                                "only an active memory expires")
        if op == "expire" and (t.get("critical") or t.get("evergreen")):
            kind = "critical" if t.get("critical") else "evergreen"
            raise ProposalError(f"target: memory {t['id']} is {kind}: a {kind} memory never "
                                "expires")
        if op == "reinforce" and t["status"] not in LIVE:
            hint = (f"; reinforce its successor {succ[-1]} instead" if succ else "")
            raise ProposalError(f"target: memory {t['id']} is {t['status']}, not active: a "
                                f"reinforce of it is refused{hint}")


def secret_name(mtype: str | None, memory_id: int | None = None) -> str:
    """The default name of a secret memory: its type and id, none of its text."""
    kind = mtype or "memory"
    return f"secret {kind} {memory_id}" if memory_id is not None else f"secret {kind}"


def _name_of(new: NewProposal, targets: list[dict[str, Any]]) -> str:
    if new.metadata.get("name"):
        return str(new.metadata["name"])
    if targets and new.op not in ("add", "merge"):
        return str(targets[0]["name"])
    for line in (new.content or "").splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:80]
    return f"{new.op} proposal"


def candidate_for(store: Store, new: NewProposal) -> tuple[Candidate, list[dict[str, Any]]]:
    """The checks' view of ``new``: targets read, evidence resolved and its text fetched."""
    with store.read() as conn:
        targets = _target_rows(conn, new.targets)
        refuse_target_state(new.op, targets)
        pointers = _resolve_evidence(store, conn, new.evidence)
        texts = evidence_texts(conn, pointers)
    mtype = new.type or (targets[0]["type"] if targets else None)
    content = new.content if new.content is not None else (targets[0]["body"] if targets
                                                            else "")
    rank = {s: i for i, s in enumerate(SENSITIVITIES)}
    inherited = max((t["sensitivity"] for t in targets), key=lambda s: rank.get(s, 2),
                    default="public")
    sensitivity = new.metadata.get("sensitivity") or inherited
    if store.detector().detect("\n".join(str(v) for v in (
            content, new.metadata.get("name"), new.metadata.get("description"),
            new.metadata.get("invariant")) if v)):
        # the secrets detector found a key, a token, a password: the candidate is secret
        # (masked in the queue and its checks), as the memory it would write will be
        sensitivity = new.metadata["sensitivity"] = "secret"
    name = _name_of(new, targets)
    if sensitivity == "secret" and not new.metadata.get("name") and (
            not targets or new.op in ("add", "merge")):
        name = secret_name(mtype)  # a default name made of a secret's text would show it
    cand = Candidate(new.op, mtype, name, content or "", dict(new.metadata),
                     targets, texts, new.rationale, sensitivity)
    return cand, pointers


def actor_name(store: Store, actor: str | None) -> str:
    """The person behind a decision (``store.core.actor``: never the program's name)."""
    from store.core.actor import resolve

    return resolve(actor, store.settings)


# -- writing ------------------------------------------------------------------------------
def _masked(value: Any, detector: Detector) -> Any:
    """``value`` (a check's evidence: dicts, lists, strings) with every string masked by the
    store's detector: a sentence of the candidate or of its evidence that holds a key, a
    token or a password is stored with ``[secret: <kind>]`` in place of the value."""
    if isinstance(value, str):
        return detector.mask(value)
    if isinstance(value, dict):
        return {k: _masked(v, detector) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(v, detector) for v in value]
    return value


def _check_rows(store: Store, proposal_id: int, revision: int,
                checks: list[CheckInfo]) -> list[ProposalCheck]:
    detector = store.detector()
    return [ProposalCheck(proposal_id=proposal_id, revision=revision, kind=c.kind,
                          result=c.result, detail=detector.mask(c.detail),
                          evidence=json.dumps(_masked(c.evidence, detector),
                                              ensure_ascii=False, default=str),
                          suggestion=c.suggestion, writer=store.writer,
                          writer_version=store.writer_version, created_at=now_iso())
            for c in checks]


AUTO_APPLY_DUE = "governance.auto_apply_due."


def store_proposal(store: Store, new: NewProposal, *, actor: str | None = None,
                   now: str | None = None, auto_apply_due: bool = False) -> ProposalInfo:
    """Check and store a proposal, pending (``apply.submit`` adds the auto-apply policy).

    The checks (embedding, the verifier command) run before the write lock is taken. With
    an ``idem_key`` already stored, the proposal stored under it is returned unchanged.
    """
    validate(new)
    if new.idem_key:
        with store.read() as conn:
            with orm(conn) as s:
                have = s.exec(select(Proposal).where(Proposal.idem_key == new.idem_key)).first()
        if have is not None and have.id is not None:
            return get_proposal(store, have.id)
    cand, pointers = candidate_for(store, new)
    if "sensitivity" not in new.metadata and cand.sensitivity != "public":
        new.metadata["sensitivity"] = cand.sensitivity  # a successor is as private as its
        cand.metadata["sensitivity"] = cand.sensitivity  # strictest target
    checks = Checker(store).run(cand)
    now = now or now_iso()
    snapshot = {str(t["id"]): {"name": t["name"], "body": t["body"],
                               "content_hash": t["content_hash"], "status": t["status"]}
                for t in cand.targets}
    with store.write() as conn:
        with orm(conn) as s:
            row = Proposal(op=new.op, type=cand.type, targets=json.dumps(list(new.targets)),
                           target_snapshot=json.dumps(snapshot, ensure_ascii=False),
                           name=cand.name, content=new.content,
                           meta=json.dumps(new.metadata, ensure_ascii=False),
                           rationale=new.rationale, evidence=json.dumps(pointers),
                           origin=new.origin, proposer=new.proposer or actor, status="pending",
                           ts=now, updated_at=now, idem_key=new.idem_key,
                           writer=store.writer, writer_version=store.writer_version,
                           created_at=now_iso())
            s.add(row)
            s.flush()
            assert row.id is not None
            s.add_all(_check_rows(store, row.id, 0, checks))
            s.flush()
            proposal_id = row.id
            if auto_apply_due:  # a kill before the policy decides leaves this for a resume
                s.add(StoreMeta(key=f"{AUTO_APPLY_DUE}{proposal_id}", value="1"))
                s.flush()
        store.audit_in(conn, "proposal_submitted", "proposal", [proposal_id],
                       {"checks_failed": sum(c.result == "fail" for c in checks),
                     "checks_warned": sum(c.result == "warn" for c in checks)},
                       actor=actor_name(store, actor))
    return get_proposal(store, proposal_id)


def recheck(store: Store, proposal_id: int, *, actor: str | None = None) -> ProposalInfo:
    """Run the checks of a pending (or failed) proposal again, against the store as it is
    now (at approval: other writes since submission change the budget, the duplicates, the
    contradictions). Results that differ from the stored ones are stored as a new revision
    of its checks (the proposal's ``revision`` goes up, the old results stay as history);
    returns the proposal as it is then. Raises ``ProposalError`` when the targets' state now
    refuses the write (``refuse_target_state``)."""
    info = get_proposal(store, proposal_id)
    if info.summary.op is None or info.status not in ("pending", "failed"):
        return info
    new = stored_candidate(store, proposal_id)
    cand, _ = candidate_for(store, new)
    if "sensitivity" not in new.metadata and cand.sensitivity != "public":
        cand.metadata["sensitivity"] = cand.sensitivity
    checks = Checker(store).run(cand)
    before = [(c.kind, c.result, c.detail) for c in info.summary.checks]
    if before == [(c.kind, c.result, c.detail) for c in checks]:
        return info
    revision = info.revision + 1
    with store.write() as conn:
        with orm(conn) as s:
            row = s.get(Proposal, proposal_id)
            if row is None or row.status != info.status or row.revision != info.revision:
                raise ProposalError(f"proposal {proposal_id} changed while it was being "
                                    "checked again; look at it again")
            row.revision, row.updated_at = revision, now_iso()
            s.add(row)
            s.add_all(_check_rows(store, proposal_id, revision, checks))
            s.flush()
        store.audit_in(conn, "proposal_rechecked", "proposal", [proposal_id],
                       {"revision": revision,
                     "checks_failed": sum(c.result == "fail" for c in checks),
                     "checks_warned": sum(c.result == "warn" for c in checks)},
                       actor=actor_name(store, actor))
    return get_proposal(store, proposal_id)


def recheck_pending(store: Store, *, actor: str | None = None,
                    progress: Progress | None = None) -> list[int]:
    """Run the checks of every pending proposal again (``recheck``), after writes made
    outside the gate (the demo's seeded memories, an import); the ids whose results changed.
    A proposal its targets' state now refuses is left as it is: approval says why."""
    changed = []
    pending = list_proposals(store, "pending")
    for i, p in enumerate(pending):
        if progress:
            progress("checking the pending proposals again", i, len(pending))
        if p.op is None:
            continue
        try:
            after = recheck(store, p.id, actor=actor)
        except ProposalError:
            continue
        if after.revision != 0 and [(c.kind, c.result, c.detail) for c in after.summary.checks] \
                != [(c.kind, c.result, c.detail) for c in p.checks]:
            changed.append(p.id)
    if progress:
        progress("checking the pending proposals again", len(pending), len(pending))
    return changed


def edit(store: Store, proposal_id: int, given: Mapping[str, object], *,
         actor: str | None = None, reason: str | None = None) -> ProposalInfo:
    """Change a pending proposal (any of ``EDITABLE``; ``target`` is read as ``targets``);
    keeps the before / after in its edit history and runs the checks again."""
    info = get_proposal(store, proposal_id)
    if info.status != "pending":
        raise ProposalError(f"proposal {proposal_id} is {info.status}: only a pending proposal "
                            "can be edited")
    if info.summary.op is None:
        raise ProposalError(f"proposal {proposal_id} is history from a harness event: there "
                            "is nothing to edit")
    if not isinstance(given, Mapping):
        raise ProposalError("an edit is a JSON object of the fields to change")
    changes: dict[str, Any] = dict(given)
    if "target" in changes:
        changes["targets"] = changes.pop("target")
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise ProposalError(f"{unknown[0]}: not editable (editable: {', '.join(EDITABLE)})")
    if not changes:
        raise ProposalError("the edit changes nothing")
    before = stored_candidate(store, proposal_id)
    merged = before.snapshot()
    merged.update(changes)
    if "targets" in changes:
        merged["targets"] = list(_target_ids(changes["targets"], "targets")) \
            if changes["targets"] is not None else []
    if "metadata" in changes and isinstance(changes["metadata"], dict):
        merged["metadata"] = {**before.metadata, **changes["metadata"]}
    after = NewProposal(op=merged["op"], content=merged["content"], type=merged["type"],
                        targets=tuple(merged["targets"]), metadata=merged["metadata"] or {},
                        rationale=merged["rationale"], evidence=tuple(merged["evidence"] or ()),
                        origin=info.summary.origin, proposer=info.summary.proposer)
    validate(after)
    if after.snapshot() == before.snapshot():
        raise ProposalError("the edit changes nothing")
    cand, pointers = candidate_for(store, after)
    checks = Checker(store).run(cand)
    revision = info.revision + 1
    now = now_iso()
    who = actor_name(store, actor)
    with store.write() as conn:
        with orm(conn) as s:
            row = s.get(Proposal, proposal_id)
            if row is None or row.status != "pending" or row.revision != info.revision:
                raise ProposalError(f"proposal {proposal_id} changed while it was being edited; "
                                    "look at it again")
            row.op, row.type, row.targets = after.op, cand.type, json.dumps(list(after.targets))
            row.content, row.meta = after.content, json.dumps(after.metadata,
                                                              ensure_ascii=False)
            row.rationale, row.evidence = after.rationale, json.dumps(pointers)
            row.name, row.revision, row.updated_at = cand.name, revision, now
            row.target_snapshot = json.dumps(
                {str(t["id"]): {"name": t["name"], "body": t["body"],
                                "content_hash": t["content_hash"], "status": t["status"]}
                 for t in cand.targets}, ensure_ascii=False)
            s.add(row)
            s.add(ProposalEdit(proposal_id=proposal_id, revision=revision, ts=now, actor=who,
                               before=json.dumps(before.snapshot(), ensure_ascii=False),
                               after=json.dumps(after.snapshot(), ensure_ascii=False),
                               reason=reason, writer=store.writer,
                               writer_version=store.writer_version, created_at=now_iso()))
            s.add_all(_check_rows(store, proposal_id, revision, checks))
            s.flush()
        store.audit_in(conn, "proposal_edited", "proposal", [proposal_id],
                       {"revision": revision}, actor=who)
    return get_proposal(store, proposal_id)


def stored_candidate(store: Store, proposal_id: int) -> NewProposal:
    """The candidate as stored (unmasked: for the store's own use, never for display)."""
    with store.read() as conn:
        with orm(conn) as s:
            row = s.get(Proposal, proposal_id)
    if row is None:
        raise NotFound(f"no proposal {proposal_id}: `lca-tui proposals` lists them")
    return NewProposal(op=row.op or "noop", content=row.content, type=row.type,
                       targets=tuple(int(t) for t in loads(row.targets, [])),
                       metadata=loads(row.meta, {}), rationale=row.rationale,
                       evidence=tuple(loads(row.evidence, [])), origin=row.origin,
                       proposer=row.proposer)


# -- reading ------------------------------------------------------------------------------
def _checks_of(conn: Connection, ids: list[int]) -> dict[int, list[CheckInfo]]:
    """The current revision's checks of each proposal."""
    out: dict[int, list[CheckInfo]] = {i: [] for i in ids}
    if not ids:
        return out
    with orm(conn) as s:
        rows = s.exec(select(ProposalCheck, Proposal.revision)
                      .join(Proposal, col(Proposal.id) == ProposalCheck.proposal_id)
                      .where(col(ProposalCheck.proposal_id).in_(ids))
                      .where(ProposalCheck.revision == Proposal.revision)
                      .order_by(col(ProposalCheck.id))).all()
    for c, _ in rows:
        out[c.proposal_id].append(check_info(c))
    return out


def _applied_as(conn: Connection, rows: list[Proposal]
                ) -> dict[int, tuple[str, tuple[int, ...]]]:
    """``rows.applied_as``: each applied proposal approved as another operation (``--as
    reinforce`` or ``--as supersede``), the operation and the memories it was applied to."""
    applied = [r.id for r in rows if r.id is not None and r.status == "applied"]
    if not applied:
        return {}
    with orm(conn) as s:
        decided = s.exec(select(ProposalDecision.proposal_id, ProposalDecision.as_op).where(
            col(ProposalDecision.proposal_id).in_(applied),
            ProposalDecision.decision == "applied",
            col(ProposalDecision.as_op).in_(["reinforce", "supersede"]))).all()
        links = s.exec(select(SupersessionLink.proposal_id, SupersessionLink.old_id).where(
            col(SupersessionLink.proposal_id).in_([pid for pid, _ in decided]))).all()
    return applied_as(rows, [(int(p), str(a)) for p, a in decided], links)


def list_proposals(store: Store, status: str | None = None, limit: int | None = None,
                   ids: Sequence[int] | None = None) -> list[ProposalSummary]:
    """The queue, newest first (``status`` one of ``STATUSES``, or all; ``ids``: those only,
    what a following screen updates in place)."""
    check_proposal_status(status)
    with store.read() as conn:
        with orm(conn) as s:
            query = select(Proposal).order_by(col(Proposal.ts).desc(), col(Proposal.id).desc())
            if status:
                query = query.where(Proposal.status == status)
            if ids is not None:
                query = query.where(col(Proposal.id).in_(list(ids)))
            if limit:
                query = query.limit(limit)
            rows = list(s.exec(query).all())
        checks = _checks_of(conn, [r.id for r in rows if r.id is not None])
        applied = _applied_as(conn, rows)
    return [proposal_summary(r, checks[r.id or 0], applied=applied.get(r.id or 0)) for r in rows]


def get_proposal(store: Store, proposal_id: int) -> ProposalInfo:
    """One proposal in full (see ``ProposalInfo``)."""
    with store.read() as conn:
        with orm(conn) as s:
            row = s.get(Proposal, proposal_id)
            if row is None:
                raise NotFound(f"no proposal {proposal_id}: `lca-tui proposals` lists them")
            edits = s.exec(select(ProposalEdit).where(ProposalEdit.proposal_id == proposal_id)
                           .order_by(col(ProposalEdit.revision))).all()
            decisions = s.exec(select(ProposalDecision)
                               .where(ProposalDecision.proposal_id == proposal_id)
                               .order_by(col(ProposalDecision.id))).all()
        checks = _checks_of(conn, [proposal_id])[proposal_id]
        evidence = []
        for p in loads(row.evidence, []):
            session_id = seq = None
            if p.get("entry_id") is not None:
                e = conn.execute(columns(col(Entry.session_id), col(Entry.seq)).where(
                    col(Entry.id) == p["entry_id"])).first()
                if e is not None:
                    session_id, seq = e[0], int(e[1])
            evidence.append(EvidencePointer(p.get("entry_id"), tuple(p["span"]) if
                                            p.get("span") else None, p.get("file"),
                                            p.get("note"), session_id, seq))
        targets = _targets_now(conn, row)
        applied = _applied_as(conn, [row]).get(proposal_id)
    meta = loads(row.meta, {})
    masked = meta.get("sensitivity") == "secret" or any(t.masked for t in targets)
    summary = proposal_summary(row, checks, masked, applied)
    return ProposalInfo(
        summary=summary, content=MASK if masked and row.content is not None else row.content,
        metadata=meta, rationale=row.rationale, evidence=tuple(evidence),
        status_reason=row.status_reason, revision=row.revision, updated_at=row.updated_at,
        decided_at=row.decided_at, actor=row.actor, memory_id=row.memory_id,
        verified=None if row.verified is None else bool(row.verified),
        verification=loads(row.verification, None), targets=tuple(targets),
        edits=tuple(EditInfo(e.revision, e.ts, e.actor, _mask(loads(e.before, {}), masked),
                             _mask(loads(e.after, {}), masked), e.reason) for e in edits),
        decisions=tuple(DecisionInfo(d.ts, d.actor, d.decision, d.as_op, d.reason, d.policy,
                                     d.connector) for d in decisions),
        options=tuple(approval_options(summary)), masked=masked, entry_id=row.entry_id)


def _mask(snapshot: dict[str, Any], masked: bool) -> dict[str, Any]:
    return {**snapshot, "content": MASK} if masked and snapshot.get("content") else snapshot


def _targets_now(conn: Connection, row: Proposal) -> list[TargetInfo]:
    snap = loads(row.target_snapshot, {})
    out = []
    for mid in loads(row.targets, []):
        then = snap.get(str(mid), {})
        r = conn.execute(columns(col(Memory.name), col(Memory.status), col(Memory.body),
                            col(Memory.content_hash), col(Memory.sensitivity))
                     .where(col(Memory.id) == int(mid))).first()
        secret = r is not None and r[4] == "secret"
        if r is None:
            out.append(TargetInfo(int(mid), then.get("name"), None, None, None, True))
            continue
        changed = bool(then) and (then.get("content_hash") != r[3]
                                  or then.get("status") != r[1])
        out.append(TargetInfo(int(mid), r[0], r[1], None if secret else r[2],
                              None if secret else then.get("body"), changed, secret))
    return out

