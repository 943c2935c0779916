"""The Appendix D incidents as a store records them, for the demo (and for tests that want the
real thing rather than a hand-made row). Each is made the way it happened — by another writer,
another embedder, a stale hook — through the same write paths, never by editing figures:

- a stale hook deployment (``lca-tui:hook`` several versions behind) whose pre-compaction
  checkpoint reported ok and embedded nothing;
- an embedder that rejected oversized inputs, used by an indexer that did not split them:
  failed chunks;
- the critical set grown past its budget (critical memory files written into the memory
  directory the agent loads);
- a second writer re-indexing spans already indexed, night after night;
- the harness reporting an auto-compact threshold below the checkpoint threshold.

The loader drift (a nested ``critical``), the checkpoint of ``LOG.md`` that vectorised nothing
and the compaction with no checkpoint before it come with the demo data itself.
"""

from __future__ import annotations

from collections.abc import Callable

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import func
from sqlmodel import col, select, update

from store.context.api import record_checkpoint, record_snapshot
from store.context.models import Compaction
from store.core.base import StoreBase
from store.core.db import columns, orm
from store.core.embed import Embedder
from store.core.index import Indexer, Source
from store.core.models import Chunk, Entry, Memory, Session
from store.core.timeutil import parse_iso, to_iso
from store.core.vocab import Progress
from store.core.memories import index_text as memory_index_text

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

STALE_HOOK = ("lca-tui:hook", "0.0.3")
NIGHTLY = ("nightly-consolidate.sh", "1.4")
OLD_INDEXER = ("mindstone-indexer", "0.9.2")


class LimitedEmbedder:
    """Another embedder's behaviour: it rejects any input longer than ``max_chars`` (the local
    embedder of Appendix D did; the chunker of this store splits instead)."""

    def __init__(self, inner: Embedder, max_chars: int) -> None:
        self.inner, self.max_chars = inner, max_chars
        self.name, self.dim = inner.name, inner.dim
        self.degraded, self.reason = inner.degraded, inner.reason

    def embed(self, texts: list[str], progress: Callable[[int, int], None] | None = None
              ) -> np.ndarray:
        for t in texts:
            if len(t) > self.max_chars:
                raise ValueError(f"input of {len(t):,} characters exceeds the embedder's limit "
                                 f"of {self.max_chars:,}")
        return self.inner.embed(texts)


def sources_of(store: Store, session_id: str | None = None, memories: bool = True
               ) -> list[Source]:
    """The stored sources (a session's entries, and the memories) as the index reads them."""
    with store.read() as conn, orm(conn) as s:
        query = select(Entry).order_by(col(Entry.id))
        if session_id is not None:
            query = query.where(col(Entry.session_id) == session_id)
        out = [Source("entry", e.id or 0, e.content, e.content_hash, e.kind)
               for e in s.exec(query)]
        if memories:
            out += [Source("memory", m.id or 0, memory_index_text(m.name, m.description, m.body,
                                                                  m.invariant), m.content_hash)
                    for m in s.exec(select(Memory).order_by(col(Memory.id)))]
    return out


def reindex_again(store: Store, sources: list[Source], writer: tuple[str, str],
                  when: datetime | None = None) -> list[int]:
    """A second writer (an ``Indexer`` with its own writer name) appends ``sources``' chunks
    to the index without looking at what is there; returns the new chunk ids. ``when`` dates
    the rows (the demo's story runs in the past)."""
    # the store's own chunking (tool output embeds its head only) under another writer's
    # name: every row it appends repeats a span already indexed, as the incident's did
    indexer = store.indexer(writer=writer)
    with store.write() as conn:
        before = int(conn.execute(columns(func.coalesce(func.max(col(Chunk.id)), 0))).scalar_one())
        indexer.index(conn, sources)
        with orm(conn) as s:
            ids = list(s.exec(select(Chunk.id).where(col(Chunk.id) > before)).all())
            if when is not None:
                s.exec(update(Chunk).where(col(Chunk.id) > before)  # type: ignore[call-overload]
                       .values(created_at=to_iso(when)))
    return [int(i) for i in ids if i is not None]


def oversized_failures(store: Store, sources: list[Source], max_chars: int = 2000,
                       writer: tuple[str, str] = OLD_INDEXER) -> list[int]:
    """An indexer that does not split, over an embedder that rejects long inputs: each source
    longer than ``max_chars`` becomes one failed chunk. Returns the chunk ids written."""
    indexer = Indexer(LimitedEmbedder(store.embedder, max_chars), 10 ** 9,
                      store.settings["embed.batch_size"], writer[0], writer[1])
    with store.write() as conn:
        before = int(conn.execute(columns(func.coalesce(func.max(col(Chunk.id)), 0))).scalar_one())
        indexer.index(conn, sources)
        with orm(conn) as s:
            return [int(i) for i in s.exec(select(Chunk.id).where(col(Chunk.id) > before))
                    if i is not None]


def stale_hook(store: Store, writer: tuple[str, str] = STALE_HOOK) -> Store:
    """The store as a stale hook deployment opens it: same file, its own writer and version."""
    return StoreBase(store.opened_as, store.settings, embedder=store.embedder, writer=writer[0],
                     writer_version=writer[1])


# -- the demo -------------------------------------------------------------------------------------
_STEPS = ["alembic upgrade head on staging", "smoke test of /health and /ledger/balance",
          "compare report totals against the previous release", "rotate the staging token",
          "check the FX rate cache is warm", "replay yesterday's imports into a scratch ledger",
          "verify integer cents in every new column", "page Dana if a migration runs > 60 s",
          "tag the image with version and sha", "record the release in LOG.md"]
_CRITICAL = [("incident_staging-migration-skipped", "Never push an image by hand: migrations "
              "are skipped and staging breaks.", 0, 0),
             ("incident_report-totals-drift", "Report totals are summed per currency in cents "
              "before any conversion.", 6, 1),
             ("procedure_release-checklist", "Every release runs the whole checklist, in "
              "order, and records it in LOG.md.", 4, 0),
             ("incident_fx-cache-cold", "A release waits until the FX rate cache is warm.",
              1, 0),
             ("procedure_import-replay", "Imports are replayed into a scratch ledger before a "
              "release touches real data.", 2, 1),
             ("incident_token-leak-drill", "Staging tokens are rotated after every release.",
              0, 0),
             ("procedure_migration-timeout", "A migration running longer than 60 s pages Dana "
              "and stops the release.", 3, 0)]


def _runbook(rng: random.Random, slug: str, lines: int = 80) -> str:
    out = [f"# {slug.split('_', 1)[1].replace('-', ' ').capitalize()}", "",
           "Timeline and checklist as recorded; promoted to critical after review.", ""]
    clock = datetime(2026, 1, 13, 1, 0)
    for i in range(lines):
        clock += timedelta(minutes=rng.randint(1, 9))
        step = _STEPS[rng.randrange(len(_STEPS))]
        out.append(f"- {clock:%H:%M} UTC step {i + 1}: {step}; result recorded by the release "
                   f"job ({rng.randint(2, 400)} rows checked, {rng.randint(0, 3)} warnings).")
    return "\n".join(out) + "\n"


def write_incident_files(data_dir: Path, story_end: datetime) -> list[Path]:
    """Critical memory files that together outgrow the 50,000-character budget, written into
    the demo's memory directory before it is imported."""
    folder = data_dir / "memory"
    rng = random.Random(11)
    written = []
    for n, (slug, invariant, hits, prevented) in enumerate(_CRITICAL):
        created = (story_end - timedelta(days=12 - n)).date().isoformat()
        front = (f"---\nname: {slug.split('_', 1)[1].replace('-', ' ').capitalize()}\n"
                 f"description: Promoted to critical after the {created} review.\n"
                 f"type: {slug.split('_', 1)[0]}\ntags: [release, staging]\n"
                 f"projects: [ledgerline]\nhits: {hits}\nprevented: {prevented}\n"
                 f"created: {created}\ncritical: true\ninvariant: >-\n  {invariant}\n"
                 "author: claude\nsensitivity: public\nauthority: approved\n---\n\n")
        path = folder / f"{slug}.md"
        path.write_text(front + _runbook(rng, slug), encoding="utf-8")
        written.append(path)
    return written


@dataclass
class DemoIncidents:
    nightly_chunks: int
    failed_chunks: int
    checkpoint_id: int
    snapshot_id: int


def seed_demo(store: Store, data_dir: Path, story_end: datetime,
              progress: Progress | None = None) -> DemoIncidents:
    """Every incident the demo tells: the critical files (imported like the rest of the
    memory directory), then the stored rows. ``progress`` hears each step by name."""
    from store.ingest import ingest

    write_incident_files(data_dir, story_end)
    if progress:
        progress("incidents: importing their memory files", 0, 0)
    ingest(store, [data_dir / "memory"])
    return seed_incidents(store, story_end, progress=progress)


def seed_incidents(store: Store, story_end: datetime, nights: int = 5,
                   progress: Progress | None = None) -> DemoIncidents:
    """The incidents that are stored rows rather than files, timed within the story."""
    def step(label: str, done: int = 0, total: int = 0) -> None:
        if progress:
            progress(f"incidents: {label}", done, total)

    with store.read() as conn, orm(conn) as s:
        sessions = list(s.exec(select(Session).order_by(col(Session.ended_at))))
    latest = sessions[-1]
    long_session = max(sessions, key=lambda x: len(sources_of(store, x.id, memories=False)))
    # A second writer re-indexing the memories and the latest session, night after night.
    nightly = sources_of(store, latest.id)
    made = 0
    for night in range(nights, 0, -1):
        step("a second writer re-indexing, night after night", nights - night, nights)
        when = (story_end - timedelta(days=night)).replace(hour=2, minute=10, second=0,
                                                           microsecond=0)
        made += len(reindex_again(store, nightly, NIGHTLY, when))
    # An old indexer over an embedder that rejects long inputs: the longest entries fail.
    step("embeddings an old indexer failed")
    longest = sorted((src for src in sources_of(store, long_session.id, memories=False)
                      if len(src.text) > 2000), key=lambda src: -len(src.text))[:3]
    failed = oversized_failures(store, longest, max_chars=2000)
    # A stale hook's pre-compaction checkpoint: ok, 0 chunks, new entries there.
    step("a stale hook's checkpoint and snapshot")
    end = parse_iso(latest.ended_at) or story_end
    start = parse_iso(latest.started_at) or end
    hook = stale_hook(store)
    try:
        checkpoint = record_checkpoint(hook, latest.id, trigger="pre-compact",
                                       ts=to_iso(max(start, end - timedelta(minutes=2))),
                                       status="ok",
                                       entries_added=42, chunks_embedded=0,
                                       archive_verified=True, duration_ms=84.0)
        # The harness's thresholds, reported just before its compaction: auto-compact at 92 %
        # of the 160,000-token window it believed in, below the checkpoint at 80 % of the
        # real 200,000 — so it compacted first.
        with store.read() as conn, orm(conn) as s:
            compaction = s.exec(select(Compaction).order_by(col(Compaction.ts))).first()
        where = compaction.session_id if compaction else long_session.id
        at = (parse_iso(compaction.ts) if compaction else None) or story_end
        snapshot = record_snapshot(hook, where, 148_000, window_tokens=200_000,
                                   checkpoint_threshold=160_000,
                                   auto_compact_threshold=147_200,
                                   ts=to_iso(at - timedelta(seconds=30)))
    finally:
        hook.close()
    return DemoIncidents(made, len(failed), checkpoint, snapshot)
