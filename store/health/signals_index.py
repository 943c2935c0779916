"""Index signals: duplicate rows and the writers that append them, sources the index lags
behind, chunks that failed to embed or were embedded by another model, and whether vectors
and the real embedder are there at all.

Every figure comes from stored columns (the chunk's source and span, status, model, writer, its
nearest neighbour's similarity recorded at write time); nothing compares pairs of vectors.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import Connection, and_, case, func, literal, or_, select, union_all

from store.core import vec
from store.core.models import Chunk, EmbedQueue, Entry, Memory
from store.core.timeutil import to_iso
from store.health.records import Row, SignalResult
from store.core.vocab import plural
from store.health.registry import (
    ScanContext,
    columns,
    grade,
    percent,
    result,
    signal,
)

BLANK = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
         "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
"""Every character ``str.strip()`` removes: a text of only these has nothing to index (the
chunker makes no chunk of it), so SQL's ``TRIM(x, BLANK)`` agrees with Python's ``strip``.
Written out: computing it (every code point's ``isspace``) cost 0.25 s of every health scan's
start; ``tests/store/test_health_blank.py`` holds it equal to the computed set."""

CH, EN, ME = columns(Chunk), columns(Entry), columns(Memory)
EQ = columns(EmbedQueue)
_SPAN = (CH.source_type, CH.source_id, CH.span_start,
         CH.span_end)


class Copy(NamedTuple):
    """One index row repeating a row kept for the same source and span."""

    id: int
    writer: str
    created_at: str
    keeper: int  # the row kept (``kept_first``)
    copies: int  # rows for its span, the kept one included
    nn: float | None  # its nearest neighbour's similarity, recorded at write time


@dataclass
class Duplicates:
    total: int
    rows: list[Copy]  # one per duplicate, most copies first, then by kept row and id
    writers: dict[str, int]  # every writer's rows in the index
    near: int

    def per_writer(self) -> Counter[str]:
        """Duplicates by the writer that appended them."""
        return Counter(r.writer for r in self.rows)


@dataclass(frozen=True)
class ChunkWriter:
    writer: str
    version: str
    rows: int
    last: str
    near: int  # rows whose nearest neighbour was at least the near-duplicate similarity


def chunk_writers(ctx: ScanContext) -> list[ChunkWriter]:
    """One pass over the chunks for what two signals need (duplicate_ratio: rows per writer
    and near-duplicates; stale_writer: the chunk table's writer versions); computed once per
    scan, it saves a full scan of the largest table (about 40 ms at 50,000 chunks)."""
    if "chunk_writers" not in ctx.cache:
        threshold = float(ctx.setting("health.near_duplicate_similarity"))
        ctx.cache["chunk_writers"] = [ChunkWriter(str(r[0]), str(r[1]), int(r[2]), str(r[3]),
                                                  int(r[4] or 0)) for r in ctx.conn.execute(
            select(CH.writer, CH.writer_version, func.count(), func.max(CH.created_at),
                   func.sum(case((CH.nn_similarity >= threshold, 1), else_=0)))
            .group_by(CH.writer, CH.writer_version)).all()]
    return ctx.cache["chunk_writers"]  # type: ignore[no-any-return]


def kept_first(model: str) -> list[Any]:
    """The order in which a span's rows are kept (the first is kept, the others are its
    copies): an ``ok`` row, then one of the current model, then the oldest (lowest id). The
    compaction (``fixes.compact_duplicates``) keeps the same row, so the row the signal names
    as kept is the one the fix keeps."""
    return [case((CH.status == "ok", 0), else_=1), case((CH.model == model, 0), else_=1), CH.id]


def duplicates(ctx: ScanContext) -> Duplicates:
    """Index rows repeating a row already there for the same source and span (the row kept
    is the first in ``kept_first`` order); computed once per scan."""
    if "duplicates" in ctx.cache:
        return ctx.cache["duplicates"]  # type: ignore[no-any-return]
    conn = ctx.conn
    total = int(conn.execute(select(func.count()).select_from(Chunk)).scalar_one())
    groups = (select(*_SPAN, func.count().label("copies"))
              .group_by(*_SPAN).having(func.count() > 1).subquery())
    same = and_(*(a == groups.c[a.key] for a in _SPAN))
    order = kept_first(ctx.store.embedder_info().model)
    ranked = (select(CH.id, CH.writer, CH.created_at, groups.c.copies, CH.nn_similarity,
                     func.first_value(CH.id).over(partition_by=list(_SPAN), order_by=order)
                     .label("keeper"))
              .join(groups, same).subquery())
    # counted and ordered here, not in pandas: importing it cost 0.15 s of every health scan
    rows = sorted((Copy(int(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4]),
                        None if r[5] is None else float(r[5])) for r in conn.execute(
        select(ranked.c.id, ranked.c.writer, ranked.c.created_at, ranked.c.keeper,
               ranked.c.copies, ranked.c.nn_similarity)
        .where(ranked.c.id != ranked.c.keeper)).all()), key=lambda c: (-c.copies, c.keeper, c.id))
    per_version = chunk_writers(ctx)
    writers: dict[str, int] = {}
    for w in per_version:
        writers[w.writer] = writers.get(w.writer, 0) + w.rows
    threshold = float(ctx.setting("health.near_duplicate_similarity"))
    near_all = sum(w.near for w in per_version)
    near = near_all - sum(1 for r in rows if (r.nn or 0.0) >= threshold)
    found = Duplicates(total, rows, writers, max(0, near))
    ctx.cache["duplicates"] = found
    return found


@signal("duplicate_ratio", "index rows repeating a row already there for the same source "
        "and span", fix="compact-duplicates")
def duplicate_ratio(ctx: ScanContext) -> SignalResult:
    d = duplicates(ctx)
    n = len(d.rows)
    value = percent(n, d.total)
    warn = float(ctx.setting("health.duplicate_warn_percent"))
    fail = float(ctx.setting("health.duplicate_fail_percent"))
    threshold = ctx.setting("health.near_duplicate_similarity")
    per_writer = dict(sorted(d.per_writer().items()))
    by_day = Counter((r.created_at[:10], r.writer) for r in d.rows)
    per_day: dict[str, dict[str, int]] = {}
    for (day, writer), count in sorted(by_day.items()):  # days in order, then writers
        per_day.setdefault(day, {})[writer] = count
    rows = [Row("chunk", r.id, f"copy of kept chunk {r.keeper} ({r.copies} rows for its "
                f"span), by {r.writer}") for r in d.rows]
    near = (f"; {plural(d.near, 'other chunk')} near-duplicate (neighbour ≥ {threshold}), "
            "information only" if d.near else "")
    if n:
        who = ", ".join(f"{w} {c:,}" for w, c in sorted(per_writer.items(),
                                                         key=lambda kv: -kv[1]))
        explanation = (f"{n:,} of {d.total:,} index rows ({value:.1f} %) repeat a row already "
                       f"there for the same source and span, appended by {who}{near}")
    else:
        explanation = (f"no index row repeats another for the same source and span "
                       f"({d.total:,} rows){near}")
    detail = {"rows": d.total, "duplicates": n, "distinct": d.total - n,
              "near_duplicates": d.near,
              "per_writer": {w: {"rows": d.writers.get(w, 0), "duplicates": int(per_writer.get(
                  w, 0))} for w in d.writers},
              "per_day": per_day}
    return result(ctx, "duplicate_ratio", grade(value, warn, fail), value, f"{value:.1f} %",
                  warn, fail, f"warn > {warn:g} %, fail > {fail:g} % of index rows",
                  explanation, rows, n, detail)


@signal("shared_index_writers", "writers that appended duplicates: they do not deduplicate "
        "against the store", fix="compact-duplicates")
def shared_index_writers(ctx: ScanContext) -> SignalResult:
    d = duplicates(ctx)
    # most duplicates first, then by name
    per_writer = sorted(d.per_writer().items(), key=lambda wc: (-wc[1], wc[0]))
    rows = [Row("writer", str(w), f"appended {int(c):,} duplicate rows "
                f"({percent(int(c), d.writers.get(str(w), 0)):.0f} % of its "
                f"{d.writers.get(str(w), 0):,})") for w, c in per_writer]
    n = len(rows)
    if n:
        explanation = (f"{plural(n, 'writer')} ({', '.join(str(r.id) for r in rows)}) appended "
                       "rows already in the index: one writer per index, or every writer "
                       "deduplicates against the store")
    else:
        explanation = (f"no writer appended rows already in the index ("
                       f"{plural(len(d.writers), 'writer')} wrote it)")
    return result(ctx, "shared_index_writers", grade(n, 0, None), float(n), str(n), 0.0, None,
                  "warn when any writer has appended duplicates", explanation, rows)


@dataclass
class Lag:
    """Where the index lags its sources: (id, created_at) of sources with indexable text and
    no chunk, ids of sources whose chunks are older than their content, orphan chunk ids."""

    entries: int
    memories: int
    missing_entries: list[tuple[int, str]]
    missing_memories: list[tuple[int, str]]
    stale_entries: list[int]
    stale_memories: list[int]
    orphans: list[int]


def find_lag(conn: Connection) -> Lag:
    """Measured at 50,000 entries: ``NOT IN`` the chunked ids, then ``strip`` on the few
    unchunked entries' text, costs a third of a ``TRIM`` over every entry's text."""
    chunked = select(CH.source_id).where(CH.source_type == "entry")
    unchunked = conn.execute(select(EN.id, EN.created_at, EN.content)
                             .where(EN.id.not_in(chunked)).order_by(EN.id)).all()
    missing_e = [(int(r[0]), str(r[1])) for r in unchunked if r[2].strip()]
    entries = int(conn.execute(select(func.count(CH.source_id.distinct()))
                               .where(CH.source_type == "entry")).scalar_one()) + len(missing_e)
    memories = int(conn.execute(select(func.count()).select_from(Memory)).scalar_one())
    mem_chunked = select(CH.source_id).where(CH.source_type == "memory")
    missing_m = conn.execute(select(ME.id, ME.created_at)
                             .where(ME.id.not_in(mem_chunked)).order_by(ME.id)).all()
    stale_e = conn.execute(
        select(CH.source_id).distinct().join(Entry, and_(
            CH.source_type == "entry", EN.id == CH.source_id))
        .where(CH.source_hash != EN.content_hash)).all()
    stale_m = conn.execute(
        select(CH.source_id).distinct().join(Memory, and_(
            CH.source_type == "memory", ME.id == CH.source_id))
        .where(CH.source_hash != ME.content_hash)).all()
    return Lag(entries, memories, missing_e, [(int(i), str(c)) for i, c in missing_m],
               sorted(int(r[0]) for r in stale_e),
               sorted(int(r[0]) for r in stale_m), orphan_chunks(conn))


@signal("index_lag", "sources with indexable text and no chunk, or chunks older than their "
        "source", fix="index-lag")
def index_lag(ctx: ScanContext) -> SignalResult:
    lag = find_lag(ctx.conn)
    wait = int(ctx.setting("health.index_wait_seconds"))
    cutoff = to_iso(datetime.now(UTC) - timedelta(seconds=wait))
    # entries a hook stored for the daemon (or the next checkpoint) to embed (harness): by
    # design waiting, so lag only once queued longer than health.index_queue_hours
    queued = ({int(r[0]): str(r[1]) for r in ctx.conn.execute(
        select(EQ.entry_id, EQ.queued_at)).all()} if "embed_queue" in ctx.tables else {})
    queue_hours = float(ctx.setting("health.index_queue_hours"))
    queue_cutoff = to_iso(datetime.now(UTC) - timedelta(hours=queue_hours))
    rows: list[Row] = []
    waiting = held = queued_young = 0
    for kind, absent in (("entry", lag.missing_entries), ("memory", lag.missing_memories)):
        for source_id, created in absent:
            if kind == "entry" and source_id in queued:
                if queued[source_id] > queue_cutoff:
                    queued_young += 1  # not lag: listed nowhere, counted in the detail
                    continue
                held += 1
                rows.append(Row(kind, source_id, f"queued by a hook more than {queue_hours:g} "
                                "h ago and still not embedded (no daemon, no checkpoint "
                                "since?)"))
                continue
            young = created > cutoff
            waiting += young
            rows.append(Row(kind, source_id, "no chunk yet, waiting for the indexer"
                            if young else "indexable text, no chunk"))
    rows += [Row("entry", i, "chunks older than the entry's content") for i in lag.stale_entries]
    rows += [Row("memory", i, "chunks older than the memory's content")
             for i in lag.stale_memories]
    lagging = len(rows)
    rows += [Row("chunk", cid, "its source no longer exists") for cid in lag.orphans]
    sources = lag.entries + lag.memories
    # an orphan chunk is index lag too (the index behind a deletion): counted in the figure,
    # so that the thresholds applied to it give the status
    value = percent(lagging + len(lag.orphans), sources + len(lag.orphans))
    fail = float(ctx.setting("health.index_lag_fail_percent"))
    missing = len(lag.missing_entries) + len(lag.missing_memories)
    stale = len(lag.stale_entries) + len(lag.stale_memories)
    missing -= queued_young
    parts = [f"{missing - waiting - held:,} without a chunk"] if missing - waiting - held \
        else []
    if waiting:
        parts.append(f"{waiting:,} waiting for the indexer (younger than {wait} s)")
    if held:
        parts.append(f"{held:,} queued by a hook over {queue_hours:g} h ago for the daemon or "
                     "the next checkpoint (`lca-tui serve` embeds them)")
    if stale:
        parts.append(f"{stale:,} with chunks older than their content")
    if lag.orphans:
        parts.append(f"{plural(len(lag.orphans), 'chunk')} of sources that no longer exist")
    status = grade(value, 0.0, fail)
    if parts:
        explanation = (f"{lagging:,} of {sources:,} indexable sources"
                       + (f" and {plural(len(lag.orphans), 'orphan chunk')}" if lag.orphans
                          else "") + f" ({value:.2f} %) lag the index: " + "; ".join(parts))
    else:
        explanation = (f"all {sources:,} indexable sources are indexed and current (blank "
                       "entries have nothing to index and are not lag)")
    if queued_young:  # by design: embedded by the daemon or the next checkpoint
        explanation += (f"; {queued_young:,} entries a hook stored wait to be embedded (found "
                        f"by FTS meanwhile; lag only after {queue_hours:g} h)")
    detail = {"sources": sources, "missing": missing, "waiting": waiting, "queued": held,
              "queued_young": queued_young,
              "stale": stale, "orphan_chunks": len(lag.orphans)}
    return result(ctx, "index_lag", status, value, f"{value:.2f} %", 0.0, fail,
                  f"warn > 0, fail > {fail:g} % of indexable sources (and orphan chunks)",
                  explanation, rows,
                  detail=detail)


def orphan_chunks(conn: Connection) -> list[int]:
    """Chunks whose entry or memory no longer exists."""
    gone_entry = select(CH.id).where(
        CH.source_type == "entry",
        ~select(literal(1)).where(EN.id == CH.source_id).exists())
    gone_memory = select(CH.id).where(
        CH.source_type == "memory",
        ~select(literal(1)).where(ME.id == CH.source_id).exists())
    return sorted(int(r[0]) for r in conn.execute(union_all(gone_entry, gone_memory)).all())


@signal("embedding_failures", "chunks that failed to embed or were truncated", fix="reembed")
def embedding_failures(ctx: ScanContext) -> SignalResult:
    bad = CH.status.in_(("failed", "truncated"))
    by = {(str(r[0]), str(r[1])): int(r[2]) for r in ctx.conn.execute(
        select(CH.status, CH.writer, func.count()).where(bad)
        .group_by(CH.status, CH.writer)).all()}
    n = sum(by.values())
    found = ctx.conn.execute(
        select(CH.id, CH.status, CH.source_type, CH.source_id, CH.writer, CH.tokens)
        .where(bad).order_by(CH.id).limit(ctx.limit)).all() if n else []
    rows = [Row("chunk", int(r[0]), f"{r[1]}, {r[5]:,} tokens, {r[2]} {r[3]}, by {r[4]}")
            for r in found]
    by_status = {s: sum(v for (st, _), v in by.items() if st == s)
                 for s in ("failed", "truncated")}
    writers = sorted({w for _, w in by})
    if n:
        explanation = (f"{plural(by_status['failed'], 'chunk')} failed to embed and "
                       f"{by_status['truncated']:,} were truncated (written by "
                       f"{', '.join(writers)}): their text is missing from semantic recall")
    else:
        explanation = "every chunk embedded in full"
    return result(ctx, "embedding_failures", grade(n, 0, None), float(n), str(n), 0.0, None,
                  "warn > 0", explanation, rows, n, detail={"by_status": by_status})


@signal("embedding_drift", "chunks embedded by another model or dimension than the current "
        "one", fix="reembed")
def embedding_drift(ctx: ScanContext) -> SignalResult:
    info = ctx.store.embedder_info()
    drifted = and_(CH.status == "ok", or_(CH.model != info.model, CH.dim != info.dim))
    by_model = {f"{r[0]}/{r[1]}": int(r[2]) for r in ctx.conn.execute(
        select(CH.model, CH.dim, func.count()).where(drifted)
        .group_by(CH.model, CH.dim)).all()}
    n = sum(by_model.values())
    found = ctx.conn.execute(select(CH.id, CH.model, CH.dim).where(drifted)
                             .order_by(CH.id).limit(ctx.limit)).all() if n else []
    rows = [Row("chunk", int(r[0]), f"embedded by {r[1]} ({r[2]} dimensions)") for r in found]
    if n:
        names = ", ".join(f"{k} {v:,}" for k, v in by_model.items())
        explanation = (f"{plural(n, 'chunk')} were embedded by another model than the current "
                       f"{info.model}/{info.dim} ({names}): semantic recall ignores them")
    else:
        explanation = f"every embedded chunk was made by the current {info.model}/{info.dim}"
    return result(ctx, "embedding_drift", grade(n, 0, None), float(n), str(n), 0.0, None,
                  "warn > 0", explanation, rows, n,
                  detail={"current": f"{info.model}/{info.dim}", "by_model": by_model})


@signal("vector_support", "sqlite-vec loaded, real embedder loaded")
def vector_support(ctx: ScanContext) -> SignalResult:
    version = vec.version(ctx.conn)
    info = ctx.store.embedder_info()
    real = not info.degraded
    value = float(int(version is not None) + int(real))
    parts = [f"sqlite-vec {version}" if version else "sqlite-vec NOT loaded",
             f"embedder {info.model}" + ("" if real else " (fallback: DEGRADED)")]
    if version is None and not real:
        status = "fail"
    elif version is None or not real:
        status = "warn"
    else:
        status = "ok"
    why = f": {info.reason}" if info.reason and not real else ""
    explanation = "; ".join(parts) + why
    if not real:
        explanation += " — semantic recall knows nothing of meaning until the model loads"
    shown = {(True, True): "vec+model", (True, False): "vec only", (False, True): "model only",
             (False, False): "none"}[(version is not None, real)]
    return result(ctx, "vector_support", status, value, shown, None, None,
                  "fail if neither sqlite-vec nor the real embedder, warn if either is "
                  "missing (the fallback embedder)", explanation,
                  detail={"sqlite_vec": version, "embedder": info.model,
                          "degraded": info.degraded})
