"""Reading context pressure: one series per session and agent, thresholds resolved against
the settings in force, compactions with ``checkpoint_before`` worked out, and a cheap tail of
the snapshots newer than an id for the live screen."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, text

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
from store.context.validate import stored_int
from store.core.textsafe import one_line

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

_SNAP_COLS = ("id, session_id, agent, ts, window_tokens, used_tokens, segments, "
              "checkpoint_threshold, auto_compact_threshold, event, source_entry_id, "
              "message_id, writer")


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
    with store.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT session_id, agent, COUNT(*), MIN(ts), MAX(ts), COALESCE(MAX(CASE WHEN "
            "typeof(used_tokens) = 'integer' THEN used_tokens END), 0) "
            "FROM context_snapshot GROUP BY session_id, agent").all()
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
        rows = conn.execute(text(
            f"SELECT {_SNAP_COLS} FROM context_snapshot WHERE session_id = :s AND agent = :a "
            "AND id > :i ORDER BY id"), {"s": session_id, "a": agent, "i": after_id}).all()
    return [_snapshot(r) for r in rows]


_TURN_KINDS = "('user', 'assistant', 'tool_call', 'tool_result')"


def _previous_turn(conn: Connection, session_id: str, agent: str, ts: str) -> str | None:
    """The latest turn of the series strictly before ``ts``: a ``turn`` snapshot or a user,
    assistant or tool entry of that session and agent (MindStone sessions have no turn
    snapshots: their turns are entries)."""
    return conn.execute(text(
        "SELECT t FROM (SELECT ts AS t FROM context_snapshot WHERE session_id = :s AND "
        "agent = :a AND event = 'turn' AND julianday(ts) < julianday(:ts) "
        "UNION ALL SELECT ts AS t FROM entry WHERE session_id = :s AND agent = :a AND "
        f"kind IN {_TURN_KINDS} AND julianday(ts) < julianday(:ts)) "
        "ORDER BY julianday(t) DESC LIMIT 1"),
        {"s": session_id, "a": agent, "ts": ts}).scalar()


def _checkpoint_between(conn: Connection, session_id: str, agent: str, lo: str | None,
                        hi: str, inclusive: bool) -> str | None:
    """The checkpoint that ran in (lo, hi] — [lo, hi] when ``inclusive`` — : an ok checkpoint
    row (this session's or a store-wide one) or a ``checkpoint`` snapshot of the series; None
    if nothing. A handoff is not a checkpoint and does not count."""
    if lo is None:
        return None
    low = ">=" if inclusive else ">"
    params = {"s": session_id, "a": agent, "lo": lo, "hi": hi}
    row = conn.execute(text(
        "SELECT id, trigger FROM checkpoint WHERE (session_id = :s OR session_id IS NULL) "
        f"AND status = 'ok' AND julianday(ts) {low} julianday(:lo) AND "
        "julianday(ts) <= julianday(:hi) ORDER BY julianday(ts) DESC, id DESC LIMIT 1"),
        params).first()
    if row:
        return f"checkpoint {row[0]} ({row[1]})"
    row = conn.execute(text(
        "SELECT id FROM context_snapshot WHERE session_id = :s AND agent = :a AND "
        f"event = 'checkpoint' AND julianday(ts) {low} julianday(:lo) AND "
        "julianday(ts) <= julianday(:hi) ORDER BY julianday(ts) DESC, id DESC LIMIT 1"),
        params).first()
    if row:
        return f"checkpoint snapshot {row[0]}"
    return None


def _compactions(conn: Connection, session_id: str, agent: str,
                 problems: list[str]) -> list[Compaction]:
    """Each compaction, with ``checkpoint_before`` true only when a checkpoint ran between
    the previous turn and it (LCA §6.3 ``compaction_without_checkpoint``). With no turn
    before it at all, the window opens at the session's start (inclusive)."""
    rows = conn.execute(text(
        "SELECT c.id, c.ts, c.pre_tokens, c.trigger, c.summary_entry_id, e.content, "
        "COALESCE(c.handoff_path, h.path), c.source_entry_id, c.handoff_id, e.session_id, "
        "e.seq FROM compaction c "
        "LEFT JOIN entry e ON e.id = c.summary_entry_id "
        "LEFT JOIN handoff h ON h.id = c.handoff_id "
        "WHERE c.session_id = :s AND c.agent = :a ORDER BY c.ts, c.id"),
        {"s": session_id, "a": agent}).all()
    started = conn.execute(text("SELECT started_at FROM session WHERE id = :s"),
                           {"s": session_id}).scalar() if rows else None
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
            found = conn.execute(text(
                "SELECT id, path FROM handoff WHERE session_id = :s AND agent = :a AND "
                "action = 'written' AND ts > :lo AND ts <= :ts ORDER BY ts DESC LIMIT 1"),
                {"s": session_id, "a": agent, "lo": previous, "ts": ts}).first()
            if found is not None:
                handoff, written = found[1], True
        out.append(Compaction(int(r[0]), session_id, agent, ts,
                              stored_int(r[2], problems, f"compaction {r[0]} pre_tokens"), r[3],
                              r[4], one_line(r[5], 160) if r[5] is not None else None, handoff,
                              what is not None, what, r[7], written,
                              None if r[10] is None else (str(r[9]), int(r[10]))))
        previous = ts
    return out


def _prunes(conn: Connection, session_id: str, agent: str,
            problems: list[str]) -> list[PruneEvent]:
    rows = conn.execute(text(
        "SELECT id, ts, tokens_before, tokens_after, entries_pruned, preserved, verified, "
        "mode, source_entry_id FROM prune_event WHERE session_id = :s AND agent = :a "
        "ORDER BY ts, id"), {"s": session_id, "a": agent}).all()
    links: dict[int, list[tuple[str | None, int | None]]] = {}
    seqs: dict[int, list[int]] = {}
    if rows:
        for pid, ref, eid, seq in conn.execute(text(
                "SELECT pe.prune_id, pe.ref, pe.entry_id, e.seq FROM prune_entry pe "
                "JOIN prune_event p ON p.id = pe.prune_id "
                "LEFT JOIN entry e ON e.id = pe.entry_id "
                "WHERE p.session_id = :s AND p.agent = :a "
                "ORDER BY pe.rowid"), {"s": session_id, "a": agent}):
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
    rows = conn.execute(text(
        "SELECT id, ts, action, path, sha256, token_estimate FROM handoff WHERE "
        "session_id = :s AND agent = :a ORDER BY ts, id"), {"s": session_id, "a": agent}).all()
    return [Handoff(int(r[0]), session_id, agent, r[1], r[2], r[3], r[4],
                    stored_int(r[5], problems, f"handoff {r[0]} token_estimate"))
            for r in rows]


_CHECKPOINT_COLS = ("id, session_id, ts, trigger, status, entries_added, memories_written, "
                    "chunks_embedded, chunks_failed, archive_verified, index_verified")
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
    where, params = "", {}
    if session_id:
        where, params = " WHERE session_id = :s", {"s": session_id}
    with store.read() as conn:
        rows = conn.execute(text(f"SELECT {_CHECKPOINT_COLS} FROM checkpoint{where}"),
                            params).all()
        snaps = conn.execute(text(
            f"SELECT {_SNAP_COLS} FROM context_snapshot WHERE event = 'checkpoint'"
            + (" AND session_id = :s" if session_id else "")), params).all()
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
        marks = [_checkpoint_row(r) for r in conn.execute(text(
            f"SELECT {_CHECKPOINT_COLS} FROM checkpoint WHERE julianday(ts) >= julianday(:lo) "
            "AND (session_id = :s OR (session_id IS NULL AND julianday(ts) <= julianday(:hi))) "
            "ORDER BY ts, id"), {"s": session_id, "lo": lo, "hi": hi}).all()]
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
        snaps = [_snapshot(r, problems) for r in conn.execute(text(
            f"SELECT {_SNAP_COLS} FROM context_snapshot WHERE session_id = :s AND agent = :a "
            "ORDER BY ts, id"), {"s": session_id, "a": agent}).all()]
        return _build(store, conn, session_id, agent, snaps, problems)


def max_snapshot_id(store: Store) -> int:
    with store.read() as conn:
        return int(conn.exec_driver_sql(
            "SELECT COALESCE(MAX(id), 0) FROM context_snapshot").scalar_one())


def max_revision(store: Store) -> int:
    """The highest snapshot revision (m0005): it moves when a snapshot is updated in place."""
    with store.read() as conn:
        return int(conn.exec_driver_sql(
            "SELECT COALESCE(MAX(revision), 0) FROM context_snapshot").scalar_one())


def tail(store: Store, current: Series, after_id: int, after_revision: int = 0) -> Tail:
    """What changed since snapshot ``after_id`` and revision ``after_revision``: the new
    snapshots of every series (counted per series for the picker), those updated in place
    (a repeated message id), the current series with its own new and updated ones and its
    events re-read. ``rebuilt`` is set when rows went away (a reindex): reload everything."""
    problems: list[str] = list(current.problems)
    with store.read() as conn:
        rows = conn.execute(text(
            f"SELECT {_SNAP_COLS}, revision FROM context_snapshot WHERE id > :i "
            "OR revision > :r ORDER BY id"), {"i": after_id, "r": after_revision}).all()
        new = [_snapshot(r, problems) for r in rows if int(r[0]) > after_id]
        changed = [_snapshot(r, problems) for r in rows if int(r[0]) <= after_id]
        top_revision = max([after_revision] + [int(r[13]) for r in rows])
        key = (current.session_id, current.agent)
        mine = [s for s in new if (s.session_id, s.agent) == key]
        updated = {s.id: s for s in changed if (s.session_id, s.agent) == key}
        have = int(conn.execute(text(
            "SELECT COUNT(*) FROM context_snapshot WHERE session_id = :s AND agent = :a"),
            {"s": current.session_id, "a": current.agent}).scalar_one())
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
