"""Health signals: every signal catches a seeded failure — right status, right
rows — and stays ok on a clean store; scans are stored with trends; the fixes do what their
preview says."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import col, select, update

from store import RecordRef, Store
from store.core.db import orm
from store.core.embed import HashEmbedder
from store.core.index import Indexer, drop_chunks_of
from store.core.models import Chunk, Entry, Memory
from store.health import incidents
from store.health.records import Row
from tests.conftest import make_store
from tests.helpers_health import add_session, consistent, ids, scan, ts, write_memory

SIGNALS = ("duplicate_ratio", "shared_index_writers", "loader_drift", "critical_budget",
           "checkpoint_noop", "compaction_without_checkpoint", "index_lag",
           "embedding_failures", "embedding_drift", "evidence_orphans", "threshold_order",
           "stale_writer", "vector_support", "supersession_integrity", "stale_proposals",
           "memory_duplicates", "hook_failures", "claude_index_cut", "claude_imports",
           "claude_rule_paths", "claude_always_loaded", "claude_scope_conflicts",
           "secrets_found")


@pytest.fixture
def seeded(store: Store, tmp_path: Path) -> Store:
    """A healthy store: two sessions, a few memories, thresholds in order."""
    add_session(store, "s1")
    add_session(store, "s2", start=300)
    mem = tmp_path / "memory"
    write_memory(mem, "feedback_cents", description="money", type="feedback",
                 critical=True, invariant="Amounts are integer cents.", hits=3)
    write_memory(mem, "project_deploy", description="deploys", type="project")
    store.ingest([mem])
    store.record_snapshot("s1", 90_000, window_tokens=200_000, checkpoint_threshold=160_000,
                          auto_compact_threshold=184_000, ts=ts(500))
    return store


def status(result, name: str) -> str:  # type: ignore[no-untyped-def]
    return result.signal(name).status


# -- clean ------------------------------------------------------------------------------------
def test_every_signal_is_measured_and_a_clean_store_is_ok(seeded: Store) -> None:
    """A healthy store: every signal ok but the fallback embedder's honest warning."""
    result = scan(seeded)
    assert [s.name for s in result.signals] == list(SIGNALS)
    expected = {"vector_support": "warn"}
    assert {s.name: s.status for s in result.signals} == {
        n: expected.get(n, "ok") for n in SIGNALS}
    assert all(not s.offending for s in result.signals)


def test_real_transcripts_raise_nothing_at_fail(cc_store: Store) -> None:
    """The three real Claude Code sessions: nothing at fail; the one real compaction had no
    checkpoint before it, but Claude Code records no checkpoints at all: not judged, n/a
    (issue 22); blank entries are not index lag."""
    result = scan(cc_store)
    assert result.at_or_above("fail") == []
    assert status(result, "index_lag") == "ok"
    assert status(result, "compaction_without_checkpoint") == "n/a"
    assert status(result, "threshold_order") == "n/a"
    with cc_store.read() as conn:
        blank = conn.exec_driver_sql(
            "SELECT COUNT(*) FROM entry e WHERE NOT EXISTS (SELECT 1 FROM chunk c WHERE "
            "c.source_type = 'entry' AND c.source_id = e.id)").scalar_one()
    assert blank == 21  # empty tool results and whitespace-only turns: nothing to index


# -- duplicates -------------------------------------------------------------------------------
def test_duplicate_ratio_and_shared_writers(seeded: Store) -> None:
    """A second writer re-indexing a session's spans: its rows are the duplicates."""
    sources = incidents.sources_of(seeded, "s1", memories=False)
    added = incidents.reindex_again(seeded, sources, ("nightly.sh", "1.0"))
    result = scan(seeded)
    dup = result.signal("duplicate_ratio")
    total = result.signal("duplicate_ratio").detail["rows"]
    assert dup.value == pytest.approx(round(100 * len(added) / total, 2))
    assert dup.status == ("fail" if dup.value > 20 else "warn")
    assert ids(dup) == set(added)
    assert dup.detail["per_writer"]["nightly.sh"]["duplicates"] == len(added)
    writers = result.signal("shared_index_writers")
    assert writers.status == "warn" and ids(writers) == {"nightly.sh"}
    assert dup.fix == "compact-duplicates"


def test_duplicates_of_two_writers_on_two_days_are_counted_and_ordered(seeded: Store) -> None:
    """Counted without pandas: each writer's duplicates, per day (days in order, writers by
    name), the writer with the most first, the rows most copies first; each writer's
    latest version."""
    from datetime import UTC, datetime

    one = incidents.sources_of(seeded, "s1", memories=False)
    two = incidents.sources_of(seeded, "s2", memories=False)
    first = datetime(2026, 11, 2, 3, 0, tzinfo=UTC)
    b = incidents.reindex_again(seeded, one, ("b-writer", "1.0"), when=first)
    a = incidents.reindex_again(seeded, two[:len(one)], ("z-writer", "1.0"), when=first)
    a2 = incidents.reindex_again(seeded, one[:1], ("z-writer", "1.1"),
                                 when=datetime(2026, 11, 3, 3, 0, tzinfo=UTC))
    result = scan(seeded)
    dup = result.signal("duplicate_ratio")
    assert dup.detail["per_day"] == {"2026-11-02": {"b-writer": len(b), "z-writer": len(a)},
                                     "2026-11-03": {"z-writer": len(a2)}}
    assert list(dup.detail["per_day"]) == ["2026-11-02", "2026-11-03"]
    assert list(dup.detail["per_day"]["2026-11-02"]) == ["b-writer", "z-writer"]
    assert dup.detail["per_writer"]["z-writer"]["duplicates"] == len(a) + len(a2)
    assert dup.offending_total == len(a) + len(b) + len(a2)
    copies = [int(r.note.split("(")[1].split()[0]) for r in dup.offending]
    assert copies == sorted(copies, reverse=True) and copies[0] == 3  # s1's first span
    writers = result.signal("shared_index_writers")
    assert [r.id for r in writers.offending] == ["z-writer", "b-writer"]  # the most first
    seeded.settings = seeded.settings.with_overrides(
        {"health.canonical_version": "z-writer=1.1, b-writer=1.0"})
    stale = scan(seeded).signal("stale_writer")
    assert stale.detail["writers"]["z-writer"] == {"version": "1.1",
                                                   "rows": len(a) + len(a2)}
    assert stale.status == "ok"


def test_the_row_named_kept_is_the_row_compaction_keeps(seeded: Store) -> None:
    """When the oldest row of a span failed and a later copy is ok, compaction keeps the ok
    one: the signal names that one as kept and lists the old row as the copy."""
    (src,) = incidents.sources_of(seeded, "s1", memories=False)[:1]
    later = incidents.reindex_again(seeded, [src], ("nightly.sh", "1.0"))
    with seeded.write() as conn:
        own = set(conn.execute(select(Chunk.id).where(
            col(Chunk.source_type) == "entry", col(Chunk.source_id) == src.source_id,
            col(Chunk.writer) == "lca-tui")).scalars())
        conn.execute(update(Chunk).where(col(Chunk.id).in_(own)).values(status="failed"))
    dup = scan(seeded).signal("duplicate_ratio")
    assert ids(dup) == own
    assert all(f"copy of kept chunk {k} " in r.note
               for r, k in zip(sorted(dup.offending, key=lambda r: r.id), sorted(later)))
    plan = seeded.health_fix_plan("compact-duplicates")
    assert set(plan.targets) == own and set(plan.targets.values()) == set(later)


def test_same_text_in_two_entries_is_not_a_duplicate(store: Store) -> None:
    """Two entries with the same text are two sources: no duplicate row."""
    from store.core.writes import NewEntry, NewSession

    store.append_entries(NewSession("s", "api"), [
        NewEntry("user", "the very same words", "api:s", source_offset=i, ts=ts(10 - i))
        for i in range(3)])
    dup = scan(store).signal("duplicate_ratio")
    assert dup.status == "ok" and dup.value == 0.0
    assert dup.detail["near_duplicates"] == 2  # information only


# -- memories ---------------------------------------------------------------------------------
def test_loader_drift_fails_on_a_critical_memory(store: Store, tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    write_memory(mem, "feedback_release", type="feedback", invariant="Use make release.",
                 nested={"critical": True})
    store.ingest([mem])
    drift = scan(store).signal("loader_drift")
    assert drift.status == "fail" and drift.detail["critical"] == 1
    (row,) = drift.offending
    assert row.kind == "memory" and row.note.startswith("CRITICAL")


def test_loader_drift_warns_on_a_broken_file(store: Store, tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    write_memory(mem, "feedback_ok", type="feedback")
    broken = mem / "feedback_broken.md"
    broken.write_text('---\nname: "unclosed\ntype: feedback\n---\nbody\n', encoding="utf-8")
    store.ingest([mem])
    drift = scan(store).signal("loader_drift")
    assert drift.status == "warn" and drift.value == 1
    with store.read() as conn, orm(conn) as s:
        bad = s.exec(select(Memory.id).where(col(Memory.loadable) == 0)).all()
    assert ids(drift) == set(bad)


def test_a_critical_memory_whose_file_breaks_stays_critical_and_fails(
        store: Store, tmp_path: Path) -> None:
    """Re-importing a critical memory whose YAML no longer parses: the file is unreadable,
    not un-critical — the stored flag stays and loader_drift fails on it."""
    mem = tmp_path / "memory"
    path = write_memory(mem, "feedback_cents", type="feedback", critical=True,
                        invariant="Amounts are integer cents.")
    store.ingest([mem])
    assert scan(store).signal("loader_drift").status == "ok"
    assert scan(store).signal("critical_budget").detail["critical"] == 1
    path.write_text(path.read_text(encoding="utf-8").replace(
        "name: feedback_cents", 'name: "feedback_cents'), encoding="utf-8")
    report = store.ingest([mem])
    assert any("stays critical as stored" in n for n in report.notes), report.notes
    with store.read() as conn, orm(conn) as s:
        (memory,) = s.exec(select(Memory)).all()
    assert (memory.critical, memory.loadable) == (1, 0)
    drift = scan(store).signal("loader_drift")
    assert drift.status == "fail" and drift.detail["critical"] == 1
    assert ids(drift) == {memory.id} and drift.offending[0].note.startswith("CRITICAL")
    # fixed, and now saying critical: false in readable YAML: not critical any more
    write_memory(mem, "feedback_cents", type="feedback", critical=False)
    store.ingest([mem])
    with store.read() as conn, orm(conn) as s:
        (memory,) = s.exec(select(Memory)).all()
    assert (memory.critical, memory.loadable) == (0, 1)
    assert scan(store).signal("loader_drift").status == "ok"


def test_a_plain_memory_whose_file_breaks_only_warns(store: Store, tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    path = write_memory(mem, "project_deploy", type="project")
    store.ingest([mem])
    path.write_text("---\nname: [unclosed\n---\nbody\n", encoding="utf-8")
    report = store.ingest([mem])
    assert not any("stays critical" in n for n in report.notes)
    drift = scan(store).signal("loader_drift")
    assert drift.status == "warn" and drift.detail["critical"] == 0


def test_critical_budget_cuts_by_weight_not_alphabetically(store: Store, tmp_path: Path) -> None:
    """Three critical memories of 20,000 characters: the budget holds two; the lightest goes,
    though its name comes first."""
    mem = tmp_path / "memory"
    for slug, hits in (("a_first", 0), ("b_second", 10), ("c_third", 40)):
        write_memory(mem, f"feedback_{slug}", type="feedback", critical=True, hits=hits,
                     invariant="A rule.", body="x" * 20_000)
    store.ingest([mem])
    budget = scan(store).signal("critical_budget")
    assert budget.status == "fail" and budget.value > 60_000
    with store.read() as conn, orm(conn) as s:
        first = s.exec(select(Memory.id).where(col(Memory.name) == "feedback_a_first")).one()
    assert ids(budget) == {first}


def test_critical_budget_warns_near_the_budget(store: Store, tmp_path: Path) -> None:
    write_memory(tmp_path / "m", "feedback_big", critical=True, body="y" * 46_000)
    store.ingest([tmp_path / "m"])
    budget = scan(store).signal("critical_budget")
    assert budget.status == "warn" and budget.offending == []


def test_evidence_orphans(store: Store, tmp_path: Path) -> None:
    """A memory whose file (its only evidence) is gone."""
    mem = tmp_path / "memory"
    keep = write_memory(mem, "feedback_keep")
    gone = write_memory(mem, "feedback_gone")
    store.ingest([mem])
    assert scan(store).signal("evidence_orphans").status == "ok"
    gone.unlink()
    orphans = scan(store).signal("evidence_orphans")
    with store.read() as conn, orm(conn) as s:
        gone_id = s.exec(select(Memory.id).where(col(Memory.name) == "feedback_gone")).one()
    assert orphans.status == "warn" and ids(orphans) == {gone_id}
    assert keep.exists()


def test_supersession_integrity(store: Store, tmp_path: Path) -> None:
    """A cycle, a dangling reference and a superseded memory still active: each flagged."""
    mem = tmp_path / "memory"
    for slug in ("a", "b", "c", "d"):
        write_memory(mem, f"project_{slug}")
    write_memory(mem, "project_e", supersedes="project_nothing_here")
    store.ingest([mem])
    assert scan(store).signal("supersession_integrity").status == "fail"  # the dangling ref
    with store.write() as conn, orm(conn) as s:
        m = {x.name: x.id for x in s.exec(select(Memory))}
        s.exec(update(Memory).where(col(Memory.id) == m["project_a"])  # type: ignore[call-overload]
               .values(supersedes_id=m["project_b"]))
        s.exec(update(Memory).where(col(Memory.id) == m["project_b"])  # type: ignore[call-overload]
               .values(supersedes_id=m["project_a"], status="superseded"))
        s.exec(update(Memory).where(col(Memory.id) == m["project_c"])  # type: ignore[call-overload]
               .values(superseded_by_id=m["project_d"]))
    sig = scan(store).signal("supersession_integrity")
    assert sig.status == "fail"
    assert ids(sig) == {m["project_a"], m["project_b"], m["project_c"], m["project_e"]}
    notes = {r.id: r.note for r in sig.offending}
    assert "cycle" in notes[m["project_b"]] and "still active" in notes[m["project_c"]]
    assert "dangling" in notes[m["project_e"]]


def test_stale_proposals(store: Store) -> None:
    """Pending longer than seven days: stale; recent or decided ones are not."""
    from store.governance.models import Proposal

    made = [store.propose({"op": "add", "type": "feedback", "content": f"Rule number {i}: "
                           "always run the whole suite before a release."}).id
            for i in range(3)]
    assert scan(store).signal("stale_proposals").status == "ok"
    store.reject(made[2], "not a rule we keep")
    with store.write() as conn, orm(conn) as s:
        s.exec(update(Proposal)  # type: ignore[call-overload]
               .where(col(Proposal.id).in_([made[0], made[2]]))
               .values(ts=ts(60 * 24 * 9)))
    sig = scan(store).signal("stale_proposals")
    assert sig.status == "warn" and ids(sig) == {made[0]}
    assert sig.detail["pending"] == 2


@pytest.mark.sqlite_only("SQLite keeps text in an INTEGER column (type affinity); a "
                         "server refuses that write itself, so no such value is stored")
def test_a_bad_stored_value_does_not_abort_the_scan(seeded: Store) -> None:
    """SQLite keeps what it is given: a counter that is not a number is weighed as 0 (and
    said), a value a signal cannot format makes that signal unknown — the rest is measured."""
    with seeded.write() as conn:
        conn.execute(update(Memory).where(col(Memory.critical) == 1).values(hits="lots"))
    result = scan(seeded)
    budget = result.signal("critical_budget")
    assert budget.status == "ok" and budget.detail["critical"] == 1
    assert len(budget.detail["unreadable_counters"]) == 1
    with seeded.write() as conn:
        first = conn.execute(select(Chunk.id).order_by(Chunk.id)).scalars().first()
        conn.execute(update(Chunk).where(col(Chunk.id) == first)
                     .values(status="failed", tokens="many"))
    result = scan(seeded)
    broken = result.signal("embedding_failures")
    assert broken.status == "unknown" and "could not be measured: ValueError" in \
        broken.explanation
    assert [s.name for s in result.signals] == list(SIGNALS)
    assert {s.name for s in result.signals if s.status == "unknown"} == {"embedding_failures"}
    assert result.signal("duplicate_ratio").status == "ok"


# -- checkpoints and compactions ----------------------------------------------------------------
def test_checkpoint_noop_recent_fails_older_warns_nothing_new_ignored(seeded: Store) -> None:
    seeded.record_checkpoint("s1", trigger="stop", ts=ts(2), entries_added=12,
                             chunks_embedded=12)
    quiet = seeded.record_checkpoint("s1", trigger="stop", ts=ts(1), entries_added=0)
    assert scan(seeded).signal("checkpoint_noop").status == "ok", "nothing new: not a no-op"
    old = seeded.record_checkpoint(None, trigger="nightly", ts=ts(60 * 24 * 10),
                                   entries_added=30, chunks_embedded=0)
    sig = scan(seeded).signal("checkpoint_noop")
    assert sig.status == "warn" and ids(sig) == {old}
    recent = seeded.record_checkpoint("s2", trigger="pre-compact", ts=ts(30), entries_added=12,
                                      chunks_embedded=0)
    sig = scan(seeded).signal("checkpoint_noop")
    assert sig.status == "fail" and ids(sig) == {old, recent}
    assert quiet not in ids(sig)


def test_checkpoint_noop_sees_stored_entries_the_checkpoint_did_not_report(seeded: Store) -> None:
    """A hook reported nothing added, but the session's entries since its last checkpoint are
    stored: it should have embedded them."""
    cp = seeded.record_checkpoint("s1", trigger="pre-compact", ts=ts(0), entries_added=0)
    sig = scan(seeded).signal("checkpoint_noop")
    assert sig.status == "fail" and ids(sig) == {cp}
    assert "12 new indexable entries stored" in sig.offending[0].note


def test_compaction_without_checkpoint(seeded: Store) -> None:
    bare = seeded.record_compaction("s1", 150_000, ts=ts(100), trigger="auto")
    seeded.record_checkpoint("s2", trigger="pre-compact", ts=ts(60), entries_added=3,
                             chunks_embedded=3)
    seeded.record_compaction("s2", 150_000, ts=ts(59), trigger="auto")
    sig = scan(seeded).signal("compaction_without_checkpoint")
    assert sig.status == "warn" and ids(sig) == {bare}


def test_threshold_order(seeded: Store) -> None:
    snap = seeded.record_snapshot("s2", 140_000, window_tokens=200_000,
                                  checkpoint_threshold=160_000, auto_compact_threshold=147_200,
                                  ts=ts(200))
    sig = scan(seeded).signal("threshold_order")
    assert sig.status == "fail" and ids(sig) == {snap}


def test_threshold_order_not_applicable_when_nothing_reported(store: Store) -> None:
    """Nothing to judge is n/a (issue 22), not unknown, and does not rank as a warning."""
    add_session(store)
    result = scan(store)
    assert result.signal("threshold_order").status == "n/a"
    assert "threshold_order" not in {s.name for s in result.at_or_above("warn")}


# -- index ----------------------------------------------------------------------------------------
def test_index_lag_missing_stale_and_blank(seeded: Store) -> None:
    from store.core.writes import NewEntry, NewSession

    seeded.append_entries(NewSession("s3", "api"), [
        NewEntry("tool_result", "", "api:s3", source_offset=0, ts=ts(5)),
        NewEntry("assistant", "\n\n \u00a0", "api:s3", source_offset=1, ts=ts(4))])
    assert scan(seeded).signal("index_lag").status == "ok", "blank entries are not lag"
    with seeded.read() as conn, orm(conn) as s:
        first, second = s.exec(select(Entry.id).where(col(Entry.session_id) == "s1")
                               .order_by(col(Entry.id)).limit(2)).all()
    with seeded.write() as conn:
        drop_chunks_of(conn, "entry", first)
        with orm(conn) as s:
            s.exec(update(Entry).where(col(Entry.id) == second)  # type: ignore[call-overload]
                   .values(content_hash="changed-since-indexed"))
    sig = scan(seeded).signal("index_lag")
    assert sig.status == "fail"  # 2 of ~26 sources, over 1 %
    assert {(r.kind, r.id) for r in sig.offending} == {("entry", first), ("entry", second)}
    assert sig.detail["waiting"] == 1  # the dropped one is young: waiting for the indexer
    plan = seeded.health_fix_plan("index-lag")
    assert plan.possible and plan.counts["sources"] == 2
    seeded.health_fix("index-lag")
    assert scan(seeded).signal("index_lag").status == "ok"


def test_index_lag_counts_orphan_chunks_in_its_figure(seeded: Store) -> None:
    """An orphan chunk (its entry deleted, its chunks left) is lag the figure shows: the
    status is the thresholds applied to the value, never warn at 0.00 %."""
    from sqlalchemy import delete

    consistent(scan(seeded))
    with seeded.read() as conn, orm(conn) as s:
        gone = s.exec(select(Entry.id).where(col(Entry.session_id) == "s2")
                      .order_by(col(Entry.id))).first()
        chunks = set(s.exec(select(Chunk.id).where(col(Chunk.source_type) == "entry",
                                                   col(Chunk.source_id) == gone)).all())
    with seeded.write() as conn:
        conn.execute(delete(Entry).where(col(Entry.id) == gone))
    sig = scan(seeded).signal("index_lag")
    assert sig.status in ("warn", "fail") and sig.value and sig.value > 0
    assert {r.id for r in sig.offending if r.kind == "chunk"} == chunks
    assert "orphan chunk" in sig.explanation
    consistent(scan(seeded))


def test_rule_graded_signals_have_no_thresholds(seeded: Store, tmp_path: Path) -> None:
    """loader_drift (warn, a plain memory not loadable) and checkpoint_noop (an older no-op
    only: warn) report what they grade, with null thresholds."""
    mem = tmp_path / "memory"
    (mem / "feedback_broken.md").write_text('---\nname: "unclosed\n---\nbody\n',
                                            encoding="utf-8")
    seeded.ingest([mem])
    old = seeded.record_checkpoint(None, trigger="nightly", ts=ts(60 * 24 * 10),
                                   entries_added=30, chunks_embedded=0)
    result = scan(seeded)
    drift, noop = result.signal("loader_drift"), result.signal("checkpoint_noop")
    assert (drift.status, drift.value, drift.graded_by) == ("warn", 1.0, "rule")
    assert (noop.status, noop.value, noop.graded_by) == ("warn", 1.0, "rule")
    assert ids(noop) == {old} and noop.detail == {"recent": 0, "older": 1}
    consistent(result)


def test_embedding_failures_and_reembed(seeded: Store) -> None:
    """An indexer over an embedder that rejects long inputs leaves failed chunks; re-embed
    chunks those sources again, within the limit."""
    long = [s for s in incidents.sources_of(seeded, "s1", memories=False)][:2]
    failed = incidents.oversized_failures(seeded, long, max_chars=10)
    sig = scan(seeded).signal("embedding_failures")
    assert sig.status == "warn" and ids(sig) == set(failed)
    assert sig.fix == "reembed"
    report = seeded.health_fix("reembed")
    assert report.counts["sources"] == 2
    after = scan(seeded)
    assert after.signal("embedding_failures").status == "ok"
    assert after.signal("duplicate_ratio").status == "ok"


def test_reembed_preview_says_it_replaces_every_writers_copies(seeded: Store) -> None:
    long = incidents.sources_of(seeded, "s1", memories=False)[:2]
    incidents.oversized_failures(seeded, long, max_chars=10)
    incidents.reindex_again(seeded, long, ("nightly.sh", "1.0"))
    plan = seeded.health_fix_plan("reembed")
    text = " ".join(plan.lines)
    assert "every writer's copies: " in text and "nightly.sh 2" in text
    assert "deleted and replaced" in text
    with seeded.read() as conn, orm(conn) as s:
        held = len(s.exec(select(Chunk.id).where(col(Chunk.source_type) == "entry", col(
            Chunk.source_id).in_([x.source_id for x in long]))).all())
    assert plan.counts["chunks_replaced"] == held
    seeded.health_fix("reembed", previewed=plan)
    with seeded.write() as conn:  # one of the store's own chunks failed: nobody else's
        own = conn.execute(select(Chunk.id).where(col(Chunk.source_type) == "entry")
                           .order_by(col(Chunk.id).desc())).scalars().first()
        conn.execute(update(Chunk).where(col(Chunk.id) == own).values(status="failed"))
    alone = seeded.health_fix_plan("reembed")
    assert alone.counts["sources"] == 1 and alone.counts["chunks_replaced"] == 1
    assert "every writer's copies" not in " ".join(alone.lines)


def test_a_fix_acts_on_what_its_preview_listed(seeded: Store) -> None:
    """Between the confirmation and the write the store moves: the fix removes the rows the
    preview listed, leaves a row that is no longer a duplicate and new duplicates, and says
    so."""
    from sqlalchemy import delete

    first = incidents.reindex_again(seeded, incidents.sources_of(seeded, "s1", memories=False),
                                    ("nightly.sh", "1.0"))
    plan = seeded.health_fix_plan("compact-duplicates")
    assert set(plan.targets) == set(first) and plan.counts["rows_removed"] == len(first)
    later = incidents.reindex_again(seeded, incidents.sources_of(seeded, "s2", memories=False),
                                    ("nightly.sh", "1.0"))
    with seeded.write() as conn:  # one previewed copy goes by other means
        conn.execute(delete(Chunk).where(col(Chunk.id) == first[0]))
    report = seeded.health_fix("compact-duplicates", previewed=plan)
    assert report.counts["rows_removed"] == len(first) - 1
    assert report.counts["previewed_gone"] == 1
    assert report.counts["new_since_preview"] == len(later)
    assert any("appeared since the preview" in line for line in report.lines)
    left = scan(seeded).signal("duplicate_ratio")
    assert ids(left) == set(later)  # the new ones wait for the next preview


def test_a_fix_with_an_unchanged_store_does_what_it_previewed(seeded: Store) -> None:
    added = incidents.reindex_again(seeded, incidents.sources_of(seeded, "s1"),
                                    ("nightly.sh", "1.0"))
    plan = seeded.health_fix_plan("compact-duplicates")
    report = seeded.health_fix("compact-duplicates", previewed=plan)
    assert report.counts["rows_removed"] == plan.counts["rows_removed"] == len(added)
    assert report.counts["previewed_gone"] == report.counts["new_since_preview"] == 0
    assert len(report.lines) == 1
    assert scan(seeded).signal("duplicate_ratio").status == "ok"
    with pytest.raises(ValueError, match="preview is of compact-duplicates"):
        seeded.health_fix("reembed", previewed=plan)


def test_embedding_drift(tmp_path: Path) -> None:
    class Other(HashEmbedder):
        name = "other-model-v2"

    s = make_store(tmp_path / "d.db")
    add_session(s)
    indexer = Indexer(Other(), 256, 32, "old-indexer", "1")
    src = incidents.sources_of(s, "s1", memories=False)[:3]
    with s.write() as conn:
        for source in src:
            drop_chunks_of(conn, source.source_type, source.source_id)
        indexer.index(conn, src)
    sig = scan(s).signal("embedding_drift")
    with s.read() as conn, orm(conn) as session:
        other = set(session.exec(select(Chunk.id).where(col(Chunk.model) == "other-model-v2")))
    assert sig.status == "warn" and ids(sig) == other
    s.health_fix("reembed")
    assert scan(s).signal("embedding_drift").status == "ok"
    s.close()


def test_vector_support(seeded: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from store.core import vec
    from store.core.records import EmbedderInfo

    sig = scan(seeded).signal("vector_support")
    assert sig.status == "warn" and "fallback" in sig.explanation
    monkeypatch.setattr(vec, "version", lambda conn: None)
    assert scan(seeded).signal("vector_support").status == "fail"
    monkeypatch.undo()
    monkeypatch.setattr(seeded, "embedder_info",
                        lambda: EmbedderInfo("lca-hash-fallback-v1", 384, False, None))
    assert scan(seeded).signal("vector_support").status == "ok"


# -- writers --------------------------------------------------------------------------------------
def test_stale_writer(seeded: Store) -> None:
    hook = incidents.stale_hook(seeded, ("lca-tui:hook", "0.0.3"))
    from store.context.api import record_checkpoint

    record_checkpoint(hook, "s1", trigger="stop", ts=ts(2), entries_added=0)
    hook.close()
    other = incidents.stale_hook(seeded, ("my-harness", "1.9.0"))
    record_checkpoint(other, "s1", trigger="stop", ts=ts(1), entries_added=0)
    other.close()
    sig = scan(seeded).signal("stale_writer")
    assert sig.status == "warn" and ids(sig) == {"lca-tui:hook"}
    named = seeded.settings.with_overrides({"health.canonical_version": "my-harness=2.0"})
    seeded.settings = named
    assert ids(scan(seeded).signal("stale_writer")) == {"lca-tui:hook", "my-harness"}
    seeded.settings = named.with_overrides({"health.canonical_version": "0.0.1, my-harness=1.9"})
    assert scan(seeded).signal("stale_writer").status == "ok"


def test_a_writer_with_no_version_is_flagged_only_against_a_named_canonical(
        seeded: Store) -> None:
    """A harness that named no version records "unknown": not compared by default, flagged
    once a canonical version is named for it (it cannot be shown to run that code)."""
    from store.context.api import record_checkpoint
    from store.core.base import StoreBase

    other = StoreBase(seeded.opened_as, seeded.settings, embedder=seeded.embedder,
                      writer="my-harness")
    assert other.writer_version == "unknown"
    record_checkpoint(other, "s1", trigger="stop", ts=ts(1), entries_added=0)
    other.close()
    sig = scan(seeded).signal("stale_writer")
    assert sig.status == "ok" and sig.detail["writers"]["my-harness"]["version"] == "unknown"
    seeded.settings = seeded.settings.with_overrides(
        {"health.canonical_version": "my-harness=2.0"})
    sig = scan(seeded).signal("stale_writer")
    assert sig.status == "warn" and ids(sig) == {"my-harness"}
    assert "records no version" in sig.offending[0].note


def test_a_writer_that_upgraded_is_not_stale(seeded: Store) -> None:
    from store.context.api import record_checkpoint

    for version in ("0.0.3", "99.0"):
        hook = incidents.stale_hook(seeded, ("lca-tui:hook", version))
        record_checkpoint(hook, "s1", trigger="stop", ts=ts(2), entries_added=0)
        hook.close()
    assert scan(seeded).signal("stale_writer").status == "ok"


def test_a_stored_scan_does_not_clear_a_stale_writer(store: Store) -> None:
    """The scanning process writes its scan (and a fix its audit event) at the running version
    under the same writer name: the stale deployment's data is what is judged."""
    old = incidents.stale_hook(store, ("lca-tui", "0.0.9"))
    add_session(old, "s1")
    old.close()
    for _ in range(2):  # each scan is stored: the second must not be cleared by the first
        sig = scan(store).signal("stale_writer")
        assert sig.status == "warn" and ids(sig) == {"lca-tui"}, sig.explanation
        assert "0.0.9" in sig.offending[0].note
    store.audit("reembed", "chunk", [], {"chunks": 0})  # an event at the running version
    assert scan(store).signal("stale_writer").status == "warn"
    add_session(store, "s2", start=300)  # the running code writes data: the writer is current
    sig = scan(store).signal("stale_writer")
    assert sig.status == "ok" and sig.detail["writers"]["lca-tui"]["version"] != "0.0.9"


@pytest.mark.parametrize(("name", "value", "said"), [
    ("health.offending_limit", "-1", "at least 0"),
    ("health.duplicate_fail_percent", "-5", "at least 0"),
    ("health.duplicate_fail_percent", "3", "must be at least health.duplicate_warn_percent"),
    ("health.near_duplicate_similarity", "nan", "finite"),
    ("health.index_lag_fail_percent", "inf", "finite"),
    ("health.index_lag_fail_percent", "101", "at most 100"),
    ("health.checkpoint_noop_days", "-3", "at least 0"),
    ("health.critical_budget_chars", "0", "at least 1"),
])
def test_health_settings_are_validated_at_load(name: str, value: str, said: str) -> None:
    from store.core.settings import Settings, SettingsError

    with pytest.raises(SettingsError, match=name.replace(".", r"\.")) as caught:
        Settings.load({name: value})
    assert said in str(caught.value)


def test_health_settings_in_range_load(seeded: Store) -> None:
    from store.core.settings import Settings

    settings = Settings.load({"health.offending_limit": "1", "health.duplicate_warn_percent": "10",
                              "health.duplicate_fail_percent": "10",
                              "health.near_duplicate_similarity": "1",
                              "health.checkpoint_noop_days": "0"})
    assert settings["health.duplicate_fail_percent"] == 10.0
    sources = incidents.sources_of(seeded, "s1", memories=False)
    incidents.reindex_again(seeded, sources, ("nightly.sh", "1.0"))
    seeded.settings = settings
    dup = scan(seeded).signal("duplicate_ratio")
    assert len(dup.offending) == 1 and dup.offending_total == len(sources)


def test_health_json_has_no_nan_or_infinity(seeded: Store) -> None:
    import json

    from store.health.records import SignalResult

    odd = SignalResult("x", "unknown", float("nan"), "?", float("inf"), None, "", "",
                       detail={"ratio": float("-inf"), "ok": [1.5]})
    doc = json.dumps(odd.to_json(), allow_nan=False)
    assert json.loads(doc)["value"] is None and json.loads(doc)["detail"]["ok"] == [1.5]
    json.dumps(scan(seeded).to_json(), allow_nan=False)


# -- scans, trends, drill-down ---------------------------------------------------------------
def test_scans_are_stored_with_trends(seeded: Store) -> None:
    first = scan(seeded)
    incidents.reindex_again(seeded, incidents.sources_of(seeded, "s1"), ("nightly.sh", "1"))
    second = scan(seeded)
    assert first.id and second.id and second.id > first.id
    trend = seeded.health_trends()["duplicate_ratio"]
    assert [p.status for p in trend] == ["ok", second.signal("duplicate_ratio").status]
    assert scan(seeded, save="changed").id is None, "identical to the last stored scan"
    assert scan(seeded, save="never").id is None


def test_stored_scans_hold_ids_and_figures_not_content(seeded: Store) -> None:
    secret = "sk-live-do-not-store-this"
    from store.core.writes import NewEntry, NewSession

    seeded.append_entries(NewSession("s9", "api"), [
        NewEntry("user", f"my key is {secret}", "api:s9", source_offset=0, ts=ts(3))])
    incidents.reindex_again(seeded, incidents.sources_of(seeded, "s9", memories=False),
                            ("nightly.sh", "1"))
    scan(seeded)
    with seeded.read() as conn:
        rows = conn.exec_driver_sql("SELECT explanation, offending FROM health_signal").all()
    assert rows and all(secret not in str(r) for r in rows)


def test_drill_down_labels_and_targets(seeded: Store, tmp_path: Path) -> None:
    with seeded.read() as conn, orm(conn) as s:
        entry = s.exec(select(Entry).where(col(Entry.session_id) == "s2")).first()
        memory = s.exec(select(Memory)).first()
    assert entry is not None and memory is not None
    views = seeded.health_rows([Row("entry", entry.id or 0), Row("memory", memory.id or 0),
                                Row("writer", "x"), Row("chunk", 10 ** 9)])
    assert views[0].ref == RecordRef("session", "s2", entry.seq)
    assert views[1].ref == RecordRef("memory", memory.id)
    assert views[2].ref is None and views[3].ref is None


@pytest.mark.sqlite_only("migration 7 predates the server backend: a PostgreSQL store is "
                         "created at the current schema, never without these tables")
def test_a_store_made_before_health_landed_gets_its_tables(tmp_path: Path) -> None:
    """A store already past migration 7 (later capabilities landed first) without the
    health tables gets them when opened: pending means not recorded, not only newer."""
    path = tmp_path / "older.db"
    s = make_store(path)
    with s.write() as conn:
        conn.exec_driver_sql("DROP TABLE health_signal")
        conn.exec_driver_sql("DROP TABLE health_scan")
        conn.exec_driver_sql("DELETE FROM schema_migration WHERE version = 7")
    s.close()
    again = make_store(path)
    try:
        assert scan(again).id is not None
    finally:
        again.close()


def test_a_capability_adds_a_signal_through_the_registry(store: Store,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A measure registered by name joins every scan after the DESIGN order, with its fix
    named when it is not ok; the real signals are untouched for the tests that follow (the
    registry is process-wide: this test once removed ``hook_failures`` for the rest of the
    run, and every later health line read "ok 5")."""
    from store.health import registry
    from store.health.records import SignalResult

    real = [s.name for s in registry.specs()]
    monkeypatch.setattr(registry, "_SPECS", dict(registry._SPECS))

    @registry.signal("capability_signal", "a signal a capability adds", fix=None)
    def capability_signal(ctx: registry.ScanContext) -> SignalResult:
        return registry.result(ctx, "capability_signal", "warn", 2.0, "2", 0.0, None,
                               "warn > 0", "2 things failed", [Row("writer", "lca-tui:x")])

    result = scan(store, save="never")
    assert [s.name for s in result.signals] == real + ["capability_signal"]
    assert result.signal("capability_signal").status == "warn"
    monkeypatch.undo()
    assert [s.name for s in registry.specs()] == real
