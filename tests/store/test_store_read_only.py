"""A store opened read-only (``store.read_only``, ``--read-only``): every write refused by the
store itself (``ReadOnly``, one line naming the action), the file opened with SQLite's mode=ro,
recalls without a trace, health scans not stored, an older store not migrated, no store created
-- and the file's bytes unchanged by a whole read-only session."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import text

from store import ReadOnly, StoreError, open_store
from store.core.embed import load_embedder
from store.core.settings import Settings

from tests.conftest import make_store
from tests.helpers_gov_seed import _propose, _seed


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_only(path: Path):  # type: ignore[no-untyped-def]
    return open_store(path, Settings.load({"store.read_only": "true"}),
                      embedder=load_embedder("fallback"))


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[Path, int]:
    s = make_store(tmp_path / "store.db")
    try:
        _seed(s, tmp_path)
        pending = _propose(s, {"op": "add", "type": "project",
                               "content": "A pending write waiting for a person to decide."},
                           auto_apply=False)
    finally:
        s.close()
    return tmp_path / "store.db", int(pending.id)


def test_every_writing_action_is_refused_with_its_own_line(seeded: tuple[Path, int]) -> None:
    path, pending = seeded
    with _read_only(path) as s:
        attempts = {
            "approving a proposal": lambda: s.approve(pending),
            "rejecting a proposal": lambda: s.reject(pending, reason="no"),
            "editing a proposal": lambda: s.edit_proposal(pending, {"content": "x"}),
            "erasing": lambda: s.erase(entry=1),
            "redacting": lambda: s.redact(entry=1),
            "marking as secret": lambda: s.mark("secret", entry=1),
            "applying a health fix": lambda: s.health_fix("compact-duplicates"),
            "consolidating": lambda: s.consolidate(),
            "submitting a proposal": lambda: s.propose(
                {"op": "add", "type": "project", "content": "c" * 80}),
            "reverting a memory": lambda: s.revert_memory(1, 1),
            "undoing an approval": lambda: s.undo_last_approval(),
            "expiring memories past their retention (--dry-run only lists them)":
                lambda: s.expire_pass(),
            "erasing transcript entries past their retention":
                lambda: s.erase_transcript(s.transcript_due()),
        }
        for action, attempt in attempts.items():
            with pytest.raises(ReadOnly) as refused:
                attempt()
            line = str(refused.value)
            assert line.startswith(f"read-only: {action} is refused"), line
            assert "\n" not in line
        assert s.expire_pass(dry_run=True).dry_run  # listing what is due still runs
        # the store's own write path refuses too, whatever calls it
        with pytest.raises(ReadOnly), s.write() as conn:
            conn.execute(text("DELETE FROM proposal"))
        assert s.proposal(pending).status == "pending"


def test_the_file_itself_is_opened_read_only(seeded: tuple[Path, int]) -> None:
    """Not only the Python layer: a connection of a read-only store cannot write (mode=ro)."""
    path, _ = seeded
    with _read_only(path) as s, s.engine.connect() as conn:
        with pytest.raises(Exception, match="readonly"):
            conn.execute(text("DELETE FROM proposal"))


def test_recall_and_health_run_but_keep_nothing(seeded: tuple[Path, int]) -> None:
    path, _ = seeded
    def kept() -> tuple[int, int]:
        with make_store(path) as s, s.read() as conn:
            return (int(conn.execute(text("SELECT count(*) FROM recall_trace")).scalar_one()),
                    int(conn.execute(text("SELECT count(*) FROM health_scan")).scalar_one()))

    before_rows = kept()
    before = _digest(path)
    with _read_only(path) as s:
        result = s.recall("tests with pytest")
        assert result.trace_id is None and result.trace.considered > 0
        found = s.health()
        assert found.id is None and found.signals
        assert s.stats().sessions >= 0
    assert _digest(path) == before
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    assert kept() == before_rows


def test_an_older_store_is_refused_not_migrated(tmp_path: Path) -> None:
    from store.core.db import ensure_file, make_engine
    from store.core.migrations import known_migrations, migrate

    path = tmp_path / "old.db"
    ensure_file(path)
    engine = make_engine(path)
    newest = known_migrations()[-1].version
    migrate(engine, target=newest - 1)
    engine.dispose()
    before = _digest(path)
    with pytest.raises(ReadOnly, match=f"migrating .* from schema version {newest - 1} to "
                                       f"{newest} is refused"):
        _read_only(path)
    assert _digest(path) == before


def test_no_store_is_created(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="--read-only opens an existing store only"):
        _read_only(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


def test_a_secrets_scan_is_refused_before_it_reads_and_a_dry_run_still_counts(
        tmp_path: Path) -> None:
    """`scan-secrets` on a read-only store is refused by name, before scanning (it scanned
    every record and then failed on the generic write refusal); `--dry-run` writes nothing
    and still runs."""
    make_store(tmp_path / "s.db").close()
    ro = open_store(tmp_path / "s.db", read_only=True)
    try:
        with pytest.raises(ReadOnly, match="scanning for secrets"):
            ro.scan_secrets()
        assert ro.scan_secrets(dry_run=True).dry_run
    finally:
        ro.close()
