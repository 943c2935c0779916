"""Recall traces derived from MindStone-Agent ``memory_recall_injected`` events.

Such an event carries ``{query, hitCount, promptTokens, diagnostics, hits: [{id, chunkId,
title, score, providerScore, recallMode, scri}]}``: what the harness injected, with its own
score. The trace keeps exactly that: no six terms (the harness computes none of LCA's E, T, A,
Q, K), every hit decided ``injected``, and the harness's own figures per hit (score,
providerScore, scri, recallMode) in the trace's settings under ``hits`` — never in the cosine
column, which holds only cosines lca-tui computed. A hit whose id or
title names a memory in this store points at it (and is masked if that memory is secret).
These traces are derived records: ``reindex`` deletes and rebuilds them.
"""

from __future__ import annotations

import json
import math
from typing import Any

from sqlalchemy import Connection, delete, func, or_
from sqlmodel import col, select

from store.core.db import orm
from store.core.models import Entry, Memory
from store.recall.models import RecallTrace
from store.recall.traces import EXCERPT_CHARS, Candidate, Trace, insert_trace
from store.core.timeutil import normalise_iso, now_iso
from store.core.version import CODE_VERSION

EVENT = "memory_recall_injected"
WRITER = "lca-tui:recall-events"


def _number(value: Any) -> float | None:
    """A finite number as given, else None (an integer too large for a float, NaN, ...)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _scalar(value: Any) -> str | float | None:
    """A hit's number or short label as given (anything else: None)."""
    if isinstance(value, str):
        return value[:80]
    return _number(value)


def _memory_for(conn: Connection, hit: dict[str, Any]) -> tuple[int, str] | None:
    """(memory id, sensitivity) of the stored memory a hit names, if any."""
    ident = str(hit.get("id") or "").strip()
    title = str(hit.get("title") or "").strip()
    if not ident and not title:
        return None
    stem = ident.rsplit("/", 1)[-1]
    stem = stem.removesuffix(".md")
    names = []
    if title:
        names.append(col(Memory.name) == title)
    if stem:
        names += [col(Memory.name) == stem,
                  col(Memory.source_file).endswith(f"/{stem}.md", autoescape=True)]
    with orm(conn) as s:
        row = s.exec(select(Memory.id, Memory.sensitivity).where(or_(*names))
                     .order_by(col(Memory.id)).limit(1)).first()
    return (int(row[0]), str(row[1])) if row and row[0] is not None else None


def trace_from_event(conn: Connection, entry_id: int, ts: str | None, meta: dict[str, Any]
                     ) -> Trace | None:
    """The trace a ``memory_recall_injected`` event describes, or None if it is not one."""
    raw_md = meta.get("metadata")
    md: dict[str, Any] = raw_md if isinstance(raw_md, dict) else {}
    raw_hits = md.get("hits")
    hits: list[Any] = raw_hits if isinstance(raw_hits, list) else []
    query = str(md.get("query") or "")
    settings = {"source": "mindstone-agent", "hitCount": md.get("hitCount"),
                "promptTokens": md.get("promptTokens"), "diagnostics": md.get("diagnostics"),
                "runId": meta.get("runId"), "sessionKey": meta.get("sessionKey")}
    cands = []
    figures: list[dict[str, Any]] = []
    for i, hit in enumerate(h for h in hits if isinstance(h, dict)):
        found = _memory_for(conn, hit)
        secret = found is not None and found[1] == "secret"
        title = None if hit.get("title") is None else str(hit.get("title"))
        mode = hit.get("recallMode")
        provider = _number(hit.get("providerScore"))
        figures.append({"rank": i + 1, "score": _number(hit.get("score")),
                        "providerScore": provider, "scri": _scalar(hit.get("scri")),
                        "recallMode": _scalar(mode)})
        reason = "injected by the harness"
        if mode:
            reason += f" (recall mode {mode})"
        if provider is not None:
            reason += f"; harness provider score {provider:.3f}"
        if secret:
            reason += "; names a secret memory: text withheld"
        cands.append(Candidate(
            rank=i + 1, source_type="memory" if found else "external",
            source_id=found[0] if found else None, decision="injected", reason=reason,
            score=_number(hit.get("score")), cos=None, label=None if secret else title,
            excerpt=None if secret or title is None else title[:EXCERPT_CHARS], masked=secret,
            external_id=str(hit.get("id") or hit.get("chunkId") or "") or None,
            kind="memory", harness={k: v for k, v in figures[-1].items() if k != "rank"}))
    settings["hits"] = figures
    return Trace(None, normalise_iso(ts) or now_iso(), query, None, None, "private", False,
                 settings, None, None, False, origin="mindstone-event", entry_id=entry_id,
                 considered=len(cands), injected=len(cands), candidates=cands)


def derive(conn: Connection, entry_ids: list[int] | None) -> dict[str, int]:
    """Traces for new ``memory_recall_injected`` entries; all of them when ``entry_ids`` is
    None (reindex), after deleting the ones derived before."""
    query = select(Entry.id, Entry.ts, Entry.meta).where(
        Entry.kind == "event", func.json_extract(col(Entry.meta), "$.event") == EVENT)
    if entry_ids is None:
        conn.execute(delete(RecallTrace).where(col(RecallTrace.origin) == "mindstone-event"))
    else:
        if not entry_ids:
            return {}
        query = query.where(col(Entry.id).in_(entry_ids))
    made = 0
    for entry_id, ts, raw in conn.execute(query.order_by(col(Entry.id))).all():
        try:
            meta = json.loads(raw or "{}")
        except ValueError:
            continue
        if not isinstance(meta, dict):
            continue
        trace = trace_from_event(conn, int(entry_id), ts, meta)
        if trace is not None:
            insert_trace(conn, trace, WRITER, CODE_VERSION)
            made += 1
    return {"recall_events.traces": made}
