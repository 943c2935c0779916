"""Checkpoint and compaction signals: checkpoints reported ok that embedded nothing, compactions
no checkpoint preceded, and checkpoint thresholds not below the harness's auto-compact
threshold. Thresholds are the ones snapshots stored (what the harness reported), never this
process's settings."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func
from sqlmodel import col, select

from store.context.models import ContextSnapshot
from store.context.series import compactions_without_checkpoint
from store.core.models import Checkpoint, Entry, Session
from store.core.timeutil import to_iso
from store.governance.consolidate import TRIGGER as CONSOLIDATION
from store.health.records import Row, SignalResult
from store.core.vocab import plural
from store.health.registry import ScanContext, result, signal
from store.health.signals_index import BLANK


def _new_work(ctx: ScanContext, cp: Checkpoint) -> int:
    """The indexable entries an embedding checkpoint had to embed.

    For a checkpoint the store saw run (``source`` harness: the hooks, ``record_checkpoint``):
    the entries with indexable text of its session (of any session for a store-wide one)
    stored after the previous embedding checkpoint of the same scope was stored, up to this
    one — the store's clock (``created_at``), as the hook counts its own; blank entries (empty
    tool results, whitespace-only turns) have nothing to embed and are not new work, whatever
    ``entries_added`` says. A checkpoint imported from another system's log (``LOG.md``) ran
    where the store could not see it: what it reported is all there is."""
    if cp.source != "harness":
        return cp.entries_added
    same = (col(Checkpoint.session_id) == cp.session_id if cp.session_id is not None
            else col(Checkpoint.session_id).is_(None))
    previous = ctx.conn.execute(
        select(func.max(col(Checkpoint.created_at))).where(
            same, col(Checkpoint.id) < cp.id, col(Checkpoint.trigger) != CONSOLIDATION)).scalar()
    query = select(func.count()).select_from(Entry).where(
        col(Entry.created_at) <= cp.created_at, func.trim(col(Entry.content), BLANK) != "")
    if cp.session_id is not None:
        query = query.where(col(Entry.session_id) == cp.session_id)
    if previous is not None:
        query = query.where(col(Entry.created_at) > previous)
    return int(ctx.conn.execute(query).scalar_one())


@signal("checkpoint_noop", "checkpoints reported ok that embedded nothing although new "
        "entries existed")
def checkpoint_noop(ctx: ScanContext) -> SignalResult:
    """Embedding checkpoints only: the consolidation pass's checkpoints record what it read
    for proposals and never embed (``chunks_embedded`` is always 0 there)."""
    days = int(ctx.setting("health.checkpoint_noop_days"))
    cutoff = to_iso(ctx.now - timedelta(days=days))
    candidates = ctx.orm().exec(
        select(Checkpoint).where(col(Checkpoint.status) == "ok",
                                 col(Checkpoint.chunks_embedded) == 0,
                                 col(Checkpoint.trigger) != CONSOLIDATION)
        .order_by(col(Checkpoint.ts).desc(), col(Checkpoint.id).desc())).all()
    recent: list[Row] = []
    older: list[Row] = []
    for cp in candidates:
        entries = _new_work(ctx, cp)
        if not (entries or cp.memories_written):
            continue  # its trigger had nothing new to embed
        seen = "entries added" if cp.source != "harness" else "new indexable entries stored"
        what = [f"{entries:,} {seen}" if entries else "",
                f"{cp.memories_written:,} memories written" if cp.memories_written else ""]
        note = (f"{cp.ts[:16].replace('T', ' ')} {cp.trigger} by {cp.writer} "
                f"{cp.writer_version}: ok, 0 chunks embedded, "
                + ", ".join(w for w in what if w))
        (recent if cp.ts >= cutoff else older).append(Row("checkpoint", int(cp.id or 0), note))
    n = len(recent)
    status = "fail" if recent else ("warn" if older else "ok")
    if recent or older:
        explanation = (f"{plural(n + len(older), 'checkpoint')} reported ok and embedded nothing "
                       f"although there was new work ({n:,} in the last {days} days): "
                       "the archive and index they claim did not happen")
    else:
        explanation = (f"no checkpoint reported ok without embedding its new work "
                       f"({plural(len(candidates), 'empty checkpoint')} had nothing new)")
    total = n + len(older)
    # graded by rule (no thresholds): a no-op's age decides between warn and fail
    return result(ctx, "checkpoint_noop", status, float(total),
                  f"{total} ({n} recent)" if older else str(total), None, None,
                  f"fail on any in the last {days} days; warn on older ones", explanation,
                  recent + older, detail={"recent": n, "older": len(older)})


@signal("compaction_without_checkpoint", "compactions with no checkpoint between the previous "
        "turn and the compaction")
def compaction_without_checkpoint(ctx: ScanContext) -> SignalResult:
    found = compactions_without_checkpoint(ctx.conn)
    # A harness that never records checkpoints (Claude Code writes none) cannot have missed
    # one: its compactions get one informational line, not a warning each. A harness is the
    # session's format; a checkpoint tied to no session could belong to any, so it counts
    # for all of them.
    fmt = dict(ctx.conn.execute(select(Session.id, Session.format)).all())
    with_checkpoints = {fmt.get(str(s)) for (s,) in ctx.conn.execute(
        select(Checkpoint.session_id).distinct()).all()}
    judged = [c for c in found if None in with_checkpoints
              or fmt.get(c.session_id) in with_checkpoints]
    silent = sorted({str(fmt.get(c.session_id) or "unknown format")
                     for c in found if c not in judged})
    rows = [Row("compaction", c.id, f"{c.ts[:16].replace('T', ' ')} {c.trigger or 'compaction'}"
                f" at {c.pre_tokens or 0:,} tokens, agent {c.agent}: no checkpoint before it")
            for c in sorted(judged, key=lambda c: (c.ts, c.id), reverse=True)]
    n = len(rows)
    explanation = (f"{plural(n, 'compaction')} ran with no checkpoint between the previous turn "
                   "and it: the pre-compaction trigger did not fire first, what left the window "
                   "was not preserved" if n else
                   "every compaction had a checkpoint before it")
    unjudged = len(found) - len(judged)
    if unjudged:
        info = (f"{plural(unjudged, 'compaction')} in sessions of a harness that records no "
                f"checkpoints ({', '.join(silent)}): not judged, information only")
        explanation = info if not n else f"{explanation}; {info}"
    if not n and not judged and found:
        return result(ctx, "compaction_without_checkpoint", "n/a", None, "n/a", 0.0, None,
                      "warn on any, for harnesses that record checkpoints", explanation,
                      detail={"not_judged": unjudged, "formats": silent})
    return result(ctx, "compaction_without_checkpoint", "warn" if n else "ok", float(n),
                  str(n), 0.0, None, "warn on any, for harnesses that record checkpoints",
                  explanation, rows, detail={"not_judged": unjudged, "formats": silent})


@signal("threshold_order", "checkpoint threshold not below the auto-compact threshold on the "
        "same window")
def threshold_order(ctx: ScanContext) -> SignalResult:
    snaps = ctx.orm().exec(
        select(ContextSnapshot).where(col(ContextSnapshot.checkpoint_threshold).is_not(None),
                                      col(ContextSnapshot.auto_compact_threshold).is_not(None))
        .order_by(col(ContextSnapshot.ts), col(ContextSnapshot.id))).all()
    latest: dict[tuple[str, str], ContextSnapshot] = {}
    for s in snaps:
        latest[(s.session_id, s.agent)] = s
    if not latest:
        return result(ctx, "threshold_order", "n/a", None, "n/a", None, 0.0,
                      "fail when a series' checkpoint threshold is not below its "
                      "auto-compact threshold", "no snapshot reported both thresholds (Claude "
                      "Code transcripts do not): their order cannot be checked from the store")
    bad = [s for s in latest.values()
           if (s.checkpoint_threshold or 0) >= (s.auto_compact_threshold or 0)]
    rows = [Row("snapshot", int(s.id or 0),
                f"{s.ts[:16].replace('T', ' ')} agent {s.agent}: checkpoint at "
                f"{s.checkpoint_threshold:,} ≥ auto-compact at {s.auto_compact_threshold:,} "
                f"tokens (window {s.window_tokens or 0:,})")
            for s in sorted(bad, key=lambda s: (s.ts, s.id or 0), reverse=True)]
    n = len(rows)
    explanation = (f"{plural(n, 'series', 'series')} of {len(latest):,} "
                   f"{'reports' if n == 1 else 'report'} a checkpoint "
                   "threshold at or above the harness's auto-compact threshold: compaction "
                   "fires before the pre-compaction checkpoint" if n else
                   f"checkpoint below auto-compact in all {len(latest):,} series that report both")
    return result(ctx, "threshold_order", "fail" if n else "ok", float(n), str(n), None, 0.0,
                  "fail when a series' latest reported checkpoint threshold is not below its "
                  "auto-compact threshold", explanation, rows)
