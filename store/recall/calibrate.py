"""``lca-tui calibrate``: the distribution of S on this store, to choose the similarity floor.

The cue set is the store's own user turns (plain questions: not slash commands, not tool
output); the *answer* to a cue is the assistant text that follows it in the same session and
agent, up to the next user turn. For each cue the candidate pool is built as recall builds it
and S is computed for the best answer chunk and for every other candidate. A floor is useful
when most answers clear it and much of the rest does not; the suggested floor is the 25th
percentile of the answers' S (three answers in four pass), rounded down to 0.05.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from sqlmodel import col, select

from store.core import vec
from store.core.db import columns
from store.core.models import Chunk, Entry
from store.core.search import candidates
from store.core.vocab import percentiles

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store


def _cues(store: Store, limit: int) -> list[tuple[str, list[int]]]:
    """(question, chunk ids of its answer) for up to ``limit`` user turns with an answer."""
    with store.read() as conn:
        rows = conn.execute(
            columns(Entry.id, Entry.session_id, Entry.agent, Entry.seq, Entry.kind,
                    Entry.content)
            .where(col(Entry.kind).in_(("user", "assistant")))
            .order_by(col(Entry.session_id), col(Entry.agent), col(Entry.seq))).all()
        out: list[tuple[str, list[int]]] = []
        i = 0
        while i < len(rows) and len(out) < limit:
            r = rows[i]
            content = (r[5] or "").strip()
            if r[4] != "user" or not (12 <= len(content) <= 2000) or content.startswith("<"):
                i += 1
                continue
            answer: list[int] = []
            j = i + 1
            while j < len(rows) and rows[j][1] == r[1] and rows[j][2] == r[2] \
                    and rows[j][4] == "assistant":
                answer.append(int(rows[j][0]))
                j += 1
            if answer:
                ids = [int(c) for c in conn.execute(select(Chunk.id).where(
                    Chunk.source_type == "entry", col(Chunk.source_id).in_(answer))).scalars()]
                if ids:
                    out.append((content, ids))
            i = max(j, i + 1)
    return out


_QS = (10, 25, 50, 75, 90)


def _distribution(values: list[float]) -> dict[str, float | None]:
    """``n`` and p10 … p90 (with max and mean) of ``values``; None for each when empty."""
    if not values:
        return {k: None for k in ("n", *(f"p{q}" for q in _QS), "max", "mean")}
    return {"n": float(len(values)), **percentiles(values, _QS)}


@dataclass(frozen=True)
class Calibration:
    """What ``calibrate`` measured: the model, how many cues (user turns with an answer) and
    for how many the answer was in the pool, the percentiles (``n``, p10 … p90) of S for the
    answers, of their cosine part, and of S for every other candidate, and the floor the
    answers' p25 suggests against the current one."""

    model: str
    degraded: bool
    cues: int
    answers_in_pool: int
    cos_weight: float
    answer_S: dict[str, float | None]  # noqa: N815 - the JSON key
    answer_cos: dict[str, float | None]
    other_S: dict[str, float | None]  # noqa: N815 - the JSON key
    suggested_floor: float | None
    others_above_floor: float | None
    current_floor: float

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def calibrate(store: Store, limit: int = 200) -> Calibration:
    """Percentiles of S (and of its cosine part) for answers and for other candidates."""
    w = float(store.settings["recall.cos_weight"])
    pool = int(store.settings["recall.pool"])
    cues = _cues(store, limit)
    answer_s: list[float] = []
    answer_cos: list[float] = []
    other_s: list[float] = []
    in_pool = 0
    for question, answer_ids in cues:
        qvec = store.embedder.embed([question])[0]
        with store.read() as conn:
            found = candidates(conn, question, qvec, pool, store.embedder.name)
            best_s, best_cos = -1.0, -1.0
            for cid in answer_ids:
                cos, lex = found.get(cid, (None, 0.0))
                if cos is None:
                    v = vec.vector_of(conn, cid)
                    cos = float(v @ qvec) if v is not None else 0.0
                s = w * cos + (1 - w) * lex
                if s > best_s:
                    best_s, best_cos = s, cos
            in_pool += any(cid in found for cid in answer_ids)
            own = {int(c) for c in conn.execute(select(Chunk.id).where(
                Chunk.source_type == "entry", Chunk.text == question)).scalars()}
        answer_s.append(best_s)
        answer_cos.append(best_cos)
        answer_set = set(answer_ids)
        other_s.extend(w * (cos or 0.0) + (1 - w) * lex for cid, (cos, lex) in found.items()
                       if cid not in answer_set and cid not in own)
    answers = _distribution(answer_s)
    p25 = answers["p25"]
    floor = math.floor(p25 * 20) / 20 if p25 is not None else None
    passing = (sum(1 for s in other_s if floor is not None and s >= floor) / len(other_s)
               if other_s else None)
    return Calibration(store.embedder.name, bool(store.embedder.degraded), len(cues), in_pool,
                       w, answers, _distribution(answer_cos), _distribution(other_s), floor,
                       None if passing is None else round(passing, 3),
                       float(store.settings["recall.floor"]))
