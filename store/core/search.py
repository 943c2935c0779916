"""Search over the index: FTS5 BM25, vector KNN, or the hybrid of both.

The hybrid score is DESIGN's S term: ``w·cos + (1−w)·lex`` with ``lex`` the BM25 score divided
by the best BM25 score among the hits. Searches are probes: they write nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, and_, func
from sqlmodel import col, select

from store.core import vec
from store.core.db import columns
from store.core.models import Chunk, Entry, Memory
from store.core.records import SearchHit

if TYPE_CHECKING:
    import numpy as np
    from store.core.base import StoreBase as Store

MODES = ("hybrid", "fts", "semantic")
SECRET_MASK = "[secret memory: text withheld]"
SECRET_ENTRY_MASK = "[secret entry: text withheld]"
COS_WEIGHT = 0.7


def candidates(conn: Connection, query: str, qvec: np.ndarray | None, pool: int,
               model: str | None = None) -> dict[int, tuple[float | None, float]]:
    """chunk id → (cos, lex) for the union of KNN and FTS hits (cos None without a vector).

    With ``model``, a cosine is kept only for chunks that model embedded: vectors from another
    embedder live in another space, and comparing across spaces would be noise.
    """
    out: dict[int, tuple[float | None, float]] = {}
    fts = vec.fts_search(conn, query, pool)
    best = max((s for _, s in fts), default=0.0)
    lex = {cid: (s / best if best > 0 else 0.0) for cid, s in fts}
    cos: dict[int, float] = {}
    if qvec is not None:
        cos.update(vec.knn(conn, qvec, pool))
        missing = vec.vectors_of(conn, [cid for cid in lex if cid not in cos])
        for cid, v in missing.items():
            cos[cid] = float(v @ qvec)
    if model is not None and cos:
        same = set(conn.execute(select(Chunk.id).where(
            col(Chunk.id).in_(list(cos)), Chunk.model == model)).scalars())
        cos = {c: v for c, v in cos.items() if c in same}
    for cid in set(cos) | set(lex):
        out[cid] = (cos.get(cid), lex.get(cid, 0.0))
    return out


def _describe(conn: Connection, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    """chunk id → (source type, source id, text, session, seq, kind, agent, memory name,
    sensitivity) for the hits shown."""
    if not ids:
        return {}
    rows = conn.execute(
        columns(Chunk.id, Chunk.source_type, Chunk.source_id, Chunk.text, Entry.session_id,
                Entry.seq, Entry.kind, Entry.agent, Memory.name,
                func.coalesce(col(Memory.sensitivity), col(Entry.sensitivity)))
        .outerjoin(Entry, and_(col(Chunk.source_type) == "entry",
                               col(Entry.id) == col(Chunk.source_id)))
        .outerjoin(Memory, and_(col(Chunk.source_type) == "memory",
                                col(Memory.id) == col(Chunk.source_id)))
        .where(col(Chunk.id).in_(ids))).all()
    return {int(r[0]): tuple(r[1:]) for r in rows}


def _waiting(conn: Connection, query: str, pool: int,
             found: dict[int, tuple[float | None, float]]) -> dict[int, float]:
    """entry id → lex for entries waiting for embedding (their own FTS index), lex relative
    to the best BM25 of the query in either index."""
    waiting = vec.waiting_search(conn, query, pool)
    if not waiting:
        return {}
    chunk_best = max((s for _, s in vec.fts_search(conn, query, 1)), default=0.0)
    best = max([chunk_best] + [s for _, s in waiting])
    return {eid: (s / best if best > 0 else 0.0) for eid, s in waiting}


def _describe_waiting(conn: Connection, entry_ids: list[int]) -> dict[int, tuple[Any, ...]]:
    """Like ``_describe`` for entries waiting for embedding (no chunk yet), keyed by
    -entry id."""
    if not entry_ids:
        return {}
    rows = conn.execute(
        columns(Entry.id, Entry.content, Entry.session_id, Entry.seq, Entry.kind, Entry.agent,
                Entry.sensitivity).where(col(Entry.id).in_(entry_ids))).all()
    return {-int(r[0]): ("entry", int(r[0]), r[1], r[2], r[3], r[4], r[5], None, r[6])
            for r in rows}


def search(store: Store, query: str, limit: int = 10, mode: str = "hybrid") -> list[SearchHit]:
    if mode not in MODES:
        raise ValueError(f"search mode must be one of {', '.join(MODES)}")
    if not query.strip():
        raise ValueError("nothing to search for: give the text to search (an empty query "
                         "would match everything)")
    pool = max(limit * 5, 50)
    qvec = store.embedder.embed([query])[0] if mode != "fts" else None
    with store.read() as conn:
        found = candidates(conn, query, qvec, pool, store.embedder.name)
        waiting = _waiting(conn, query, pool, found) if mode != "semantic" else {}
        scored: list[tuple[float, int, float | None, float]] = []
        for eid, lex in waiting.items():  # stored, not embedded yet: found by FTS alone
            scored.append((lex if mode == "fts" else (1 - COS_WEIGHT) * lex, -eid, None, lex))
        for cid, (cos, lex) in found.items():
            if mode == "fts":
                if lex <= 0:
                    continue
                score = lex
            elif mode == "semantic":
                if cos is None:
                    continue
                score = cos
            else:
                score = COS_WEIGHT * (cos or 0.0) + (1 - COS_WEIGHT) * lex
            scored.append((score, cid, cos, lex))
        scored.sort(key=lambda t: (-t[0], t[1]))
        top = scored[:limit]
        info = _describe(conn, [cid for _, cid, _, _ in top if cid > 0])
        info.update(_describe_waiting(conn, [-cid for _, cid, _, _ in top if cid < 0]))
    hits = []
    for score, cid, cos, lex in top:
        if cid not in info:
            continue  # gone since the index was read (erased mid-search)
        st, sid, body, session_id, seq, kind, agent, name, sensitivity = info[cid]
        masked = sensitivity == "secret"  # found, but its text is not shown until revealed
        mask = SECRET_MASK if st == "memory" else SECRET_ENTRY_MASK
        hits.append(SearchHit(cid if cid > 0 else None, st, int(sid), mask if masked else body,
                              round(score, 6), None if cos is None else round(cos, 6),
                              round(lex, 6), session_id, seq, kind, agent, name, masked))
    return hits
