"""The server roles `docs/postgres.md` recommends: a reader that may only `SELECT`
opens the store with `--read-only` and every listing, search, recall and health scan works
without writing a row; an agent role with the write path's rights but not an erasure's
ingests and recalls, and `lca-tui erase` as that role is one clear line with nothing removed.

The grants are the doc's own SQL, run on a fresh database of the run's one server
(conftest's ``pg``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from store import NewEntry, NewSession, Settings, open_store

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install "
                              "'lca-tui[postgres]')")

from tests.pg_server import PgServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "postgres.md"


def _doc_sql(heading: str) -> list[str]:
    """The statements of the first ```sql block after ``heading`` in docs/postgres.md."""
    text = DOC.read_text()
    block = text[text.index(heading):].split("```sql\n", 1)[1].split("```", 1)[0]
    lines = [ln for ln in block.splitlines() if not ln.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


@pytest.fixture
def seeded(pg: PgServer) -> Iterator[str]:
    """A fresh database holding one session (the owner's URL), dropped after the test."""
    url = pg.create(kind="role")
    s = open_store(url, Settings.load({"embed.backend": "fallback"}))
    try:
        s.append_entries(NewSession(id="mail", format="harness"), [
            NewEntry(kind="user", content="write to zoltan.quaxby@example.org about the invoice",
                     source_key="m1"),
            NewEntry(kind="user", content="the invoice is due on Friday", source_key="m2")])
    finally:
        s.close()
    yield url
    pg.drop(urlsplit(url).path.lstrip("/"))


def _as_role(url: str, role: str, sql: list[str]) -> str:
    """Create ``role`` by the doc's statements (its password dropped: the embedded server
    trusts its local socket) and return ``url`` logged in as that role."""
    db = urlsplit(url).path.lstrip("/")
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
            conn.execute(f"DROP OWNED BY {role}")  # an earlier test's grants, then the role
            conn.execute(f"DROP ROLE {role}")
        for stmt in sql:
            stmt = stmt.replace(" PASSWORD '…'", "").replace("DATABASE lca ", f"DATABASE {db} ")
            conn.execute(stmt)
    head, _, query = url.partition("?")
    scheme, rest = head.split("://", 1)
    rest = rest.split("@", 1)[1] if "@" in rest else rest
    return f"{scheme}://{role}@{rest}" + (f"?{query}" if query else "")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", *args], capture_output=True,
                          text=True, timeout=180, cwd=ROOT,
                          env={**os.environ, "LCA_EMBEDDER": "fallback"})


def _counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])
                for t in ("entry", "recall_trace", "health_scan", "audit_event", "chunk")}


def test_a_select_only_role_reads_everything_with_read_only_and_writes_nothing(
        seeded: str) -> None:
    reader = _as_role(seeded, "lca_reader", _doc_sql("give it a role that can only read"))
    before = _counts(seeded)
    for argv in (["stats"], ["sessions"], ["proposals"], ["memories"], ["audit"],
                 ["search", "invoice"], ["recall", "when is the invoice due"],
                 ["health", "--no-save"], ["health"]):
        done = _cli("--store", reader, "--read-only", *argv)
        assert done.returncode in (0, 1), (argv, done.stderr)  # health: 1 = a signal at fail
        assert "Traceback" not in done.stderr and "permission denied" not in done.stderr, \
            (argv, done.stderr)
        assert done.stdout.strip(), argv
    found = _cli("--store", reader, "--read-only", "search", "invoice")
    assert "due on Friday" in found.stdout
    assert _counts(seeded) == before  # no trace, no scan, no audit event
    # a write is refused by lca-tui by name, before the server is asked
    done = _cli("--store", reader, "--read-only", "erase", "--match", "zoltan", "--yes")
    assert done.returncode != 0 and "read-only" in done.stderr and "Traceback" not in done.stderr
    assert _counts(seeded) == before


def test_an_agent_role_writes_but_its_erasure_is_refused_with_nothing_removed(
        seeded: str, tmp_path: Path) -> None:
    agent = _as_role(seeded, "lca_agent",
                     _doc_sql("Roles: agents that write but do not erase"))
    session = tmp_path / "s.jsonl"
    session.write_text('{"type":"user","sessionId":"agent-1","uuid":"u1",'
                       '"timestamp":"2026-12-01T10:00:00Z","message":{"role":"user",'
                       '"content":"the agent role wrote this line"}}\n')
    done = _cli("--store", agent, "ingest", str(session))
    assert done.returncode == 0, done.stderr
    done = _cli("--store", agent, "recall", "what did the agent role write")
    assert done.returncode == 0, done.stderr
    before = _counts(seeded)
    done = _cli("--store", agent, "erase", "--match", "zoltan", "--yes")
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "permission denied" in lines[0], lines
    after = _counts(seeded)
    assert after["entry"] == before["entry"]  # the erasure rolled back whole
    with psycopg.connect(seeded) as conn:
        assert conn.execute("SELECT COUNT(*) FROM entry WHERE content LIKE %s",
                            ("%zoltan%",)).fetchone()[0] == 1


def test_only_the_tables_owner_vacuums_after_a_compaction_and_the_rest_are_named(
        seeded: str) -> None:
    """PostgreSQL skips a VACUUM of a table this role does not own with a mere warning: the
    compaction's vacuum must not report such a table as vacuumed."""
    from sqlalchemy import create_engine

    from store.core import pg

    other = _as_role(seeded, "lca_t_dml", [
        "CREATE ROLE lca_t_dml LOGIN",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO lca_t_dml"])
    for url, expected in ((seeded, (["chunk", "chunk_vec"], [])),
                          (other, ([], ["chunk", "chunk_vec"]))):
        engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
        try:
            assert pg.vacuum_tables(engine, ["chunk", "chunk_vec"]) == expected
        finally:
            engine.dispose()
