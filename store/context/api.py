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

from sqlalchemy import Connection, func, insert
from sqlmodel import col, select

from store.context import validate as v
from store.context.models import Compaction as CompactionRow
from store.context.models import ContextSnapshot as SnapshotRow
from store.context.models import Handoff as HandoffRow
from store.context.models import PruneEntry
from store.context.models import PruneEvent as PruneRow
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
from store.core.db import orm
from store.core.models import Checkpoint, Entry
from store.core.models import Session as SessionRow
from store.core.timeutil import now_iso
from store.core.writes import NewSession, upsert_session
from store.core.db import upsert

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
    with store.read() as conn, orm(conn) as s:
        if s.get(SessionRow, sid) is not None:
            return sid, False
        found = list(s.exec(select(SessionRow.id).where(
            col(SessionRow.id).startswith(sid, autoescape=True))
            .order_by(col(SessionRow.id)).limit(6)).all())
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
def _stamped(who: Who, **values: Any) -> dict[str, Any]:
    return dict(values, writer=who[0], writer_version=who[1], created_at=now_iso())


def _insert(conn: Connection, model: Any, values: dict[str, Any]) -> int:
    """Insert one row through Core on its model (the deriver writes one per stored turn: a
    plain insert, no ORM unit of work); returns its id."""
    return int(conn.execute(insert(model).returning(model.id), values).scalar_one())


def insert_snapshot(conn: Connection, who: Who, *, session_id: str, agent: str, ts: str,
                    used_tokens: int, window_tokens: int | None = None,
                    segments: str | None = None, checkpoint_threshold: int | None = None,
                    auto_compact_threshold: int | None = None, event: str = "turn",
                    source_entry_id: int | None = None, message_id: str | None = None) -> int:
    """Insert a snapshot; one with a message id already seen for its series is updated and
    gets the next ``revision`` (m0005), so that a live reader sees the change."""
    if event not in EVENTS:
        raise ValueError(f"event must be one of {', '.join(EVENTS)}, got {event!r}")
    new = upsert(conn, SnapshotRow).values(_stamped(
        who, session_id=session_id, agent=agent, ts=ts, window_tokens=window_tokens,
        used_tokens=used_tokens, segments=segments, checkpoint_threshold=checkpoint_threshold,
        auto_compact_threshold=auto_compact_threshold, event=event,
        source_entry_id=source_entry_id, message_id=message_id))
    next_revision = select(func.coalesce(func.max(col(SnapshotRow.revision)), 0) + 1)
    statement = new.on_conflict_do_update(
        index_elements=["session_id", "agent", "message_id"],
        set_={"used_tokens": new.excluded.used_tokens,
              "window_tokens": new.excluded.window_tokens,
              "segments": new.excluded.segments,
              "revision": next_revision.scalar_subquery()})
    snapshot_id = conn.execute(statement.returning(col(SnapshotRow.id))).scalar_one()
    assert snapshot_id is not None
    return snapshot_id


def insert_prune(conn: Connection, who: Who, *, snapshot_id: int | None, session_id: str,
                 agent: str, ts: str, tokens_before: int | None, tokens_after: int | None,
                 entries_pruned: int, preserved: bool | None, verified: bool | None,
                 links: Iterable[tuple[str | None, int | None]], mode: str | None = None,
                 source_entry_id: int | None = None) -> int:
    """Insert a prune event and the (ref, stored entry id) of each entry that left."""
    prune_id = _insert(conn, PruneRow, _stamped(
        who, snapshot_id=snapshot_id, session_id=session_id, agent=agent, ts=ts,
        tokens_before=tokens_before, tokens_after=tokens_after, entries_pruned=entries_pruned,
        preserved=preserved, verified=verified, mode=mode, source_entry_id=source_entry_id))
    rows = [{"prune_id": prune_id, "ref": ref, "entry_id": eid} for ref, eid in links]
    if rows:
        conn.execute(insert(PruneEntry), rows)
    return prune_id


def insert_handoff(conn: Connection, who: Who, *, session_id: str, agent: str, ts: str,
                   action: str = "written", path: str | None = None, sha256: str | None = None,
                   token_estimate: int | None = None,
                   source_entry_id: int | None = None) -> int:
    return _insert(conn, HandoffRow, _stamped(
        who, session_id=session_id, agent=agent, ts=ts, action=action, path=path,
        sha256=sha256, token_estimate=token_estimate, source_entry_id=source_entry_id))


def insert_compaction(conn: Connection, who: Who, *, session_id: str, agent: str, ts: str,
                      pre_tokens: int | None, trigger: str | None,
                      summary_entry_id: int | None = None, handoff_id: int | None = None,
                      handoff_path: str | None = None,
                      source_entry_id: int | None = None) -> int:
    return _insert(conn, CompactionRow, _stamped(
        who, session_id=session_id, agent=agent, ts=ts, pre_tokens=pre_tokens,
        trigger=trigger, summary_entry_id=summary_entry_id, handoff_id=handoff_id,
        handoff_path=handoff_path, source_entry_id=source_entry_id))


def resolve_entries(conn: Connection, session_id: str, ids: Iterable[int]) -> set[int]:
    """The ids among ``ids`` that are stored entries of ``session_id``."""
    wanted = sorted({int(i) for i in ids})
    found: set[int] = set()
    for i in range(0, len(wanted), 500):
        found.update(conn.execute(select(Entry.id).where(
            Entry.session_id == session_id, col(Entry.id).in_(wanted[i:i + 500]))).scalars())
    return {int(i) for i in found if i is not None}


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
                      through_entry_id: int | None = None,
                      touch_session: bool = True) -> int:
    """Record a checkpoint row (store-wide with ``session_id`` None); with ``used_tokens``
    also a ``checkpoint`` snapshot. ``through_entry_id``: the highest entry it covers.
    ``touch_session`` False: the session must exist and its start and end stay as they are
    (a checkpoint written about a session after the fact, e.g. a consolidation pass, is not
    activity in it)."""
    sid = v.label("session_id", session_id)
    who_agent = str(v.label("agent", agent, optional=False))
    stamp = v.stamp(ts)
    values: dict[str, Any] = {
        "trigger": v.label("trigger", trigger, optional=False),
        "status": v.label("status", status, optional=False, allowed=v.CHECKPOINT_STATUSES),
        "entries_added": v.count("entries_added", entries_added),
        "memories_written": v.count("memories_written", memories_written),
        "chunks_embedded": v.count("chunks_embedded", chunks_embedded),
        "chunks_failed": v.count("chunks_failed", chunks_failed),
        "archive_verified": v.flag("archive_verified", archive_verified),
        "index_verified": v.flag("index_verified", index_verified),
        "duration_ms": v.duration("duration_ms", duration_ms),
        "through_entry_id": v.count("through_entry_id", through_entry_id)
        if through_entry_id else None}
    used = v.tokens("used_tokens", used_tokens)
    if used is not None and sid is None:
        raise ValueError("used_tokens needs a session_id (a store-wide checkpoint has no "
                         "live window)")
    who = _who(store)
    with store.write() as conn:
        if sid and touch_session:
            ensure_session(conn, sid, stamp, who)
        elif sid:
            with orm(conn) as s:
                if s.get(SessionRow, sid) is None:
                    raise ValueError(f"no session {sid}")
        with orm(conn) as s:
            row = Checkpoint(**_stamped(who, session_id=sid, ts=stamp, source="harness",
                                        **values))
            s.add(row)
            s.flush()
        assert row.id is not None
        cid = row.id
        if used is not None and sid:
            insert_snapshot(conn, who, session_id=sid, agent=who_agent, ts=stamp,
                            used_tokens=used, event="checkpoint")
    return cid


# -- one record document, as ``lca-tui context record`` reads them -------------------------
RECORDERS = {"snapshot": record_snapshot, "prune": record_prune,
             "compaction": record_compaction, "checkpoint": record_checkpoint,
             "handoff": record_handoff}
"""Each record kind and the function that records it (its keywords are the document's
fields: the signature is the one definition of what a kind takes)."""


def _percent(obj: dict[str, Any], pct: str, key: str) -> None:
    value, window = obj.pop(pct), obj.get("window_tokens")
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        raise ValueError(f"{pct} needs window_tokens (a positive number of tokens)")
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not 0 <= value <= 100:
        raise ValueError(f"{pct} must be a number from 0 to 100, got {value!r}")
    if key in obj:
        raise ValueError(f"give {pct} or {key}, not both")
    obj[key] = round(window * float(value) / 100)


def record_document(store: Store, doc: Mapping[str, object]) -> tuple[str, int, str | None]:
    """Validate and record one document (``{"type": kind, …}``, the type defaulting to
    ``snapshot``); returns its type, the id recorded and the session it created (when
    ``session_id`` matched no stored session, neither exactly nor as a unique prefix). A bad
    document raises ``ValueError`` naming the field, and nothing is written."""
    import inspect

    from sqlalchemy.exc import SQLAlchemyError

    if not isinstance(doc, Mapping):
        raise ValueError(f"a context record is a JSON object, got {type(doc).__name__}")
    obj: dict[str, Any] = dict(doc)
    kind = obj.pop("type", "snapshot")
    if not isinstance(kind, str) or kind not in RECORDERS:
        raise ValueError(f"type must be one of {', '.join(RECORDERS)}, got {kind!r}")
    func: Any = RECORDERS[kind]
    if "session_id" not in obj and kind != "checkpoint":
        raise ValueError("session_id is required")
    if kind == "snapshot":
        for pct, key in (("checkpoint_percent", "checkpoint_threshold"),
                         ("auto_compact_percent", "auto_compact_threshold")):
            if pct in obj:
                _percent(obj, pct, key)
    params = inspect.signature(func).parameters
    allowed = set(params) - {"store"}
    missing = [n for n, p in params.items() if n not in ("store", "session_id")
               and n not in obj and p.default is inspect.Parameter.empty]
    if missing:
        raise ValueError(f"a {kind} record needs {', '.join(missing)}")
    unknown = set(obj) - allowed
    if unknown:
        raise ValueError(f"unknown field(s) for a {kind}: {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(sorted(allowed))})")
    created = None
    if kind == "checkpoint" and obj.get("session_id") is None:
        obj["session_id"] = None  # a store-wide checkpoint
    else:
        obj["session_id"], new = resolve_session(store, obj.get("session_id"))
        created = obj["session_id"] if new else None
    try:
        return kind, int(func(store, **obj)), created
    except TypeError as exc:
        raise ValueError(f"a {kind} record is incomplete or has a wrong type: {exc}") from exc
    except SQLAlchemyError as exc:
        raise ValueError(f"the store refused it: {getattr(exc, 'orig', None) or exc}") from exc
