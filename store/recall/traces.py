"""Recall traces: the records a recall leaves, reading them back, and experiential feedback.

A trace stores pointers and a short excerpt per candidate, and no text at all (no excerpt, no
label) for a masked candidate: a secret memory, or anything policy-filtered.

A trace derived from a harness event has no six terms and no cosine: each candidate's own
figures from the harness (score, providerScore, scri, recallMode) are kept in the trace's
settings under ``hits`` (one object per rank) and handed out as ``Candidate.harness``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, insert
from sqlmodel import col, select

from store.core.secrets import DEFAULT, Detector
from store.core.db import orm
from store.core.errors import NotFound
from store.core.models import Entry, Memory
from store.recall.models import RecallCandidate as CandidateRow
from store.recall.models import RecallFeedback as FeedbackRow
from store.recall.models import RecallTrace as TraceRow
from store.core.timeutil import now_iso
from store.core.db import insert_ignore
# the records live in ``records`` (no SQLAlchemy: the CLI rebuilds them from a daemon's reply)
from store.recall.records import EXCERPT_CHARS as EXCERPT_CHARS  # re-exported
from store.recall.records import MASK as MASK  # re-exported
from store.recall.records import Candidate, Trace
from store.recall.records import Item as Item  # re-exported

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store


def insert_trace(conn: Connection, trace: Trace, writer: str, version: str, *,
                 detector: Detector = DEFAULT) -> int:
    """Write a trace and its candidates; masked candidates get no excerpt and no label.
    ``detector``: the store's (``Store.detector()``, its opt-in e-mail and phone detection)
    masks the query; the default detects the secrets only."""
    now = now_iso()
    who = {"writer": writer, "writer_version": version, "created_at": now}
    # Core, not an ORM object and a session flush (the recall hot path: ≈ 1 ms less a
    # recall); every column is given, as the model's constructor was
    trace_id = conn.execute(insert(TraceRow).values(
        # a query holding a secret is kept with placeholders for the values
        ts=trace.ts, query=detector.mask(trace.query), role=trace.role, project=trace.project,
        channel=trace.channel, historical=int(trace.historical),
        settings=json.dumps(trace.settings, sort_keys=True), latency_ms=trace.latency_ms,
        model=trace.model, degraded=int(trace.degraded), origin=trace.origin,
        entry_id=trace.entry_id, rerun_of=trace.rerun_of, considered=trace.considered,
        injected=trace.injected, writer=writer, writer_version=version, created_at=now)
        .returning(col(TraceRow.id))).scalar_one()
    assert trace_id is not None
    rows = []
    for c in trace.candidates:
        t = c.terms
        rows.append(dict(
            who, trace_id=trace_id, rank=c.rank, source_type=c.source_type,
            source_id=c.source_id, decision=c.decision, reason=c.reason, score=c.score,
            s=t.get("S"), e=t.get("E"), t=t.get("T"), a=t.get("A"), q=t.get("Q"), k=t.get("K"),
            cos=c.cos, lex=c.lex, adj=c.adj, contributions=json.dumps(c.contributions),
            excerpt=None if c.masked else c.excerpt, label=None if c.masked else c.label,
            masked=int(c.masked), chunk_id=c.chunk_id, session_id=c.session_id, seq=c.seq,
            kind=c.kind, external_id=c.external_id, hits=c.hits, prevented=c.prevented))
    if rows:  # one executemany through Core: a recall writes up to ``recall.pool`` of these
        conn.execute(insert(CandidateRow), rows)
    trace.id = trace_id
    return trace_id


def _trace(r: TraceRow) -> Trace:
    return Trace(r.id, r.ts, r.query, r.role, r.project, r.channel, bool(r.historical),
                 json.loads(r.settings or "{}"), r.latency_ms, r.model, bool(r.degraded),
                 r.origin, r.entry_id, r.rerun_of, int(r.considered), int(r.injected))


def _candidate(r: CandidateRow, feedback: tuple[str, ...]) -> Candidate:
    return Candidate(rank=r.rank, source_type=r.source_type, source_id=r.source_id,
                     decision=r.decision, reason=r.reason, score=r.score,
                     terms={"S": r.s, "E": r.e, "T": r.t, "A": r.a, "Q": r.q, "K": r.k},
                     cos=r.cos, lex=r.lex, adj=r.adj,
                     contributions=json.loads(r.contributions or "{}"),
                     excerpt=r.excerpt, label=r.label, masked=bool(r.masked),
                     chunk_id=r.chunk_id, session_id=r.session_id, seq=r.seq, kind=r.kind,
                     external_id=r.external_id, hits=r.hits, prevented=r.prevented, id=r.id,
                     feedback=feedback)


def read_traces(conn: Connection, *, origin: str | None = None, limit: int | None = None,
                newest_first: bool = True, after_id: int = 0) -> list[Trace]:
    """Traces without their candidates (of one ``origin`` when given; ``after_id``: with a
    higher id only), newest first or in id order."""
    query = select(TraceRow)
    if after_id:
        query = query.where(col(TraceRow.id) > after_id)
    if origin is not None:
        query = query.where(TraceRow.origin == origin)
    query = query.order_by(col(TraceRow.ts).desc(), col(TraceRow.id).desc()) if newest_first \
        else query.order_by(col(TraceRow.id))
    if limit:
        query = query.limit(int(limit))
    with orm(conn) as s:
        return [_trace(r) for r in s.exec(query).all()]


def find_trace(conn: Connection, origin: str, ts: str, query: str, settings: str
               ) -> int | None:
    """The id of the first trace of ``origin`` with this time, query and settings (JSON
    text as stored), or None: how a restored trace is found again."""
    with orm(conn) as s:
        return s.exec(select(TraceRow.id).where(
            TraceRow.origin == origin, TraceRow.ts == ts, TraceRow.query == query,
            TraceRow.settings == settings).order_by(col(TraceRow.id)).limit(1)).first()


def feedback_of(conn: Connection, trace_id: int) -> list[tuple[int, str, str]]:
    """(candidate id, kind, ts) of every feedback on a trace, in the order given."""
    with orm(conn) as s:
        rows = s.exec(select(FeedbackRow).where(FeedbackRow.trace_id == trace_id)
                      .order_by(col(FeedbackRow.id))).all()
    return [(r.candidate_id, r.kind, r.ts) for r in rows]


def candidates_of(conn: Connection, trace_id: int) -> list[Candidate]:
    """A trace's candidates in rank order, each with the feedback kinds it received."""
    fb: dict[int, list[str]] = {}
    for cid, kind, _ in feedback_of(conn, trace_id):
        fb.setdefault(cid, []).append(kind)
    with orm(conn) as s:
        rows = s.exec(select(CandidateRow).where(CandidateRow.trace_id == trace_id)
                      .order_by(col(CandidateRow.rank))).all()
        secret = _secret_sources(s, rows)
    out = [_candidate(c, tuple(fb.get(c.id or 0, ()))) for c in rows]
    for c in out:  # marked secret after the recall: its text is withheld from now on
        if (c.source_type, c.source_id) in secret:
            c.excerpt, c.label, c.masked = None, None, True
    return out


def _secret_sources(s: Any, rows: Sequence[CandidateRow]) -> set[tuple[str, int]]:
    """(source type, id) of the candidates whose entry or memory is secret now."""
    out: set[tuple[str, int]] = set()
    for kind, model in (("entry", Entry), ("memory", Memory)):
        ids = sorted({int(r.source_id) for r in rows
                      if r.source_type == kind and r.source_id is not None})
        for i in range(0, len(ids), 500):
            out.update((kind, int(x)) for x in s.exec(
                select(model.id).where(col(model.id).in_(ids[i:i + 500]),
                                       model.sensitivity == "secret")).all())
    return out


def list_traces(store: Store, limit: int | None = 200, after_id: int = 0) -> list[Trace]:
    """Traces, newest first, without their candidates (``after_id``: only those newer than
    that trace, what a following screen adds)."""
    with store.read() as conn:
        return read_traces(conn, limit=limit, after_id=after_id)


def get_trace(store: Store, trace_id: int) -> Trace:
    """One trace with every candidate, in rank order."""
    with store.read() as conn:
        with orm(conn) as s:
            row = s.get(TraceRow, int(trace_id))
        if row is None:
            raise NotFound(f"no recall trace {trace_id}: `lca-tui traces` lists them")
        trace = _trace(row)
        trace.candidates = candidates_of(conn, int(trace_id))
    hits = trace.settings.get("hits") if trace.origin != "lca-tui" else None
    if isinstance(hits, list):
        by_rank = {h.get("rank"): h for h in hits if isinstance(h, dict)}
        for c in trace.candidates:
            found = by_rank.get(c.rank)
            c.harness = {k: v for k, v in found.items() if k != "rank"} if found else None
    return trace


def add_feedback(conn: Connection, trace_id: int, candidate_id: int, kind: str, ts: str,
                 who: tuple[str, str, str]) -> bool:
    """Record ``kind`` feedback on a candidate once; a repeat, or a row the schema refuses
    (an unknown kind from a restored export), is ignored. True if added."""
    # the id RETURNING gives, not ``rowcount``: on PostgreSQL the statement's rowcount read
    # as added for a repeat that ``ON CONFLICT DO NOTHING`` skipped (test_recall's feedback
    # test); a skipped row returns no id on both backends
    added = conn.execute(insert_ignore(conn, FeedbackRow).values(
        trace_id=trace_id, candidate_id=candidate_id, kind=kind, ts=ts, writer=who[0],
        writer_version=who[1], created_at=who[2]).returning(col(FeedbackRow.id))).first()
    return added is not None


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
