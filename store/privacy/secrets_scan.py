"""``lca-tui scan-secrets``: the secrets detector over a store imported before it existed.

Every entry and memory with no finding recorded yet goes through the detector (the one the
write path runs, ``store.core.secrets``). A hit marks the record ``secret``, records the
kinds found (``via = 'scan'``), rebuilds its chunks, vectors and FTS rows with placeholders
in place of the values, rewrites a queued entry's FTS row, masks the recall traces' copies
(a candidate's excerpt and label; a trace's query holding a value gets the placeholders)
and audits the scan (counts only). Records a person un-marked (``mark --unmark-detected``)
are not scanned again. It is not ``reindex``: only the records found are rebuilt.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import Connection, update
from sqlmodel import col, select

from store.core.db import columns, yield_to_writers
from store.core.detected import mark_scanned as _scanned
from store.core.detected import record, recorded
from store.core.index import Indexer, Prepared, Source, drop_chunks_of
from store.core.memories import index_text
from store.core.models import EmbedQueue, Entry, Memory, SecretFinding
from store.core.secrets import kinds
from store.core.vec import mask_queue_fts
from store.core.vocab import Progress
from store.recall.models import RecallCandidate, RecallTrace

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

_BATCH = 256


@dataclass
class SecretScanReport:
    """What a scan found and changed (counts and kinds only)."""

    entries_scanned: int = 0
    memories_scanned: int = 0
    entries_marked: int = 0
    memories_marked: int = 0
    kinds: dict[str, int] = field(default_factory=dict)  # kind → records holding it
    chunks_rebuilt: int = 0
    traces_masked: int = 0
    seconds: float = 0.0
    dry_run: bool = False

    def to_json(self) -> dict[str, object]:
        return {"entries_scanned": self.entries_scanned,
                "memories_scanned": self.memories_scanned,
                "entries_marked": self.entries_marked,
                "memories_marked": self.memories_marked, "kinds": self.kinds,
                "chunks_rebuilt": self.chunks_rebuilt, "traces_masked": self.traces_masked,
                "seconds": round(self.seconds, 2), "dry_run": self.dry_run}


@dataclass(frozen=True)
class FindingInfo:
    """One record's findings, as ``scan-secrets --list`` shows them (never a value)."""

    source_type: str
    source_id: int
    kinds: dict[str, int]
    found_at: str
    via: str
    dismissed: bool

    def to_json(self) -> dict[str, object]:
        return {"source_type": self.source_type, "source_id": self.source_id,
                "kinds": self.kinds, "found_at": self.found_at, "via": self.via,
                "dismissed": self.dismissed}


def findings(store: Store) -> list[FindingInfo]:
    """Every record with findings, oldest first, ``<private>`` spans included."""
    kinds_of: dict[tuple[str, int], dict[str, int]] = {}
    first: dict[tuple[str, int], tuple[str, str, bool]] = {}
    with store.read() as conn:
        rows = conn.execute(columns(
            col(SecretFinding.source_type), col(SecretFinding.source_id),
            col(SecretFinding.kind), col(SecretFinding.count), col(SecretFinding.found_at),
            col(SecretFinding.via), col(SecretFinding.dismissed_at))
            .order_by(col(SecretFinding.id))).all()
    for stype, sid, kind, n, at, via, gone in rows:
        key = (str(stype), int(sid))
        first.setdefault(key, (str(at), str(via), gone is not None))
        held = kinds_of.setdefault(key, {})
        held[str(kind)] = held.get(str(kind), 0) + int(n)
    return [FindingInfo(t, i, dict(sorted(kinds_of[(t, i)].items())), *first[(t, i)])
            for (t, i) in first]


def scan(store: Store, *, dry_run: bool = False, progress: Progress | None = None,
         actor: str | None = None) -> SecretScanReport:
    """Run the detector over every entry and memory not scanned yet (see the module). On a
    store opened read-only only ``dry_run`` runs: the scan marks and re-indexes what it finds,
    so it is refused before it reads anything (not after a scan it could not keep)."""
    if store.read_only and not dry_run:
        from store.core.errors import ReadOnly

        raise ReadOnly("scanning for secrets (it marks what it finds; --dry-run only counts)")
    started = time.perf_counter()
    report = SecretScanReport(dry_run=dry_run)
    det = store.detector()
    with store.read() as conn:
        entries = conn.execute(columns(col(Entry.id), col(Entry.content),
                                       col(Entry.content_hash), col(Entry.kind))
                               .order_by(col(Entry.id))).all()
        memories = conn.execute(columns(
            col(Memory.id), col(Memory.name), col(Memory.description), col(Memory.body),
            col(Memory.invariant), col(Memory.content_hash)).order_by(col(Memory.id))).all()
        done_entries = recorded(conn, "entry", [int(r[0]) for r in entries])
        done_memories = recorded(conn, "memory", [int(r[0]) for r in memories])
    sources = [Source("entry", int(r[0]), r[1], r[2], r[3]) for r in entries
               if int(r[0]) not in done_entries]
    sources += [Source("memory", int(r[0]), index_text(r[1], r[2], r[3], r[4]), r[5])
                for r in memories if int(r[0]) not in done_memories]
    del entries, memories
    report.entries_scanned = sum(1 for s in sources if s.source_type == "entry")
    report.memories_scanned = len(sources) - report.entries_scanned
    hits: list[tuple[Source, dict[str, int]]] = []
    for i, s in enumerate(sources):
        found = det.detect(s.text)
        if found:
            hits.append((s, kinds(found)))
        if progress and (i % 500 == 0 or i + 1 == len(sources)):
            progress("scan", i + 1, len(sources))
    for s, held in hits:
        report.entries_marked += s.source_type == "entry"
        report.memories_marked += s.source_type == "memory"
        for kind in held:
            report.kinds[kind] = report.kinds.get(kind, 0) + 1
    report.kinds = dict(sorted(report.kinds.items()))
    if dry_run:
        report.seconds = time.perf_counter() - started
        return report
    if not hits:
        with store.write() as conn:
            _scanned(conn)
        report.seconds = time.perf_counter() - started
        return report
    indexer = store.indexer(progress)
    for i in range(0, len(hits), _BATCH):
        part = hits[i:i + _BATCH]
        prepared = indexer.prepare({s.content_hash: s.text for s, _ in part},
                                   frozenset(s.content_hash for s, _ in part
                                             if s.kind in ("tool_call", "tool_result")))
        if i:
            yield_to_writers(store.engine)
        with store.write() as conn:
            report.chunks_rebuilt += _mark(store, conn, indexer, part, prepared, report)
    with store.write() as conn:
        report.traces_masked += _mask_queries(conn, indexer)
        _scanned(conn)
        store.audit_in(conn, "scan-secrets", "store", [],
                       {"entries_marked": report.entries_marked,
                     "memories_marked": report.memories_marked,
                     "chunks_rebuilt": report.chunks_rebuilt,
                     "traces_masked": report.traces_masked}, actor=actor)
    report.seconds = time.perf_counter() - started
    return report


def _mark(store: Store, conn: Connection, indexer: Indexer,
          part: list[tuple[Source, dict[str, int]]], prepared: dict[str, list[Prepared]],
          report: SecretScanReport) -> int:
    """Mark one batch secret, record its findings, mask the trace candidates naming it and
    rebuild its chunks (and a queued entry's FTS row) from the masked text."""
    for stype in ("entry", "memory"):
        ids = [s.source_id for s, _ in part if s.source_type == stype]
        if not ids:
            continue
        model = Entry if stype == "entry" else Memory
        conn.execute(update(model).where(col(model.id).in_(ids)).values(sensitivity="secret"))
        record(conn, stype, {s.source_id: k for s, k in part if s.source_type == stype},
               "scan", store.writer, store.writer_version)
        report.traces_masked += conn.execute(update(RecallCandidate).where(
            col(RecallCandidate.source_type) == stype, col(RecallCandidate.source_id).in_(ids))
            .values(excerpt=None, label=None, masked=1)).rowcount or 0
    for s, _ in part:
        drop_chunks_of(conn, s.source_type, s.source_id)
    result = indexer.index(conn, [s for s, _ in part], prepared)
    queued = set(conn.execute(select(EmbedQueue.entry_id).where(col(EmbedQueue.entry_id).in_(
        [s.source_id for s, _ in part if s.source_type == "entry"]))).scalars())
    mask_queue_fts(conn, [(s.source_id, indexer.detector.mask(s.text)) for s, _ in part
                          if s.source_type == "entry" and s.source_id in queued])
    return result.chunks


def _mask_queries(conn: Connection, indexer: Indexer) -> int:
    """A trace's query that held a value is kept with the placeholders; returns how many."""
    det, n = indexer.detector, 0
    for tid, query in conn.execute(select(RecallTrace.id, RecallTrace.query)).all():
        if query and det.detect(query):
            conn.execute(update(RecallTrace).where(col(RecallTrace.id) == tid)
                         .values(query=det.mask(query)))
            n += 1
    return n
