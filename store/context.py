"""Context pressure (LCA §4.5, §6.2): the harness API that records snapshots, prunes,
compactions, handoffs and checkpoints, and the reads the CLI and the Context screen use.

Rows recorded here have no source entry: they are history and ``reindex`` keeps them. Rows
interpreted from stored entries come from ``store.context_derive``. Series queries live in
``store.context_series``; they are re-exported here so a caller needs one import.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, text

from store.context_records import (
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
from store.context_series import checkpoints, latest_key, series, series_keys, snapshots_since
from store.timeutil import normalise_iso, now_iso
from store.writes import NewSession, upsert_session

if TYPE_CHECKING:
    from store.facade import Store

__all__ = ["CheckpointInfo", "Compaction", "Handoff", "PruneEvent", "Series", "SeriesKey",
           "Snapshot", "checkpoints", "latest_key", "record_checkpoint", "record_compaction",
           "record_handoff", "record_prune", "record_snapshot", "series", "series_keys",
           "snapshots_since"]

Who = tuple[str, str]


def _ts(value: str | None) -> str:
    if value is None:
        return now_iso()
    ts = normalise_iso(value)
    if ts is None:
        raise ValueError(f"timestamp {value!r} is not ISO-8601")
    return ts


def _count(name: str, value: Any, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"{name} must be a non-negative number of tokens, got {value!r}")
    return int(value)


def _segments(value: Mapping[str, Any] | None) -> str | None:
    if value is None:
        return None
    unknown = set(value) - set(SEGMENTS)
    if unknown:
        raise ValueError(f"unknown segment(s) {', '.join(sorted(unknown))}: segments are "
                         f"{', '.join(SEGMENTS)}")
    return json.dumps({k: _count(f"segment {k}", v, False) for k, v in value.items()})


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
    """Insert a snapshot; one with a message id already seen for its series is updated."""
    if event not in EVENTS:
        raise ValueError(f"event must be one of {', '.join(EVENTS)}, got {event!r}")
    return int(conn.execute(text(
        "INSERT INTO context_snapshot (session_id, agent, ts, window_tokens, used_tokens, "
        "segments, checkpoint_threshold, auto_compact_threshold, event, source_entry_id, "
        "message_id, writer, writer_version, created_at) VALUES (:s, :a, :ts, :win, :used, "
        ":seg, :cp, :ac, :ev, :src, :mid, :w, :wv, :c) "
        "ON CONFLICT (session_id, agent, message_id) DO UPDATE SET "
        "used_tokens = excluded.used_tokens, window_tokens = excluded.window_tokens, "
        "segments = excluded.segments RETURNING id"), {
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
    stamp = _ts(ts)
    used = _count("used_tokens", used_tokens, False)
    window = _count("window_tokens", window_tokens)
    seg = _segments(segments)
    checkpoint = _count("checkpoint_threshold", checkpoint_threshold)
    auto = _count("auto_compact_threshold", auto_compact_threshold)
    with store.write() as conn:
        ensure_session(conn, session_id, stamp, _who(store))
        return insert_snapshot(conn, _who(store), session_id=session_id, agent=agent, ts=stamp,
                               used_tokens=int(used or 0), window_tokens=window, segments=seg,
                               checkpoint_threshold=checkpoint, auto_compact_threshold=auto,
                               event=event, message_id=message_id)


def record_prune(store: Store, session_id: str, tokens_before: int, tokens_after: int, *,
                 agent: str = "main", ts: str | None = None,
                 entry_ids: Iterable[int] = (), entries_pruned: int | None = None,
                 preserved: bool | None = None, verified: bool | None = None,
                 window_tokens: int | None = None, mode: str | None = None) -> int:
    """Record that entries left the live window; returns the prune event id.

    ``verified`` left out is checked here: true when every entry id named is stored.
    """
    stamp = _ts(ts)
    before = _count("tokens_before", tokens_before, False)
    after = _count("tokens_after", tokens_after, False)
    ids = [int(i) for i in entry_ids]
    with store.write() as conn:
        ensure_session(conn, session_id, stamp, _who(store))
        stored = resolve_entries(conn, session_id, ids)
        if verified is None and ids:
            verified = len(stored) == len(set(ids))
        snap = insert_snapshot(conn, _who(store), session_id=session_id, agent=agent,
                               ts=stamp, used_tokens=after or 0,
                               window_tokens=_count("window_tokens", window_tokens),
                               event="prune")
        return insert_prune(conn, _who(store), snapshot_id=snap, session_id=session_id,
                            agent=agent, ts=stamp, tokens_before=before, tokens_after=after,
                            entries_pruned=len(ids) if entries_pruned is None
                            else int(entries_pruned),
                            preserved=preserved, verified=verified, mode=mode,
                            links=[(None, i if i in stored else None) for i in ids])


def record_compaction(store: Store, session_id: str, pre_tokens: int | None, *,
                      agent: str = "main", ts: str | None = None, trigger: str | None = None,
                      summary_entry_id: int | None = None,
                      handoff_path: str | None = None) -> int:
    """Record a compaction of the live window; returns its id."""
    stamp = _ts(ts)
    with store.write() as conn:
        ensure_session(conn, session_id, stamp, _who(store))
        if summary_entry_id is not None and not resolve_entries(conn, session_id,
                                                                [summary_entry_id]):
            raise ValueError(f"summary entry {summary_entry_id} is not an entry of "
                             f"session {session_id}")
        return insert_compaction(conn, _who(store), session_id=session_id, agent=agent,
                                 ts=stamp, pre_tokens=_count("pre_tokens", pre_tokens),
                                 trigger=trigger, summary_entry_id=summary_entry_id,
                                 handoff_path=handoff_path)


def record_handoff(store: Store, session_id: str, path: str | None, *, agent: str = "main",
                   ts: str | None = None, action: str = "written", sha256: str | None = None,
                   token_estimate: int | None = None) -> int:
    """Record a handoff written (before a compaction) or replayed (after one)."""
    if action not in ("written", "replayed"):
        raise ValueError(f"handoff action must be 'written' or 'replayed', got {action!r}")
    stamp = _ts(ts)
    with store.write() as conn:
        ensure_session(conn, session_id, stamp, _who(store))
        return insert_handoff(conn, _who(store), session_id=session_id, agent=agent, ts=stamp,
                              action=action, path=path, sha256=sha256,
                              token_estimate=_count("token_estimate", token_estimate))


def record_checkpoint(store: Store, session_id: str | None, *, trigger: str = "harness",
                      ts: str | None = None, status: str = "ok", agent: str = "main",
                      entries_added: int = 0, memories_written: int = 0,
                      chunks_embedded: int = 0, chunks_failed: int = 0,
                      archive_verified: bool | None = None, index_verified: bool | None = None,
                      duration_ms: float | None = None,
                      used_tokens: int | None = None) -> int:
    """Record a checkpoint row; with ``used_tokens`` also a ``checkpoint`` snapshot."""
    stamp = _ts(ts)
    who = _who(store)
    with store.write() as conn:
        if session_id:
            ensure_session(conn, session_id, stamp, who)
        cid = int(conn.execute(text(
            "INSERT INTO checkpoint (session_id, ts, trigger, status, entries_added, "
            "memories_written, chunks_embedded, chunks_failed, archive_verified, "
            "index_verified, duration_ms, source, writer, writer_version, created_at) VALUES "
            "(:s, :ts, :tr, :st, :ea, :mw, :ce, :cf, :av, :iv, :d, 'harness', :w, :wv, :c) "
            "RETURNING id"), {
            "s": session_id or None, "ts": stamp, "tr": trigger, "st": status,
            "ea": entries_added, "mw": memories_written, "ce": chunks_embedded,
            "cf": chunks_failed, "av": archive_verified, "iv": index_verified,
            "d": duration_ms, "w": who[0], "wv": who[1], "c": now_iso()}).scalar_one())
        if used_tokens is not None and session_id:
            insert_snapshot(conn, who, session_id=session_id, agent=agent, ts=stamp,
                            used_tokens=int(_count("used_tokens", used_tokens, False) or 0),
                            event="checkpoint")
    return cid
