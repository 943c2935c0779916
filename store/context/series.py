"""Reading context pressure: one series per session and agent, thresholds resolved against
the settings in force, compactions with ``checkpoint_before`` worked out, and a cheap tail of
the snapshots newer than an id for the live screen."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, and_, case, func, or_, union_all
from sqlmodel import col, select

from store.context.records import (
    CheckpointInfo,
    Compaction,
    Handoff,
    PruneEvent,
    Series,
    SeriesKey,
    Snapshot,
    Tail,
)
from store.context.models import Compaction as CompactionRow
from store.context.models import ContextSnapshot as SnapshotRow
from store.context.models import Handoff as HandoffRow
from store.context.models import PruneEntry
from store.context.models import PruneEvent as PruneRow
from store.context.validate import stored_int
from store.core.db import columns
from store.core.models import Checkpoint, Entry
from store.core.models import Session as SessionRow
from store.core.textsafe import one_line

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

S = SnapshotRow
_SNAP_COLS = (S.id, S.session_id, S.agent, S.ts, S.window_tokens, S.used_tokens, S.segments,
              S.checkpoint_threshold, S.auto_compact_threshold, S.event, S.source_entry_id,
              S.message_id, S.writer)
_SNAPSHOTS = columns(*_SNAP_COLS)


def _series_of(model: Any, session_id: str, agent: str) -> tuple[Any, Any]:
    """The WHERE terms selecting one (session, agent) series of ``model``'s rows."""
    return col(model.session_id) == session_id, col(model.agent) == agent


def _jd(column: Any) -> Any:
    """``julianday(x)``: stored times compare as instants, whatever their offset."""
    return func.julianday(column)


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _snapshot(r: Any, problems: list[str] | None = None) -> Snapshot:
    """A snapshot row; a stored value that is not what it should be is reported in
    ``problems`` and read as nothing (0 tokens used), never raised."""
    bad: list[str] = [] if problems is None else problems
    what = f"snapshot {r[0]}"
    segments: dict[str, int] | None = None
    if r[6]:
        try:
            raw = json.loads(r[6])
        except (TypeError, ValueError):
            raw = None
        if isinstance(raw, dict) and all(isinstance(v, int) and not isinstance(v, bool)
                                         for v in raw.values()):
            segments = {str(k): int(v) for k, v in raw.items()}
        else:
            bad.append(f"{what} segments: stored value {r[6]!r} is not token counts (ignored)")
    used = stored_int(r[5], bad, f"{what} used_tokens")
    return Snapshot(int(r[0]), r[1], r[2], r[3], stored_int(r[4], bad, f"{what} window_tokens"),
                    used or 0, segments, stored_int(r[7], bad, f"{what} checkpoint_threshold"),
                    stored_int(r[8], bad, f"{what} auto_compact_threshold"), r[9], r[10], r[11],
                    r[12])


def series_keys(store: Store) -> list[SeriesKey]:
    """Every (session, agent) with snapshots, latest first; within a session, main first."""
    used = col(S.used_tokens)
    with store.read() as conn:
        rows = conn.execute(
            columns(S.session_id, S.agent, func.count(), func.min(col(S.ts)),
                    func.max(col(S.ts)),
                    func.coalesce(func.max(case((func.typeof(used) == "integer", used))), 0))
            .group_by(col(S.session_id), col(S.agent))).all()
    keys = [SeriesKey(r[0], r[1], int(r[2]), r[3], r[4], int(r[5])) for r in rows]
    latest: dict[str, str] = {}
    for k in keys:
        latest[k.session_id] = max(latest.get(k.session_id, ""), k.last_ts)
    keys.sort(key=lambda k: (k.agent != "main", k.agent))
    keys.sort(key=lambda k: (latest[k.session_id], k.session_id), reverse=True)
    return keys


def latest_key(store: Store) -> SeriesKey | None:
    """The default series: the latest session's main agent (or its first agent)."""
    keys = series_keys(store)
    return keys[0] if keys else None


def snapshots_since(store: Store, session_id: str, agent: str, after_id: int) -> list[Snapshot]:
    """Snapshots of one series with an id above ``after_id``, in id order (live tailing)."""
    with store.read() as conn:
        rows = conn.execute(_SNAPSHOTS.where(*_series_of(S, session_id, agent),
                                             col(S.id) > after_id).order_by(col(S.id))).all()
    return [_snapshot(r) for r in rows]


_TURN_KINDS = ("user", "assistant", "tool_call", "tool_result")


def _previous_turn(conn: Connection, session_id: str, agent: str, ts: str) -> str | None:
    """The latest turn of the series strictly before ``ts``: a ``turn`` snapshot or a user,
    assistant or tool entry of that session and agent (MindStone sessions have no turn
    snapshots: their turns are entries)."""
    turns = union_all(
        select(col(S.ts).label("t")).where(*_series_of(S, session_id, agent),
                                           col(S.event) == "turn", _jd(S.ts) < _jd(ts)),
        select(col(Entry.ts).label("t")).where(*_series_of(Entry, session_id, agent),
                                               col(Entry.kind).in_(_TURN_KINDS),
                                               _jd(Entry.ts) < _jd(ts))).subquery()
    return conn.execute(select(turns.c.t).order_by(_jd(turns.c.t).desc()).limit(1)).scalar()


def _checkpoint_between(conn: Connection, session_id: str, agent: str, lo: str | None,
                        hi: str, inclusive: bool) -> str | None:
    """The checkpoint that ran in (lo, hi] — [lo, hi] when ``inclusive`` — : an ok checkpoint
    row (this session's or a store-wide one) or a ``checkpoint`` snapshot of the series; None
    if nothing. A handoff is not a checkpoint and does not count."""
    if lo is None:
        return None
    def within(model: Any) -> tuple[Any, Any]:
        after = _jd(model.ts) >= _jd(lo) if inclusive else _jd(model.ts) > _jd(lo)
        return after, _jd(model.ts) <= _jd(hi)

    row = conn.execute(
        select(Checkpoint.id, Checkpoint.trigger)
        .where(or_(col(Checkpoint.session_id) == session_id,
                   col(Checkpoint.session_id).is_(None)),
               col(Checkpoint.status) == "ok", *within(Checkpoint))
        .order_by(_jd(Checkpoint.ts).desc(), col(Checkpoint.id).desc()).limit(1)).first()
    if row:
        return f"checkpoint {row[0]} ({row[1]})"
    snap = conn.execute(
        select(S.id).where(*_series_of(S, session_id, agent), col(S.event) == "checkpoint",
                           *within(S))
        .order_by(_jd(S.ts).desc(), col(S.id).desc()).limit(1)).scalar()
    if snap is not None:
        return f"checkpoint snapshot {snap}"
    return None


def _compactions(conn: Connection, session_id: str, agent: str,
                 problems: list[str]) -> list[Compaction]:
    """Each compaction, with ``checkpoint_before`` true only when a checkpoint ran between
    the previous turn and it (LCA §6.3 ``compaction_without_checkpoint``). With no turn
    before it at all, the window opens at the session's start (inclusive)."""
    C, H = CompactionRow, HandoffRow
    summary = case((col(Entry.sensitivity) == "secret", "[secret entry: text withheld]"),
                   else_=col(Entry.content))
    rows = conn.execute(
        columns(C.id, C.ts, C.pre_tokens, C.trigger, C.summary_entry_id, summary,
                func.coalesce(col(C.handoff_path), col(H.path)), C.source_entry_id,
                C.handoff_id, Entry.session_id, Entry.seq)
        .outerjoin(Entry, col(Entry.id) == col(C.summary_entry_id))
        .outerjoin(H, col(H.id) == col(C.handoff_id))
        .where(*_series_of(C, session_id, agent)).order_by(col(C.ts), col(C.id))).all()
    started = conn.execute(select(SessionRow.started_at).where(
        SessionRow.id == session_id)).scalar() if rows else None
    out: list[Compaction] = []
    previous = ""
    for r in rows:
        ts = r[1]
        prev_turn = _previous_turn(conn, session_id, agent, ts)
        if prev_turn is not None:
            what = _checkpoint_between(conn, session_id, agent, prev_turn, ts, False)
        else:
            what = _checkpoint_between(conn, session_id, agent, started or ts, ts, True)
        handoff, written = r[6], r[8] is not None or r[6] is not None
        if handoff is None:
            found = conn.execute(
                select(H.id, H.path).where(*_series_of(H, session_id, agent),
                                           col(H.action) == "written", col(H.ts) > previous,
                                           col(H.ts) <= ts)
                .order_by(col(H.ts).desc()).limit(1)).first()
            if found is not None:
                handoff, written = found[1], True
        out.append(Compaction(int(r[0]), session_id, agent, ts,
                              stored_int(r[2], problems, f"compaction {r[0]} pre_tokens"), r[3],
                              r[4], one_line(r[5], 160) if r[5] is not None else None, handoff,
                              what is not None, what, r[7], written,
                              None if r[10] is None else (str(r[9]), int(r[10]))))
        previous = ts
    return out


def compactions_without_checkpoint(conn: Connection) -> list[Compaction]:
    """Every compaction of every series with no checkpoint between the previous turn and it
    (``checkpoint_before`` false), worked out as the series shows it; health reads this."""
    keys = conn.execute(select(CompactionRow.session_id, CompactionRow.agent).distinct()
                        .order_by(col(CompactionRow.session_id), col(CompactionRow.agent))).all()
    return [c for s, a in keys for c in _compactions(conn, str(s), str(a), [])
            if not c.checkpoint_before]


def _prunes(conn: Connection, session_id: str, agent: str,
            problems: list[str]) -> list[PruneEvent]:
    P, PE = PruneRow, PruneEntry
    rows = conn.execute(
        columns(P.id, P.ts, P.tokens_before, P.tokens_after, P.entries_pruned, P.preserved,
                P.verified, P.mode, P.source_entry_id)
        .where(*_series_of(P, session_id, agent)).order_by(col(P.ts), col(P.id))).all()
    links: dict[int, list[tuple[str | None, int | None]]] = {}
    seqs: dict[int, list[int]] = {}
    if rows:
        for pid, ref, eid, seq in conn.execute(
                select(PE.prune_id, PE.ref, PE.entry_id, Entry.seq)
                .join(P, col(P.id) == col(PE.prune_id))
                .outerjoin(Entry, col(Entry.id) == col(PE.entry_id))
                .where(*_series_of(P, session_id, agent)).order_by(col(PE.id))):
            links.setdefault(int(pid), []).append((ref, eid))
            if seq is not None:
                seqs.setdefault(int(pid), []).append(int(seq))
    out = []
    for r in rows:
        linked = links.get(int(r[0]), [])
        what = f"prune {r[0]}"
        out.append(PruneEvent(int(r[0]), session_id, agent, r[1],
                              stored_int(r[2], problems, f"{what} tokens_before"),
                              stored_int(r[3], problems, f"{what} tokens_after"),
                              stored_int(r[4], problems, f"{what} entries_pruned") or 0,
                              _bool(r[5]), _bool(r[6]), r[7],
                              tuple(int(e) for _, e in linked if isinstance(e, int)),
                              tuple(str(ref) for ref, _ in linked if ref is not None), r[8],
                              tuple(seqs.get(int(r[0]), ()))))
    return out


def _handoffs(conn: Connection, session_id: str, agent: str,
              problems: list[str]) -> list[Handoff]:
    H = HandoffRow
    rows = conn.execute(
        columns(H.id, H.ts, H.action, H.path, H.sha256, H.token_estimate)
        .where(*_series_of(H, session_id, agent)).order_by(col(H.ts), col(H.id))).all()
    return [Handoff(int(r[0]), session_id, agent, r[1], r[2], r[3], r[4],
                    stored_int(r[5], problems, f"handoff {r[0]} token_estimate"))
            for r in rows]


K = Checkpoint
_CHECKPOINTS = columns(K.id, K.session_id, K.ts, K.trigger, K.status, K.entries_added,
                       K.memories_written, K.chunks_embedded, K.chunks_failed,
                       K.archive_verified, K.index_verified)
_CHECKPOINT_COUNTS = ("entries_added", "memories_written", "chunks_embedded", "chunks_failed")


def _checkpoint_row(r: Any) -> CheckpointInfo:
    """A checkpoint row; a count stored as something else reads as 0 and is reported."""
    bad: list[str] = []
    added, memories, embedded, failed = (stored_int(r[5 + i], bad, f"checkpoint {r[0]} {name}")
                                         or 0 for i, name in enumerate(_CHECKPOINT_COUNTS))
    return CheckpointInfo("checkpoint", int(r[0]), r[1], None, r[2], str(r[3]), str(r[4]),
                          added, memories, embedded, failed, _bool(r[9]), _bool(r[10]), None,
                          tuple(bad))


def _snapshot_checkpoint(s: Snapshot) -> CheckpointInfo:
    return CheckpointInfo("snapshot", s.id, s.session_id, s.agent, s.ts, "checkpoint snapshot",
                          "ok", 0, 0, 0, 0, None, None, s.used_tokens)


def checkpoints(store: Store, session_id: str | None = None) -> list[CheckpointInfo]:
    """Checkpoint rows and ``checkpoint`` snapshots, latest first."""
    rows_q, snaps_q = _CHECKPOINTS, _SNAPSHOTS.where(col(S.event) == "checkpoint")
    if session_id:
        rows_q = rows_q.where(col(K.session_id) == session_id)
        snaps_q = snaps_q.where(col(S.session_id) == session_id)
    with store.read() as conn:
        rows = conn.execute(rows_q).all()
        snaps = conn.execute(snaps_q).all()
    out = [_checkpoint_row(r) for r in rows]
    for r in snaps:
        bad: list[str] = []
        info = _snapshot_checkpoint(_snapshot(r, bad))
        out.append(replace(info, problems=tuple(bad)))
    out.sort(key=lambda c: (str(c.ts), c.origin, c.id), reverse=True)
    return out


Events = tuple[list[Compaction], list[PruneEvent], list[Handoff], list[CheckpointInfo]]


def _events(conn: Connection, session_id: str, agent: str, snaps: list[Snapshot],
            problems: list[str]) -> Events:
    """The series' events, and the checkpoints to mark on its chart: this session's from its
    first snapshot on (one after the last snapshot too: the usual checkpoint just before a
    compaction), store-wide ones while the series ran (up to its last snapshot or
    compaction)."""
    compactions = _compactions(conn, session_id, agent, problems)
    marks: list[CheckpointInfo] = []
    if snaps:
        lo = min(s.ts for s in snaps)
        hi = max([s.ts for s in snaps] + [c.ts for c in compactions])
        marks = [_checkpoint_row(r) for r in conn.execute(
            _CHECKPOINTS.where(_jd(K.ts) >= _jd(lo), or_(
                col(K.session_id) == session_id,
                and_(col(K.session_id).is_(None), _jd(K.ts) <= _jd(hi))))
            .order_by(col(K.ts), col(K.id))).all()]
    marks += [_snapshot_checkpoint(s) for s in snaps if s.event == "checkpoint"]
    marks.sort(key=lambda c: (c.ts, c.id))
    for m in marks:
        problems.extend(m.problems)
    return (compactions, _prunes(conn, session_id, agent, problems),
            _handoffs(conn, session_id, agent, problems), marks)


def _resolve(store: Store, snaps: list[Snapshot]) -> tuple[int, int, int, tuple[str, ...]]:
    """Window and thresholds: the latest reported, else the settings in force."""
    cfg = store.settings
    defaults: list[str] = []

    def reported(attr: str) -> int | None:
        return next((getattr(s, attr) for s in reversed(snaps)
                     if getattr(s, attr) is not None), None)

    window = reported("window_tokens")
    if not window:
        window = int(cfg["context.window_tokens"])
        defaults.append("window_tokens")
    checkpoint = reported("checkpoint_threshold")
    if checkpoint is None:
        checkpoint = round(window * float(cfg["context.checkpoint_percent"]) / 100)
        defaults.append("checkpoint_threshold")
    auto = reported("auto_compact_threshold")
    if auto is None:
        auto = round(window * float(cfg["context.auto_compact_percent"]) / 100)
        defaults.append("auto_compact_threshold")
    return window, checkpoint, auto, tuple(defaults)


def _build(store: Store, conn: Connection, session_id: str, agent: str,
           snaps: list[Snapshot], problems: list[str]) -> Series:
    compactions, prunes, handoffs, marks = _events(conn, session_id, agent, snaps, problems)
    window, checkpoint, auto, defaults = _resolve(store, snaps)
    return Series(session_id, agent, window, checkpoint, auto, tuple(snaps),
                  tuple(compactions), prunes=tuple(prunes), handoffs=tuple(handoffs),
                  checkpoints=tuple(marks), settings_defaults=defaults,
                  problems=tuple(dict.fromkeys(problems)))


def series(store: Store, session_id: str, agent: str = "main") -> Series:
    """One agent's pressure over a session, with the settings applied where the harness
    reported no window or thresholds. Stored values that cannot be read are listed in
    ``problems`` rather than raised."""
    problems: list[str] = []
    with store.read() as conn:
        snaps = [_snapshot(r, problems) for r in conn.execute(
            _SNAPSHOTS.where(*_series_of(S, session_id, agent))
            .order_by(col(S.ts), col(S.id))).all()]
        return _build(store, conn, session_id, agent, snaps, problems)


def max_snapshot_id(store: Store) -> int:
    with store.read() as conn:
        return conn.execute(select(func.max(col(S.id)))).scalar() or 0


def max_revision(store: Store) -> int:
    """The highest snapshot revision (m0005): it moves when a snapshot is updated in place."""
    with store.read() as conn:
        return conn.execute(select(func.max(col(S.revision)))).scalar() or 0


def tail(store: Store, current: Series, after_id: int, after_revision: int = 0) -> Tail:
    """What changed since snapshot ``after_id`` and revision ``after_revision``: the new
    snapshots of every series (counted per series for the picker), those updated in place
    (a repeated message id), the current series with its own new and updated ones and its
    events re-read. ``rebuilt`` is set when rows went away (a reindex): reload everything."""
    problems: list[str] = list(current.problems)
    with store.read() as conn:
        rows = conn.execute(
            columns(*_SNAP_COLS, S.revision)
            .where(or_(col(S.id) > after_id, col(S.revision) > after_revision))
            .order_by(col(S.id))).all()
        new = [_snapshot(r, problems) for r in rows if int(r[0]) > after_id]
        changed = [_snapshot(r, problems) for r in rows if int(r[0]) <= after_id]
        top_revision = max([after_revision] + [int(r[13]) for r in rows])
        key = (current.session_id, current.agent)
        mine = [s for s in new if (s.session_id, s.agent) == key]
        updated = {s.id: s for s in changed if (s.session_id, s.agent) == key}
        have = int(conn.execute(select(func.count()).select_from(S).where(
            *_series_of(S, current.session_id, current.agent))).scalar_one())
        snaps = [updated.get(s.id, s) for s in current.snapshots] + mine
        extended = _build(store, conn, current.session_id, current.agent, snaps, problems)
    return Tail(extended, tuple(mine), tuple(new), max((s.id for s in new), default=after_id),
                rebuilt=have != len(snaps) or len(updated) != sum(
                    1 for s in current.snapshots if s.id in updated),
                updated=tuple(updated.values()), updated_anywhere=tuple(changed),
                max_revision=top_revision)


def all_series(store: Store, session_id: str | None = None,
               agent: str | None = None) -> list[Series]:
    """Every series (optionally of one session and/or agent), latest session first."""
    return [series(store, k.session_id, k.agent) for k in series_keys(store)
            if (session_id is None or k.session_id == session_id)
            and (agent is None or k.agent == agent)]
