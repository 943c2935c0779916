"""The listing commands' lean reads (``store.open_listings``: a store file read with the bare
DB-API, no ORM) answer exactly as the ``Store`` does — the same records for every listing and
filter, on the demo store with secret, flagged and approved-as-another-operation records
added — and decline every store only the ``Store`` opens correctly (a server, a store to
migrate or to refuse, no store, not a store), so the command then says what the ``Store``
says."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from store import Listings, Settings, Store, open_listings, open_store
from store.governance import approve, parse_proposal, submit
from tests.conftest import FALLBACK_EMBEDDER, make_store

PORT = "Local dev and tests run on PostgreSQL 16 in docker compose on port 5433."


def _both(path: Path, **overrides: object) -> tuple[Store, Listings]:
    settings = Settings.load({**FALLBACK_EMBEDDER, **overrides})
    lean = open_listings(path, settings)
    assert lean is not None, "a current store file must be read without the ORM"
    return open_store(path, settings), lean


def _seed_what_the_demo_lacks(store: Store) -> None:
    """A secret candidate, an approval as another operation (reinforce), a memory flagged by a
    keep-both approval: every branch of the records' builders."""
    submit(store, parse_proposal({"op": "add", "content": "the payroll export key is k-7731",
                                  "metadata": {"name": "payroll key",
                                               "sensitivity": "secret"}}, "cli"))
    first = approve(store, submit(store, parse_proposal(
        {"op": "add", "type": "project", "content": PORT,
         "metadata": {"name": "Local dev database"}}, "cli")).id)
    assert first.status == "applied"
    again = submit(store, parse_proposal({"op": "add", "type": "project", "content": PORT,
                                          "metadata": {"name": "dev db again"}}, "cli"))
    assert approve(store, again.id, as_="reinforce").status == "applied"
    other = submit(store, parse_proposal(
        {"op": "add", "type": "project", "content": PORT.replace("5433", "5432"),
         "metadata": {"name": "Port 5432"}}, "cli"))
    assert approve(store, other.id, "keep-both", "both ports while migrating").status \
        == "applied"


def test_every_listing_answers_as_the_store_does(demo_path: Path) -> None:
    seeded = open_store(demo_path, Settings.load(FALLBACK_EMBEDDER))
    try:
        _seed_what_the_demo_lacks(seeded)
    finally:
        seeded.close()
    store, lean = _both(demo_path)
    try:
        assert lean.stats() == store.stats()
        assert lean.stats(with_embedder=False) == store.stats(
            with_embedder=False)
        sessions = store.sessions()
        assert len(sessions) >= 6 and lean.sessions() == sessions
        assert lean.sessions(limit=2) == store.sessions(limit=2)
        some = [sessions[1].id, sessions[3].id, "no-such-session"]
        assert lean.sessions(ids=some) == store.sessions(ids=some)
        memories = store.list_memories()
        assert any(m.flagged for m in memories) and any(m.text is None for m in memories)
        assert lean.list_memories() == memories
        for status in ("active", "superseded", "disputed"):
            assert lean.list_memories(status) == store.list_memories(
                status)
        for kind in {m.type for m in memories if m.type}:
            assert lean.list_memories(None, kind) == store.list_memories(
                None, kind)
        proposals = store.proposals()
        assert any(p.shown_op == "reinforce" for p in proposals)
        assert any(p.name == "payroll key" for p in proposals)
        assert lean.proposals() == proposals
        for status in ("pending", "applied", "rejected", "failed"):
            assert lean.proposals(status) == store.proposals(status)
        assert lean.proposals(None, 3) == store.proposals(None, 3)
        events = store.audit_events(None)
        assert len(events) > 20 and lean.audit_events(None) == events
        assert lean.audit_events() == store.audit_events()
        assert lean.audit_events(5, "proposal_approved") == store.audit_events(
            5, "proposal_approved")
        for bad in (lambda s: s.list_memories("gone"), lambda s: s.list_memories(None, "nope"),
                    lambda s: s.proposals("maybe")):
            with pytest.raises(ValueError) as by_store:
                bad(store)
            with pytest.raises(ValueError) as by_lean:
                bad(lean)
            assert str(by_lean.value) == str(by_store.value)
    finally:
        store.close()
        lean.close()


def test_an_empty_store_lists_as_the_store_does(tmp_path: Path) -> None:
    make_store(tmp_path / "s.db").close()
    store, lean = _both(tmp_path / "s.db")
    try:
        assert lean.stats() == store.stats()
        assert lean.sessions() == [] and lean.list_memories() == []
        assert lean.proposals() == [] and lean.audit_events() == []
    finally:
        store.close()
        lean.close()


def test_stores_only_the_store_can_open_are_declined(tmp_path: Path) -> None:
    settings = Settings.load(FALLBACK_EMBEDDER)
    assert open_listings(tmp_path / "none.db", settings) is None  # no store: Store makes one
    (tmp_path / "empty.db").write_bytes(b"")
    assert open_listings(tmp_path / "empty.db", settings) is None
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 100)
    assert open_listings(tmp_path / "junk.db", settings) is None
    assert open_listings("postgresql://u@localhost/db", settings) is None  # a server
    make_store(tmp_path / "old.db").close()
    with sqlite3.connect(tmp_path / "old.db") as conn:  # a migration not applied yet
        conn.execute("DELETE FROM schema_migration WHERE version = "
                     "(SELECT MAX(version) FROM schema_migration)")
    assert open_listings(tmp_path / "old.db", settings) is None
    make_store(tmp_path / "new.db").close()
    with sqlite3.connect(tmp_path / "new.db") as conn:  # newer than this code
        conn.execute("INSERT INTO schema_migration VALUES (9999, 'future', 'now', '9')")
    assert open_listings(tmp_path / "new.db", settings) is None
    named = Settings.load({**FALLBACK_EMBEDDER, "store.url": "postgresql://u@h/db"})
    assert open_listings(None, named) is None  # the store.url setting names a server
    make_store(tmp_path / "ok.db").close()
    lean = open_listings(tmp_path / "ok.db", settings)
    assert lean is not None
    lean.close()


def test_a_locked_store_is_refused_once_not_after_two_waits(tmp_path: Path) -> None:
    """A store another process holds locked: the lean open says so itself (StoreBase's
    words), after one busy timeout — not None, which would make the caller wait again."""
    import subprocess
    import sys
    import time

    from store import StoreUnavailable

    make_store(tmp_path / "s.db").close()
    # another process (SQLite's locks are per process): a writer that shuts readers out
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\n"
         "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
         "c.execute('PRAGMA journal_mode = DELETE')\n"
         "c.execute('BEGIN EXCLUSIVE')\n"
         "c.execute('UPDATE schema_migration SET name = name')\n"
         "print('locked', flush=True)\n"
         "sys.stdin.read()\n", str(tmp_path / "s.db")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        t0 = time.monotonic()
        with pytest.raises(StoreUnavailable, match="locked"):
            open_listings(tmp_path / "s.db", Settings.load({"store.busy_timeout_ms": "300"}))
        assert time.monotonic() - t0 < 3
    finally:
        holder.communicate("", timeout=30)


def test_a_newer_store_in_rollback_journal_mode_is_left_untouched_by_a_listing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The lean open reads the schema version without changing a byte, as StoreBase does
    before it refuses a newer store ("the store was not changed"), and `stats` says so."""
    from tests.helpers_shell import cli

    path = tmp_path / "s.db"
    make_store(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("INSERT INTO schema_migration VALUES (9999, 'future', 't', 'c')")
    before = path.read_bytes()
    assert open_listings(path, Settings.load(FALLBACK_EMBEDDER)) is None
    assert cli(["--store", str(path), "stats"]) == 2
    assert "not changed" in capsys.readouterr().err
    assert path.read_bytes() == before and not Path(f"{path}-wal").exists()


def test_a_listing_switches_a_rollback_journal_store_to_wal_as_the_store_does(
        tmp_path: Path) -> None:
    make_store(tmp_path / "s.db").close()
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
    lean = open_listings(tmp_path / "s.db", Settings.load(FALLBACK_EMBEDDER))
    assert lean is not None
    lean.close()
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_audit_event_of_another_shape_reads_as_no_counts_on_both_paths(
        tmp_path: Path) -> None:
    """Counts that are not a JSON object, ids that are not a JSON list (another writer's rows):
    each column reads as none on its own, as malformed JSON already did, never a crash."""
    s = make_store(tmp_path / "s.db")
    for n in range(4):
        s.audit(f"note {n}", "memory", [1], {"n": 1})
    s.close()
    with sqlite3.connect(tmp_path / "s.db") as conn:
        for action, ids, counts in (("note 0", "7", "[1, 2]"), ("note 1", '"abc"', '{"n": 2}'),
                                    ("note 2", "[3, 4]", "not json"),
                                    ("note 3", '{"k": 1}', "")):
            conn.execute("UPDATE audit_event SET target_ids = ?, counts = ? WHERE action = ?",
                         (ids, counts, action))
    store, lean = _both(tmp_path / "s.db")
    try:
        events = store.audit_events()
        assert sorted((e.action, e.target_ids, e.counts) for e in events) == [
            ("note 0", (), {}), ("note 1", (), {"n": 2}), ("note 2", (3, 4), {}),
            ("note 3", (), {})]
        assert lean.audit_events() == events
    finally:
        store.close()
        lean.close()
