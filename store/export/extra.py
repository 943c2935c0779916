"""The history an export carries besides transcripts and memories: checkpoints and lca-tui's
own recall traces (with their candidates and feedback), and restoring them on import.

What the derivers rebuild from entries (context snapshots from usage, prune events,
compactions, traces of ``memory_recall_injected`` events) is not exported: importing the
transcripts derives it again. Checkpoints are exported with every column but their id (the
session by its id); a trace keeps its settings, timing and every candidate, whose pointer is
re-linked on import (a memory by its manifest ref, an entry by its idempotency key; a chunk
pointer is dropped, chunks are rebuilt). A masked candidate (secret or policy-filtered) has no
text in the store and none in the export; in a scoped export a candidate pointing outside the
scope loses its excerpt and label too. Restoring is idempotent: a checkpoint is found again
by its idempotency key (else by all its columns), a trace by its time, query and settings.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, and_
from sqlmodel import col, select

from store.core.db import orm
from store.core.models import Checkpoint, Entry
from store.core.models import Session as SessionRow
from store.core.erasure import erased
from store.recall.traces import (
    Candidate,
    Trace,
    add_feedback,
    candidates_of,
    feedback_of,
    find_trace,
    insert_trace,
    read_traces,
)

# What an exported checkpoint carries: every column but its id and session (named by its
# id instead) and who wrote it here (the importer stamps itself).
_CHECKPOINT_SKIP = {"id", "session_id", "writer", "writer_version", "created_at"}
CHECKPOINT_FIELDS = [k for k in Checkpoint.model_fields if k not in _CHECKPOINT_SKIP]


def checkpoints(conn: Connection, sids: list[str] | None) -> list[dict[str, Any]]:
    """Checkpoints of the sessions (every checkpoint when ``sids`` is None)."""
    query = select(Checkpoint)
    if sids is not None:
        query = query.where(col(Checkpoint.session_id).in_(sids))
    with orm(conn) as s:
        rows = s.exec(query.order_by(col(Checkpoint.ts), col(Checkpoint.id))).all()
    return [{"session": r.session_id, **{k: getattr(r, k) for k in CHECKPOINT_FIELDS},
             "writer": r.writer, "writer_version": r.writer_version} for r in rows]


def _entry_pointer(conn: Connection, entry_id: int | None) -> dict[str, Any] | None:
    if entry_id is None:
        return None
    with orm(conn) as s:
        row = s.get(Entry, entry_id)
    return None if row is None else {"session": row.session_id, "seq": row.seq,
                                     "idem_key": row.idem_key}


def traces(conn: Connection, sids: list[str] | None, mids: list[int]) -> list[dict[str, Any]]:
    """lca-tui's recall traces; with ``sids`` (a scoped export) only those with a candidate
    in the scope, and out-of-scope candidates without text."""
    out: list[dict[str, Any]] = []
    for trace in read_traces(conn, origin="lca-tui", newest_first=False):
        assert trace.id is not None
        feedback: dict[int, list[dict[str, str]]] = {}
        for cid, kind, ts in feedback_of(conn, trace.id):
            feedback.setdefault(cid, []).append({"kind": kind, "ts": ts})
        cands = candidates_of(conn, trace.id)
        records, in_scope = [], sids is None
        for c in cands:
            inside = sids is None or (c.source_type == "memory" and c.source_id in mids) or (
                c.source_type == "entry" and c.session_id in sids)
            in_scope = in_scope or inside
            pointer = (_entry_pointer(conn, c.source_id) if c.source_type == "entry"
                       else None)
            records.append({
                "rank": c.rank, "source_type": c.source_type, "source_id": c.source_id,
                "entry": pointer, "decision": c.decision, "reason": c.reason,
                "score": c.score, "terms": c.terms, "cos": c.cos, "lex": c.lex, "adj": c.adj,
                "contributions": c.contributions,
                "excerpt": c.excerpt if inside and not c.masked else None,
                "label": c.label if inside and not c.masked else None, "masked": c.masked,
                "session_id": c.session_id, "seq": c.seq, "kind": c.kind,
                "external_id": c.external_id, "hits": c.hits, "prevented": c.prevented,
                "feedback": feedback.get(int(c.id or 0), [])})
        if in_scope:
            record = trace.to_json()
            record.pop("candidates")
            record["ref"] = record.pop("trace_id")
            record["candidates"] = records
            out.append(record)
    return out


def restore_checkpoints(conn: Connection, records: list[Any], who: tuple[str, str, str]
                        ) -> int:
    """Insert the checkpoints not already here; returns how many were added."""
    added = 0
    with orm(conn) as s:
        for record in records:
            if not isinstance(record, dict) or not record.get("ts"):
                continue
            row: dict[str, Any] = {k: record.get(k) for k in CHECKPOINT_FIELDS if k in record}
            sid = record.get("session")
            if sid is not None and s.get(SessionRow, sid) is None:
                sid = None
            row["session_id"] = sid
            if row.get("idem_key"):
                same = col(Checkpoint.idem_key) == row["idem_key"]
            else:
                same = and_(*(col(getattr(Checkpoint, k)).is_not_distinct_from(v)
                              for k, v in row.items()))
            if s.exec(select(Checkpoint.id).where(same)).first() is not None:
                continue
            s.add(Checkpoint(**row, writer=who[0], writer_version=who[1], created_at=who[2]))
            s.flush()
            added += 1
    return added


def _restored_candidate(conn: Connection, c: dict[str, Any], memories: dict[int, int],
                        erased_refs: set[int]) -> tuple[Candidate, list[dict[str, str]]]:
    source_id, seq = c.get("source_id"), c.get("seq")
    gone = False  # its source was erased here: its text is not brought back
    if c.get("source_type") == "memory":
        gone = source_id is not None and int(source_id) in erased_refs
        source_id = memories.get(int(source_id)) if source_id is not None else None
    elif c.get("source_type") == "entry":
        pointer = c.get("entry")
        key = pointer.get("idem_key") if isinstance(pointer, dict) else None
        with orm(conn) as s:
            row = s.exec(select(Entry.id, Entry.seq).where(Entry.idem_key == key)).first()
        source_id, seq = (row[0], row[1]) if row else (None, seq)
        gone = row is None and bool(key) and bool(erased(conn, "entry", [str(key)]))
    cand = Candidate(
        rank=int(c["rank"]), source_type=str(c.get("source_type")), source_id=source_id,
        decision=str(c.get("decision")), reason=str(c.get("reason") or ""),
        score=c.get("score"), terms=dict(c.get("terms") or {}), cos=c.get("cos"),
        lex=c.get("lex"), adj=c.get("adj"), contributions=dict(c.get("contributions") or {}),
        excerpt=None if gone else c.get("excerpt"), label=None if gone else c.get("label"),
        masked=gone or bool(c.get("masked")),
        session_id=c.get("session_id"), seq=seq, kind=c.get("kind"),
        external_id=c.get("external_id"), hits=c.get("hits"), prevented=c.get("prevented"))
    return cand, [f for f in c.get("feedback") or [] if isinstance(f, dict)]


def restore_traces(conn: Connection, records: list[Any], memories: dict[int, int],
                   who: tuple[str, str, str], erased_refs: set[int] | None = None) -> int:
    """Insert the traces not already here (memory refs re-linked through ``memories``).

    A trace erased here earlier (its erasure fingerprint) is not restored; a candidate whose
    entry, or whose memory (a ref in ``erased_refs``), was erased keeps no text."""
    refs: dict[int, int] = {}
    added = 0
    for r in records:
        if not isinstance(r, dict) or not r.get("ts") or r.get("query") is None:
            continue
        settings = json.dumps(r.get("settings") or {}, sort_keys=True)
        if erased(conn, "trace", [f"{r['ts']}|{r['query']}"]):
            continue
        found = find_trace(conn, "lca-tui", r["ts"], r["query"], settings)
        if found is not None:
            refs[int(r.get("ref") or 0)] = found
            continue
        pairs = [_restored_candidate(conn, c, memories, erased_refs or set())
                 for c in r.get("candidates") or []
                 if isinstance(c, dict) and c.get("rank") is not None]
        trace = Trace(
            None, r["ts"], r["query"], r.get("role"), r.get("project"),
            str(r.get("channel") or "private"), bool(r.get("historical")),
            dict(r.get("settings") or {}), r.get("latency_ms"), r.get("model"),
            bool(r.get("degraded")), "lca-tui", None,
            refs.get(int(r["rerun_of"])) if r.get("rerun_of") is not None else None,
            int(r.get("considered") or 0), int(r.get("injected") or 0),
            [cand for cand, _ in pairs])
        trace_id = insert_trace(conn, trace, who[0], who[1])
        refs[int(r.get("ref") or 0)] = trace_id
        by_rank = {c.rank: c.id for c in candidates_of(conn, trace_id) if c.id is not None}
        for cand, fb in pairs:
            candidate_id = by_rank.get(cand.rank)
            if candidate_id is None:
                continue
            for item in fb:
                kind, ts = item.get("kind"), item.get("ts")
                if isinstance(kind, str) and isinstance(ts, str):
                    add_feedback(conn, trace_id, candidate_id, kind, ts, who)
        added += 1
    return added
