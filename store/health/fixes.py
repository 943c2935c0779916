"""The fixes a health signal offers, each with a plan said before it runs:

- ``compact-duplicates`` (``duplicate_ratio``, ``shared_index_writers``): the one shared
  compaction pass (LCA Appendix D) — one chunk per source and span is kept (an ``ok`` chunk of
  the current model first, then the oldest), every reference to a removed copy is re-pointed to
  the kept one (``recall_candidate.chunk_id``, ``chunk.nn_chunk_id``), the copies' vector and
  FTS rows go with them, and an audit event records what was removed;
- ``reembed`` (``embedding_failures``, ``embedding_drift``): the sources of failed, truncated
  or other-model chunks are chunked (within the model's limit) and embedded again;
- ``index-lag`` (``index_lag``): sources with no chunk are indexed, sources whose chunks are
  older than their content are indexed again, chunks of vanished sources are dropped.

Each runs in one write transaction (a crash leaves the store as it was); embedding is done
before the write lock is taken. Given the plan its preview showed, a fix acts on the targets
that preview listed and no other — the store may move between the confirmation and the write:
a target that no longer needs the fix is left, one that appeared since waits for the next
preview, and the report says how many of each (``store.core.plan.narrow``: the preview
mechanism privacy uses too, for an action made of independent parts).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Column,
    Connection,
    Integer,
    MetaData,
    Table,
    case,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.schema import CreateTable, DropTable
from sqlmodel import col

from store.core import vec
from store.core.errors import StoreError
from store.core.plan import Narrowed, PlanStale, narrow
from store.core.plan import moved as moved_lines
from store.core.index import Source, drop_chunks_of, tool_heads
from store.core.models import Chunk, EmbedQueue, Entry, Memory
from store.health.records import FixPlan, FixReport
from store.health.registry import columns
from store.health.signals_index import find_lag
from store.core.memories import index_text as memory_index_text
from store.recall.models import RecallCandidate
from store.core.vocab import Progress, plural

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

FIXES = {"compact-duplicates": ("duplicate_ratio", "shared_index_writers"),
         "reembed": ("embedding_failures", "embedding_drift"),
         "index-lag": ("index_lag",)}
_BATCH = 500
CH, EN, ME = columns(Chunk), columns(Entry), columns(Memory)
RC = columns(RecallCandidate)
# removed chunk id → the chunk kept in its place (NULL: none), for the length of one write: a
# temporary table, so that references are re-pointed with one statement per table, where a
# statement per removed row scans recall_candidate once per row. Not part of the schema. No
# schema named: both backends put a TEMPORARY table in the connection's own temporary schema
# (SQLite's ``temp``, PostgreSQL's ``pg_temp``) and look there first for an unqualified name.
_MAP = Table("health_map", MetaData(), Column("old", Integer, primary_key=True,
                                              autoincrement=False),
             Column("new", Integer), prefixes=["TEMPORARY"])


def _tick(progress: Progress | None, stage: str, done: int, total: int) -> None:
    if progress is not None:
        progress(stage, done, total)


# -- compact duplicates ---------------------------------------------------------------------
@dataclass
class _Compaction:
    removed: dict[int, int]  # removed chunk id → kept chunk id
    groups: int
    per_writer: dict[str, int]
    candidates: int  # recall candidates to re-point
    neighbours: int  # chunks whose nearest neighbour is to re-point
    writers: dict[int, str]  # removed chunk id → its writer


def _only(c: _Compaction, previewed: dict[int, int], conn: Connection
          ) -> tuple[_Compaction, Narrowed[tuple[int, int]]]:
    """The compaction restricted to what the preview listed (a removed row kept for the same
    row as then), with what moved since: previewed rows no longer duplicates of that row, and
    duplicates that appeared since (left for the next preview)."""
    moved = narrow(previewed.items(), c.removed.items())
    if moved.unchanged:
        return c, moved
    removed = dict(moved.items)
    per_writer = Counter(c.writers[o] for o in removed)
    _drop_map(conn)
    if removed:
        _fill_map(conn, removed)
    olds = list(removed)
    candidates = int(conn.execute(select(func.count()).select_from(RecallCandidate)
                                  .where(RC.chunk_id.in_(olds))).scalar_one()) if olds else 0
    neighbours = int(conn.execute(select(func.count()).select_from(Chunk).where(
        CH.nn_chunk_id.in_(olds), CH.id.not_in(olds))).scalar_one()) if olds else 0
    return (_Compaction(removed, len(set(removed.values())), dict(per_writer), candidates,
                        neighbours, {o: c.writers[o] for o in removed}), moved)


def _plan_compaction(conn: Connection, model: str) -> _Compaction:
    span = (CH.source_type, CH.source_id, CH.span_start,
            CH.span_end)
    groups = select(*span).group_by(*span).having(func.count() > 1).subquery()
    rows = conn.execute(
        select(CH.id, *span, CH.status, CH.model, CH.writer)
        .join(groups, (CH.source_type == groups.c.source_type)
              & (CH.source_id == groups.c.source_id)
              & (CH.span_start == groups.c.span_start)
              & (CH.span_end == groups.c.span_end))
        .order_by(*span, CH.id)).all()
    by_span: dict[tuple[Any, ...], list[Any]] = {}
    for r in rows:
        by_span.setdefault(tuple(r[1:5]), []).append(r)
    removed: dict[int, int] = {}
    writers: dict[int, str] = {}
    per_writer: Counter[str] = Counter()
    for members in by_span.values():
        # the row kept: an ok row, then the current model, then the oldest — the order
        # ``signals_index.kept_first`` gives the signal, so both name the same row
        keep = min(members, key=lambda r: (r[5] != "ok", r[6] != model, r[0]))
        for r in members:
            if r[0] != keep[0]:
                removed[int(r[0])] = int(keep[0])
                writers[int(r[0])] = str(r[7])
                per_writer[str(r[7])] += 1
    candidates = neighbours = 0
    if removed:
        _fill_map(conn, removed)
        olds = select(_MAP.c.old)
        candidates = int(conn.execute(select(func.count()).select_from(RecallCandidate)
                                      .where(RC.chunk_id.in_(olds))).scalar_one())
        neighbours = int(conn.execute(select(func.count()).select_from(Chunk).where(
            CH.nn_chunk_id.in_(olds), CH.id.not_in(olds))).scalar_one())
    return _Compaction(removed, len(by_span), dict(per_writer), candidates, neighbours,
                       writers)



def _fill_map(conn: Connection, mapping: dict[int, int] | dict[int, int | None]) -> None:
    # IF [NOT] EXISTS in the DDL itself: SQLAlchemy's checkfirst does not see a table in the
    # temp schema (has_table says False), so it would create twice and never drop
    conn.execute(CreateTable(_MAP, if_not_exists=True))
    conn.execute(delete(_MAP))
    items = [{"old": o, "new": n} for o, n in mapping.items()]
    for i in range(0, len(items), 5000):
        conn.execute(insert(_MAP), items[i:i + 5000])


def _drop_map(conn: Connection) -> None:
    conn.execute(DropTable(_MAP, if_exists=True))


def _repoint(conn: Connection) -> tuple[int, int]:
    """Re-point recall candidates and nearest neighbours from ``old`` to ``new`` (a NULL
    ``new`` leaves a candidate's pointer and clears a neighbour); returns (candidates,
    neighbours) changed."""
    m = _MAP.c
    olds = select(m.old)
    cands = conn.execute(
        update(RecallCandidate)
        .where(RC.chunk_id.in_(select(m.old).where(m.new.is_not(None))))
        .values(chunk_id=select(m.new).where(m.old == RC.chunk_id).scalar_subquery())).rowcount
    new_nn = select(m.new).where(m.old == CH.nn_chunk_id).scalar_subquery()
    nn = conn.execute(
        update(Chunk).where(CH.nn_chunk_id.in_(olds), CH.id.not_in(olds))
        .values(nn_chunk_id=new_nn,
                nn_similarity=case((new_nn.is_(None), None), else_=CH.nn_similarity))).rowcount
    conn.execute(update(Chunk).where(CH.nn_chunk_id == CH.id)
                 .values(nn_chunk_id=None, nn_similarity=None))
    return int(cands or 0), int(nn or 0)


def _delete_chunks(conn: Connection, ids: list[int], progress: Progress | None,
                   stage: str) -> None:
    """Delete chunks with their vector and FTS rows, in batches."""
    for i in range(0, len(ids), _BATCH):
        part = ids[i:i + _BATCH]
        rows = conn.execute(select(CH.id, CH.text)
                            .where(CH.id.in_(part))).all()
        vec.delete_chunks_bulk(conn, [(int(r[0]), str(r[1])) for r in rows])
        conn.execute(CH.id.table.delete().where(CH.id.in_(part)))
        _tick(progress, stage, min(i + _BATCH, len(ids)), len(ids))


# on a server the deleted rows' entries stay in the HNSW index until a vacuum removes them
_SERVER_VACUUM = ("then vacuum the chunk and vector tables on the server (plain VACUUM: the "
                  "vector index drops the removed rows' entries)")


def _compaction_lines(c: _Compaction, total: int, on_server: bool) -> list[str]:
    if not c.removed:
        return [f"no index row repeats another for the same source and span ({total:,} rows): "
                "nothing to remove"]
    who = ", ".join(f"{w} {n:,}" for w, n in sorted(c.per_writer.items(), key=lambda kv: -kv[1]))
    return [f"remove {len(c.removed):,} of {total:,} index rows ({who}), keeping one row for "
            f"each of {c.groups:,} sources and spans",
            f"delete their {len(c.removed):,} vector and FTS rows",
            f"re-point {c.candidates:,} recall-trace candidates and {c.neighbours:,} "
            "nearest-neighbour pointers to the rows kept",
            "record an audit event (ids and counts)", *([_SERVER_VACUUM] if on_server else [])]


def compact_duplicates(store: Store, dry_run: bool = False,
                       progress: Progress | None = None,
                       previewed: dict[int, int] | None = None, *,
                       exact: bool = False) -> FixReport:
    """The one shared compaction pass; ``dry_run`` says what it would do and changes
    nothing; ``previewed`` (a dry run's ``targets``): remove only the rows it listed;
    ``exact``: and refuse (``PlanStale``, nothing changed) unless they are all it finds."""
    model = store.embedder_info().model
    if dry_run:
        with store.read() as conn:
            total = int(conn.execute(select(func.count()).select_from(Chunk)).scalar_one())
            plan = _plan_compaction(conn, model)
            _drop_map(conn)
        return FixReport("compact-duplicates", _compaction_counts(plan, total),
                         _compaction_lines(plan, total, store.on_server), True, plan.per_writer,
                         dict(plan.removed))
    moved: Narrowed[tuple[int, int]] = Narrowed([])
    with store.write() as conn:
        total = int(conn.execute(select(func.count()).select_from(Chunk)).scalar_one())
        plan = _plan_compaction(conn, model)
        if previewed is not None:
            plan, moved = _only(plan, previewed, conn)
            if exact and not moved.unchanged:  # rolled back with the transaction
                raise _stale("compact-duplicates", moved.gone, moved.new, "row")
        _tick(progress, "plan", 1, 1)
        if plan.removed:
            cands, nn = _repoint(conn)
            plan.candidates, plan.neighbours = cands, nn
            _delete_chunks(conn, sorted(plan.removed), progress, "remove")
            _drop_map(conn)
            counts = _compaction_counts(plan, total)
            store.audit_in(conn, "compact-duplicates", "chunk", sorted(plan.removed)[:1000],
                           {**counts, **{f"writer:{w}": n for w, n in plan.per_writer.items()}})
        else:
            _drop_map(conn)
    if plan.removed:
        from store.core.db import after_mass_delete

        vacuumed, skipped = after_mass_delete(store.engine, ["chunk", "chunk_vec"])
        lines = [f"removed {len(plan.removed):,} of {total:,} index rows with their vector and "
                 f"FTS rows; re-pointed {plan.candidates:,} recall-trace candidates and "
                 f"{plan.neighbours:,} nearest-neighbour pointers; audit event recorded"
                 + (f"; vacuumed {', '.join(vacuumed)}" if vacuumed else "")]
        if skipped:
            lines.append(f"not vacuumed: {', '.join(skipped)} (this role does not own them; "
                         "autovacuum removes the deleted rows' index entries later, and until "
                         "then a recall can miss neighbours)")
    else:
        lines = _compaction_lines(plan, total, store.on_server)
    lines += moved.lines("row")
    counts = {**_compaction_counts(plan, total), "previewed_gone": moved.gone,
              "new_since_preview": moved.new}
    return FixReport("compact-duplicates", counts, lines, False, plan.per_writer)


def _compaction_counts(c: _Compaction, total: int) -> dict[str, int]:
    return {"rows_before": total, "rows_removed": len(c.removed), "groups": c.groups,
            "rows_after": total - len(c.removed), "candidates_repointed": c.candidates,
            "neighbours_repointed": c.neighbours}


# -- re-embed and index lagging sources -----------------------------------------------------
@dataclass
class _Rebuild:
    sources: list[tuple[str, int]]  # (source type, id) to chunk and embed again
    drop: list[int]  # chunk ids whose source is gone
    why: dict[str, int]


def _reembed_targets(conn: Connection, model: str, dim: int) -> _Rebuild:
    bad = conn.execute(select(CH.id, CH.source_type, CH.source_id,
                              CH.status, CH.model, CH.dim)
                       .where((CH.status != "ok") | (CH.model != model)
                              | (CH.dim != dim))).all()
    entries = {int(r[0]) for r in conn.execute(select(EN.id).where(EN.id.in_(
        sorted({int(r[2]) for r in bad if r[1] == "entry"})))).all()} if bad else set()
    memories = {int(r[0]) for r in conn.execute(select(ME.id).where(ME.id.in_(
        sorted({int(r[2]) for r in bad if r[1] == "memory"})))).all()} if bad else set()
    sources: dict[tuple[str, int], None] = {}
    drop: list[int] = []
    failed = drifted = 0
    for cid, st, sid, status, _m, _d in bad:
        if status != "ok":
            failed += 1
        else:
            drifted += 1
        if (st == "entry" and sid in entries) or (st == "memory" and sid in memories):
            sources[(str(st), int(sid))] = None
        else:
            drop.append(int(cid))
    return _Rebuild(list(sources), drop, {"failed_or_truncated": failed, "drifted": drifted})


def _lag_targets(conn: Connection) -> _Rebuild:
    lag = find_lag(conn)
    sources = ([("entry", i) for i, _ in lag.missing_entries]
               + [("memory", i) for i, _ in lag.missing_memories]
               + [("entry", i) for i in lag.stale_entries]
               + [("memory", i) for i in lag.stale_memories])
    return _Rebuild(list(dict.fromkeys(sources)), lag.orphans,
                    {"missing": len(lag.missing_entries) + len(lag.missing_memories),
                     "stale": len(lag.stale_entries) + len(lag.stale_memories)})


def _texts(conn: Connection, sources: list[tuple[str, int]]) -> list[Source]:
    out: list[Source] = []
    e_ids = [i for t, i in sources if t == "entry"]
    m_ids = [i for t, i in sources if t == "memory"]
    for i in range(0, len(e_ids), _BATCH):
        for r in conn.execute(select(EN.id, EN.content, EN.content_hash, EN.kind)
                              .where(EN.id.in_(e_ids[i:i + _BATCH]))).all():
            out.append(Source("entry", int(r[0]), str(r[1]), str(r[2]), str(r[3])))
    for i in range(0, len(m_ids), _BATCH):
        for r in conn.execute(select(ME.id, ME.name, ME.description,
                                     ME.body, ME.invariant,
                                     ME.content_hash)
                              .where(ME.id.in_(m_ids[i:i + _BATCH]))).all():
            out.append(Source("memory", int(r[0]), memory_index_text(r[1], r[2], r[3], r[4]),
                              str(r[5])))
    return out


def _refusal(store: Store, rebuild: _Rebuild, conn: Connection) -> str | None:
    """Under ``auto``, a model that failed to load must not turn model vectors into fallback
    ones (the rule ``reindex`` follows)."""
    info = store.embedder_info()
    if not info.degraded or store.settings["embed.backend"] != "auto" or not rebuild.sources:
        return None
    model_made = 0
    for t, i in rebuild.sources:
        model_made += int(conn.execute(select(func.count()).select_from(Chunk).where(
            CH.source_type == t, CH.source_id == i,
            CH.model != info.model, CH.status == "ok")).scalar_one())
    if model_made:
        return (f"the embedding model could not load ({info.reason}): re-embedding now would "
                f"replace {model_made:,} chunks the model made with fallback vectors; fix the "
                "model, or set embed.backend=fallback to do it anyway")
    return None


def _held(conn: Connection, sources: list[tuple[str, int]]) -> dict[str, int]:
    """The chunks ``sources`` have now, per writer: all of them are replaced."""
    held: Counter[str] = Counter()
    for kind in ("entry", "memory"):
        ids = [i for t, i in sources if t == kind]
        for i in range(0, len(ids), _BATCH):
            for writer, n in conn.execute(
                    select(CH.writer, func.count()).where(
                        CH.source_type == kind, CH.source_id.in_(ids[i:i + _BATCH]))
                    .group_by(CH.writer)).all():
                held[str(writer)] += int(n)
    return dict(held)


def _rebuild_lines(fix: str, r: _Rebuild, held: dict[str, int], own: str) -> list[str]:
    if not r.sources and not r.drop:
        return ["nothing to do"]
    kinds = Counter(t for t, _ in r.sources)
    what = ", ".join(plural(n, t, "entries" if t == "entry" else None)
                     for t, n in sorted(kinds.items()))
    why = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in r.why.items() if v)
    lines = []
    if r.sources:
        total = sum(held.values())
        others = {w: n for w, n in held.items() if w != own}
        whose = ("" if not others else " — every writer's copies: " + ", ".join(
            f"{w} {n:,}" for w, n in sorted(others.items(), key=lambda kv: -kv[1]))
            + (f", {own} {held[own]:,}" if held.get(own) else ""))
        lines.append(f"chunk and embed again {what} ({why}), with the current embedder and "
                     f"within the model's token limit; their {total:,} old chunks{whose}, "
                     "with their vectors and FTS rows, are deleted and replaced by one "
                     "set")
    if r.drop:
        lines.append(f"drop {plural(len(r.drop), 'chunk')} whose source no longer exists")
    lines.append("re-point recall-trace candidates and nearest neighbours to the new chunk of "
                 "the same span where there is one; record an audit event")
    return lines


def _targets(store: Store, fix: str, conn: Connection) -> _Rebuild:
    info = store.embedder_info()
    return (_reembed_targets(conn, info.model, info.dim) if fix == "reembed"
            else _lag_targets(conn))


def _narrowed(target: _Rebuild, previewed: tuple[Any, Any] | None) -> tuple[_Rebuild, int, int]:
    """``target`` (found now) restricted to what the preview listed; with how many previewed
    targets no longer need the fix and how many appeared since."""
    if previewed is None:
        return target, 0, 0
    sources, drop = narrow(previewed[0], target.sources), narrow(previewed[1], target.drop)
    return (_Rebuild(sources.items, drop.items, target.why), sources.gone + drop.gone,
            sources.new + drop.new)


def _stale(fix: str, gone: int, appeared: int, what: str = "target") -> PlanStale:
    """The refusal of an ``exact`` fix: how the store moved since its preview."""
    return PlanStale(f"{fix} ({plural(gone, 'previewed ' + what)} no longer the same, "
                     f"{plural(appeared, what)} new)")


def _rebuild(store: Store, fix: str, dry_run: bool, progress: Progress | None,
             previewed: tuple[Any, Any] | None = None, exact: bool = False) -> FixReport:
    with store.read() as conn:
        target, gone, appeared = _narrowed(_targets(store, fix, conn), previewed)
        if exact and (gone or appeared):
            raise _stale(fix, gone, appeared)
        refusal = _refusal(store, target, conn)
        sources = _texts(conn, target.sources)
        held = _held(conn, target.sources)
    counts = {"sources": len(target.sources), "chunks_dropped": len(target.drop),
              "chunks_replaced": sum(held.values()), **target.why}
    lines = _rebuild_lines(fix, target, held, store.writer)
    if dry_run:
        return FixReport(fix, counts, lines, True,
                         targets=(tuple(target.sources), tuple(target.drop)))
    if refusal:
        raise StoreError(refusal)
    indexer = store.indexer()
    prepared: dict[str, Any] = {}
    for i in range(0, len(sources), 64):
        part = sources[i:i + 64]
        prepared.update(indexer.prepare({s.content_hash: s.text for s in part
                                         if s.content_hash not in prepared},
                                        tool_heads(part)))
        _tick(progress, "embed", min(i + 64, len(sources)), len(sources))
    made = failed = 0
    embedded = {(s.source_type, s.source_id): s.content_hash for s in sources}
    with store.write() as conn:
        # what still needs the fix now that the write lock is held (the store may have moved
        # while embedding): only those, and only with the text that was embedded
        still, gone_now, new_now = _narrowed(_targets(store, fix, conn),
                                             (target.sources, target.drop))
        current = {(s.source_type, s.source_id): s.content_hash
                   for s in _texts(conn, still.sources)}
        sources = [s for s in sources if current.get((s.source_type, s.source_id))
                   == embedded[(s.source_type, s.source_id)]]
        if exact and (gone_now or new_now or len(sources) != len(still.sources)):
            raise _stale(fix, gone_now + len(still.sources) - len(sources), new_now)
        gone += gone_now + len(still.sources) - len(sources)
        target = _Rebuild([(s.source_type, s.source_id) for s in sources], still.drop,
                          target.why)
        mapping: dict[int, int | None] = {}
        for n, source in enumerate(sources, 1):
            old = conn.execute(select(CH.id, CH.span_start, CH.span_end)
                               .where(CH.source_type == source.source_type,
                                      CH.source_id == source.source_id)).all()
            drop_chunks_of(conn, source.source_type, source.source_id)
            result = indexer.index(conn, [source], prepared)
            if source.source_type == "entry":  # indexed now: no longer waiting (harness)
                conn.execute(delete(EmbedQueue).where(
                    col(EmbedQueue.entry_id) == source.source_id))
            made, failed = made + result.chunks, failed + result.failed
            new = {(int(r[1]), int(r[2])): int(r[0]) for r in conn.execute(
                select(CH.id, CH.span_start, CH.span_end)
                .where(CH.source_type == source.source_type,
                       CH.source_id == source.source_id)).all()}
            for cid, a, b in old:
                mapping[int(cid)] = new.get((int(a), int(b)))
            _tick(progress, "write", n, len(sources))
        for cid in target.drop:
            mapping[cid] = None
        if mapping:
            _fill_map(conn, mapping)
            cands, nn = _repoint(conn)
            _drop_map(conn)
            counts.update(candidates_repointed=cands, neighbours_repointed=nn)
        _delete_chunks(conn, target.drop, progress, "drop")
        counts.update(chunks_written=made, chunks_failed=failed)
        store.audit_in(conn, fix, "source", [f"{t}:{i}" for t, i in target.sources][:1000],
                       counts)
    lines = [f"{'re-embedded' if fix == 'reembed' else 'indexed'} "
             f"{plural(len(sources), 'source')}: {plural(made, 'chunk')} written, {failed:,} "
             f"failed; {plural(len(target.drop), 'orphan chunk')} dropped"]
    lines += moved_lines(gone, appeared, "target")
    counts.update(previewed_gone=gone, new_since_preview=appeared)
    return FixReport(fix, counts, lines, False)


# -- the entry points -------------------------------------------------------------------------
def plan(store: Store, fix: str) -> FixPlan:
    """What ``fix`` would do now, without doing it."""
    if fix not in FIXES:
        raise ValueError(f"no fix {fix!r}: one of {', '.join(FIXES)}")
    report = (compact_duplicates(store, dry_run=True) if fix == "compact-duplicates"
              else _rebuild(store, fix, True, None))
    reason = None
    if fix != "compact-duplicates":
        with store.read() as conn:
            reason = _refusal(store, _narrowed(_targets(store, fix, conn), report.targets)[0],
                              conn)
    nothing = report.lines and report.lines[0].startswith(("nothing", "no index row"))
    return FixPlan(fix, FIXES[fix][0], report.lines, report.counts,
                   possible=not nothing and reason is None, reason=reason or (
                       "nothing to do" if nothing else None), targets=report.targets)


def apply(store: Store, fix: str, progress: Progress | None = None,
          previewed: FixPlan | None = None, *, exact: bool = False) -> FixReport:
    """Run ``fix`` (in the caller's thread: the app runs it in a worker); given the plan the
    preview showed, on what that plan listed and nothing else (what no longer needs it is
    left, what appeared since waits: said in the report). ``exact`` (the command line, whose
    preview was printed, not watched): refuse with ``PlanStale``, changing nothing, unless
    the store still lists exactly what the plan did."""
    if exact and previewed is None:
        raise ValueError("exact needs the previewed plan")
    if fix not in FIXES:
        raise ValueError(f"no fix {fix!r}: one of {', '.join(FIXES)}")
    if previewed is not None and previewed.fix != fix:
        raise ValueError(f"the preview is of {previewed.fix}, not {fix}")
    targets = previewed.targets if previewed is not None else None
    if fix == "compact-duplicates":
        return compact_duplicates(store, progress=progress, previewed=targets, exact=exact)
    return _rebuild(store, fix, False, progress, targets, exact)
