"""Deciding proposals: the approval choices the checks require, the automatic-apply policy,
approve (then apply in one transaction, then verify) and reject.

States: ``pending → approved → applied`` or ``failed`` (with the reason), ``pending →
rejected`` (a reason is required). Approving over a contradiction needs ``as_="supersede"``
or ``"keep-both"`` and a reason; over a duplicate, ``"reinforce"`` is offered; over any other
failed check, a reason. ``governance.auto_apply`` (default ``reinforce,noop``) names what is
applied without a person when no check failed — never a ``procedure`` or ``identity`` write.

Applying writes, in one store transaction, the memory (through the memory-write module), its
evidence, the supersession links (old memory ``superseded`` with ``valid_to``), its chunks and
vectors, and the files of the bound memory directory; any failure leaves the store and the
directory as they were and marks the proposal ``failed`` with the reason. Then ``verify`` reads
the write back and the result is stored with the proposal.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, delete
from sqlmodel import col, select

from store.core import filejournal
from store.core.db import orm
from store.core.models import Chunk, Memory, StoreMeta
from store.core.timeutil import now_iso
from store.core import memories
from store.governance.chains import ForkError, link
from store.governance.files import FileWrites
from store.governance.models import MemoryFlag, Proposal, ProposalDecision
from store.governance.proposals import (
    AUTO_APPLY_DUE,
    NewProposal,
    ProposalError,
    actor_name,
    get_proposal,
    recheck,
    secret_name,
    store_proposal,
    stored_candidate,
)
from store.governance.policy import DECIDABLE, auto_apply_allowed
from store.governance.records import ProposalInfo

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

def submit(store: Store, new: NewProposal, *, actor: str | None = None,
           auto_apply: bool = True, now: str | None = None) -> ProposalInfo:
    """Check and store a proposal (``proposals.store_proposal``), then apply it at once when
    ``governance.auto_apply`` allows (``auto_apply=False``: never). ``now`` stamps it with
    another time than the clock's (replaying history, e.g. the demo)."""
    info = store_proposal(store, new, actor=actor, now=now, auto_apply_due=auto_apply)
    if auto_apply:
        return _auto_apply(store, info, now)
    return info


def _auto_apply(store: Store, info: ProposalInfo, now: str | None = None) -> ProposalInfo:
    """Apply ``info`` when the policy allows it; then its auto-apply-due marker goes."""
    if info.status == "pending":
        allowed, _ = auto_apply_allowed(store, info)
        if allowed:
            info = approve(store, info.id, actor="policy:governance.auto_apply",
                           policy="governance.auto_apply", now=now, recheck_=False)
    with store.write() as conn:
        conn.execute(delete(StoreMeta).where(col(StoreMeta.key) == f"{AUTO_APPLY_DUE}{info.id}"))
    return info


def resume_auto_apply(store: Store) -> list[int]:
    """Proposals submitted for the auto-apply policy whose process was killed before it
    decided: decided now (applied when it allows). Returns their ids."""
    with store.read() as conn:
        keys = [str(k) for (k,) in conn.execute(select(StoreMeta.key).where(
            col(StoreMeta.key).startswith(AUTO_APPLY_DUE))).all()]
    done = []
    for key in keys:
        pid = int(key[len(AUTO_APPLY_DUE):])
        try:
            info = get_proposal(store, pid)
        except Exception:  # noqa: BLE001 - gone (erased): only the marker is left
            with store.write() as conn:
                conn.execute(delete(StoreMeta).where(col(StoreMeta.key) == key))
            continue
        _auto_apply(store, info)
        done.append(pid)
    return done


def _plan(info: ProposalInfo, new: NewProposal, as_: str | None) -> NewProposal:
    """The write to apply for approval ``as_`` (a copy of the candidate, changed)."""
    if as_ is None or as_ == "keep-both":
        return new
    option = next(o for o in info.options if o.as_op == as_)
    assert option.memory_id is not None
    if as_ == "reinforce":
        meta = {k: v for k, v in new.metadata.items() if k != "uses_counted"}
        return NewProposal("reinforce", None, new.type, (int(option.memory_id),),
                           meta, new.rationale, new.evidence, new.origin, new.proposer)
    return NewProposal("supersede", new.content, new.type, (int(option.memory_id),),
                       new.metadata, new.rationale, new.evidence, new.origin, new.proposer)


def approve(store: Store, proposal_id: int, as_: str | None = None, reason: str | None = None,
            *, actor: str | None = None, policy: str | None = None,
            now: str | None = None, recheck_: bool = True) -> ProposalInfo:
    """Approve a pending (or failed) proposal, apply it and verify it; returns it after.
    ``now``: the time of the decision and of the write (default: the clock's).

    The checks run again first (``proposals.recheck``: the store may have changed since
    submission — another critical write eats the budget, a duplicate landed) and the
    approval is judged on their new results, stored with the proposal; ``recheck_=False``
    only right after the checks ran (automatic apply at submission).

    Raises ``ProposalError`` (nothing changed) when the checks do not allow this approval or
    a target changed since the proposal was made. An apply that fails marks the proposal
    ``failed`` with the reason and returns it.
    """
    if as_ is not None and as_ not in ("reinforce", "supersede", "keep-both"):
        raise ProposalError(f"--as must be reinforce, supersede or keep-both, got {as_!r}")
    filejournal.finish(store)  # what a killed write left in the bound directory, settled
    first = get_proposal(store, proposal_id)
    if first.status == "applied" and first.verified is None:
        return finish_verification(store, proposal_id)
    info = recheck(store, proposal_id, actor=actor) if recheck_ else get_proposal(
        store, proposal_id)
    option = next((o for o in info.options if o.as_op == as_), None)
    if option is None:
        offered = ", ".join(o.as_op or "as proposed" for o in info.options if o.allowed)
        raise ProposalError(f"proposal {proposal_id} cannot be approved as {as_}: "
                            f"{'the checks offer ' + offered if offered else 'nothing allowed'}")
    if not option.allowed:
        raise ProposalError(f"proposal {proposal_id}: {option.why}")
    reason = (reason or "").strip() or None
    if option.needs_reason and not reason:
        raise ProposalError(f"proposal {proposal_id}: approving {as_ or 'it'} needs --reason "
                            f"({option.why})")
    stale = [t for t in info.targets if t.changed_since]
    if stale:
        raise ProposalError(f"proposal {proposal_id}: memory {stale[0].memory_id} changed (or "
                            "is gone) since it was proposed; edit the proposal to check it "
                            "again")
    who = actor_name(store, actor)
    plan = _plan(info, stored_candidate(store, proposal_id), as_)
    contra = info.check("contradiction")
    conflicts = [int(c["memory_id"]) for c in contra.evidence.get("conflicts", [])] \
        if as_ == "keep-both" and contra is not None else []
    files = FileWrites()
    expect: dict[str, Any] = {}
    try:
        with store.write() as conn:
            _still(conn, proposal_id, info.status, info.revision)
            now = now or now_iso()
            _decide(conn, store, proposal_id, "approved", who, as_, reason, policy, now)
            memory_id = _apply(conn, store, proposal_id, plan, files, expect, now,
                               granted=policy is None)
            if conflicts and memory_id is not None:
                _flag(conn, store, proposal_id, memory_id, conflicts, reason, now)
            files.commit(conn, store)
            _set_status(conn, proposal_id, "applied", None, who, memory_id, now)
            _decide(conn, store, proposal_id, "applied", who, as_, None, policy, now)
            store.audit_in(conn, "proposal_approved", "proposal", [proposal_id, memory_id],
                           {"files": len(files.staged)}, actor=who)
        files.done()
    except ProposalError:
        files.rollback()
        raise
    except ForkError as exc:
        files.rollback()
        raise ProposalError(f"proposal {proposal_id}: {exc}") from None
    except Exception as exc:
        files.rollback()
        why = f"{type(exc).__name__}: {exc}"[:500]
        with store.write() as conn:
            when = now or now_iso()
            _decide(conn, store, proposal_id, "approved", who, as_, reason, policy, when)
            _set_status(conn, proposal_id, "failed", why, who, None, when)
            _decide(conn, store, proposal_id, "failed", who, as_, why, policy, when)
            store.audit_in(conn, "proposal_failed", "proposal", [proposal_id], {}, actor=who)
        return get_proposal(store, proposal_id)
    from store.governance.verify import record_verification

    record_verification(store, proposal_id, plan.op, memory_id, expect,
                        [p for p in files.staged if p not in files.indexes], now, actor=who)
    return get_proposal(store, proposal_id)


def finish_verification(store: Store, proposal_id: int) -> ProposalInfo:
    """Verify an apply that committed but was never verified (the process was killed
    between the two): the memory it wrote reads back with the candidate's text, is indexed
    and found, and its bound files (and its targets') read back as stored."""
    from store.governance.files import inside, usable_bound_dir
    from store.governance.verify import record_verification

    info = get_proposal(store, proposal_id)
    if info.status != "applied":
        raise ProposalError(f"proposal {proposal_id} is {info.status}, not applied")
    plan = stored_candidate(store, proposal_id)
    memory_id = info.memory_id
    expect: dict[str, Any] = {}
    if plan.op in ("add", "supersede", "merge", "revise"):
        expect["body"] = (plan.content or "").strip("\n")
    if plan.op in ("add", "supersede", "merge"):
        expect["status"] = "active"
    elif plan.op == "quarantine":
        expect["status"] = "quarantined"
    elif plan.op == "expire":
        expect["status"] = "expired"
    folder = usable_bound_dir(store)
    paths = []
    if folder is not None:
        with store.read() as conn:
            for mid in dict.fromkeys([m for m in (memory_id, *plan.targets) if m is not None]):
                m = memories.get(conn, int(mid))
                own = inside(m.source_file if m is not None else None, folder)
                if own is not None and own.exists():
                    paths.append(own)
    record_verification(store, proposal_id, plan.op, memory_id, expect, paths)
    return get_proposal(store, proposal_id)


@dataclass(frozen=True)
class Settled:
    """What ``finish_interrupted`` did: how many file journals it settled, and each applied
    proposal it verified (id: passed)."""

    journals: int
    proposals_verified: dict[int, bool]

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def finish_interrupted(store: Store) -> Settled:
    """Settle what killed writes left: the bound directory's file journals (an approval's
    placements undone or kept, an erasure's deletions played), and every apply that
    committed but was never verified. Returns what was done."""
    journals = filejournal.finish(store)
    resume_auto_apply(store)
    with store.read() as conn, orm(conn) as s:
        ids = [int(i or 0) for i in s.exec(
            select(Proposal.id).where(col(Proposal.status) == "applied",
                                      col(Proposal.verified).is_(None))
            .order_by(col(Proposal.id))).all()]
    verified = {pid: bool(finish_verification(store, pid).verified) for pid in ids}
    return Settled(journals, verified)


def reject(store: Store, proposal_id: int, reason: str, *, actor: str | None = None,
           now: str | None = None) -> ProposalInfo:
    """Reject a pending proposal; ``reason`` is required and kept."""
    if not (reason or "").strip():
        raise ProposalError("a rejection needs a reason (--reason)")
    filejournal.finish(store)
    info = get_proposal(store, proposal_id)
    if info.summary.op is None:
        raise ProposalError(f"proposal {proposal_id} is history from a harness event; it is "
                            "decided in the harness")
    if info.status not in DECIDABLE:
        raise ProposalError(f"proposal {proposal_id} is {info.status}: only a pending "
                            "proposal can be rejected")
    who = actor_name(store, actor)
    with store.write() as conn:
        _still(conn, proposal_id, info.status, info.revision)
        when = now or now_iso()
        _set_status(conn, proposal_id, "rejected", reason.strip(), who, None, when)
        _decide(conn, store, proposal_id, "rejected", who, None, reason.strip(), None, when)
        store.audit_in(conn, "proposal_rejected", "proposal", [proposal_id], {}, actor=who)
    return get_proposal(store, proposal_id)


# -- inside the transaction --------------------------------------------------------------
def _still(conn: Connection, proposal_id: int, status: str, revision: int) -> None:
    """Under the write lock: the proposal is as it was read (another process may have
    decided or edited it in between), else nothing is written. The row is locked (FOR
    UPDATE; SQLite's write lock already is one): on a server, a second approval at the same
    moment waits here, then reads the proposal applied and writes nothing."""
    with orm(conn) as s:
        row = s.get(Proposal, proposal_id, with_for_update=True, populate_existing=True)
    if row is None or row.status != status or row.revision != revision:
        now = "gone" if row is None else f"{row.status}, revision {row.revision}"
        raise ProposalError(f"proposal {proposal_id} changed while it was being decided "
                            f"({now}); look at it again")


def _decide(conn: Connection, store: Store, proposal_id: int, decision: str, actor: str,
            as_: str | None, reason: str | None, policy: str | None, ts: str) -> None:
    with orm(conn) as s:
        s.add(ProposalDecision(proposal_id=proposal_id, ts=ts, actor=actor,
                               decision=decision, as_op=as_, reason=reason, policy=policy,
                               writer=store.writer, writer_version=store.writer_version,
                               created_at=now_iso()))
        s.flush()


def _set_status(conn: Connection, proposal_id: int, status: str, reason: str | None,
                actor: str, memory_id: int | None, now: str) -> None:
    with orm(conn) as s:
        row = s.get(Proposal, proposal_id)
        assert row is not None
        row.status, row.status_reason, row.actor = status, reason, actor
        row.decided_at = row.updated_at = now
        if memory_id is not None:
            row.memory_id = memory_id
        s.add(row)
        s.flush()


def _fields(new: NewProposal, now: str, base: Memory | None = None,
            granted: bool = True) -> dict[str, Any]:
    """Memory columns for the candidate (over ``base``'s for a revise). ``granted``: a
    person approved it. Applied by policy (no person), a write grants no authority: a new
    memory is ``unreviewed`` and a revise keeps its target's (Anamnesis §6.6, authority
    non-amplification: a raise happens only through a person's approval)."""
    md = new.metadata
    out: dict[str, Any] = {}
    if base is None:
        authority = (md.get("authority") or "approved") if granted else "unreviewed"
        out.update(created=now, valid_from=md.get("valid_from") or now, status="active",
                   authority=authority, hits=0, prevented=0,
                   last_applied=None, loadable=1, load_error=None)
    out["body"] = (new.content or "").strip("\n")
    out["type"] = new.type or (base.type if base else None)
    out["name"] = md.get("name") or (base.name if base else _first_line(new.content or ""))
    if base is None and not md.get("name") and md.get("sensitivity") == "secret":
        out["name"] = secret_name(out["type"])  # its text never names it
    for key in ("description", "role", "invariant", "sensitivity", "half_life_days"):
        if key in md:
            out[key] = md[key]
    for key in ("tags", "projects"):
        if key in md:
            out[key] = json.dumps(list(md[key]))
    for key in ("critical", "evergreen"):
        if key in md:
            out[key] = int(bool(md[key]))
    if base is not None and "authority" in md and granted:
        out["authority"] = md["authority"]
    return out


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:80]
    return "memory"


def _evidence(conn: Connection, store: Store, memory_id: int, new: NewProposal,
              proposal_id: int) -> None:
    for p in new.evidence:
        span = p.get("span") or [None, None]
        memories.add_evidence(conn, store, memory_id, entry_id=p.get("entry_id"),
                              span_start=span[0], span_end=span[1], file_path=p.get("file"),
                              note=p.get("note") or f"proposal {proposal_id}")
    if not new.evidence:  # its provenance is the approval of the person who supplied it
        memories.add_evidence(conn, store, memory_id, note=approval_note(proposal_id))


APPROVAL_NOTE = re.compile(r"^(?:approval of )?proposal (\d+)\b")
"""An evidence row of kind *approval*: no source span or file, the approved proposal (whose
decision names the person) is the memory's origin. Older stores wrote
``proposal N: no source given (inference)``; both read as an approval."""


def approval_note(proposal_id: int) -> str:
    return (f"approval of proposal {proposal_id}: no source span; the person who approved it "
            "supplied the text")


def _apply(conn: Connection, store: Store, proposal_id: int, new: NewProposal,
           files: FileWrites, expect: dict[str, Any], now: str,
           granted: bool = True) -> int | None:
    """Write what ``new`` says; returns the memory it wrote or changed (None for a noop) and
    fills ``expect`` with what verification should read back from it. ``granted``: a
    person approved it (not a policy)."""
    op = new.op
    if op == "noop":
        return None
    for target in new.targets:  # the bound files as they were, before the write changes them
        files.guard(conn, store, target)
    if op in ("add", "supersede", "merge"):
        fields = _fields(new, now, granted=granted)
        written = memories.create(conn, store, fields, index=False)
        memory_id = written.memory_id
        if fields.get("sensitivity") == "secret" and not new.metadata.get("name"):
            memories.update(conn, store, memory_id,
                            {"name": secret_name(fields.get("type"), memory_id)}, index=False)
        _evidence(conn, store, memory_id, new, proposal_id)
        if op == "merge":  # what the merged memories were used for carries over, summed
            _sum_counters(conn, store, memory_id, new.targets)
        for old in new.targets:
            link(conn, store, old, memory_id, proposal_id=proposal_id, ts=now)
            _resolve_flags(conn, old, now)
            files.stage_memory(conn, store, old, new_file=False)
        if op == "add":
            files.claim_file(conn, store, memory_id, new.evidence)
        files.stage_memory(conn, store, memory_id)
        _index(conn, store, [memory_id, *new.targets])
        expect.update(body=(new.content or "").strip("\n"), status="active")
        return memory_id
    (target,) = new.targets
    base = memories.get(conn, target)
    if base is None:
        raise LookupError(f"memory {target} no longer exists")
    if op == "revise":
        memories.update(conn, store, target, _fields(new, now, base, granted), index=False)
        _evidence(conn, store, target, new, proposal_id)
        expect.update(body=(new.content or "").strip("\n"), status=base.status)
    elif op == "reinforce":
        # uses a harness reported were counted then (recall feedback): recorded, not counted
        hits = base.hits if new.metadata.get("uses_counted") else base.hits + 1
        memories.update(conn, store, target, {"hits": hits, "last_applied": now},
                        index=False)
        _evidence(conn, store, target, new, proposal_id)
        expect.update(hits=hits)
    elif op == "quarantine":
        memories.set_status(conn, store, target, "quarantined", valid_to=base.valid_to)
        expect.update(status="quarantined")
    elif op == "expire":  # kept for its history; recalled only by a --historical recall
        memories.set_status(conn, store, target, "expired", valid_to=now)
        expect.update(status="expired")
    else:
        raise ProposalError(f"unknown operation {op!r}")
    files.stage_memory(conn, store, target, new_file=op not in ("quarantine", "expire"))
    _index(conn, store, [target])
    return target


def _counter(value: object) -> int:
    try:
        return max(0, int(value or 0))  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return 0  # SQLite keeps what it was given: 'lots' in hits counts as nothing


def _sum_counters(conn: Connection, store: Store, memory_id: int,
                  targets: tuple[int, ...]) -> None:
    """A merge's memory gets the sum of its targets' ``hits`` and ``prevented`` and the
    latest ``last_applied`` of them, read as the targets are when it is applied."""
    olds = [m for m in (memories.get(conn, t) for t in targets) if m is not None]
    applied = [m.last_applied for m in olds if m.last_applied]
    memories.update(conn, store, memory_id,
                    {"hits": sum(_counter(m.hits) for m in olds),
                     "prevented": sum(_counter(m.prevented) for m in olds),
                     "last_applied": max(applied) if applied else None}, index=False)


def _index(conn: Connection, store: Store, memory_ids: list[int]) -> None:
    """Re-index each memory whose chunks were made from another content hash (or that has
    none): one embedding per memory written, and chunks that match their memory."""
    for mid in memory_ids:
        m = memories.get(conn, mid)
        if m is None:
            continue
        with orm(conn) as s:
            hashes = set(s.exec(select(Chunk.source_hash).where(
                Chunk.source_type == "memory", Chunk.source_id == mid)).all())
        if hashes != {m.content_hash}:
            memories.reindex(conn, store, m)


def _flag(conn: Connection, store: Store, proposal_id: int, memory_id: int,
          conflicts: list[int], reason: str | None, now: str) -> None:
    """Keep-both: flag the new memory and each memory it may contradict (recall's K)."""
    with orm(conn) as s:
        for other in conflicts:
            for a, b in ((memory_id, other), (other, memory_id)):
                s.add(MemoryFlag(memory_id=a, kind="contradiction", other_id=b,
                                 proposal_id=proposal_id, reason=reason, ts=now,
                                 writer=store.writer, writer_version=store.writer_version,
                                 created_at=now))
        s.flush()


def _resolve_flags(conn: Connection, memory_id: int, now: str) -> None:
    """A superseded memory's contradiction flags (both sides) are resolved."""
    with orm(conn) as s:
        rows = s.exec(select(MemoryFlag).where(
            col(MemoryFlag.resolved_at).is_(None),
            (MemoryFlag.memory_id == memory_id) | (MemoryFlag.other_id == memory_id))).all()
        for row in rows:
            row.resolved_at = now
            s.add(row)
        s.flush()
