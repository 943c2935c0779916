"""Context pressure interpreted from stored entries (a deriver, see ``store.core.derive``).

- Claude Code: one ``turn`` snapshot per assistant message id and agent, used = input +
  cache-creation + cache-read tokens (streamed replies repeat the id; a message whose lines
  fall in two write batches updates its snapshot instead of adding one); messages reporting
  no usage at all (zero) are not snapshots. Window and thresholds are left to the settings.
  A ``compact_boundary`` is a compaction with its ``preTokens``, linked to the summary entry
  that follows it (whichever of the two is written first).
- MindStone-Agent events: ``context_window_pruned`` → a ``prune`` snapshot and a prune event
  linked to the stored entries that left (by their line id, ``meta.id``);
  ``auto_compact_warning`` → a ``turn`` snapshot (a handoff it wrote is recorded as a handoff,
  not as a checkpoint: a handoff is not archive + index); ``auto_compact_required`` → a
  ``compaction`` snapshot and a compaction; a ``handoff{written, path}`` in either → a
  handoff; ``handoff_replayed`` → a handoff replayed.
"""

from __future__ import annotations

import json
import math
from typing import Any

from sqlalchemy import Connection, and_, delete, func, or_, update
from sqlmodel import col, select

from store.context.api import insert_compaction, insert_handoff, insert_prune, insert_snapshot
from store.context.models import Compaction as CompactionRow
from store.context.models import ContextSnapshot, Handoff, PruneEvent
from store.core.db import columns
from store.core.models import Entry
from store.core.version import CODE_VERSION

WRITER = ("lca-tui:context-derive", CODE_VERSION)
MAX_FIGURE = 10**9  # token figures and counts are below a billion (store.context.validate)
_MINDSTONE = ("context_window_pruned", "auto_compact_warning", "auto_compact_required",
              "handoff_replayed")
# What a deriver row needs of an entry (``when`` is its time, else when it was written).
_COLS = columns(Entry.id, Entry.session_id, Entry.agent, Entry.seq,
                func.coalesce(col(Entry.ts), col(Entry.created_at)).label("when"), Entry.kind,
                Entry.message_id, Entry.meta, Entry.content)
_WHERE = or_(
    and_(col(Entry.message_id).is_not(None),
         func.json_extract(col(Entry.meta), "$.usage").is_not(None)),
    col(Entry.kind) == "compaction",
    and_(col(Entry.kind) == "event",
         func.json_extract(col(Entry.meta), "$.event").in_(_MINDSTONE)))


def _int(value: Any) -> int | None:
    """A token figure or count read from stored meta, or None when it is not a finite number
    from 0 below ``MAX_FIGURE`` (``1e400`` parses as infinity, ``NaN`` has no integer, and a
    store written before the importers checked these may hold either)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if not 0 <= value < MAX_FIGURE:
        return None
    return int(value)


def _percent_of(window: int | None, percent: Any) -> int | None:
    if window is None or isinstance(percent, bool) or not isinstance(percent, int | float):
        return None
    if not math.isfinite(percent) or not 0 <= percent <= 100:
        return None
    return round(window * float(percent) / 100)


def _rows(conn: Connection, entry_ids: list[int] | None) -> list[Any]:
    ordered = _COLS.where(_WHERE).order_by(col(Entry.id))
    if entry_ids is None:
        return list(conn.execute(ordered).all())
    rows: list[Any] = []
    ids = sorted(entry_ids)
    for i in range(0, len(ids), 500):
        rows += conn.execute(ordered.where(col(Entry.id).in_(ids[i:i + 500]))).all()
    return rows


def _clear(conn: Connection) -> None:
    for model in (CompactionRow, PruneEvent, Handoff, ContextSnapshot):
        conn.execute(delete(model).where(col(model.source_entry_id).is_not(None)))


def derive(conn: Connection, entry_ids: list[int] | None) -> dict[str, int]:
    """Interpret ``entry_ids`` (or, with None, every stored entry after clearing)."""
    if entry_ids is None:
        _clear(conn)
    counts = {"context.snapshots": 0, "context.prunes": 0, "context.compactions": 0,
              "context.handoffs": 0}
    for row in _rows(conn, entry_ids):
        meta = json.loads(row[7]) if row[7] else {}
        if not isinstance(meta, dict):
            continue
        if row[5] == "event":
            _mindstone(conn, row, meta, counts)
        elif row[5] == "compaction":
            _claude_compaction(conn, row, meta, counts)
        if isinstance(meta.get("usage"), dict) and row[6]:
            _claude_usage(conn, row, meta["usage"], counts)
    return {k: v for k, v in counts.items() if v}


def _claude_usage(conn: Connection, row: Any, usage: dict[str, Any],
                  counts: dict[str, int]) -> None:
    used = sum(_int(usage.get(k)) or 0 for k in
               ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    if used <= 0:
        return
    known = conn.execute(select(ContextSnapshot.id).where(
        ContextSnapshot.session_id == row[1], ContextSnapshot.agent == row[2],
        ContextSnapshot.message_id == row[6])).first()
    insert_snapshot(conn, WRITER, session_id=row[1], agent=row[2], ts=row[4], used_tokens=used,
                    event="turn", source_entry_id=int(row[0]), message_id=row[6])
    if known is None:
        counts["context.snapshots"] += 1


def _claude_compaction(conn: Connection, row: Any, meta: dict[str, Any],
                       counts: dict[str, int]) -> None:
    entry_id, session_id, agent, seq = int(row[0]), row[1], row[2], int(row[3])
    if meta.get("boundary"):
        taken = select(CompactionRow.id).where(
            col(CompactionRow.summary_entry_id) == col(Entry.id))
        summary = conn.execute(select(Entry.id).where(
            Entry.session_id == session_id, Entry.agent == agent, Entry.kind == "compaction",
            col(Entry.seq) > seq, func.json_type(col(Entry.meta), "$.summary") == "true",
            ~taken.exists()).order_by(col(Entry.seq)).limit(1)).scalar()
        insert_compaction(conn, WRITER, session_id=session_id, agent=agent, ts=row[4],
                          pre_tokens=_int(meta.get("preTokens")),
                          trigger=meta.get("trigger") and str(meta.get("trigger")),
                          summary_entry_id=summary, source_entry_id=entry_id)
        counts["context.compactions"] += 1
    elif meta.get("summary"):
        if conn.execute(select(CompactionRow.id).where(
                CompactionRow.summary_entry_id == entry_id)).first() is not None:
            return  # this summary is linked already
        boundary = conn.execute(
            select(CompactionRow.id)
            .join(Entry, col(Entry.id) == col(CompactionRow.source_entry_id))
            .where(CompactionRow.session_id == session_id, CompactionRow.agent == agent,
                   col(CompactionRow.summary_entry_id).is_(None), col(Entry.seq) < seq)
            .order_by(col(Entry.seq).desc()).limit(1)).scalar()
        if boundary is not None:
            conn.execute(update(CompactionRow).where(col(CompactionRow.id) == boundary)
                         .values(summary_entry_id=entry_id))


def _stored_by_ref(conn: Connection, session_id: str, refs: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    line_id = func.json_extract(col(Entry.meta), "$.id")
    for i in range(0, len(refs), 500):
        for eid, ref in conn.execute(select(col(Entry.id), line_id).where(
                Entry.session_id == session_id, line_id.in_(refs[i:i + 500]))):
            found.setdefault(str(ref), int(eid))
    return found


def _mindstone(conn: Connection, row: Any, meta: dict[str, Any],
               counts: dict[str, int]) -> None:
    event = meta.get("event")
    raw = meta.get("metadata")
    md: dict[str, Any] = raw if isinstance(raw, dict) else {}
    entry_id, session_id, agent, ts = int(row[0]), row[1], row[2], row[4]
    common: dict[str, Any] = {"session_id": session_id, "agent": agent, "ts": ts,
                              "source_entry_id": entry_id}
    window = _int(md.get("contextWindowTokens"))
    if event == "context_window_pruned":
        raw_refs = md.get("prunedEntryIds")
        refs = [str(r) for r in raw_refs if r is not None] if isinstance(raw_refs, list) else []
        stored = _stored_by_ref(conn, session_id, refs)
        n = _int(md.get("prunedEntries"))
        n = len(refs) if n is None else n
        claimed = md.get("preserved")
        preserved = (claimed if isinstance(claimed, bool)
                     else True if "transcript preserved" in str(row[8]).lower() else None)
        verified = bool(refs) and len(stored) == len(set(refs)) and len(set(refs)) >= n
        after = _int(md.get("tokensAfter"))
        snap = insert_snapshot(conn, WRITER, used_tokens=after or 0, window_tokens=window,
                               event="prune", **common)
        insert_prune(conn, WRITER, snapshot_id=snap, tokens_before=_int(md.get("tokensBefore")),
                     tokens_after=after, entries_pruned=n, preserved=preserved,
                     verified=verified, mode=md.get("mode") and str(md.get("mode")),
                     links=[(r, stored.get(r)) for r in refs], **common)
        counts["context.snapshots"] += 1
        counts["context.prunes"] += 1
    elif event in ("auto_compact_warning", "auto_compact_required"):
        raw_h = md.get("handoff")
        handoff: dict[str, Any] = raw_h if isinstance(raw_h, dict) else {}
        handoff_id = None
        if handoff.get("written") is True:
            handoff_id = insert_handoff(conn, WRITER, action="written",
                                        path=handoff.get("path") and str(handoff["path"]),
                                        **common)
            counts["context.handoffs"] += 1
        required = event == "auto_compact_required"
        tokens = _int(md.get("tokens"))
        kind = "compaction" if required else "turn"
        if tokens is not None:
            insert_snapshot(conn, WRITER, used_tokens=tokens, window_tokens=window,
                            checkpoint_threshold=_percent_of(window,
                                                             md.get("checkpointWarningPercent")),
                            auto_compact_threshold=_percent_of(window,
                                                               md.get("compactTargetPercent")),
                            event=kind, **common)
            counts["context.snapshots"] += 1
        if required:
            insert_compaction(conn, WRITER, pre_tokens=tokens,
                              trigger=str(md.get("action") or "auto"), handoff_id=handoff_id,
                              **common)
            counts["context.compactions"] += 1
    elif event == "handoff_replayed":
        raw_r = md.get("handoff")
        replayed: dict[str, Any] = raw_r if isinstance(raw_r, dict) else {}
        insert_handoff(conn, WRITER, action="replayed",
                       path=replayed.get("path") and str(replayed["path"]),
                       sha256=replayed.get("sha256") and str(replayed["sha256"]),
                       token_estimate=_int(replayed.get("tokenEstimate")), **common)
        counts["context.handoffs"] += 1
