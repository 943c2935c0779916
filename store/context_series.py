"""Reading context pressure: one series per session and agent, thresholds resolved against
the settings in force, compactions with ``checkpoint_before`` worked out, and a cheap tail of
the snapshots newer than an id for the live screen."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, text

from store.context_records import (
    CheckpointInfo,
    Compaction,
    Handoff,
    PruneEvent,
    Series,
    SeriesKey,
    Snapshot,
    Tail,
)
from store.textsafe import one_line

if TYPE_CHECKING:
    from store.facade import Store

_SNAP_COLS = ("id, session_id, agent, ts, window_tokens, used_tokens, segments, "
              "checkpoint_threshold, auto_compact_threshold, event, source_entry_id, "
              "message_id, writer")


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _snapshot(r: Any) -> Snapshot:
    segments = json.loads(r[6]) if r[6] else None
    return Snapshot(int(r[0]), r[1], r[2], r[3], r[4], int(r[5]), segments, r[7], r[8], r[9],
                    r[10], r[11], r[12])


def series_keys(store: Store) -> list[SeriesKey]:
    """Every (session, agent) with snapshots, latest first; within a session, main first."""
    with store.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT session_id, agent, COUNT(*), MIN(ts), MAX(ts), MAX(used_tokens) "
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


def _checkpoint_between(conn: Connection, session_id: str, agent: str, lo: str,
                        hi: str) -> str | None:
    """What preserved the window in (lo, hi]: a checkpoint row (this session's or a
    store-wide one), a ``checkpoint`` snapshot, or a handoff written; None if nothing."""
    row = conn.execute(text(
        "SELECT id, trigger FROM checkpoint WHERE (session_id = :s OR session_id IS NULL) "
        "AND status = 'ok' AND ts > :lo AND ts <= :hi ORDER BY ts DESC LIMIT 1"),
        {"s": session_id, "lo": lo, "hi": hi}).first()
    if row:
        return f"checkpoint {row[0]} ({row[1]})"
    row = conn.execute(text(
        "SELECT id FROM context_snapshot WHERE session_id = :s AND agent = :a AND "
        "event = 'checkpoint' AND ts > :lo AND ts <= :hi ORDER BY ts DESC LIMIT 1"),
        {"s": session_id, "a": agent, "lo": lo, "hi": hi}).first()
    if row:
        return f"checkpoint snapshot {row[0]}"
    row = conn.execute(text(
        "SELECT id, path FROM handoff WHERE session_id = :s AND agent = :a AND "
        "action = 'written' AND ts > :lo AND ts <= :hi ORDER BY ts DESC LIMIT 1"),
        {"s": session_id, "a": agent, "lo": lo, "hi": hi}).first()
    if row:
        return f"handoff {row[0]} written"
    return None


def _compactions(conn: Connection, session_id: str, agent: str) -> list[Compaction]:
    rows = conn.execute(text(
        "SELECT c.id, c.ts, c.pre_tokens, c.trigger, c.summary_entry_id, e.content, "
        "COALESCE(c.handoff_path, h.path), c.source_entry_id FROM compaction c "
        "LEFT JOIN entry e ON e.id = c.summary_entry_id "
        "LEFT JOIN handoff h ON h.id = c.handoff_id "
        "WHERE c.session_id = :s AND c.agent = :a ORDER BY c.ts, c.id"),
        {"s": session_id, "a": agent}).all()
    out: list[Compaction] = []
    previous = ""
    for r in rows:
        ts = r[1]
        prev_turn = conn.execute(text(
            "SELECT MAX(ts) FROM context_snapshot WHERE session_id = :s AND agent = :a AND "
            "event = 'turn' AND ts < :ts"), {"s": session_id, "a": agent, "ts": ts}).scalar()
        what = _checkpoint_between(conn, session_id, agent, prev_turn or "", ts)
        handoff = r[6]
        if handoff is None:
            handoff = conn.execute(text(
                "SELECT path FROM handoff WHERE session_id = :s AND agent = :a AND "
                "action = 'written' AND ts > :lo AND ts <= :ts ORDER BY ts DESC LIMIT 1"),
                {"s": session_id, "a": agent, "lo": previous, "ts": ts}).scalar()
        out.append(Compaction(int(r[0]), session_id, agent, ts, r[2], r[3], r[4],
                              one_line(r[5], 160) if r[5] is not None else None, handoff,
                              what is not None, what, r[7]))
        previous = ts
    return out


def _prunes(conn: Connection, session_id: str, agent: str) -> list[PruneEvent]:
    rows = conn.execute(text(
        "SELECT id, ts, tokens_before, tokens_after, entries_pruned, preserved, verified, "
        "mode, source_entry_id FROM prune_event WHERE session_id = :s AND agent = :a "
        "ORDER BY ts, id"), {"s": session_id, "a": agent}).all()
    links: dict[int, list[tuple[str | None, int | None]]] = {}
    if rows:
        for pid, ref, eid in conn.execute(text(
                "SELECT pe.prune_id, pe.ref, pe.entry_id FROM prune_entry pe JOIN prune_event p "
                "ON p.id = pe.prune_id WHERE p.session_id = :s AND p.agent = :a "
                "ORDER BY pe.rowid"), {"s": session_id, "a": agent}):
            links.setdefault(int(pid), []).append((ref, eid))
    out = []
    for r in rows:
        linked = links.get(int(r[0]), [])
        out.append(PruneEvent(int(r[0]), session_id, agent, r[1], r[2], r[3], int(r[4]),
                              _bool(r[5]), _bool(r[6]), r[7],
                              tuple(int(e) for _, e in linked if e is not None),
                              tuple(str(ref) for ref, _ in linked if ref is not None), r[8]))
    return out


def _handoffs(conn: Connection, session_id: str, agent: str) -> list[Handoff]:
    rows = conn.execute(text(
        "SELECT id, ts, action, path, sha256, token_estimate FROM handoff WHERE "
        "session_id = :s AND agent = :a ORDER BY ts, id"), {"s": session_id, "a": agent}).all()
    return [Handoff(int(r[0]), session_id, agent, r[1], r[2], r[3], r[4], r[5]) for r in rows]


_CHECKPOINT_COLS = ("id, session_id, ts, trigger, status, entries_added, memories_written, "
                    "chunks_embedded, chunks_failed, archive_verified, index_verified")


def _checkpoint_row(r: Any) -> CheckpointInfo:
    return CheckpointInfo("checkpoint", int(r[0]), r[1], None, r[2], r[3], r[4], int(r[5]),
                          int(r[6]), int(r[7]), int(r[8]), _bool(r[9]), _bool(r[10]), None)


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
    out = [_checkpoint_row(r) for r in rows] + [_snapshot_checkpoint(_snapshot(r))
                                                for r in snaps]
    out.sort(key=lambda c: (c.ts, c.origin, c.id), reverse=True)
    return out


def _events(conn: Connection, session_id: str, agent: str,
            snaps: list[Snapshot]) -> tuple[list[Compaction], list[PruneEvent], list[Handoff],
                                             list[CheckpointInfo]]:
    marks: list[CheckpointInfo] = []
    if snaps:
        lo, hi = min(s.ts for s in snaps), max(s.ts for s in snaps)
        marks = [_checkpoint_row(r) for r in conn.execute(text(
            f"SELECT {_CHECKPOINT_COLS} FROM checkpoint WHERE (session_id = :s OR "
            "session_id IS NULL) AND ts >= :lo AND ts <= :hi ORDER BY ts, id"),
            {"s": session_id, "lo": lo, "hi": hi}).all()]
    marks += [_snapshot_checkpoint(s) for s in snaps if s.event == "checkpoint"]
    marks.sort(key=lambda c: (c.ts, c.id))
    return (_compactions(conn, session_id, agent), _prunes(conn, session_id, agent),
            _handoffs(conn, session_id, agent), marks)


def _resolve(store: Store, snaps: list[Snapshot]) -> tuple[int, int, int, tuple[str, ...]]:
    """Window and thresholds: the latest reported, else the settings in force."""
    cfg = store.settings
    defaults: list[str] = []

    def reported(attr: str) -> int | None:
        return next((getattr(s, attr) for s in reversed(snaps)
                     if getattr(s, attr) is not None), None)

    window = reported("window_tokens")
    if window is None:
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


def series(store: Store, session_id: str, agent: str = "main") -> Series:
    """One agent's pressure over a session, with the settings applied where the harness
    reported no window or thresholds."""
    with store.read() as conn:
        snaps = [_snapshot(r) for r in conn.execute(text(
            f"SELECT {_SNAP_COLS} FROM context_snapshot WHERE session_id = :s AND agent = :a "
            "ORDER BY ts, id"), {"s": session_id, "a": agent}).all()]
        compactions, prunes, handoffs, marks = _events(conn, session_id, agent, snaps)
    window, checkpoint, auto, defaults = _resolve(store, snaps)
    return Series(session_id, agent, window, checkpoint, auto, tuple(snaps),
                  tuple(compactions), prunes=tuple(prunes), handoffs=tuple(handoffs),
                  checkpoints=tuple(marks), settings_defaults=defaults)


def max_snapshot_id(store: Store) -> int:
    with store.read() as conn:
        return int(conn.exec_driver_sql(
            "SELECT COALESCE(MAX(id), 0) FROM context_snapshot").scalar_one())


def tail(store: Store, current: Series, after_id: int) -> Tail:
    """What changed since snapshot ``after_id``: the new snapshots of every series (counted
    per series for the picker), the current series extended with its own new ones and its
    events re-read. ``rebuilt`` is set when rows went away (a reindex): reload everything."""
    with store.read() as conn:
        new = [_snapshot(r) for r in conn.execute(text(
            f"SELECT {_SNAP_COLS} FROM context_snapshot WHERE id > :i ORDER BY id"),
            {"i": after_id}).all()]
        mine = [s for s in new if (s.session_id, s.agent) == (current.session_id,
                                                              current.agent)]
        have = int(conn.execute(text(
            "SELECT COUNT(*) FROM context_snapshot WHERE session_id = :s AND agent = :a"),
            {"s": current.session_id, "a": current.agent}).scalar_one())
        snaps = list(current.snapshots) + mine
        compactions, prunes, handoffs, marks = _events(conn, current.session_id,
                                                       current.agent, snaps)
    window, checkpoint, auto, defaults = _resolve(store, snaps)
    extended = Series(current.session_id, current.agent, window, checkpoint, auto,
                      tuple(snaps), tuple(compactions), prunes=tuple(prunes),
                      handoffs=tuple(handoffs), checkpoints=tuple(marks),
                      settings_defaults=defaults)
    return Tail(extended, tuple(mine), tuple(new), max((s.id for s in new), default=after_id),
                rebuilt=have != len(snaps))


def all_series(store: Store, session_id: str | None = None,
               agent: str | None = None) -> list[Series]:
    """Every series (optionally of one session and/or agent), latest session first."""
    return [series(store, k.session_id, k.agent) for k in series_keys(store)
            if (session_id is None or k.session_id == session_id)
            and (agent is None or k.agent == agent)]
