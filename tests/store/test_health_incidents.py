"""The paper's incidents end to end: the duplicate writer night after night to 90 % and the
one shared compaction pass back to 0 % with recall unchanged; the real transcripts and the
demo through ``lca-tui health``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlmodel import col, select

from store import Store
from store.core import vec
from store.core.db import orm
from store.core.models import AuditEvent, Chunk
from store.health import incidents
from store.recall.models import RecallCandidate
from store.recall.run import probe
from tests.conftest import make_store
from tests.helpers_health import NOW, consistent, scan
from tests.helpers_shell import FIXED_NOW

QUERIES = ("how was the compaction summary written", "which tests failed and why",
           "read the transcript file", "git commit and push", "what does the hook do",
           "error in the json parsing")


def _recalls(store: Store) -> list[list[tuple[str, int, int, float]]]:
    """The injected items of the fixed recalls: source, rank, score (no trace written)."""
    return [[(i.source_type, i.source_id, i.rank, round(i.score, 6))
             for i in probe(store, q, now=NOW).items] for q in QUERIES]


def test_duplicate_writer_night_after_night_then_compaction(cc_store: Store) -> None:
    """Appendix D: a second writer re-indexes the spans already indexed every night; the
    store reaches 90 % duplicates, health reports it per writer, and compact-duplicates
    brings it to 0 % without changing what the fixed recalls inject."""
    clean = _recalls(cc_store)
    with cc_store.read() as conn:
        chunks_before = conn.exec_driver_sql("SELECT COUNT(*) FROM chunk").scalar_one()
        vectors_before, fts_before = vec.index_counts(conn)
    # every chunk has its FTS row; windows past a tool entry's embedded head have no vector
    assert fts_before == chunks_before and 0 < vectors_before < chunks_before
    sources = incidents.sources_of(cc_store)
    for _night in range(9):
        incidents.reindex_again(cc_store, sources, ("nightly-index.sh", "2.1"))
    dirty_trace = cc_store.recall(QUERIES[0], now=NOW)  # a trace recorded while dirty
    result = scan(cc_store)
    dup = result.signal("duplicate_ratio")
    assert dup.value == pytest.approx(90.0, abs=0.01) and dup.status == "fail"
    assert dup.offending_total == 9 * chunks_before
    assert dup.detail["per_writer"]["nightly-index.sh"]["duplicates"] == 9 * chunks_before
    assert result.signal("shared_index_writers").offending[0].id == "nightly-index.sh"

    preview = cc_store.compact_duplicates(dry_run=True)
    assert preview.dry_run and preview.counts["rows_removed"] == 9 * chunks_before
    with cc_store.read() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM chunk").scalar_one() \
            == 10 * chunks_before, "a dry run changes nothing"
    # on a server the preview says the tables will be vacuumed, and the report that they were
    assert any("vacuum the chunk and vector tables" in line
               for line in preview.lines) == cc_store.on_server
    report = cc_store.compact_duplicates()
    assert report.counts["rows_after"] == chunks_before
    assert ("vacuumed chunk, chunk_vec" in report.lines[0]) == cc_store.on_server
    assert report.per_writer == {"nightly-index.sh": 9 * chunks_before}

    after = scan(cc_store)
    assert after.signal("duplicate_ratio").value == 0.0
    assert after.signal("duplicate_ratio").status == "ok"
    assert after.signal("shared_index_writers").status == "ok"
    assert _recalls(cc_store) == clean
    with cc_store.read() as conn, orm(conn) as s:
        vectors, fts = vec.index_counts(conn)
        assert (vectors, fts) == (vectors_before, fts_before)
        existing = set(s.exec(select(Chunk.id)))
        pointed = set(s.exec(select(RecallCandidate.chunk_id).where(
            col(RecallCandidate.trace_id) == dirty_trace.trace_id)))
        assert pointed - {None} <= existing, "every trace candidate re-pointed to a kept row"
        nn = set(s.exec(select(Chunk.nn_chunk_id).where(col(Chunk.nn_chunk_id).is_not(None))))
        assert nn <= existing
        audit = s.exec(select(AuditEvent).where(col(AuditEvent.action)
                                                == "compact-duplicates")).one()
    counts = json.loads(audit.counts)
    assert counts["rows_removed"] == 9 * chunks_before
    assert counts["writer:nightly-index.sh"] == 9 * chunks_before
    assert all(isinstance(i, int) for i in json.loads(audit.target_ids))  # ids, no content


def _cli(*args: str, store: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", *args, "--store", str(store)],
                          capture_output=True, text=True, timeout=300)


def test_health_cli_on_real_transcripts_exits_0_at_fail(cc_store: Store, tmp_path: Path
                                                        ) -> None:
    path = cc_store.opened_as
    cc_store.close()
    done = _cli("health", "--json", store=path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"scanned_at", "signals"} <= set(data)
    for sig in data["signals"]:
        assert {"name", "status", "value", "thresholds", "explanation", "offending"} <= set(sig)
        assert set(sig["thresholds"]) == {"warn", "fail"}
    assert all(s["status"] != "fail" for s in data["signals"])
    # Claude Code records no checkpoints: its compaction is information, not a warning, and
    # nothing else warns but the tests' fallback embedder (vector_support; issue 22)
    warn = _cli("health", "--json", "--fail-on", "warn", store=path)
    at_warn = {s["name"] for s in json.loads(warn.stdout)["signals"]
               if s["status"] in ("warn", "fail", "unknown")}
    assert at_warn == {"vector_support"}
    sig = next(s for s in json.loads(warn.stdout)["signals"]
               if s["name"] == "compaction_without_checkpoint")
    assert sig["status"] == "n/a" and sig["detail"]["not_judged"] == 1


def test_health_cli_errors_are_one_line(tmp_path: Path) -> None:
    done = _cli("health", "--show", "no_such_signal", store=tmp_path / "x.db")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "no health signal 'no_such_signal'" in done.stderr


@pytest.mark.parametrize("command", [("health", "--no-save"), ("health", "--json"),
                                     ("compact-duplicates", "--dry-run"),
                                     ("compact-duplicates",)])
def test_health_refuses_a_store_that_does_not_exist(tmp_path: Path,
                                                    command: tuple[str, ...]) -> None:
    """A mistyped path is an error, never a new empty store reported healthy."""
    typo = tmp_path / "typo.db"
    done = _cli(*command, store=typo)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert f"no store at {typo}" in done.stderr and command[0] in done.stderr
    assert not typo.exists() and not list(tmp_path.rglob("*.db*"))


def test_health_reads_an_existing_store(store: Store) -> None:
    path = store.opened_as
    store.close()
    done = _cli("health", "--no-save", "--json", store=path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["signals"]


def test_a_bad_health_setting_is_one_line_naming_it(store: Store) -> None:
    path = store.opened_as
    store.close()
    done = subprocess.run([sys.executable, "-m", "lca_tui.cli", "--set",
                           "health.index_lag_fail_percent=inf", "health", "--json",
                           "--store", str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert "health.index_lag_fail_percent must be a finite number" in done.stderr


def test_demo_tells_every_incident(demo_path: Path) -> None:
    """The demo store (the run's one, copied; on a server, its template database cloned): at
    least eight incidents at warn or fail, `health` exits 1."""
    store = make_store(demo_path)
    try:
        result = store.health(now=FIXED_NOW)
    finally:
        store.close()
    path = store.opened_as
    bad = {s.name: s.status for s in result.signals if s.status in ("warn", "fail")}
    bad.pop("vector_support", None)  # the fallback embedder of the tests, not an incident
    assert {"stale_writer", "embedding_failures", "loader_drift", "critical_budget",
            "checkpoint_noop", "duplicate_ratio", "shared_index_writers",
            "compaction_without_checkpoint", "threshold_order"} <= set(bad)
    assert len(bad) >= 8
    assert bad["checkpoint_noop"] == "fail" and bad["loader_drift"] == "fail"
    consistent(result)
    done = _cli("health", store=path)
    assert done.returncode == 1, done.stderr
    fixed = _cli("compact-duplicates", "--yes", "--json", store=path)
    assert fixed.returncode == 0, (fixed.stdout, fixed.stderr)
    doc = json.loads(fixed.stdout)
    assert doc["fix"]["counts"]["rows_removed"] == doc["plan"]["counts"]["rows_removed"] > 0
    again = _cli("health", "--json", store=path)
    statuses = {s["name"]: s["status"] for s in json.loads(again.stdout)["signals"]}
    assert statuses["duplicate_ratio"] == "ok"
