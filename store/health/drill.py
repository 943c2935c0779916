"""From offending rows to what an operator reads: a label for each row and the record that
shows it (a ``RecordRef``: an entry of a session, a memory, a session's context series for a
compaction, checkpoint or snapshot, a proposal). Secret memories are named by id only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from store.context.models import Compaction, ContextSnapshot
from store.core.db import orm
from store.core.models import Checkpoint, Chunk, Entry, Memory
from store.core.records import RecordRef
from store.health.records import Row, RowView

if TYPE_CHECKING:
    from sqlmodel import Session

    from store.core.base import StoreBase as Store


def _by_id(session: Session, model: Any, ids: Sequence[int]) -> dict[int, Any]:
    out: dict[int, Any] = {}
    wanted = sorted({int(i) for i in ids})
    for i in range(0, len(wanted), 500):
        for obj in session.exec(select(model).where(col(model.id).in_(wanted[i:i + 500]))):
            out[int(obj.id)] = obj
    return out


def _entry(e: Entry, what: str = "") -> tuple[str, RecordRef]:
    agent = "" if e.agent == "main" else f" {e.agent}"
    return (f"{what}entry {e.session_id[:8]} #{e.seq} {e.kind}{agent}",
            RecordRef.entry(e.session_id, e.seq))


def _memory(m: Memory, what: str = "") -> tuple[str, RecordRef]:
    name = "(secret)" if m.sensitivity == "secret" else m.name
    critical = " critical" if m.critical else ""
    return f"{what}memory {m.id}{critical} {name}", RecordRef("memory", int(m.id or 0))


def describe(store: Store, rows: Sequence[Row]) -> list[RowView]:
    """Labels and the records that show them for ``rows`` (in their order)."""
    ids: dict[str, list[int]] = {}
    for r in rows:
        if isinstance(r.id, int):
            ids.setdefault(r.kind, []).append(r.id)
    with store.read() as conn, orm(conn) as session:
        chunks = _by_id(session, Chunk, ids.get("chunk", []))
        entry_ids = ids.get("entry", []) + [c.source_id for c in chunks.values()
                                            if c.source_type == "entry"]
        memory_ids = ids.get("memory", []) + [c.source_id for c in chunks.values()
                                              if c.source_type == "memory"]
        entries = _by_id(session, Entry, entry_ids)
        memories = _by_id(session, Memory, memory_ids)
        checkpoints = _by_id(session, Checkpoint, ids.get("checkpoint", []))
        compactions = _by_id(session, Compaction, ids.get("compaction", []))
        snapshots = _by_id(session, ContextSnapshot, ids.get("snapshot", []))
    out: list[RowView] = []
    for r in rows:
        label: str = f"{r.kind} {r.id}"
        target: RecordRef | None = None
        if r.kind == "entry" and r.id in entries:
            label, target = _entry(entries[int(r.id)])
        elif r.kind == "memory" and r.id in memories:
            label, target = _memory(memories[int(r.id)])
        elif r.kind == "chunk" and r.id in chunks:
            c = chunks[int(r.id)]
            what = f"chunk {c.id} [{c.span_start}:{c.span_end}] of "
            if c.source_type == "entry" and c.source_id in entries:
                label, target = _entry(entries[c.source_id], what)
            elif c.source_type == "memory" and c.source_id in memories:
                label, target = _memory(memories[c.source_id], what)
            else:
                label = f"{what}{c.source_type} {c.source_id} (gone)"
        elif r.kind == "checkpoint" and r.id in checkpoints:
            cp = checkpoints[int(r.id)]
            where = f" session {cp.session_id[:8]}" if cp.session_id else " store-wide"
            label = f"checkpoint {cp.id} {cp.trigger}{where}"
            target = RecordRef.series(cp.session_id) if cp.session_id else None
        elif r.kind == "compaction" and r.id in compactions:
            c2 = compactions[int(r.id)]
            label = f"compaction {c2.id} session {c2.session_id[:8]} agent {c2.agent}"
            target = RecordRef.series(c2.session_id, c2.agent)
        elif r.kind == "snapshot" and r.id in snapshots:
            s = snapshots[int(r.id)]
            label = f"snapshot {s.id} session {s.session_id[:8]} agent {s.agent}"
            target = RecordRef.series(s.session_id, s.agent)
        elif r.kind == "proposal":
            label, target = f"proposal {r.id}", RecordRef("proposal", int(r.id))
        elif r.kind == "writer":
            label = f"writer {r.id}"
        out.append(RowView(r, label, target))
    return out
