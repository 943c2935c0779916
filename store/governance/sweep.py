"""The near-duplicate sweep (issue 30): active memories that say the same thing, in groups,
each group one ``merge`` proposal — never a write. ``lca-tui consolidate --sweep`` runs it
alone; the consolidation pass runs it as a step (``by_kind["sweep"]``). Health's
``memory_duplicates`` counts the memories the same grouping finds repeating another.

Two active memories of the same type (secret ones never: their text is not compared) are
the same thing when

- their text is the same or one holds the other (normalised: case, spacing, punctuation;
  the held one at least ``MIN_WORDS`` words), or
- their vectors (any chunk of one against any chunk of the other, made by the current
  embedder) are at least ``governance.duplicate_cos`` similar, or
- they cite overlapping evidence (the same entry span, or the same file) and share half
  their content words

— and no sentence of one disagrees with every similar sentence of the other by a negation, a
number, a date or an "X is Y" value (the contradiction check's cues, ``text.cues``): port 5432
and port 5433 never merge. A memory joins a group only when it agrees with every member.

A group's proposal keeps the text of its fullest member (the longest; then the most used;
then the oldest), the union of tags, projects and evidence, critical / evergreen when any
member is, the most restrictive sensitivity, and says so in its rationale; applying it sums
the members' ``hits`` / ``prevented`` (``apply``) and supersedes them all. Its idempotency
key names the members, so a second sweep (the proposal pending, rejected or applied) adds
nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection
from sqlmodel import col

from store.core import vec
from store.core.db import columns
from store.core.models import Chunk, Evidence, Memory
from store.core.vocab import SENSITIVITIES
from store.governance import text as tx

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

PROPOSER = "lca-tui:sweep"
MIN_WORDS = 3  # a shorter text held inside another is no sign they say the same
SHARED_EVIDENCE_JACCARD = 0.5
_BLOCK = 1024  # chunks compared at once (a block × every chunk of float32 cosines)
_RANK: dict[str, int] = {level: rank for rank, level in enumerate(SENSITIVITIES)}


@dataclass
class _Mem:
    id: int
    name: str
    type: str | None
    body: str
    norm: str
    tags: list[str]
    projects: list[str]
    critical: bool
    evergreen: bool
    sensitivity: str
    hits: int
    prevented: int
    vectors: list[np.ndarray] = field(default_factory=list)
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # entry, start, end
    files: set[str] = field(default_factory=set)
    evidence: list[dict[str, Any]] = field(default_factory=list)  # proposal pointers
    sentences: list[str] = field(default_factory=list)


@dataclass
class DuplicateGroup:
    """Memories that say the same thing: ``keep`` is the one whose text the merge keeps,
    ``why`` says for each other member what made it a duplicate."""

    keep: int
    members: list[int]
    why: dict[int, str]

    @property
    def repeats(self) -> list[int]:
        return [m for m in self.members if m != self.keep]


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def _json_list(raw: str | None) -> list[str]:
    try:
        value = json.loads(raw or "[]")
    except (TypeError, ValueError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _load(conn: Connection, model: str) -> list[_Mem]:
    rows = conn.execute(columns(
        col(Memory.id), col(Memory.name), col(Memory.type), col(Memory.body),
        col(Memory.tags), col(Memory.projects), col(Memory.critical), col(Memory.evergreen),
        col(Memory.sensitivity), col(Memory.hits), col(Memory.prevented))
        .where(col(Memory.status) == "active").order_by(col(Memory.id))).all()
    mems: dict[int, _Mem] = {}
    for r in rows:
        if (r[8] or "public") == "secret":
            continue
        body = r[3] or ""
        norm = tx.normalise(body)
        if not norm:
            continue
        sents = [s.text for s in tx.sentences(body, min_words=2)] or [body.strip()]
        mems[int(r[0])] = _Mem(int(r[0]), r[1] or "", r[2], body, norm, _json_list(r[4]),
                               _json_list(r[5]), bool(r[6]), bool(r[7]), r[8] or "public",
                               _int(r[9]), _int(r[10]), sentences=sents)
    if not mems:
        return []
    owned = [(int(cid), mems[int(mid)]) for cid, mid in conn.execute(
        columns(col(Chunk.id), col(Chunk.source_id)).where(
            col(Chunk.source_type) == "memory", col(Chunk.status) == "ok",
            col(Chunk.model) == model)).all() if int(mid) in mems]
    vectors = vec.vectors_of(conn, [cid for cid, _ in owned])  # at once, not one by one
    for cid, owner in owned:
        if cid in vectors:
            owner.vectors.append(vectors[cid])
    for mid, eid, a, b, path in conn.execute(columns(
            col(Evidence.memory_id), col(Evidence.entry_id), col(Evidence.span_start),
            col(Evidence.span_end), col(Evidence.file_path))
            .order_by(col(Evidence.id))).all():
        m = mems.get(int(mid))
        if m is None:
            continue
        if eid is not None:
            start, end = int(a) if a is not None else 0, int(b) if b is not None else 1 << 62
            m.spans.append((int(eid), start, end))
            ptr: dict[str, Any] = {"entry": int(eid)}
            if a is not None and b is not None:
                ptr["span"] = [int(a), int(b)]
            m.evidence.append(ptr)
        elif path:
            m.files.add(str(path))
            m.evidence.append({"file": str(path)})
    return list(mems.values())


class _Cosines:
    """Each pair of memories' highest chunk-to-chunk cosine, from one matrix product over
    every chunk (-1 for a memory with no vector from the current embedder)."""

    def __init__(self, mems: list[_Mem]) -> None:
        self.at = {m.id: i for i, m in enumerate(mems)}
        owners = [i for i, m in enumerate(mems) for _ in m.vectors]
        self.matrix = np.full((len(mems), len(mems)), -1.0, dtype=np.float32)
        if not owners:
            return
        vectors = np.stack([v for m in mems for v in m.vectors]).astype(np.float32)
        starts = np.flatnonzero(np.r_[True, np.diff(owners) != 0])
        have = np.array([owners[i] for i in starts])
        own = np.array(owners)
        for lo in range(0, len(owners), _BLOCK):  # chunk × memory, a block of chunks at once
            part = np.maximum.reduceat(vectors[lo:lo + _BLOCK] @ vectors.T, starts, axis=1)
            for k, row in zip(own[lo:lo + _BLOCK], part, strict=True):
                np.maximum(self.matrix[k, have], row, out=row)
                self.matrix[k, have] = row

    def __call__(self, a: _Mem, b: _Mem) -> float:
        return float(self.matrix[self.at[a.id], self.at[b.id]])


def _shares_evidence(a: _Mem, b: _Mem) -> bool:
    if a.files & b.files:
        return True
    return any(ea == eb and sa < fb and sb < fa
               for ea, sa, fa in a.spans for eb, sb, fb in b.spans)


def _disagrees(a: _Mem, b: _Mem) -> str | None:
    """How ``a`` and ``b`` disagree (a cue's kind and values), or None: a sentence of one
    whose every similar sentence in the other differs by a negation, number, date or value."""
    for mine, theirs in ((a.sentences, b.sentences), (b.sentences, a.sentences)):
        for s in mine:
            similar = [t for t in theirs
                       if tx.jaccard(s, t) >= 0.5 or tx.same_subject(s, t)]
            if not similar:
                continue
            found = [tx.cues(s, t) for t in similar]
            if all(found):
                c = found[0][0]
                return f"{c['kind']}: {c['candidate']} vs {c['memory']}"
    return None


def _similar(a: _Mem, b: _Mem, threshold: float, cos_of: _Cosines) -> str | None:
    """Why ``b`` looks like it repeats ``a`` (before the disagreement check), or None."""
    if a.type != b.type:
        return None
    if a.norm == b.norm:
        return "the same text"
    short, long_ = (a, b) if len(a.norm) <= len(b.norm) else (b, a)
    if len(short.norm.split()) >= MIN_WORDS and f" {short.norm} " in f" {long_.norm} ":
        return (f"its text is held in memory {a.id}'s" if short is b
                else f"it holds memory {a.id}'s text")
    cos = cos_of(a, b)
    if cos >= threshold:
        return f"cos {cos:.2f} to memory {a.id}"
    if _shares_evidence(a, b) and tx.jaccard(a.body, b.body) >= SHARED_EVIDENCE_JACCARD:
        return f"the same evidence as memory {a.id} and most of its words"
    return None


def _keeper(group: list[_Mem]) -> _Mem:
    return sorted(group, key=lambda m: (-len(m.norm), -(m.hits + m.prevented), m.id))[0]


def _grouped(store: Store, model: str, conn: Connection | None = None
             ) -> list[tuple[DuplicateGroup, list[_Mem]]]:
    """The groups among the memories whose vectors ``model`` made."""
    threshold = float(store.settings["governance.duplicate_cos"])
    if conn is None:
        with store.read() as c:
            mems = _load(c, model)
    else:
        mems = _load(conn, model)
    cos_of = _Cosines(mems)
    with tx.word_sets_kept():
        return _group(mems, threshold, cos_of)


def _group(mems: list[_Mem], threshold: float, cos_of: _Cosines
           ) -> list[tuple[DuplicateGroup, list[_Mem]]]:
    groups: list[list[_Mem]] = []
    reasons: list[dict[int, str]] = []
    for m in mems:
        for g, why in zip(groups, reasons, strict=True):
            if g[0].type != m.type:
                continue
            reason = next((r for r in (_similar(o, m, threshold, cos_of) for o in g) if r), None)
            # it joins only a group whose every member it agrees with
            if reason is None or any(_disagrees(o, m) for o in g):
                continue
            g.append(m)
            why[m.id] = reason
            break
        else:
            groups.append([m])
            reasons.append({})
    out = []
    for g, why in zip(groups, reasons, strict=True):
        if len(g) < 2:
            continue
        keep = _keeper(g)
        if keep.id != g[0].id:  # the reasons were given against earlier members
            why = {**why, g[0].id: f"repeated by memory {keep.id}"}
            why.pop(keep.id, None)
        out.append((DuplicateGroup(keep.id, [x.id for x in g], why), g))
    return out


def find_groups(store: Store, conn: Connection | None = None) -> list[DuplicateGroup]:
    """The groups of active memories that say the same thing (see the module docstring),
    each of two or more members, in the order of their lowest id; read on ``conn`` when
    given (a health scan's snapshot)."""
    # the model in use named without loading it (a health scan's read needs its stored
    # vectors, not the model: ~0.5 s)
    return [g for g, _ in _grouped(store, store.embedder_info().model, conn)]


def _key(members: list[int]) -> str:
    raw = "sweep|" + ",".join(str(m) for m in sorted(members))
    return "sweep:" + hashlib.sha256(raw.encode()).hexdigest()[:32]


def _merge_document(group: DuplicateGroup, ordered: list[_Mem]) -> dict[str, Any]:
    """The ``merge`` proposal document for ``group`` (the ``propose`` format)."""
    keep = next(m for m in ordered if m.id == group.keep)
    tags = list(dict.fromkeys(t for m in ordered for t in m.tags))
    projects = list(dict.fromkeys(p for m in ordered for p in m.projects))
    evidence: list[dict[str, Any]] = []
    for m in ordered:
        for p in m.evidence:
            if p not in evidence:
                evidence.append(p)
    metadata: dict[str, Any] = {"name": keep.name, "tags": tags, "projects": projects,
                                "sensitivity": max((m.sensitivity for m in ordered),
                                                   key=lambda s: _RANK.get(s, 0))}
    if any(m.critical for m in ordered):
        metadata["critical"] = True
    if any(m.evergreen for m in ordered):
        metadata["evergreen"] = True
    others = "; ".join(f"memory {i}: {group.why.get(i, 'the same thing')}"
                       for i in group.repeats)
    hits = sum(m.hits for m in ordered)
    prevented = sum(m.prevented for m in ordered)
    rationale = (f"{len(group.members)} active memories say the same thing — keeps memory "
                 f"{keep.id}'s text ({others}); tags, projects and evidence are their union, "
                 f"hits and prevented their sum (now {hits} and {prevented}), and all "
                 f"{len(group.members)} are superseded")
    return {"op": "merge", "targets": list(group.members), "type": keep.type,
            "content": keep.body, "metadata": metadata, "rationale": rationale,
            "evidence": evidence, "proposer": PROPOSER,
            "idempotency_key": _key(group.members)}


@dataclass
class SweepReport:
    groups: int = 0
    proposals_added: int = 0
    proposal_ids: list[int] = field(default_factory=list)
    skipped: int = 0  # groups whose merge was proposed before (pending, decided or failed)
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"groups": self.groups, "proposals_added": self.proposals_added,
                "proposal_ids": self.proposal_ids, "skipped": self.skipped,
                "errors": self.errors}


def sweep_duplicates(store: Store, *, actor: str | None = None) -> SweepReport:
    """File one ``merge`` proposal per group of near-duplicate memories not proposed
    before; the gate checks each and only the auto-apply policy may apply one."""
    from sqlmodel import select

    from store.core.db import orm
    from store.governance.apply import submit
    from store.governance.models import Proposal
    from store.governance.proposals import ProposalError, parse_proposal

    report = SweepReport()
    groups = _grouped(store, store.embedder.name)
    report.groups = len(groups)
    for group, mems in groups:
        doc = _merge_document(group, mems)
        with store.read() as conn, orm(conn) as s:
            seen = s.exec(select(Proposal.id).where(
                Proposal.idem_key == doc["idempotency_key"])).first()
            pending = s.exec(select(Proposal.targets).where(
                Proposal.status == "pending", Proposal.op == "merge")).all()
        covered = any(set(group.members) <= {int(t) for t in json.loads(t or "[]")}
                      for t in pending)
        if seen is not None or covered:
            report.skipped += 1
            continue
        try:
            new = parse_proposal(doc, origin="consolidation", source="sweep")
            report.proposal_ids.append(int(submit(store, new, actor=actor).id))
            report.proposals_added += 1
        except (ProposalError, ValueError, LookupError) as exc:
            report.errors.append(f"sweep of memories {group.members}: {exc}")
    return report
