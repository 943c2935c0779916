"""Recall traces: the records a recall leaves, reading them back, and experiential feedback.

A trace stores pointers and a short excerpt per candidate, and no text at all (no excerpt, no
label) for a masked candidate: a secret memory, or anything policy-filtered.

A trace derived from a harness event has no six terms and no cosine: each candidate's own
figures from the harness (score, providerScore, scri, recallMode) are kept in the trace's
settings under ``hits`` (one object per rank) and handed out as ``Candidate.harness``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, text

from store.core.errors import NotFound
from store.core.timeutil import now_iso
from store.governance.files import write_back

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

EXCERPT_CHARS = 240
MASK = "[withheld]"


@dataclass
class Candidate:
    """One candidate of a recall with its terms, contributions, score and decision."""

    rank: int
    source_type: str
    source_id: int | None
    decision: str
    reason: str
    score: float | None = None
    terms: dict[str, float | None] = field(default_factory=dict)
    cos: float | None = None
    lex: float | None = None
    contributions: dict[str, float] = field(default_factory=dict)
    excerpt: str | None = None
    label: str | None = None
    masked: bool = False
    chunk_id: int | None = None
    session_id: str | None = None
    seq: int | None = None
    kind: str | None = None
    external_id: str | None = None
    hits: int | None = None
    prevented: int | None = None
    id: int | None = None
    feedback: tuple[str, ...] = ()
    harness: dict[str, Any] | None = None  # a harness's own figures (derived traces only)

    @property
    def pointer(self) -> str:
        """Where the item lives: ``memory 12`` or ``session abcd1234#17``."""
        if self.source_type == "memory":
            return f"memory {self.source_id}"
        if self.source_type == "entry" and self.session_id is not None:
            return f"{self.session_id[:8]}#{self.seq}"
        return f"{self.source_type} {self.external_id or self.source_id or ''}".strip()

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "source_type": self.source_type,
                "source_id": self.source_id, "session_id": self.session_id, "seq": self.seq,
                "kind": self.kind, "label": self.label, "text": self.excerpt,
                "masked": self.masked, "terms": dict(self.terms),
                "similarity": {"cos": self.cos, "lex": self.lex},
                "contributions": dict(self.contributions), "score": self.score,
                "decision": self.decision, "reason": self.reason,
                "feedback": list(self.feedback), "harness": self.harness}


@dataclass
class Item:
    """An injected item handed to the agent, with its source pointer."""

    source_type: str
    source_id: int
    text: str
    score: float
    rank: int
    session_id: str | None = None
    seq: int | None = None
    label: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Trace:
    """One recall: the cue, the settings in force, timing, and every candidate."""

    id: int | None
    ts: str
    query: str
    role: str | None
    project: str | None
    channel: str
    historical: bool
    settings: dict[str, Any]
    latency_ms: float | None
    model: str | None
    degraded: bool
    origin: str = "lca-tui"
    entry_id: int | None = None
    rerun_of: int | None = None
    considered: int = 0
    injected: int = 0
    candidates: list[Candidate] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"trace_id": self.id, "ts": self.ts, "query": self.query, "role": self.role,
                "project": self.project, "channel": self.channel,
                "historical": self.historical, "latency_ms": self.latency_ms,
                "model": self.model, "degraded": self.degraded, "origin": self.origin,
                "entry_id": self.entry_id, "rerun_of": self.rerun_of,
                "considered": self.considered, "injected": self.injected,
                "settings": self.settings,
                "candidates": [c.to_json() for c in self.candidates]}


_TRACE_COLS = ("id, ts, query, role, project, channel, historical, settings, latency_ms, "
               "model, degraded, origin, entry_id, rerun_of, considered, injected")
_CAND_COLS = ("id, rank, source_type, source_id, decision, reason, score, s, e, t, a, q, k, "
              "cos, lex, contributions, excerpt, label, masked, chunk_id, session_id, seq, "
              "kind, external_id, hits, prevented")


def insert_trace(conn: Connection, trace: Trace, writer: str, version: str) -> int:
    """Write a trace and its candidates; masked candidates get no excerpt and no label."""
    now = now_iso()
    who = {"w": writer, "wv": version, "c": now}
    trace_id = int(conn.execute(text(
        f"INSERT INTO recall_trace ({_TRACE_COLS.replace('id, ', '', 1)}, writer, "
        "writer_version, created_at) VALUES (:ts, :q, :r, :p, :ch, :h, :s, :l, :m, :d, :o, "
        ":e, :ro, :n, :i, :w, :wv, :c) RETURNING id"), dict(
        who, ts=trace.ts, q=trace.query, r=trace.role, p=trace.project, ch=trace.channel,
        h=int(trace.historical), s=json.dumps(trace.settings, sort_keys=True),
        l=trace.latency_ms, m=trace.model, d=int(trace.degraded), o=trace.origin,
        e=trace.entry_id, ro=trace.rerun_of, n=trace.considered,
        i=trace.injected)).scalar_one())
    rows = []
    for c in trace.candidates:
        t = c.terms
        rows.append(dict(
            who, tid=trace_id, rank=c.rank, st=c.source_type, sid=c.source_id,
            dec=c.decision, rsn=c.reason, sc=c.score, s=t.get("S"), e=t.get("E"),
            t=t.get("T"), a=t.get("A"), q=t.get("Q"), k=t.get("K"), cos=c.cos, lex=c.lex,
            con=json.dumps(c.contributions), ex=None if c.masked else c.excerpt,
            lb=None if c.masked else c.label, mk=int(c.masked), cid=c.chunk_id,
            ses=c.session_id, seq=c.seq, kind=c.kind, xid=c.external_id, hits=c.hits,
            prev=c.prevented))
    if rows:
        conn.execute(text(
            "INSERT INTO recall_candidate (trace_id, rank, source_type, source_id, decision, "
            "reason, score, s, e, t, a, q, k, cos, lex, contributions, excerpt, label, masked, "
            "chunk_id, session_id, seq, kind, external_id, hits, prevented, writer, "
            "writer_version, created_at) VALUES (:tid, :rank, :st, :sid, :dec, :rsn, :sc, :s, "
            ":e, :t, :a, :q, :k, :cos, :lex, :con, :ex, :lb, :mk, :cid, :ses, :seq, :kind, "
            ":xid, :hits, :prev, :w, :wv, :c)"), rows)
    trace.id = trace_id
    return trace_id


def _trace(r: Any) -> Trace:
    return Trace(int(r[0]), r[1], r[2], r[3], r[4], r[5], bool(r[6]), json.loads(r[7] or "{}"),
                 r[8], r[9], bool(r[10]), r[11], r[12], r[13], int(r[14]), int(r[15]))


def _candidate(r: Any, feedback: tuple[str, ...]) -> Candidate:
    terms = dict(zip(("S", "E", "T", "A", "Q", "K"), r[7:13], strict=True))
    return Candidate(rank=int(r[1]), source_type=r[2], source_id=r[3], decision=r[4],
                     reason=r[5], score=r[6], terms=terms, cos=r[13], lex=r[14],
                     contributions=json.loads(r[15] or "{}"), excerpt=r[16], label=r[17],
                     masked=bool(r[18]), chunk_id=r[19], session_id=r[20], seq=r[21],
                     kind=r[22], external_id=r[23], hits=r[24], prevented=r[25], id=int(r[0]),
                     feedback=feedback)


def list_traces(store: Store, limit: int | None = 200) -> list[Trace]:
    """Traces, newest first, without their candidates."""
    sql = f"SELECT {_TRACE_COLS} FROM recall_trace ORDER BY ts DESC, id DESC"
    if limit:
        sql += f" LIMIT {int(limit)}"
    with store.read() as conn:
        return [_trace(r) for r in conn.exec_driver_sql(sql).all()]


def get_trace(store: Store, trace_id: int) -> Trace:
    """One trace with every candidate, in rank order."""
    with store.read() as conn:
        r = conn.execute(text(f"SELECT {_TRACE_COLS} FROM recall_trace WHERE id = :i"),
                         {"i": int(trace_id)}).first()
        if r is None:
            raise NotFound(f"no recall trace {trace_id}: `lca-tui traces` lists them")
        trace = _trace(r)
        fb: dict[int, list[str]] = {}
        for cid, kind in conn.execute(text(
                "SELECT candidate_id, kind FROM recall_feedback WHERE trace_id = :i "
                "ORDER BY id"), {"i": trace.id}).all():
            fb.setdefault(int(cid), []).append(kind)
        rows = conn.execute(text(f"SELECT {_CAND_COLS} FROM recall_candidate WHERE "
                                 "trace_id = :i ORDER BY rank"), {"i": trace.id}).all()
    trace.candidates = [_candidate(c, tuple(fb.get(int(c[0]), ()))) for c in rows]
    hits = trace.settings.get("hits") if trace.origin != "lca-tui" else None
    if isinstance(hits, list):
        by_rank = {h.get("rank"): h for h in hits if isinstance(h, dict)}
        for c in trace.candidates:
            found = by_rank.get(c.rank)
            c.harness = {k: v for k, v in found.items() if k != "rank"} if found else None
    return trace


def find_candidate(trace: Trace, item: str) -> Candidate:
    """A candidate by rank (``3``) or by pointer (``memory:12``, ``entry:345``)."""
    item = item.strip()
    if item.isdigit():
        match = [c for c in trace.candidates if c.rank == int(item)]
    else:
        kind, _, ident = item.partition(":")
        match = [c for c in trace.candidates
                 if c.source_type == kind and str(c.source_id) == ident.strip()]
    if not match:
        raise NotFound(f"trace {trace.id} has no candidate {item!r}: give its rank or "
                       f"memory:ID / entry:ID (`lca-tui trace {trace.id}` lists them)")
    return match[0]


def feedback(store: Store, trace_id: int, item: str, kind: str) -> dict[str, Any]:
    """A harness reports that an injected item was ``used`` or ``prevented`` a mistake.

    For a memory this raises ``hits`` or ``prevented`` (and sets ``last_applied``), so later
    recalls weigh it more, and rewrites its file when it lives in the bound memory directory
    (``memory.dir``); the trace keeps the E that applied when it ran. Reporting the same
    thing twice for one candidate counts once.
    """
    if kind not in ("used", "prevented"):
        raise ValueError("feedback is --used or --prevented")
    trace = get_trace(store, trace_id)
    if trace.origin != "lca-tui":
        raise ValueError(f"trace {trace_id} was derived from a harness event; report feedback "
                         "on a recall lca-tui ran")
    cand = find_candidate(trace, item)
    if cand.decision != "injected":
        raise ValueError(f"candidate {cand.rank} of trace {trace_id} was not injected "
                         f"({cand.decision}): only injected items can be used")
    now = now_iso()
    with store.write() as conn:
        added = conn.execute(text(
            "INSERT OR IGNORE INTO recall_feedback (trace_id, candidate_id, kind, ts, writer, "
            "writer_version, created_at) VALUES (:t, :c, :k, :ts, :w, :wv, :ts)"),
            {"t": trace.id, "c": cand.id, "k": kind, "ts": now, "w": store.writer,
             "wv": store.writer_version}).rowcount
        hits = prevented = None
        if added and cand.source_type == "memory":
            column = "hits" if kind == "used" else "prevented"
            row = conn.execute(text(
                f"UPDATE memory SET {column} = {column} + 1, last_applied = :now, "
                "updated_at = :now WHERE id = :id RETURNING hits, prevented"),
                {"now": now, "id": cand.source_id}).first()
            if row is not None:
                hits, prevented = int(row[0]), int(row[1])
                # the bound memory directory's file gets the new figures too, so a
                # re-import no longer resets them (a failure here rolls the feedback back)
                write_back(conn, store, int(cand.source_id or 0))
        if added:
            store.audit(conn, f"recall_feedback_{kind}", cand.source_type,
                        [cand.source_id, trace.id], {"trace": int(trace.id or 0)})
    return {"trace_id": trace.id, "rank": cand.rank, "source_type": cand.source_type,
            "source_id": cand.source_id, "kind": kind, "recorded": bool(added),
            "hits": hits, "prevented": prevented,
            "note": None if added else "already recorded for this candidate"}
