"""The suite's second backend: the throwaway PostgreSQL server, its template
databases and the per-test clones (``tests/pg_server.py``), and the switch that runs the store
behaviour tests on both backends (``LCA_TEST_BACKENDS``, ``tests/conftest.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import pg_server
from tests.conftest import BEHAVIOUR_FILES, ROOT, runs_on_both


def _query(url: str, sql: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql)
        return list(cur.fetchall()) if cur.description else []


def test_the_server_has_pgvector_and_the_template_is_cloned_per_test(
        pg: pg_server.PgServer) -> None:
    version = _query(pg.url, "SHOW server_version_num")[0][0]
    assert int(str(version)) >= 160000

    def build(url: str) -> None:
        _query(url, "CREATE TABLE held (id int PRIMARY KEY, v vector(3))")
        _query(url, "INSERT INTO held VALUES (1, '[1,0,0]'), (2, '[0,1,0]')")

    name = pg.template("fixture-test", build)
    assert pg.template("fixture-test", build) == name  # built once, then reused
    first, second = pg.clone(name), pg.clone(name)
    assert first != second
    # each clone starts with the template's rows and the vector extension...
    nearest = _query(first, "SELECT id FROM held ORDER BY v <=> '[0.9,0.1,0]' LIMIT 1")
    assert nearest == [(1,)]
    # ...and what one test writes is not seen by another, nor by the template
    _query(first, "INSERT INTO held VALUES (3, '[0,0,1]')")
    assert _query(first, "SELECT count(*) FROM held") == [(3,)]
    assert _query(second, "SELECT count(*) FROM held") == [(2,)]
    assert _query(pg_server.with_database(pg.url, name), "SELECT count(*) FROM held") == [(2,)]
    made = {u.split("?")[0].rsplit("/", 1)[1] for u in (first, second)}
    assert made <= set(pg.databases())
    for db in made:
        pg.drop(db)
    assert not made & set(pg.databases())


def test_drop_refuses_a_database_this_run_did_not_make(pg: pg_server.PgServer) -> None:
    with pytest.raises(ValueError, match="not a database of this run"):
        pg.drop("postgres")


def test_a_failed_template_build_leaves_no_database(pg: pg_server.PgServer) -> None:
    before = set(pg.databases())

    def broken(url: str) -> None:
        _query(url, "SELECT no_such_function()")

    with pytest.raises(Exception, match="no_such_function"):
        pg.template("broken", broken)
    assert set(pg.databases()) == before


def test_backends_switch() -> None:
    assert pg_server.chosen_backends(None) == (pg_server.DEFAULT_BACKENDS, False)
    assert pg_server.chosen_backends("") == (pg_server.DEFAULT_BACKENDS, False)
    assert pg_server.chosen_backends("sqlite,postgres") == (("sqlite", "postgres"), True)
    assert pg_server.chosen_backends("sqlite") == (("sqlite",), False)
    assert pg_server.chosen_backends(" Postgres , sqlite") == (("sqlite", "postgres"), True)
    with pytest.raises(pg_server.BackendsError, match="mysql is not a backend"):
        pg_server.chosen_backends("sqlite,mysql")


def test_urls_keep_the_socket_and_mask_the_password() -> None:
    url = "postgresql://postgres:@/postgres?host=/tmp/lca-pg-x/data"
    assert pg_server.with_database(url, "lca_t1_db2") == \
        "postgresql://postgres:@/lca_t1_db2?host=/tmp/lca-pg-x/data"
    assert pg_server.masked("postgresql://ann:s3cret@db:5432/lca") == \
        "postgresql://ann:***@db:5432/lca"
    assert "s3cret" not in pg_server.masked("postgresql://ann:s3cret@db/lca?sslmode=require")


def test_which_files_run_on_both_backends() -> None:
    store_tests = ROOT / "tests" / "store"
    assert runs_on_both(store_tests / "test_recall.py", False)
    assert runs_on_both(store_tests / "test_privacy_scopes.py", False)
    assert not runs_on_both(store_tests / "test_kill_points.py", False)
    assert not runs_on_both(ROOT / "tests" / "cli" / "test_recall.py", False)
    assert runs_on_both(ROOT / "tests" / "cli" / "test_recall.py", True)
    # every capability the issue names has at least one behaviour file
    names = [p.name for p in store_tests.glob("test_*.py")]
    for prefix in BEHAVIOUR_FILES:
        assert any(n.startswith(prefix) for n in names), prefix


def _pytest(env_value: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in a fresh process with ``LCA_TEST_BACKENDS=env_value`` (None: unset), no
    terminal size and no given server."""
    import os

    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", pg_server.BACKENDS_ENV, pg_server.URL_ENV)}
    if env_value is not None:
        env[pg_server.BACKENDS_ENV] = env_value
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def _collect(env_value: str | None, *args: str) -> str:
    done = _pytest(env_value, "--collect-only", *args)
    return done.stdout + done.stderr


def test_collection_follows_the_switch() -> None:
    target = str(Path("tests") / "store" / "test_context.py")
    both = _collect("sqlite,postgres", target)
    sqlite = _collect("sqlite", target)

    def ids(out: str) -> list[str]:
        return [line for line in out.splitlines() if "::" in line]

    assert ids(_collect(None, target)) == ids(_collect(",".join(pg_server.DEFAULT_BACKENDS),
                                                      target))
    assert "[sqlite]" in both and "[postgres]" in both
    assert "[sqlite]" in sqlite and "[postgres]" not in sqlite
    # every test runs on SQLite; on PostgreSQL all but those marked sqlite_only (with a reason)
    only = (ROOT / target).read_text(encoding="utf-8").count("@pytest.mark.sqlite_only(")
    assert both.count("[sqlite]") == sqlite.count("[sqlite]") > 0
    assert both.count("[postgres]") == both.count("[sqlite]") - only
    wrong = _collect("sqlite,oracle", target)
    assert "oracle is not a backend" in wrong


def test_a_run_that_leaves_postgres_out_starts_no_server() -> None:
    done = _pytest("sqlite", "-rs", "-p", "no:xdist", str(Path(__file__)), "-k",
                   "cloned_per_test")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "1 skipped" in out and "LCA_TEST_BACKENDS=sqlite leaves PostgreSQL out" in out


def test_the_summary_names_the_postgres_tests_that_opened_no_store() -> None:
    """From the teardown reports (what reaches the main process under xdist), not from the
    worker's own state."""
    from types import SimpleNamespace

    from tests import conftest

    lines: list[str] = []
    reporter = SimpleNamespace(write_line=lines.append)
    held = list(pg_server.unused)
    try:
        pg_server.unused.clear()
        conftest.pytest_terminal_summary(reporter)
        assert lines == []  # nothing to say
        for when, props in (("call", [(conftest.NO_PG_STORE, True)]), ("teardown", []),
                            ("teardown", [(conftest.NO_PG_STORE, True)])):
            conftest.pytest_runtest_logreport(SimpleNamespace(
                when=when, user_properties=props, nodeid=f"t.py::a[postgres]-{when}-{len(props)}"))
        conftest.pytest_terminal_summary(reporter)
        assert lines == ["1 [postgres] test(s) opened no PostgreSQL store through make_store / "
                         "store / cc_store (they ran on SQLite or on no store), e.g. "
                         "t.py::a[postgres]-teardown-1"]
    finally:
        pg_server.unused[:] = held
