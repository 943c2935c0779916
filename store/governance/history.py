"""Every version of a memory, and putting one back (issue 30).

A memory's **versions** are the texts its supersession chain held, oldest first: the write that
made each memory of the chain (the applied ``add`` / ``supersede`` / ``merge`` proposal, or the
import or write outside the gate when no proposal made it) and each applied ``revise`` of it —
who (the person, or the policy, recorded on the decision), when, and the diff against the
version before. An applied ``expire`` or ``quarantine`` of a memory is a version too (op
``expire`` / ``quarantine``: who, when; the text unchanged, no diff). A memory an erasure
removed from the chain is a version shown as **erased**
(when and by whom: the erasure's tombstone), never with its text, nor can it be brought back;
a memory whose making proposal went with an erasure (its evidence names a proposal that is no
longer stored) is a ``write`` version marked ``proposal_erased``, not an import. A diff is
against the last version that has a text, and its header names that version.
A secret memory's versions are listed with their text withheld.

``revert(store, memory, to)`` files an ordinary proposal — a ``supersede`` of the chain's
current memory with that version's text — and the gate's checks apply; nothing is rewritten
in place (the current memory stays in the chain, superseded, once a person approves).
``undo(store)`` is the same proposal for the latest approval: the memory it wrote goes back to
the version before (an ``add`` has none: its undo is a ``quarantine``).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from store.core.db import orm
from store.core.models import AuditEvent, Evidence, Memory
from store.governance.models import Proposal, SupersessionLink

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store
    from store.governance.records import ProposalInfo

WRITES = ("add", "supersede", "merge")
STATES = ("expire", "quarantine")  # approvals that end a memory's life, its text unchanged


@dataclass(frozen=True)
class MemoryVersion:
    """One version of a memory (``history --json`` per element). ``text`` is None when the
    version was erased or the memory is secret (``masked``); ``diff`` is a unified diff
    against the previous version's text (None for the first, an erased or a masked one)."""

    version: int
    memory_id: int | None  # None: erased
    proposal_id: int | None
    op: str  # add / supersede / merge / revise / import / erased
    actor: str | None
    ts: str | None
    text: str | None
    diff: str | None
    erased: bool = False
    masked: bool = False
    current: bool = False
    proposal_erased: bool = False  # op ``write``: an erasure removed the proposal that made it

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "memory_id": self.memory_id,
                "proposal_id": self.proposal_id, "op": self.op, "actor": self.actor,
                "ts": self.ts, "text": self.text, "diff": self.diff, "erased": self.erased,
                "masked": self.masked, "current": self.current,
                "proposal_erased": self.proposal_erased}


@dataclass
class _Raw:
    memory_id: int | None
    proposal_id: int | None
    op: str
    actor: str | None
    ts: str | None
    text: str | None
    erased: bool = False
    masked: bool = False
    proposal_erased: bool = False
    event: bool = False  # an expire / quarantine: no new text, so no diff


def _diff(before: str | None, after: str | None, a: int, b: int) -> str | None:
    if before is None or after is None:
        return None
    return "\n".join(difflib.unified_diff(before.splitlines(), after.splitlines(),
                                          f"version {a}", f"version {b}", lineterm=""))


def _tombstone_near(store: Store, ts: str) -> tuple[str | None, str | None]:
    """(when, who) of the erasure that wrote the bridging link: its audit event (action
    ``erase``, naming the tombstone), written in the same transaction."""
    with store.read() as conn, orm(conn) as s:
        rows = s.exec(select(AuditEvent.ts, AuditEvent.actor).where(
            AuditEvent.action == "erase", AuditEvent.target_kind == "tombstone")).all()
    if not rows:
        return None, None
    when, who = min(rows, key=lambda r: abs(_seconds(r[0]) - _seconds(ts)))
    return when, who


def _seconds(stamp: str) -> float:
    from store.core.timeutil import parse_iso

    t = parse_iso(stamp)
    return t.timestamp() if t is not None else 0.0


def memory_history(store: Store, memory_id: int) -> list[MemoryVersion]:
    """Every version of ``memory_id``'s chain, oldest first (see the module docstring)."""
    from store.governance.apply import APPROVAL_NOTE
    from store.governance.chains import chain

    links = chain(store, memory_id)  # NotFound for a memory that does not exist
    ids = [c.id for c in links]
    with store.read() as conn, orm(conn) as s:
        notes = s.exec(select(Evidence.memory_id, Evidence.note).where(
            col(Evidence.memory_id).in_(ids), col(Evidence.note).is_not(None))).all()
        # the proposals a memory's evidence names ("approval of proposal N", "proposal N")
        named: dict[int, set[int]] = {}
        for mid, note in notes:
            hit = APPROVAL_NOTE.match(note or "")
            if hit and mid is not None:
                named.setdefault(int(mid), set()).add(int(hit.group(1)))
        wanted = sorted({pid for pids in named.values() for pid in pids})
        present = set(s.exec(select(Proposal.id).where(col(Proposal.id).in_(wanted))).all())
        mems = {int(m.id or 0): m for m in s.exec(select(Memory).where(
            col(Memory.id).in_(ids))).all()}
        props = list(s.exec(select(Proposal).where(Proposal.status == "applied")
                            .order_by(col(Proposal.decided_at), col(Proposal.id))).all())
        bridges = list(s.exec(select(SupersessionLink).where(
            SupersessionLink.source == "erasure", col(SupersessionLink.new_id).in_(ids))
            .order_by(col(SupersessionLink.id))).all())
    made = {int(p.memory_id): p for p in props if p.op in WRITES and p.memory_id is not None}
    revises: dict[int, list[Proposal]] = {}  # a memory's revises, expiry and quarantine
    for p in props:
        if p.op == "revise" or p.op in STATES:
            for t in json.loads(p.targets or "[]"):
                revises.setdefault(int(t), []).append(p)
    bridged = {int(b.new_id): b for b in bridges}
    raw: list[_Raw] = []
    for c in links:
        m = mems.get(c.id)
        if m is None:
            continue
        secret = m.sensitivity == "secret"
        if c.id in bridged:
            when, who = _tombstone_near(store, bridged[c.id].ts)
            raw.append(_Raw(None, None, "erased", who, when or bridged[c.id].ts, None,
                            erased=True))
        maker = made.get(c.id)
        mine = revises.get(c.id, [])
        if maker is not None:
            raw.append(_Raw(c.id, maker.id, maker.op or "add", maker.actor, maker.decided_at,
                            maker.content, masked=secret))
        else:  # imported or written outside the gate: its first text is what the first
            # revise found (the proposal keeps its target's body), else its body now
            first = m.body
            if mine:  # the proposal keeps its target's body, whatever its op
                snap = json.loads(mine[0].target_snapshot or "{}").get(str(c.id), {})
                first = snap.get("body", first)
            if named.get(c.id, set()) - present:  # made by a proposal an erasure removed:
                # who approved it went with it; when is the memory's creation
                raw.append(_Raw(c.id, None, "write", None, m.created, first, masked=secret,
                                proposal_erased=True))
            else:
                raw.append(_Raw(c.id, None, "import", m.writer, m.created, first,
                                masked=secret))
        for rev in mine:
            if rev.op in STATES:  # an event of the memory: who, when; its text unchanged
                raw.append(_Raw(c.id, rev.id, rev.op or "expire", rev.actor, rev.decided_at,
                                raw[-1].text if raw else m.body, masked=secret, event=True))
            else:
                raw.append(_Raw(c.id, rev.id, "revise", rev.actor, rev.decided_at,
                                rev.content, masked=secret))
    head = _head(links)
    out: list[MemoryVersion] = []
    last_text: str | None = None
    last_at = 0  # the version ``last_text`` is: an erased one in between is skipped
    for i, r in enumerate(raw, start=1):
        text = None if (r.erased or r.masked) else (r.text or "").strip("\n")
        diff = _diff(last_text, text, last_at, i) if i > 1 and not r.event else None
        out.append(MemoryVersion(i, r.memory_id, r.proposal_id, r.op, r.actor, r.ts, text,
                                 diff, r.erased, r.masked,
                                 current=(i == len(raw) and r.memory_id == head),
                                 proposal_erased=r.proposal_erased))
        if not r.erased:
            last_text, last_at = text, i
    return out


def _head(links: list[Any]) -> int | None:
    active = [c.id for c in links if c.status == "active"]
    return active[-1] if active else None


def revert(store: Store, memory_id: int, to: int, *, actor: str | None = None,
           reason: str | None = None) -> ProposalInfo:
    """File the proposal that brings version ``to`` of ``memory_id``'s chain back: a
    ``supersede`` of the chain's active memory with that text (pending unless the auto-apply
    policy allows it). Raises ``ProposalError`` for a version that does not exist, was erased,
    is secret, or is already the current text; ``NotFound`` for no such memory."""
    from store.governance.apply import submit
    from store.governance.chains import chain
    from store.governance.proposals import NewProposal, ProposalError

    versions = memory_history(store, memory_id)
    if not 1 <= to <= len(versions):
        raise ProposalError(f"--to: memory {memory_id} has versions 1–{len(versions)}, "
                            f"not {to} (`lca-tui history {memory_id}` lists them)")
    v = versions[to - 1]
    if v.erased:
        raise ProposalError(f"version {to} of memory {memory_id} was erased"
                            f"{' on ' + v.ts if v.ts else ''}"
                            f"{' by ' + v.actor if v.actor else ''}: its text is gone")
    if v.masked or v.text is None:
        raise ProposalError(f"version {to} of memory {memory_id} is secret: a revert would "
                            "copy its text into a proposal; edit the memory instead")
    head = _head(chain(store, memory_id))
    if head is None:
        raise ProposalError(f"memory {memory_id}'s chain has no active memory to revert "
                            "(it was quarantined, expired or erased)")
    current = store.memory(head)
    if (current.body or "").strip("\n") == v.text:
        raise ProposalError(f"version {to} is already memory {head}'s text: nothing to revert")
    _refuse_pending_twin(store, "supersede", (head,), v.text)
    when = f" of {v.ts}" if v.ts else ""
    rationale = (f"revert memory {head} to version {to}{when} (memory {v.memory_id}, "
                 f"{v.op}{' by ' + v.actor if v.actor else ''})"
                 + (f": {reason}" if reason else ""))
    new = NewProposal(op="supersede", content=v.text, type=current.type, targets=(head,),
                      metadata={"name": current.name}, rationale=rationale, origin="cli",
                      proposer="lca-tui:revert")
    return submit(store, new, actor=actor)


def last_approval(store: Store) -> Proposal | None:
    """The latest applied proposal, whatever its operation (what ``undo`` undoes)."""
    with store.read() as conn, orm(conn) as s:
        return s.exec(select(Proposal).where(Proposal.status == "applied")
                      .order_by(col(Proposal.decided_at).desc(), col(Proposal.id).desc())).first()


def _refuse_pending_twin(store: Store, op: str, targets: tuple[int, ...],
                         content: str | None) -> None:
    """``ProposalError`` naming the pending proposal that already files this write (the same
    operation, targets and text): a second revert or undo of the same thing is refused."""
    from store.governance.proposals import ProposalError

    want = (content or "").strip("\n")
    with store.read() as conn, orm(conn) as s:
        rows = s.exec(select(Proposal.id, Proposal.targets, Proposal.content).where(
            Proposal.status == "pending", Proposal.op == op)
            .order_by(col(Proposal.id))).all()
    for pid, raw, text in rows:
        if (tuple(int(t) for t in json.loads(raw or "[]")) == targets
                and (text or "").strip("\n") == want):
            raise ProposalError(f"proposal {pid} already files this {op} of memory "
                                f"{', '.join(map(str, targets))} and is pending: approve or "
                                f"reject it (`lca-tui proposal {pid}`)")


def _bring_back(store: Store, p: Proposal, mid: int, *,
                actor: str | None) -> ProposalInfo:
    """The undo of an applied ``expire`` / ``quarantine`` of ``mid``: a ``supersede`` of the
    memory with its own text, an ordinary proposal the gate checks; once approved the chain
    has an active memory again (the expired or quarantined one kept, superseded)."""
    from store.governance.apply import submit
    from store.governance.chains import chain
    from store.governance.proposals import NewProposal, ProposalError

    state = "expired" if p.op == "expire" else "quarantined"
    m = store.memory(mid)
    links = chain(store, mid)
    if m.status != state or links[-1].id != mid:
        moved = "" if links[-1].id == mid else f" (its chain moved on to {links[-1].id})"
        raise ProposalError(f"proposal {p.id} {state} memory {mid}, which is {m.status} now"
                            f"{moved}: nothing to undo")
    if m.sensitivity == "secret":
        raise ProposalError(f"memory {mid} is secret: bringing it back would copy its text into "
                            "a proposal; edit the memory instead")
    body = (m.body or "").strip("\n")
    _refuse_pending_twin(store, "supersede", (mid,), body)
    new = NewProposal(op="supersede", content=body, type=m.type, targets=(mid,),
                      metadata={"name": m.name}, origin="cli", proposer="lca-tui:undo",
                      rationale=f"undo of proposal {p.id} ({p.op} of memory {mid}): bring "
                                "it back")
    return submit(store, new, actor=actor)


def undo(store: Store, proposal_id: int | None = None, *,
         actor: str | None = None) -> ProposalInfo:
    """File the proposal that undoes the latest approval (of any operation) — or approval
    ``proposal_id`` (the app's, just made) — as a ``revert`` to the version before it (an
    ``add``: ``quarantine`` of the memory it made; an ``expire`` or a ``quarantine``: a
    ``supersede`` of the memory with its own text, which brings it back). ``ProposalError``
    when there is nothing to undo, the memory moved on since, the approval changed no text
    (``reinforce``, ``noop``), or the same undo is already pending."""
    from store.governance.apply import submit
    from store.governance.proposals import NewProposal, ProposalError

    if proposal_id is None:
        p = last_approval(store)
    else:
        with store.read() as conn, orm(conn) as s:
            p = s.get(Proposal, proposal_id)
        if p is None or p.status != "applied":
            raise ProposalError(f"proposal {proposal_id} is not an applied approval: nothing "
                                "to undo")
    if p is None:
        raise ProposalError("no approval to undo: no proposal was applied")
    if p.op in ("reinforce", "noop") or p.memory_id is None:
        what = f" of memory {p.memory_id}" if p.memory_id is not None else ""
        raise ProposalError(f"the latest approval, proposal {p.id}, is a {p.op}{what}: it "
                            "changed no memory's text or state, so there is nothing to undo")
    mid = int(p.memory_id)
    if p.op in ("expire", "quarantine"):
        return _bring_back(store, p, mid, actor=actor)
    versions = memory_history(store, mid)
    at = next((v.version for v in versions if v.proposal_id == p.id), None)
    if at is None or not versions[at - 1].current:
        raise ProposalError(f"proposal {p.id}'s write is no longer memory {mid}'s current "
                            f"version: revert it with `lca-tui revert {mid} --to N`")
    if p.op == "merge":
        raise ProposalError(f"proposal {p.id} merged memories into {mid}: one proposal cannot "
                            f"bring them all back; revert with `lca-tui revert {mid} --to N`")
    if p.op == "add":
        _refuse_pending_twin(store, "quarantine", (mid,), None)
        new = NewProposal(op="quarantine", targets=(mid,), origin="cli",
                          proposer="lca-tui:undo",
                          rationale=f"undo of proposal {p.id} (add of memory {mid})")
        return submit(store, new, actor=actor)
    if at < 2:
        raise ProposalError(f"proposal {p.id} made memory {mid}'s first version: nothing "
                            "to go back to")
    before = versions[at - 2]
    if before.erased:
        raise ProposalError(f"the version before proposal {p.id} was erased: its text is gone")
    return revert(store, mid, at - 1, actor=actor, reason=f"undo of proposal {p.id}")
