"""``lca-tui bench --store URL``: the same synthetic store on a SQLite file and on a
PostgreSQL database, measured side by side — recall percentiles per size, two writer processes
at once with every entry found once, an erasure with its verification — at a tiny size (the
figures themselves are in docs/postgres.md); and ``--store PATH`` still refused."""

from __future__ import annotations

import pytest

from store import open_store, run_build_budget, run_side_by_side
from tests import pg_server
from tests.helpers_ui import _fails


def test_both_backends_side_by_side(pg: pg_server.PgServer) -> None:
    url = pg.create()
    seen: list[str] = []
    result = run_side_by_side(url, pg_server.masked(url), sizes=[700, 900], queries=8,
                              sample=300, embedder="fallback", writer_entries=12,
                              progress=lambda label, _d, _t: seen.append(label))
    sqlite, server = result.backends
    assert (sqlite.backend, server.backend) == ("sqlite-vec+fts5", "pgvector+tsvector")
    for figures in (sqlite, server):
        assert [s.chunks for s in figures.sizes] == [700, 900]
        assert all(0 < s.recall_ms["p50"] <= s.recall_ms["p95"] <= s.recall_ms["max"]
                   for s in figures.sizes)
        assert figures.writers == 2 and figures.writer_entries == 12
        assert figures.entries_found_once, (figures.entries_missing, figures.entries_doubled)
        assert figures.ingest_entries_per_s > 0
        assert figures.erase_error is None, figures.erase_error
        assert figures.erase_entries > 0 and figures.erase_passed, figures.probes_failed
        assert figures.probes_passed > 0
    assert any("pgvector+tsvector: recall" in label for label in seen)
    with pytest.raises(Exception, match="already holds entries"):
        run_side_by_side(url, url, sizes=[700], queries=8, sample=300, embedder="fallback",
                         writer_entries=0)


def test_a_store_path_is_still_refused(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    _fails(["bench", "--store", str(tmp_path / "mine.db")], capsys, "--store is not accepted")


def test_the_build_budget_grows_the_server_store_until_it_is_spent(pg: pg_server.PgServer) -> None:
    url = pg.create()
    seen: list[str] = []
    result = run_build_budget(url, pg_server.masked(url), 5.0, queries=8, sample=60,
                              embedder="fallback", batch=60,
                              progress=lambda label, _d, _t: seen.append(label))
    assert result.backend == "pgvector+tsvector" and result.batches >= 1
    assert result.build_s >= 5.0  # the last batch began within the budget, and ended after it
    # times are rounded to 0.1 s: a batch ending at 4.96 s (within the budget) reads 5.0
    assert result.growth[-2][0] <= 5.0 <= result.growth[-1][0]
    sizes = [c for _t, c in result.growth]
    assert sizes == sorted(sizes) and sizes[-1] == result.chunks
    assert result.entries == 60 + 60 * result.batches
    with open_store(url) as s, s.read() as conn:
        stored = conn.exec_driver_sql("SELECT count(*) FROM chunk").scalar_one()
        vectors = conn.exec_driver_sql("SELECT count(*) FROM chunk_vec").scalar_one()
    assert stored == vectors == result.chunks  # the size said is the size on the server
    assert 0 < result.recall_ms["p50"] <= result.recall_ms["p95"] <= result.recall_ms["max"]
    assert result.database_bytes and result.database_bytes > 0
    assert any("recall at" in label for label in seen)
    with pytest.raises(Exception, match="already holds entries"):
        run_build_budget(url, url, 1.0, queries=8, sample=60, embedder="fallback")


def test_a_build_budget_needs_a_server(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    _fails(["bench", "--build-budget", "60"], capsys, "--build-budget grows a store on a server")
