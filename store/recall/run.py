"""Resonance-weighted recall with a trace (LCA §5; DESIGN.md "Recall").

``recall(store, query, ...)`` builds the candidate pool (vector KNN and FTS5 BM25 hits taken in
turn until ``recall.pool`` distinct sources; see ``store.recall.pool``), collapses a source's
chunks to its best chunk, gives every candidate the six terms and its score, decides
what is injected (hard rules, similarity floor, near-duplicates, the 4 + 2 budget), and writes a
trace of all of it. ``probe=True`` runs the same search and writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection

from store.recall import terms as rt
from store.core import vec
from store.core.vocab import Progress, plural
from store.core.records import agent_label
from store.recall.pool import LiveWindow, cache_for
from store.recall.pool import pool as pool_candidates
from store.recall.traces import EXCERPT_CHARS, Candidate, Item, Trace, get_trace, insert_trace
from store.core.timeutil import to_iso
from store.core import pragmas

if TYPE_CHECKING:
    from concurrent.futures import Future

    from store.core.base import StoreBase as Store

SETTING_NAMES = ("alpha", "beta", "gamma", "delta", "epsilon", "lambda", "cos_weight",
                 "adjacent_weight", "floor", "memory_items", "transcript_items", "item_chars",
                 "pool", "half_life_days", "duplicate_cos")


@dataclass
class RecallResult:
    """What a recall returns: the injected items (with pointers) and its full trace."""

    trace: Trace
    items: list[Item]

    @property
    def trace_id(self) -> int | None:
        return self.trace.id

    def to_json(self) -> dict[str, Any]:
        t = self.trace
        return {"trace_id": t.id, "latency_ms": t.latency_ms, "model": t.model,
                "degraded": t.degraded, "query": t.query, "role": t.role,
                "project": t.project, "channel": t.channel, "historical": t.historical,
                "settings": t.settings,
                "items": [{"source_type": i.source_type, "source_id": i.source_id,
                           "session_id": i.session_id, "seq": i.seq, "label": i.label,
                           "text": i.text, "score": i.score, "rank": i.rank}
                          for i in self.items],
                "candidates": [c.to_json() for c in t.candidates]}


def recall_settings(store: Store, overrides: Mapping[str, object] | None = None
                    ) -> dict[str, Any]:
    """The recall settings in force (``recall.*``), with per-call overrides."""
    values = store.settings.section("recall")
    for key, value in (overrides or {}).items():
        if key not in SETTING_NAMES:
            raise ValueError(f"unknown recall setting {key!r}")
        values[key] = value
    return {k: values[k] for k in SETTING_NAMES}


# Hand-written on purpose (the recall hot path): measured on a 20,000-chunk bench store, this
# join for 100 chunk ids takes 0.34 ms as written here vs 2.3 ms as the same Core ``select``
# over the Chunk / Entry / Session / Memory models (median of 200 calls), ~3 % of a recall.
_DESCRIBE = (
    "SELECT c.id, c.source_type, c.source_id, c.text, "
    "e.session_id, e.seq, e.kind, e.ts, s.project, "
    "m.name, m.status, m.sensitivity, m.authority, m.role, m.projects, m.hits, m.prevented, "
    "m.last_applied, m.created, m.half_life_days, m.evergreen, m.valid_to, "
    "m.superseded_by_id, m.created_at, e.created_at, "
    "EXISTS (SELECT 1 FROM memory_flag f WHERE f.memory_id = m.id AND "
    "f.kind = 'contradiction' AND f.resolved_at IS NULL), e.agent, e.sensitivity "
    "FROM chunk c "
    "LEFT JOIN entry e ON c.source_type = 'entry' AND e.id = c.source_id "
    "LEFT JOIN session s ON s.id = e.session_id "
    "LEFT JOIN memory m ON c.source_type = 'memory' AND m.id = c.source_id "
    "WHERE c.id IN ({ids})")


def _facts(r: Any) -> rt.Facts:
    if r[1] == "memory":
        try:
            projects = tuple(str(p) for p in json.loads(r[14] or "[]"))
        except ValueError:
            projects = ()
        return rt.Facts("memory", int(r[2]), kind="memory", name=r[9], status=r[10] or "active",
                        sensitivity=r[11] or "public", authority=r[12], role=r[13],
                        projects=projects, hits=int(r[15] or 0), prevented=int(r[16] or 0),
                        last_applied=r[17], created=r[18] or r[23], half_life_days=r[19],
                        evergreen=bool(r[20]), valid_to=r[21], superseded_by_id=r[22],
                        contradiction=bool(r[25]))
    return rt.Facts("entry", int(r[2]), kind=r[6], ts=r[7] or r[24], project=r[8],
                    sensitivity=r[27] or "public")


# Entries waiting for embedding have no chunk: described from the entry itself.
_DESCRIBE_WAITING = (
    "SELECT e.id, e.content, e.session_id, e.seq, e.kind, e.ts, s.project, e.created_at, "
    "e.agent "
    "FROM entry e LEFT JOIN session s ON s.id = e.session_id WHERE e.id IN ({ids})")


@dataclass
class _Cand:
    chunk_id: int | None  # None: an entry waiting for embedding (no chunk yet)
    facts: rt.Facts
    text: str
    session_id: str | None
    seq: int | None
    cos: float | None
    lex: float
    s: float
    other_model: str | None = None  # the embedder that made this chunk's vector, if not ours
    agent: str | None = None  # an entry's agent: a worker's entries say so in their label
    adj: float | None = None  # the best own S of the entries just before and after it


def _pool(store: Store, conn: Connection, query: str,
          qvec: np.ndarray | Callable[[], np.ndarray], cfg: dict[str, Any],
          live: LiveWindow | None = None, channel: str | None = None) -> list[_Cand]:
    """The candidate pool, one best chunk per source (by S); entries waiting for embedding
    are candidates with their whole text and no chunk. Filled after the channel rule."""
    got = pool_candidates(store, conn, query, qvec, int(cfg["pool"]), live, channel)
    found = got.found
    best: dict[tuple[str, int], _Cand] = {}
    if got.waiting:
        ids = ", ".join(str(int(i)) for i in got.waiting)
        # raw SQL: recall hot path, as _DESCRIBE below (0.34 ms vs 2.3 ms as Core for 100 ids)
        for r in conn.exec_driver_sql(_DESCRIBE_WAITING.format(ids=ids)).all():
            lex = got.waiting[int(r[0])]
            facts = rt.Facts("entry", int(r[0]), kind=r[4], ts=r[5] or r[7], project=r[6])
            best[("entry", int(r[0]))] = _Cand(
                None, facts, r[1], r[2], r[3], None, lex,
                rt.similarity(None, lex, float(cfg["cos_weight"])), agent=r[8])
    if not found:
        return list(best.values())
    weight = float(cfg["cos_weight"])
    # a source's best chunk by S (ties: the lowest id) is its candidate: only those are read
    # (the pool holds a source's further chunks too: ~430 rows for ~50 sources on the demo
    # store, 3 ms of a 21 ms hook); a source's other chunks are read only if its best one
    # is gone by then (a server reads each statement afresh)
    ranked: dict[tuple[str, int], list[tuple[float, int]]] = {}
    for cid, (cos, lex) in found.items():
        ranked.setdefault(got.source[cid], []).append((rt.similarity(cos, lex, weight), -cid))
    for chunks in ranked.values():
        chunks.sort(reverse=True)
    wanted = [-chunks[0][1] for chunks in ranked.values()]
    while wanted:
        ids = ", ".join(str(int(i)) for i in wanted)
        read: set[int] = set()
        # raw SQL: recall hot path, 0.34 ms vs 2.3 ms as Core for 100 ids (see _DESCRIBE)
        for r in conn.exec_driver_sql(_DESCRIBE.format(ids=ids)).all():
            read.add(int(r[0]))
            if r[1] == "entry" and r[4] is None or r[1] == "memory" and r[9] is None:
                continue  # a chunk whose source is gone (mid-erasure): not a candidate
            cos, lex = found[int(r[0])]
            cand = _Cand(int(r[0]), _facts(r), r[3], r[4], r[5], cos, lex,
                         rt.similarity(cos, lex, weight), got.foreign.get(int(r[0])), r[26])
            best[(cand.facts.source_type, cand.facts.source_id)] = cand  # over a waiting one
        for key, chunks in list(ranked.items()):
            if -chunks[0][1] in read:
                del ranked[key]  # read (a candidate, or its source gone)
            else:
                chunks.pop(0)  # that chunk is gone: the source's next best, if any
                if not chunks:
                    del ranked[key]
        wanted = [-chunks[0][1] for chunks in ranked.values()]
    cands = list(best.values())
    _adjacent_support(store, conn, cands, got.lex_of, qvec, cfg, channel)
    return cands


def _adjacent_support(store: Store, conn: Connection, cands: list[_Cand],
                      lex_of: dict[int, float], qvec: np.ndarray | Callable[[], np.ndarray],
                      cfg: dict[str, Any], channel: str | None = None) -> None:
    """Adjacent support: a transcript entry's S is raised towards the S of the entries just
    before and after it in its session (same agent), ``S = max(own, (own + μ·adj) / (1 + μ))``
    with μ = ``recall.adjacent_weight`` and ``adj`` the best own S of those two neighbours
    (their cosine to the query, their lexical score if the FTS search found them). An answer
    is often the turn after the question it answers, or the one before a turn that names the
    topic; S is never lowered, and memories have no neighbours. A neighbour the channel rule
    holds back lends no support (it never enters the ranking, even through another entry); a
    neighbour whose vector another embedder made lends its lexical part only, as the pool
    treats it.
    Measured on LoCoMo's five tuning conversations (``lca-tui eval locomo``, docs/locomo.md):
    R@10 0.743 → 0.771."""
    mu = float(cfg.get("adjacent_weight") or 0.0)
    owners = [c for c in cands if c.facts.source_type == "entry" and c.chunk_id is not None
              and c.seq is not None and c.session_id is not None]
    if mu <= 0 or not owners:
        return
    keys = {(c.session_id, c.agent or "main", int(c.seq) + d)
            for c in owners for d in (-1, 1) if c.seq is not None}
    ordered = sorted(keys)
    mark = pragmas.placeholder(conn)
    marks = ", ".join(f"({mark}, {mark}, {mark})" for _ in ordered)
    # raw SQL: recall hot path, the neighbours looked up key by key through entry_by_session:
    # CROSS JOIN keeps the keys the outer loop (SQLite's planner otherwise scans the chunk
    # index: 595 ms for 100 keys at 50,000 chunks; a Core tuple IN, +22 ms a recall); 0.22 ms
    rows = conn.exec_driver_sql(
        f"WITH k(s, a, q) AS (VALUES {marks}) "
        "SELECT e.session_id, e.agent, e.seq, c.id, e.sensitivity, c.model "
        "FROM k CROSS JOIN entry e CROSS JOIN chunk c "
        "WHERE e.session_id = k.s AND e.agent = k.a AND e.seq = k.q "
        "AND c.source_type = 'entry' AND c.source_id = e.id",
        tuple(v for key in ordered for v in key)).all()
    if not rows:
        return
    q = qvec() if callable(qvec) else qvec
    vectors = cache_for(store)
    w = float(cfg["cos_weight"])
    own: dict[tuple[str, str, int], float] = {}
    model = store.embedder.name
    # the neighbours' vectors the warm copy lacks, read at once (one round trip on a server)
    fetched = vec.vectors_of(conn, [int(r[3] or 0) for r in rows if r[5] == model
                                    and vectors.vector(int(r[3] or 0)) is None])
    for sid, agent, seq, chunk, sensitivity, chunk_model in rows:
        if channel is not None and rt.channel_denies(sensitivity or "public", channel):
            continue
        cid = int(chunk or 0)
        v = vectors.vector(cid)
        if v is None and chunk_model == model:  # another embedder's vector is not comparable
            v = fetched.get(cid)
        s = rt.similarity(None if v is None else float(v @ q), lex_of.get(cid, 0.0), w)
        key = (str(sid), str(agent), int(seq or 0))
        own[key] = max(own.get(key, 0.0), s)
    for c in owners:
        near = [own[k] for k in ((c.session_id, c.agent or "main", int(c.seq or 0) + d)
                                 for d in (-1, 1)) if k in own]
        if near:
            c.adj = max(near)
            c.s = max(c.s, (c.s + mu * c.adj) / (1.0 + mu))


def _label(f: rt.Facts, agent: str | None) -> str | None:
    """A memory's name; an entry's kind, and the worker or helper it came from if not main."""
    if f.source_type == "memory":
        return f.name
    if agent and agent != "main":
        return f"{f.kind} from {agent_label(agent)}"
    return f.kind


def _score(c: _Cand, cfg: dict[str, Any], role: str | None, project: str | None,
           channel: str, historical: bool, now: datetime) -> Candidate:
    f = c.facts
    e = rt.experiential(f.hits, f.prevented) if f.source_type == "memory" else 0.0
    k, k_why = rt.risk(f, channel)
    terms = {"S": c.s, "E": e, "T": rt.temporal(f, e, now, float(cfg["half_life_days"])),
             "A": rt.authority(f), "Q": rt.task_relevance(f, role, project), "K": k}
    total, contributions = rt.score(terms, cfg)
    hard = rt.hard_decision(f, channel, historical, now)
    masked = hard is not None and hard[0] == "policy_filtered"
    cand = Candidate(rank=0, source_type=f.source_type, source_id=f.source_id,
                     decision=hard[0] if hard else "", reason=hard[1] if hard else "",
                     score=round(total, 6), terms={t: round(v, 6) for t, v in terms.items()},
                     cos=None if c.cos is None else round(c.cos, 6), lex=round(c.lex, 6),
                     adj=None if c.adj is None else round(c.adj, 6),
                     contributions={t: round(v, 6) for t, v in contributions.items()},
                     excerpt=None if masked else c.text[:EXCERPT_CHARS],
                     label=None if masked else _label(f, c.agent), masked=masked,
                     chunk_id=c.chunk_id,
                     session_id=c.session_id, seq=c.seq, kind=f.kind,
                     hits=f.hits if f.source_type == "memory" else None,
                     prevented=f.prevented if f.source_type == "memory" else None)
    notes = [] if hard or not k_why else ["penalised: " + ", ".join(k_why)]
    if c.other_model is not None:
        notes.append(f"vector from another embedder ({c.other_model}): cosine not comparable")
    if notes:
        cand.reason = "; ".join(([cand.reason] if hard else []) + notes)
    return cand


def _decide(ranked: list[tuple[Candidate, _Cand]], cfg: dict[str, Any],
            vector_of: Callable[[int], np.ndarray | None]) -> list[Item]:
    """Walk candidates in rank order: floor, near-duplicates, then the per-kind budget."""
    slots = {"memory": int(cfg["memory_items"]), "entry": int(cfg["transcript_items"])}
    used = {"memory": 0, "entry": 0}
    chosen: list[tuple[Candidate, np.ndarray | None]] = []
    items: list[Item] = []
    floor, dup_cos = float(cfg["floor"]), float(cfg["duplicate_cos"])
    for cand, raw in ranked:
        penalty = f" ({cand.reason})" if cand.reason else ""
        if cand.decision:
            continue
        s = cand.terms["S"] or 0.0
        if s < floor:
            cand.decision = "below_floor"
            cand.reason = f"S {s:.3f} is below the floor {floor:.2f}" + penalty
            continue
        kind = cand.source_type
        if used[kind] >= slots[kind]:
            if sum(used.values()) >= sum(slots.values()):
                cand.decision, cand.reason = "not_selected", (
                    f"ranked #{cand.rank}, below the {sum(slots.values())} items already "
                    "injected" + penalty)
            else:
                name = "memory" if kind == "memory" else "transcript"
                cand.decision, cand.reason = "over_budget", (
                    f"{name} slots full ({used[kind]}/{slots[kind]}), taken by higher-ranked "
                    f"{name} items" + penalty)
            continue
        # no cosine: no vector of this embedder (another embedder's is not comparable)
        v = vector_of(cand.chunk_id) if cand.chunk_id is not None and cand.cos is not None \
            else None
        twin = None
        if v is not None:
            sims = [(float(v @ cv), c) for c, cv in chosen if cv is not None]
            twin = next(((sim, c) for sim, c in sims if sim >= dup_cos), None)
        if twin is not None:
            cand.decision, cand.reason = "duplicate", (
                f"near-duplicate of #{twin[1].rank} ({twin[1].pointer}), cosine "
                f"{twin[0]:.3f} ≥ {dup_cos:.2f}")
            continue
        used[kind] += 1
        chosen.append((cand, v))
        cand.decision = "injected"
        name = "memory" if kind == "memory" else "transcript"
        cand.reason = (f"ranked #{cand.rank}, S {s:.3f} ≥ floor {floor:.2f}; {name} slot "
                       f"{used[kind]}/{slots[kind]}" + penalty)
        items.append(Item(cand.source_type, int(cand.source_id or 0),
                          raw.text[:int(cfg["item_chars"])], float(cand.score or 0.0),
                          cand.rank, cand.session_id, cand.seq, cand.label))
    return items


def recall(store: Store, query: str, role: str | None = None, project: str | None = None,
           channel: str = "private", historical: bool = False, *, probe: bool = False,
           overrides: Mapping[str, object] | None = None, now: datetime | None = None,
           rerun_of: int | None = None, live: LiveWindow | None = None,
           qvec: Future[tuple[np.ndarray, float]] | None = None,
           writer: tuple[str, str] | None = None) -> RecallResult:
    """Run a recall for ``query`` and (unless ``probe``) store its trace. ``live`` leaves out
    the asking session's live window (``pool.live_window``): a hook's Auto Recall. ``qvec``:
    ``query`` being embedded by ``store.embedder`` in another thread (the hook starts it
    before it imports), giving the vector and the milliseconds it took; it is waited for
    once the lexical searches are done, and its time counts in the trace's latency (measured
    with the store's ``timer``). ``writer``: (name, version) the trace records instead of the
    store's own (a daemon answering for an MCP client records that client)."""
    if channel not in rt.CHANNELS:
        raise ValueError(f"channel must be one of {', '.join(rt.CHANNELS)}, got {channel!r}")
    if not query.strip():
        raise ValueError("a recall needs a non-empty query")
    if qvec is not None:  # a hook's: the model its thread may still be loading is not
        _ = store.embedder  # this recall's time (its embedding is counted, below)
    clock = store.timer
    started = clock()
    cfg = recall_settings(store, overrides)
    now = now or datetime.now(UTC)
    embedder = store.embedder
    if qvec is None:
        vector = embedder.embed([query])[0]

        def query_vector() -> np.ndarray:
            return vector
    else:
        early, waited = qvec, [0.0]

        def query_vector() -> np.ndarray:
            begun = clock()
            vector = early.result()[0]
            waited[0] += (clock() - begun) * 1000.0
            return vector
    with store.read() as conn:
        pragmas.mmap(conn, 268435456)  # connection control on the recall hot path
        pool = _pool(store, conn, query, query_vector, cfg, live, channel)
        scored = [(_score(c, cfg, role, project, channel, historical, now), c) for c in pool]
        # scores rounded before the tie-break: the in-memory product and vec0 (and BLAS
        # kernels by CPU) sum in different orders, and identical texts must rank by id, not
        # by the last bit of their cosine
        scored.sort(key=lambda pair: (-round(pair[0].score or 0.0, 9), pair[1].chunk_id is None,
                                      pair[1].chunk_id or 0, pair[1].facts.source_id))
        for i, (cand, _raw) in enumerate(scored, start=1):
            cand.rank = i
        cache: dict[int, np.ndarray | None] = {}
        vectors = cache_for(store)

        def vector_of(chunk_id: int) -> np.ndarray | None:
            if chunk_id not in cache:
                cached = vectors.vector(chunk_id)
                cache[chunk_id] = cached if cached is not None else vec.vector_of(conn, chunk_id)
            return cache[chunk_id]

        items = _decide(scored, cfg, vector_of)
    latency = (clock() - started) * 1000.0
    if qvec is not None:  # as if embedded here: its whole time, less the wait counted above
        latency += qvec.result()[1] - waited[0]
    # on a server the trace says what ranked it (a file's is sqlite-vec + FTS5 BM25)
    recorded = cfg if not store.on_server else {
        **cfg, "ranked_by": f"pgvector hnsw ef_search={store.settings['store.pg_ef_search']} "
                            "+ tsvector ts_rank_cd weighted by idf"}
    trace = Trace(None, to_iso(now), query, role, project, channel, historical, recorded,
                  round(latency, 3), embedder.name, bool(embedder.degraded),
                  rerun_of=rerun_of, considered=len(scored), injected=len(items),
                  candidates=[c for c, _ in scored])
    if not probe and not store.read_only:  # read-only: the recall runs, no trace is kept
        with store.write() as conn:
            insert_trace(conn, trace, *(writer or (store.writer, store.writer_version)),
                         detector=store.detector())
    return RecallResult(trace, items)


def probe(store: Store, query: str, **kwargs: Any) -> RecallResult:
    """The same search as ``recall`` with no trace written (write checks, privacy probes)."""
    return recall(store, query, probe=True, **kwargs)


@dataclass
class Move:
    """How one source fared in a re-run against the original trace."""

    pointer: str
    old_rank: int | None
    new_rank: int | None
    old_decision: str | None
    new_decision: str | None
    old_score: float | None
    new_score: float | None
    tie_only: bool = False
    """The rank changed only among candidates of equal score (their order is arbitrary)."""

    @property
    def changed(self) -> bool:
        """The decision changed, or the rank did beyond a reordering of equal scores."""
        if self.old_decision != self.new_decision:
            return True
        return self.old_rank != self.new_rank and not self.tie_only


def rerun(store: Store, trace_id: int, now: datetime | None = None
          ) -> tuple[RecallResult, list[Move]]:
    """Re-run a past trace's cue with today's settings and store; what moved, by source."""
    old = get_trace(store, trace_id)
    if old.origin != "lca-tui":
        raise ValueError(f"trace {trace_id} came from a harness event; its settings are "
                         "not lca-tui's, so it cannot be re-run as such")
    new = recall(store, old.query, old.role, old.project, old.channel, old.historical,
                 now=now, rerun_of=old.id)
    return new, compare(old, new.trace)


def compare(old: Trace, new: Trace) -> list[Move]:
    """Moves between two traces, keyed by source; in the new trace's order, then dropped."""
    def key(c: Candidate) -> tuple[str, int | None]:
        return (c.source_type, c.source_id)

    before = {key(c): c for c in old.candidates}
    after = {key(c): c for c in new.candidates}
    old_spans, new_spans = _tie_spans(old.candidates), _tie_spans(new.candidates)
    moves = []
    for k in list(after) + [k for k in before if k not in after]:
        a, b = before.get(k), after.get(k)
        ref = b or a
        assert ref is not None
        tie_only = (a is not None and b is not None and a.rank != b.rank
                    and _same_score(a.score, b.score)
                    and old_spans.get(a.rank) == new_spans.get(b.rank))
        moves.append(Move(ref.pointer, a.rank if a else None, b.rank if b else None,
                          a.decision if a else None, b.decision if b else None,
                          a.score if a else None, b.score if b else None, tie_only))
    return moves


def moves_line(moves: list[Move], trace_id: int | None = None) -> str:
    """What a re-run changed, each count within its trace: ``3 of 50 candidates moved; 5
    new, 5 dropped out``. A re-run lists the sources of both traces, so a plain count of
    changed moves can pass the trace's size (``55 candidates moved`` in one of 50)."""
    both = [m for m in moves if m.old_rank is not None and m.new_rank is not None]
    new = sum(1 for m in moves if m.old_rank is None)
    gone = sum(1 for m in moves if m.new_rank is None)
    moved = sum(1 for m in both if m.changed)
    since = f" since trace {trace_id}" if trace_id is not None else ""
    if not (moved or new or gone):
        return (f"nothing moved{since}: every candidate kept its rank and decision"
                + (" (equal scores aside)" if any(m.tie_only for m in moves) else ""))
    total = len(both) + gone  # the old trace's candidates
    parts = [f"{moved} of {plural(total, 'candidate')} moved{since}"]
    if new:
        parts.append(f"{new} new")
    if gone:
        parts.append(f"{gone} dropped out")
    return "; ".join([parts[0], ", ".join(parts[1:])]) if len(parts) > 1 else parts[0]


def _same_score(x: float | None, y: float | None) -> bool:
    return x is not None and y is not None and abs(x - y) < 1e-9


def _tie_spans(candidates: list[Candidate]) -> dict[int, tuple[int, int]]:
    """rank → (first, last) rank of the candidates that share its score."""
    spans: dict[int, tuple[int, int]] = {}
    ordered = sorted(candidates, key=lambda c: c.rank)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and _same_score(ordered[j + 1].score, ordered[i].score):
            j += 1
        for c in ordered[i:j + 1]:
            spans[c.rank] = (ordered[i].rank, ordered[j].rank)
        i = j + 1
    return spans


DEMO_QUERIES = (
    ("how do we run the tests", None, "ledgerline"),
    ("where are the staging credentials", None, "ledgerline"),
    ("which database do we use for local development", None, "ledgerline"),
    ("how do we cut and deploy a release", None, None),
)


def seed_demo_traces(store: Store, queries: tuple[tuple[str, str | None, str | None], ...]
                     = DEMO_QUERIES, now: datetime | None = None,
                     progress: Progress | None = None) -> list[int]:
    """Run a few real recalls so a freshly built demo store has traces to show (``progress``
    hears ``("recording recall traces", done, total)``)."""
    out = []
    for i, (q, role, project) in enumerate(queries):
        if progress:
            progress("recording recall traces", i, len(queries))
        out.append(int(recall(store, q, role, project, now=now).trace_id or 0))
    if progress:
        progress("recording recall traces", len(queries), len(queries))
    return out
