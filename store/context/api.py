"""Context pressure (LCA §4.5, §6.2): the harness API that records snapshots, prunes,
compactions, handoffs and checkpoints, and the reads the CLI and the Context screen use.

Rows recorded here have no source entry: they are history and ``reindex`` keeps them. Rows
interpreted from stored entries come from ``store.context.derive``. Series queries live in
``store.context.series``; they are re-exported here so a caller needs one import.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, text

from store.context import validate as v
from store.context.records import (
    EVENTS,
    SEGMENTS,
    CheckpointInfo,
    Compaction,
    Handoff,
    PruneEvent,
    Series,
    SeriesKey,
    Snapshot,
)
from store.context.series import checkpoints, latest_key, series, series_keys, snapshots_since
from store.core.timeutil import now_iso
from store.core.writes import NewSession, upsert_session

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

__all__ = ["CheckpointInfo", "Compaction", "Handoff", "PruneEvent", "Series", "SeriesKey",
           "Snapshot", "checkpoints", "latest_key", "record_checkpoint", "record_compaction",
           "record_handoff", "record_prune", "record_snapshot", "resolve_session", "series",
           "series_keys", "snapshots_since"]

Who = tuple[str, str]


def _segments(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(  # noqa: TRY004 - every bad recorded value is a ValueError
            f"segments must be an object of token counts, got {value!r}")
    unknown = {str(k) for k in value} - set(SEGMENTS)
    if unknown:
        raise ValueError(f"unknown segment(s) {', '.join(sorted(unknown))}: segments are "
                         f"{', '.join(SEGMENTS)}")
    return json.dumps({k: v.tokens(f"segment {k}", n, optional=False)
                       for k, n in value.items()})


def _where(session_id: Any, agent: Any) -> tuple[str, str]:
    """A session id and an agent name, checked."""
    sid = v.label("session_id", session_id, optional=False)
    who = v.label("agent", agent, optional=False)
    return str(sid), str(who)


def resolve_session(store: Store, session_id: Any) -> tuple[str, bool]:
    """The stored session ``session_id`` names — its exact id, else the only session whose id
    starts with it — and False; or ``session_id`` itself and True when none matches (recording
    will create it). An id that names several sessions is refused."""
    sid = str(v.label("session_id", session_id, optional=False))
    with store.read() as conn:
        if conn.execute(text("SELECT 1 FROM session WHERE id = :s"), {"s": sid}).first():
            return sid, False
        found = [str(r[0]) for r in conn.execute(text(
            "SELECT id FROM session WHERE substr(id, 1, length(:s)) = :s ORDER BY id LIMIT 6"),
            {"s": sid})]
    if len(found) == 1:
        return found[0], False
    if found:
        names = ", ".join(found[:5]) + (", …" if len(found) > 5 else "")
        raise ValueError(f"session_id {sid!r} names {len(found)} sessions ({names}): give "
                         "more of the id")
    return sid, True


def ensure_session(conn: Connection, session_id: str, ts: str, who: Who) -> None:
    """A harness may record pressure for a session it has not appended entries to yet."""
    if not session_id:
        raise ValueError("a session id is required")
    upsert_session(conn, NewSession(id=session_id, format="harness", agent=who[0],
                                    started_at=ts, ended_at=ts), who[0], who[1])


# -- inserts shared with the deriver ----------------------------------------------------------
def insert_snapshot(conn: Connection, who: Who, *, session_id: str, agent: str, ts: str,
                    used_tokens: int, window_tokens: int | None = None,
                    segments: str | None = None, checkpoint_threshold: int | None = None,
                    auto_compact_threshold: int | None = None, event: str = "turn",
                    source_entry_id: int | None = None, message_id: str | None = None) -> int:
    """Insert a snapshot; one with a message id already seen for its series is updated and
    gets the next ``revision`` (m0005), so that a live reader sees the change."""
    if event not in EVENTS:
        raise ValueError(f"event must be one of {', '.join(EVENTS)}, got {event!r}")
    return int(conn.execute(text(
        "INSERT INTO context_snapshot (session_id, agent, ts, window_tokens, used_tokens, "
        "segments, checkpoint_threshold, auto_compact_threshold, event, source_entry_id, "
        "message_id, writer, writer_version, created_at) VALUES (:s, :a, :ts, :win, :used, "
        ":seg, :cp, :ac, :ev, :src, :mid, :w, :wv, :c) "
        "ON CONFLICT (session_id, agent, message_id) DO UPDATE SET "
        "used_tokens = excluded.used_tokens, window_tokens = excluded.window_tokens, "
        "segments = excluded.segments, revision = (SELECT COALESCE(MAX(revision), 0) + 1 "
        "FROM context_snapshot) RETURNING id"), {
        "s": session_id, "a": agent, "ts": ts, "win": window_tokens, "used": used_tokens,
        "seg": segments, "cp": checkpoint_threshold, "ac": auto_compact_threshold, "ev": event,
        "src": source_entry_id, "mid": message_id, "w": who[0], "wv": who[1],
        "c": now_iso()}).scalar_one())


def insert_prune(conn: Connection, who: Who, *, snapshot_id: int | None, session_id: str,
                 agent: str, ts: str, tokens_before: int | None, tokens_after: int | None,
                 entries_pruned: int, preserved: bool | None, verified: bool | None,
                 links: Iterable[tuple[str | None, int | None]], mode: str | None = None,
                 source_entry_id: int | None = None) -> int:
    """Insert a prune event and the (ref, stored entry id) of each entry that left."""
    prune_id = int(conn.execute(text(
        "INSERT INTO prune_event (snapshot_id, session_id, agent, ts, tokens_before, "
        "tokens_after, entries_pruned, preserved, verified, mode, source_entry_id, writer, "
        "writer_version, created_at) VALUES (:snap, :s, :a, :ts, :tb, :ta, :n, :p, :v, :m, "
        ":src, :w, :wv, :c) RETURNING id"), {
        "snap": snapshot_id, "s": session_id, "a": agent, "ts": ts, "tb": tokens_before,
        "ta": tokens_after, "n": entries_pruned, "p": preserved, "v": verified, "m": mode,
        "src": source_entry_id, "w": who[0], "wv": who[1], "c": now_iso()}).scalar_one())
    rows = [{"p": prune_id, "r": ref, "e": eid} for ref, eid in links]
    if rows:
        conn.execute(text("INSERT INTO prune_entry (prune_id, ref, entry_id) VALUES "
                          "(:p, :r, :e)"), rows)
    return prune_id


def insert_handoff(conn: Connection, who: Who, *, session_id: str, agent: str, ts: str,
                   action: str = "written", path: str | None = None, sha256: str | None = None,
                   token_estimate: int | None = None,
                   source_entry_id: int | None = None) -> int:
    return int(conn.execute(text(
        "INSERT INTO handoff (session_id, agent, ts, action, path, sha256, token_estimate, "
        "source_entry_id, writer, writer_version, created_at) VALUES (:s, :a, :ts, :act, :p, "
        ":h, :te, :src, :w, :wv, :c) RETURNING id"), {
        "s": session_id, "a": agent, "ts": ts, "act": action, "p": path, "h": sha256,
        "te": token_estimate, "src": source_entry_id, "w": who[0], "wv": who[1],
        "c": now_iso()}).scalar_one())


def insert_compaction(conn: Connection, who: Who, *, session_id: str, agent: str, ts: str,
                      pre_tokens: int | None, trigger: str | None,
                      summary_entry_id: int | None = None, handoff_id: int | None = None,
                      handoff_path: str | None = None,
                      source_entry_id: int | None = None) -> int:
    return int(conn.execute(text(
        "INSERT INTO compaction (session_id, agent, ts, pre_tokens, trigger, summary_entry_id, "
        "handoff_id, handoff_path, source_entry_id, writer, writer_version, created_at) VALUES "
        "(:s, :a, :ts, :pre, :tr, :sum, :hid, :hp, :src, :w, :wv, :c) RETURNING id"), {
        "s": session_id, "a": agent, "ts": ts, "pre": pre_tokens, "tr": trigger,
        "sum": summary_entry_id, "hid": handoff_id, "hp": handoff_path, "src": source_entry_id,
        "w": who[0], "wv": who[1], "c": now_iso()}).scalar_one())


def resolve_entries(conn: Connection, session_id: str, ids: Iterable[int]) -> set[int]:
    """The ids among ``ids`` that are stored entries of ``session_id``."""
    wanted = sorted({int(i) for i in ids})
    found: set[int] = set()
    for i in range(0, len(wanted), 500):
        part = wanted[i:i + 500]
        marks = ", ".join(f":i{j}" for j in range(len(part)))
        params: dict[str, Any] = {f"i{j}": v for j, v in enumerate(part)}
        params["s"] = session_id
        found.update(int(r[0]) for r in conn.execute(text(
            f"SELECT id FROM entry WHERE session_id = :s AND id IN ({marks})"), params))
    return found


# -- the harness API ---------------------------------------------------------------------------
def _who(store: Store) -> Who:
    return store.writer, store.writer_version


def record_snapshot(store: Store, session_id: str, used_tokens: int, *, agent: str = "main",
                    ts: str | None = None, window_tokens: int | None = None,
                    segments: Mapping[str, int] | None = None,
                    checkpoint_threshold: int | None = None,
                    auto_compact_threshold: int | None = None, event: str = "turn",
                    message_id: str | None = None) -> int:
    """Record how full ``agent``'s live window is now; returns the snapshot id.

    Window and thresholds left out fall back to the ``context.*`` settings when read.
    """
    sid, who_agent = _where(session_id, agent)
    stamp = v.stamp(ts)
    used = v.tokens("used_tokens", used_tokens, optional=False)
    window = v.tokens("window_tokens", window_tokens, positive=True)
    seg = _segments(segments)
    checkpoint = v.tokens("checkpoint_threshold", checkpoint_threshold)
    auto = v.tokens("auto_compact_threshold", auto_compact_threshold)
    kind = v.label("event", event, optional=False, allowed=EVENTS)
    mid = v.label("message_id", message_id)
    with store.write() as conn:
        ensure_session(conn, sid, stamp, _who(store))
        return insert_snapshot(conn, _who(store), session_id=sid, agent=who_agent, ts=stamp,
                               used_tokens=int(used or 0), window_tokens=window, segments=seg,
                               checkpoint_threshold=checkpoint, auto_compact_threshold=auto,
                               event=str(kind), message_id=mid)


def record_prune(store: Store, session_id: str, tokens_before: int, tokens_after: int, *,
                 agent: str = "main", ts: str | None = None,
                 entry_ids: Iterable[int] = (), entries_pruned: int | None = None,
                 preserved: bool | None = None, verified: bool | None = None,
                 window_tokens: int | None = None, mode: str | None = None) -> int:
    """Record that entries left the live window; returns the prune event id.

    ``verified`` left out is checked here: true when every entry id named is stored.
    """
    sid, who_agent = _where(session_id, agent)
    stamp = v.stamp(ts)
    before = v.tokens("tokens_before", tokens_before, optional=False)
    after = v.tokens("tokens_after", tokens_after, optional=False)
    ids = v.entry_ids("entry_ids", entry_ids)
    pruned = v.count("entries_pruned", entries_pruned, optional=True)
    claimed, checked = v.flag("preserved", preserved), v.flag("verified", verified)
    window = v.tokens("window_tokens", window_tokens, positive=True)
    how = v.label("mode", mode)
    with store.write() as conn:
        ensure_session(conn, sid, stamp, _who(store))
        stored = resolve_entries(conn, sid, ids)
        if checked is None and ids:
            checked = len(stored) == len(set(ids))
        snap = insert_snapshot(conn, _who(store), session_id=sid, agent=who_agent,
                               ts=stamp, used_tokens=after or 0, window_tokens=window,
                               event="prune")
        return insert_prune(conn, _who(store), snapshot_id=snap, session_id=sid,
                            agent=who_agent, ts=stamp, tokens_before=before, tokens_after=after,
                            entries_pruned=len(ids) if pruned is None else pruned,
                            preserved=claimed, verified=checked, mode=how,
                            links=[(None, i if i in stored else None) for i in ids])


def record_compaction(store: Store, session_id: str, pre_tokens: int | None, *,
                      agent: str = "main", ts: str | None = None, trigger: str | None = None,
                      summary_entry_id: int | None = None,
                      handoff_path: str | None = None) -> int:
    """Record a compaction of the live window; returns its id."""
    sid, who_agent = _where(session_id, agent)
    stamp = v.stamp(ts)
    pre = v.tokens("pre_tokens", pre_tokens)
    why = v.label("trigger", trigger)
    summary = None if summary_entry_id is None else v.entry_id("summary_entry_id",
                                                               summary_entry_id)
    path = v.label("handoff_path", handoff_path)
    with store.write() as conn:
        ensure_session(conn, sid, stamp, _who(store))
        if summary is not None and not resolve_entries(conn, sid, [summary]):
            raise ValueError(f"summary entry {summary} is not an entry of session {sid}")
        return insert_compaction(conn, _who(store), session_id=sid, agent=who_agent,
                                 ts=stamp, pre_tokens=pre, trigger=why,
                                 summary_entry_id=summary, handoff_path=path)


def record_handoff(store: Store, session_id: str, path: str | None, *, agent: str = "main",
                   ts: str | None = None, action: str = "written", sha256: str | None = None,
                   token_estimate: int | None = None) -> int:
    """Record a handoff written (before a compaction) or replayed (after one)."""
    sid, who_agent = _where(session_id, agent)
    act = v.label("action", action, optional=False, allowed=v.HANDOFF_ACTIONS)
    stamp = v.stamp(ts)
    where = v.label("path", path)
    digest = v.label("sha256", sha256)
    estimate = v.tokens("token_estimate", token_estimate)
    with store.write() as conn:
        ensure_session(conn, sid, stamp, _who(store))
        return insert_handoff(conn, _who(store), session_id=sid, agent=who_agent, ts=stamp,
                              action=str(act), path=where, sha256=digest,
                              token_estimate=estimate)


def record_checkpoint(store: Store, session_id: str | None, *, trigger: str = "harness",
                      ts: str | None = None, status: str = "ok", agent: str = "main",
                      entries_added: int = 0, memories_written: int = 0,
                      chunks_embedded: int = 0, chunks_failed: int = 0,
                      archive_verified: bool | None = None, index_verified: bool | None = None,
                      duration_ms: float | None = None,
                      used_tokens: int | None = None,
                      through_entry_id: int | None = None) -> int:
    """Record a checkpoint row (store-wide with ``session_id`` None); with ``used_tokens``
    also a ``checkpoint`` snapshot. ``through_entry_id``: the highest entry it covers."""
    sid = v.label("session_id", session_id)
    who_agent = str(v.label("agent", agent, optional=False))
    stamp = v.stamp(ts)
    values = {
        "tr": v.label("trigger", trigger, optional=False),
        "st": v.label("status", status, optional=False, allowed=v.CHECKPOINT_STATUSES),
        "ea": v.count("entries_added", entries_added),
        "mw": v.count("memories_written", memories_written),
        "ce": v.count("chunks_embedded", chunks_embedded),
        "cf": v.count("chunks_failed", chunks_failed),
        "av": v.flag("archive_verified", archive_verified),
        "iv": v.flag("index_verified", index_verified),
        "d": v.duration("duration_ms", duration_ms),
        "te": v.count("through_entry_id", through_entry_id) if through_entry_id else None}
    used = v.tokens("used_tokens", used_tokens)
    if used is not None and sid is None:
        raise ValueError("used_tokens needs a session_id (a store-wide checkpoint has no "
                         "live window)")
    who = _who(store)
    with store.write() as conn:
        if sid:
            ensure_session(conn, sid, stamp, who)
        cid = int(conn.execute(text(
            "INSERT INTO checkpoint (session_id, ts, trigger, status, entries_added, "
            "memories_written, chunks_embedded, chunks_failed, archive_verified, "
            "index_verified, duration_ms, through_entry_id, source, writer, writer_version, "
            "created_at) VALUES "
            "(:s, :ts, :tr, :st, :ea, :mw, :ce, :cf, :av, :iv, :d, :te, 'harness', :w, :wv, :c) "
            "RETURNING id"), {
            "s": sid, "ts": stamp, **values, "w": who[0], "wv": who[1],
            "c": now_iso()}).scalar_one())
        if used is not None and sid:
            insert_snapshot(conn, who, session_id=sid, agent=who_agent, ts=stamp,
                            used_tokens=used, event="checkpoint")
    return cid
