"""What an ``insert_ignore`` (SQLite's ``INSERT OR IGNORE``, PostgreSQL's ``ON CONFLICT DO
NOTHING``) reports as added is what was added, on both backends: a skipped repeat counts 0.
The writers read the id ``RETURNING`` gives rather than the statement's ``rowcount``
(``store/core/writes.upsert_session``, ``store/ingest/memory_dir._import_log``, and
``store/recall/traces.add_feedback`` before them).

Run on a file and on the run's PostgreSQL server (conftest's ``pg``) in every run, whatever
``LCA_TEST_BACKENDS`` says: the counts are what differs between the two."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sqlalchemy import func, select

from store import NewSession, Settings, Store, load_embedder, open_store
from store.core.db import insert_ignore
from store.core.models import Checkpoint
from store.core.models import Session as SessionRow
from store.core.timeutil import now_iso
from store.core.writes import upsert_session


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "store.db")
        return
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install "
                        "'lca-tui[postgres]')")
    pg = request.getfixturevalue("pg")
    url = pg.create(kind="ic")
    yield url
    pg.drop(urlsplit(url).path.lstrip("/"))


def _open(where: str) -> Store:
    return open_store(where, Settings.load({"embed.backend": "fallback"}),
                      embedder=load_embedder("fallback"))


def test_a_new_session_is_new_once(where: str) -> None:
    with _open(where) as s:
        session = NewSession("s-1", "claude-code", started_at="2026-01-01T00:00:00Z")
        with s.write() as conn:
            assert upsert_session(conn, session, "test", "1") is True
        with s.write() as conn:
            assert upsert_session(conn, session, "test", "1") is False  # a repeat
        later = NewSession("s-1", "claude-code", started_at="2025-12-31T00:00:00Z")
        with s.write() as conn:
            assert upsert_session(conn, later, "test", "1") is False
        with s.read() as conn:
            rows = conn.execute(select(SessionRow.id, SessionRow.started_at)).all()
        assert [tuple(r) for r in rows] == [("s-1", "2025-12-31T00:00:00Z")]  # widened


def test_a_memory_dirs_log_counts_each_checkpoint_once(where: str, tmp_path: Path) -> None:
    mem = tmp_path / "mem"
    mem.mkdir()
    (mem / "feedback_a.md").write_text("---\nname: a\ntype: feedback\n---\nUse the lock.\n")
    (mem / "LOG.md").write_text("### Auto-archive — 2026-01-01T00:00:00Z\n"
                                "- Transcript chunks vectorized: 3\n\n"
                                "### Auto-archive — 2026-01-02T00:00:00Z\n"
                                "- Transcript chunks vectorized: 5\n")
    with _open(where) as s:
        first = s.ingest([mem])
        again = s.ingest([mem])
        with s.read() as conn:
            stored = conn.execute(select(func.count()).select_from(Checkpoint)).scalar_one()
    assert (first.checkpoints_added, again.checkpoints_added, stored) == (2, 0, 2)
    (mem / "LOG.md").write_text((mem / "LOG.md").read_text()
                                + "\n### Auto-archive — 2026-01-03T00:00:00Z\n"
                                "- Transcript chunks vectorized: 1\n")
    with _open(where) as s:
        assert s.ingest([mem]).checkpoints_added == 1  # only the new one


def test_the_rowcount_itself_is_what_the_writers_no_longer_trust(where: str) -> None:
    """RETURNING gives the added row's id and nothing for a skipped repeat, on both
    backends. ``rowcount`` does not: 0 for the repeat on SQLite, but -1 on PostgreSQL for the
    first insert and the repeat alike (psycopg 3.3 through SQLAlchemy 2.1, 2026-12-02) — so
    ``rowcount or 0`` counted -1 per row and ``if rowcount:`` took every repeat for new."""
    with _open(where) as s, s.write() as conn:
        values = {"ts": now_iso(), "trigger": "t", "status": "ok", "idem_key": "k",
                  "writer": "test", "writer_version": "1", "created_at": now_iso()}
        added = conn.execute(insert_ignore(conn, Checkpoint).values(**values)
                             .returning(Checkpoint.id)).first()
        skipped = conn.execute(insert_ignore(conn, Checkpoint).values(**values)
                               .returning(Checkpoint.id)).first()
        assert added is not None and skipped is None
        plain = conn.execute(insert_ignore(conn, Checkpoint).values(**values))
        if conn.dialect.name == "sqlite":
            assert plain.rowcount == 0
