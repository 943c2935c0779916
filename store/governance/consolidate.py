"""The consolidation pass (LCA §4.6, §6.4; the "sleep" of seeds/003): what happened since a
session's last pass becomes pending proposals — never memories directly.

Sources: explicit requests and corrections in user turns and compaction summaries (``detect``),
memories a harness reported as used (``reinforce``), an optional external proposer command
(``proposer``), and the near-duplicate sweep (``sweep``: one ``merge`` per group of active
memories that say the same thing). Every proposal carries ``origin`` ``consolidation`` and an
idempotency key naming what it came from, so a second pass over the same entries adds nothing;
it is also de-duplicated against the memories, against pending *and rejected* proposals, and
within the pass, by normalised text — a candidate quoted inside an active memory's text, or the
text (or the span) of an active memory's own evidence, is already known. Each is checked like
any other proposal and only the auto-apply policy may apply one. Each pass over a session
records a checkpoint (trigger ``consolidation``) with the highest entry it covered; the next
pass starts after it. Only a session with new entries gets one, and none when the proposer
command failed (it sees those entries again next time); a pass that advances no session leaves
one store-wide mark, so the Overview still knows when it ran.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlmodel import col, func, select

from store.core.db import orm
from store.core.models import Checkpoint, Entry, Evidence, Memory
from store.core.timeutil import parse_iso, to_iso
from store.governance.detect import Found, scan
from store.governance.text import normalise
from store.governance.models import Proposal
from store.governance.records import PassSummary
from store.core.vocab import plural

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store
    from store.core.secrets import Detector

TRIGGER = "consolidation"
PROPOSER = "lca-tui:consolidate"
HISTORY = 40  # entries before the pass that a correction at its start may answer
MIN_CONTAINED_WORDS = 3  # a shorter text inside a memory is no sign it is already known


@dataclass
class ConsolidationReport:
    proposals_added: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    proposal_ids: list[int] = field(default_factory=list)
    checkpoint_ids: list[int] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    proposer: dict[str, Any] = field(default_factory=lambda: {"ran": False, "error": None})
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"proposals_added": self.proposals_added, "by_kind": dict(self.by_kind),
                "skipped": dict(self.skipped), "proposal_ids": self.proposal_ids,
                "checkpoint_ids": self.checkpoint_ids, "sessions": self.sessions,
                "proposer": dict(self.proposer), "errors": self.errors}


def _key(*parts: object) -> str:
    raw = "|".join(str(p) for p in parts)
    return "consolidation:" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def last_pass(store: Store, session_id: str) -> int:
    """The highest entry id the last consolidation pass over ``session_id`` covered (0)."""
    with store.read() as conn, orm(conn) as s:
        row = s.exec(select(Checkpoint.through_entry_id)
                     .where(Checkpoint.session_id == session_id, Checkpoint.trigger == TRIGGER,
                            col(Checkpoint.through_entry_id).is_not(None))
                     .order_by(col(Checkpoint.through_entry_id).desc())).first()
    return int(row or 0)


def _entries(store: Store, session_id: str, after: int) -> tuple[list[Entry], list[Entry]]:
    """(new entries after ``after``, the last ``HISTORY`` entries up to it), by seq."""
    with store.read() as conn, orm(conn) as s:
        new = list(s.exec(select(Entry).where(Entry.session_id == session_id,
                                              col(Entry.id) > after)
                          .order_by(col(Entry.seq))).all())
        old = list(s.exec(select(Entry).where(Entry.session_id == session_id,
                                              col(Entry.id) <= after)
                          .order_by(col(Entry.seq).desc()).limit(HISTORY)).all())
    return new, old[::-1]


class _Dedup:
    """What is already known: active memories, pending and rejected proposals, this pass."""

    def __init__(self, store: Store) -> None:
        with store.read() as conn, orm(conn) as s:
            bodies = s.exec(select(Memory.body).where(Memory.status == "active")).all()
            props = s.exec(select(Proposal.content, Proposal.status)
                           .where(col(Proposal.status).in_(("pending", "rejected")))).all()
            spans = s.exec(select(Evidence.entry_id, Evidence.span_start, Evidence.span_end,
                                  Entry.content)
                           .join(Memory, col(Memory.id) == col(Evidence.memory_id))
                           .join(Entry, col(Entry.id) == col(Evidence.entry_id))
                           .where(Memory.status == "active")).all()
        self.memories = {normalise(b) for b in bodies}
        # each memory sentence long enough to count: found inside a candidate, the candidate
        # restates what the memory already says (a correction the memory quotes)
        from store.governance.text import sentences

        self.memory_sentences = {n for b in bodies for x in sentences(b or "",
                                                                      MIN_CONTAINED_WORDS)
                                 if len((n := normalise(x.text)).split()) >= MIN_CONTAINED_WORDS}
        self.proposals = {normalise(c) for c, _ in props if c}
        self.this_pass: set[str] = set()
        # the memories' evidence: (entry, start, end) and its text, normalised
        self.spans: dict[int, list[tuple[int, int]]] = {}
        self.evidence_text: set[str] = set()
        for eid, a, b, content in spans:
            if eid is None:
                continue
            start = int(a) if a is not None else 0
            end = int(b) if b is not None else len(content or "")
            self.spans.setdefault(int(eid), []).append((start, end))
            self.evidence_text.add(normalise((content or "")[start:end]))

    def reason(self, content: str | None,
               evidence: list[dict[str, Any]] | None = None) -> str | None:
        n = normalise(content)
        if not n:
            return None
        if n in self.memories:
            return "duplicate_memory"
        if len(n.split()) >= MIN_CONTAINED_WORDS and any(n in m for m in self.memories):
            return "duplicate_memory"  # quoted inside an existing memory's text
        if any(f" {m} " in f" {n} " for m in self.memory_sentences):
            return "duplicate_memory"  # an existing memory's sentence, quoted by it
        if len(n.split()) >= MIN_CONTAINED_WORDS and any(
                n in t or (len(t.split()) >= MIN_CONTAINED_WORDS and t in n)
                for t in self.evidence_text):
            return "duplicate_memory_evidence"  # already a memory's own evidence
        for ev in evidence or []:
            eid, span = ev.get("entry"), ev.get("span")
            if isinstance(eid, int) and eid in self.spans:
                a, b = (span if isinstance(span, list) and len(span) == 2 else (0, 1 << 62))
                if any(a < e and s < b for s, e in self.spans[eid]):
                    return "duplicate_memory_evidence"
        if n in self.proposals:
            return "duplicate_proposal"
        if n in self.this_pass:
            return "duplicate_in_pass"
        self.this_pass.add(n)
        return None


def _doc(found: Found, project: str | None, detector: Detector) -> dict[str, Any]:
    """A proposal document (the ``propose`` format) for something ``detect`` found. Its text
    is the entry's text masked by the store's detector: a key, a token or a password in the
    entry is ``[secret: <kind>]`` in the proposal (the entry alone holds the value)."""
    evidence = [{"entry": eid, "span": [start, end]} for eid, start, end in found.evidence]
    rationale = detector.mask(found.rationale)  # masked before the description is cut
    metadata: dict[str, Any] = {"description": rationale[:200]}
    if project:
        metadata["projects"] = [project]
    return {"op": "add", "type": found.type, "content": detector.mask(found.content),
            "metadata": metadata, "rationale": rationale, "evidence": evidence,
            "proposer": PROPOSER,
            # each request sentence of a turn is its own proposal: the spans are in the key
            "idempotency_key": _key(found.kind, *(f"{e[0]}:{e[1]}-{e[2]}"
                                                  for e in found.evidence))}


def _last_reinforced(store: Store) -> dict[int, str]:
    """memory id → when the pass last proposed a reinforce for it (any outcome but
    ``failed``: a pending, applied or rejected one covered the feedback before it)."""
    with store.read() as conn, orm(conn) as s:
        rows = s.exec(select(Proposal.targets, Proposal.ts).where(
            Proposal.op == "reinforce", Proposal.proposer == PROPOSER,
            Proposal.status != "failed")).all()
    out: dict[int, str] = {}
    for targets, ts in rows:
        for mid in json.loads(targets or "[]"):
            out[int(mid)] = max(out.get(int(mid), ""), ts)
    return out


def _reinforcements(store: Store) -> list[dict[str, Any]]:
    """A ``reinforce`` proposal per memory a harness reported as used since the pass last
    proposed one for it (keyed by the feedback rows it covers). The uses were counted in
    ``hits`` when reported, so the proposal says so (``uses_counted``): applying it records
    them and does not count them twice."""
    from store.recall.models import RecallCandidate, RecallFeedback

    with store.read() as conn, orm(conn) as s:
        rows = s.exec(select(RecallFeedback.id, RecallFeedback.kind, RecallCandidate.source_id,
                             RecallFeedback.ts)
                      .join(RecallCandidate, col(RecallCandidate.id) ==
                            col(RecallFeedback.candidate_id))
                      .where(RecallCandidate.source_type == "memory")).all()
        active = set(s.exec(select(Memory.id).where(Memory.status == "active")).all())
    since = _last_reinforced(store)
    by_memory: dict[int, list[tuple[int, str]]] = {}
    for fid, kind, mid, ts in rows:
        if mid is None or int(mid) not in active or fid is None:
            continue
        if ts <= since.get(int(mid), ""):
            continue  # covered by an earlier reinforce
        by_memory.setdefault(int(mid), []).append((int(fid), str(kind)))
    docs = []
    for mid, fb in sorted(by_memory.items()):
        ids = sorted(f for f, _ in fb)
        kinds = Counter(k for _, k in fb)
        docs.append({"op": "reinforce", "target": mid,
                     "rationale": (f"reported as used {kinds.get('used', 0)}× and as having "
                                   f"prevented a mistake {kinds.get('prevented', 0)}× "
                                   f"(feedback {ids[0]}–{ids[-1]}); counted in hits "
                                   "when reported"),
                     "metadata": {"uses_counted": True},
                     "proposer": PROPOSER,
                     "idempotency_key": _key("reinforce", mid, *ids)})
    return docs


def _max_proposal(store: Store) -> int:
    with store.read() as conn, orm(conn) as s:
        return int(s.exec(select(func.max(Proposal.id))).one() or 0)


def _file_proposals(store: Store, report: ConsolidationReport,
                    scan_files: Callable[[], list[str] | None]) -> None:
    """Run the bound directory's gated scan; count the file proposals it made."""
    before = _max_proposal(store)
    problems = scan_files()
    if problems is None:
        return  # no bound directory to scan
    report.errors += [f"memory.dir: {e}" for e in problems]
    with store.read() as conn, orm(conn) as s:
        ids = s.exec(select(Proposal.id).where(col(Proposal.id) > before,
                                               Proposal.origin == "file")
                     .order_by(col(Proposal.id))).all()
    report.by_kind["file"] = len(ids)
    report.proposals_added += len(ids)
    report.proposal_ids += [int(i) for i in ids if i is not None]


def consolidate(store: Store, session: str | None = None, *, use_proposer: bool = True,
                actor: str | None = None,
                scan_files: Callable[[], list[str] | None] | None = None) -> ConsolidationReport:
    """Run a pass over ``session`` (a session id or prefix) or every session.
    ``scan_files``: runs the bound memory directory through the gate (the facade passes
    the importer's; governance does not import ``store.ingest``) and returns its problems
    (None: no directory to scan);
    the file proposals it makes are counted under ``file``."""
    from store.governance.proposer import run_proposer

    if session is not None and not session.strip():
        raise ValueError("an empty session id names no session (leave it out for every "
                         "session)")
    started = time.perf_counter()
    report = ConsolidationReport()
    from store.core import filejournal
    from store.governance.apply import resume_auto_apply

    filejournal.finish(store)  # what a killed write left in the bound directory
    resume_auto_apply(store)  # and proposals a killed pass left for the policy
    if scan_files is not None:
        _file_proposals(store, report, scan_files)
    sessions = [store.session(session)] if session is not None else store.sessions()
    dedup = _Dedup(store)
    detector = store.detector()
    covered: list[tuple[str, int, int]] = []  # (session, through entry, new entries)
    docs: list[tuple[str, Any]] = []  # (what found it, proposal document)
    proposer_input: list[dict[str, Any]] = []
    for info in sessions:
        after = last_pass(store, info.id)
        new, history = _entries(store, info.id, after)
        covered.append((info.id, max(int(e.id or 0) for e in new) if new else after,
                        len(new)))
        docs += [(f.kind, _doc(f, info.project, detector)) for f in scan(new, history)]
        proposer_input.append({"session": info.id, "project": info.project,
                               "entries": [{"id": e.id, "seq": e.seq, "agent": e.agent,
                                            "kind": e.kind, "ts": e.ts, "content": e.content}
                                           for e in new]})
    docs += [("reinforce", d) for d in _reinforcements(store)]
    proposer_failed = False
    proposer_input = [p for p in proposer_input if p["entries"]]
    if (use_proposer and proposer_input
            and str(store.settings["governance.proposer_command"] or "").strip()):
        outcome = run_proposer(store, proposer_input)
        report.proposer = {"ran": True, "error": outcome.error,
                           "proposals": len(outcome.documents)}
        proposer_failed = outcome.error is not None
        docs += [("proposer", d) for d in outcome.documents]
    for kind, _ in docs:
        report.by_kind.setdefault(kind, 0)
    refused: list[str] = []
    for kind, doc in docs:
        before = len(report.errors)
        pid = _submit_one(store, report, dedup, kind, doc, actor)
        if kind == "proposer" and len(report.errors) > before:
            refused.append(report.errors[-1])
        if pid is not None:
            report.proposals_added += 1
            report.by_kind[kind] += 1
            report.proposal_ids.append(pid)
    _sweep_step(store, report, actor)
    if refused:  # garbage from the proposer is the proposer's failure, not a silent skip
        n = report.proposer.get("proposals", len(refused))
        why = (f"{len(refused)} of {plural(n, 'proposal')} from the proposer "
               f"command refused; first: {refused[0]}")[:500]
        err = report.proposer.get("error")
        report.proposer["error"] = f"{err}; {why}" if err else why
    elapsed = (time.perf_counter() - started) * 1000
    for sid, through, n_new in covered:
        report.sessions.append(sid)
        # a checkpoint only where there was something new, and not past what a failed
        # proposer command did not see: the next pass gives it those entries again (what
        # the detectors proposed from them is keyed, so it is not proposed twice)
        if n_new and not proposer_failed:
            report.checkpoint_ids.append(store_checkpoint(store, sid, through, n_new,
                                                          elapsed))
    if not report.checkpoint_ids:  # the pass ran all the same: one store-wide mark
        report.checkpoint_ids.append(store_checkpoint(
            store, None, 0, 0, elapsed, status="partial" if proposer_failed else "ok"))
    return report


def _sweep_step(store: Store, report: ConsolidationReport, actor: str | None) -> None:
    """The near-duplicate sweep as a step of the pass: its merges count under ``sweep``."""
    from store.governance.sweep import sweep_duplicates

    done = sweep_duplicates(store, actor=actor)
    if done.groups:  # like every source, listed when it found something
        report.by_kind["sweep"] = done.proposals_added
    report.proposals_added += done.proposals_added
    report.proposal_ids += done.proposal_ids
    if done.skipped:
        report.skipped["sweep_proposed_before"] = done.skipped
    report.errors += done.errors


def _submit_one(store: Store, report: ConsolidationReport, dedup: _Dedup, kind: str,
                doc: Any, actor: str | None) -> int | None:
    """Check and store one proposal document unless it is already known; its id, or None."""
    from store.governance.apply import submit
    from store.governance.proposals import ProposalError, parse_proposal

    if isinstance(doc, dict):
        if doc.get("op") != "reinforce":
            why = dedup.reason(doc.get("content"), doc.get("evidence"))
            if why:
                report.skipped[why] = report.skipped.get(why, 0) + 1
                return None
        if not doc.get("idempotency_key"):
            doc = {**doc, "idempotency_key": _key(kind, normalise(doc.get("content")),
                                                  doc.get("op"), doc.get("target"))}
    origin = "proposer" if kind == "proposer" else "consolidation"
    try:
        new = parse_proposal(doc, origin=origin, source=f"consolidation {kind}")
    except ProposalError as exc:
        report.errors.append(f"{kind}: {exc}")
        return None
    with store.read() as conn, orm(conn) as s:
        seen = s.exec(select(Proposal.id).where(Proposal.idem_key == new.idem_key)).first()
    if seen is not None:
        report.skipped["seen_before"] = report.skipped.get("seen_before", 0) + 1
        return None
    try:
        return submit(store, new, actor=actor).id
    except (ProposalError, ValueError) as exc:
        report.errors.append(f"{kind}: {exc}")
        return None


def store_checkpoint(store: Store, session_id: str | None, through: int, entries: int,
                     duration_ms: float, status: str = "ok") -> int:
    """Record the pass over one session: the highest entry it covered (``session_id`` None:
    a store-wide mark that a pass ran and advanced no session)."""
    from store.context.api import record_checkpoint

    return record_checkpoint(store, session_id, trigger=TRIGGER, entries_added=entries,
                             memories_written=0, duration_ms=duration_ms, status=status,
                             through_entry_id=through or None, touch_session=False)


PASS_ORIGINS = ("consolidation", "proposer")
_SLACK = timedelta(milliseconds=5)  # clock readings rounded to the millisecond


def latest_pass(store: Store) -> PassSummary | None:
    """When the latest consolidation pass ran, over what, and what it proposed (None when no
    pass has run). A pass ends by writing one checkpoint per session, one after the other,
    each with the pass's duration: the run of consolidation checkpoints ending with the latest
    one that share its duration and time window is that pass, and the proposals of a pass
    origin made in that window are what it found."""
    with store.read() as conn, orm(conn) as s:
        recent = list(s.exec(select(Checkpoint).where(Checkpoint.trigger == TRIGGER)
                             .order_by(col(Checkpoint.id).desc())).all())
        if not recent:
            return None
        last = recent[0]
        end = parse_iso(last.ts)
        assert end is not None
        start = end - timedelta(milliseconds=last.duration_ms or 0) - _SLACK
        same = []
        for c in recent:
            when = parse_iso(c.ts)
            if c.duration_ms != last.duration_ms or when is None or when < start:
                break
            same.append(c)
        props = s.exec(select(Proposal.op, Proposal.type, Proposal.status, Proposal.ts)
                       .where(col(Proposal.origin).in_(PASS_ORIGINS))).all()
    window = (to_iso(start), to_iso(end + _SLACK))
    found: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    for op, mtype, status, ts in props:
        if window[0] <= ts <= window[1]:
            found[(mtype or "memory") if op == "add" else (op or "event")] += 1
            statuses[status] += 1
    return PassSummary(ts=last.ts, started=to_iso(start + _SLACK),
                       sessions=sum(1 for c in same if c.session_id),
                       entries=sum(c.entries_added for c in same), found=dict(found),
                       statuses=dict(statuses), total=len(props),
                       pending=sum(1 for p in props if p[2] == "pending"))
