"""Erasure recovery: an erasure interrupted after its commit is finished by
``tombstones --verify``; ids of erased records are never given to new ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.privacy import apply
from tests.store.test_privacy import NEEDLE


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from lca_tui.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class Crash(BaseException):
    """Stands for kill -9: nothing after it runs (not even ``except Exception``)."""


def _crash_after_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    original = apply.erase

    def erase_then_die(*args: Any, **kwargs: Any) -> int:
        original(*args, **kwargs)  # the transaction committed: the tombstone is there
        raise Crash

    monkeypatch.setattr(apply, "erase", erase_then_die)


# -- A. interrupted after the commit ---------------------------------------------------------
def test_an_erasure_interrupted_after_its_commit_is_finished_by_verify(
        cc_store: Store, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], backend: str) -> None:
    store = cc_store
    _crash_after_commit(monkeypatch)
    with pytest.raises(Crash):
        store.erase(match=NEEDLE)
    monkeypatch.undo()
    [tomb] = store.tombstones()
    assert tomb.verified is None
    assert store.unverified_tombstones() == [tomb.id]
    path = str(store.opened_as)
    store.close()

    # running the same erase again: an empty closure, and one line saying what to do
    code, out, err = _cli(capsys, "erase", "--store", path, "--match", NEEDLE, "--yes",
                          "--json")
    assert code == 0 and json.loads(out)["tombstone_id"] is None
    assert f"tombstone {tomb.id}" in err and "lca-tui tombstones --verify" in err
    assert len(err.strip().splitlines()) == 1

    code, out, _ = _cli(capsys, "tombstones", "--store", path, "--verify", "--json")
    assert code == 0, out
    [done] = json.loads(out)["verified"]
    assert done["tombstone_id"] == tomb.id and done["passed"] is True
    names = [p["name"] for p in done["probes"]]
    assert names == ["rows", "index", "exports", "raw-bytes"]
    if backend == "sqlite":
        assert "WAL truncated" in done["probes"][-1]["detail"]
    else:  # every table rebuilt, and the server's own copies named as not erased
        detail = done["probes"][-1]["detail"]
        assert "VACUUM FULL of" in detail and "WAL, its replicas and its backups" in detail

    from tests.conftest import make_store

    again = make_store(path)
    try:
        [info] = again.tombstones(with_probes=True)
        assert info.verified is True
        assert [p[0] for p in info.probes] == names and all(p[1] for p in info.probes)
        assert again.unverified_tombstones() == []
        if backend == "sqlite":
            assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
            assert NEEDLE.encode() not in Path(path).read_bytes().lower()
        else:  # the tables' files on the server's disk (heap, TOAST, indexes)
            from store.core.db import server_files
            from store.privacy.tables import relational_tables

            with again.read() as conn:
                tables = sorted(relational_tables(conn))
            files, why = server_files(again.engine, tables)
            assert why is None and files
            assert not any(NEEDLE.encode() in f.read_bytes().lower() for f in files)
    finally:
        again.close()
    code, out, err = _cli(capsys, "tombstones", "--store", path, "--verify")
    assert code == 0 and "nothing to do" in out


def test_verify_fails_when_an_erased_record_is_back(cc_store: Store,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The fingerprint probe can fail: an erased entry's row put back by hand is found."""
    from sqlalchemy import text

    store = cc_store
    with store.read() as conn:
        row = dict(conn.execute(text(
            "SELECT * FROM entry WHERE replace(lower(content), :n, '') <> lower(content) "
            "ORDER BY id LIMIT 1"),
            {"n": NEEDLE.lower()}).mappings().one())
    row.pop("rowid", None)  # a server's generated copy of the id (docs/postgres.md)
    _crash_after_commit(monkeypatch)
    with pytest.raises(Crash):
        store.erase(entry=int(row["id"]))
    monkeypatch.undo()
    with store.write() as conn:  # what a buggy importer would do: the same line again
        cols = ", ".join(row)
        conn.execute(text(f"INSERT INTO entry ({cols}) VALUES ("
                          + ", ".join(f":{c}" for c in row) + ")"), row)
    [(tid, v)] = store.verify_tombstones()
    rows = {p.name: p for p in v.probes}["rows"]
    assert not v.passed and not rows.passed and rows.detail.startswith("1 of ")
    assert store.tombstones()[0].verified is False
    assert store.unverified_tombstones() == []


def test_verify_of_an_unknown_tombstone_is_a_clear_error(
        store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(store.opened_as)
    store.close()
    code, _out, err = _cli(capsys, "tombstones", "--store", path, "--verify", "7")
    assert code != 0 and "no tombstone 7" in err


# -- B. ids never reused -----------------------------------------------------------------------
TABLES = ("entry", "memory", "chunk", "proposal", "recall_trace", "recall_candidate")


def _max_ids(store: Store) -> dict[str, int]:
    from sqlalchemy import text

    with store.read() as conn:
        return {t: int(conn.execute(text(f"SELECT COALESCE(MAX(id), 0) FROM {t}")).scalar_one())
                for t in TABLES}


def _new_records(store: Store, word: str) -> None:
    """One new record in every table: a memory through a proposal (with its chunks), a
    recall (a trace and its candidates), an entry through the shared write path."""
    from store.core.writes import NewEntry, write_entries

    info = store.propose({"op": "add", "type": "project",
                          "content": f"The {word} release train leaves on Thursdays."})
    if info.status != "applied":
        store.approve(info.id)
    store.recall(f"when does the {word} release train leave")
    with store.read() as conn:
        from sqlalchemy import text

        session_id = str(conn.execute(text("SELECT session_id FROM entry ORDER BY id DESC "
                                           "LIMIT 1")).scalar_one())
    with store.write() as conn:
        write_entries(conn, session_id, [NewEntry("user", f"ask about {word} again",
                                                  source_key=f"test:{word}")],
                      store.indexer(), store.writer, store.writer_version)


def test_ids_of_erased_records_are_never_reused(cc_store: Store) -> None:
    """Erase the newest record of every erasable table; new records get higher ids."""
    store = cc_store
    _new_records(store, "quokkafrost")
    top = _max_ids(store)
    store.erase(match="quokkafrost")  # the memory, its proposal, chunks, trace, entry
    after = _max_ids(store)
    assert all(after[t] < top[t] for t in TABLES), (top, after)  # the newest went
    _new_records(store, "zebrawind")
    again = _max_ids(store)
    assert all(again[t] > top[t] for t in TABLES), (top, again)


@pytest.mark.sqlite_only("migration 13 rebuilds SQLite tables (sqlite_sequence, sqlite_master)")
def test_migration_13_keeps_every_row_index_trigger_and_link(tmp_path: Path) -> None:
    """A store written before migration 13 (the version-1 fixture, migrated on open): the
    same rows, every foreign key and the FTS index intact, triggers and indexes back, and
    sqlite_sequence seeded with the highest id."""
    import shutil

    import sqlean

    from tests.conftest import make_store

    path = tmp_path / "old.db"
    shutil.copyfile(Path(__file__).resolve().parents[1] / "fixtures" / "store_v1.db", path)
    raw = sqlean.connect(str(path))
    before = {t: raw.execute(f"SELECT COUNT(*), COALESCE(MAX(id), 0) FROM {t}").fetchone()
              for t in ("entry", "memory", "chunk")}
    raw.close()
    assert before["entry"][0] and before["chunk"][0]
    store = make_store(path)
    store.close()
    raw = sqlean.connect(str(path))
    try:
        for t, (count, top) in before.items():
            assert raw.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == count
            seq = raw.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (t,)).fetchone()
            assert (seq[0] if seq else 0) == top
        for t in TABLES:
            sql = raw.execute("SELECT sql FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0]
            assert "AUTOINCREMENT" in sql
        names = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type IN "
                                           "('index', 'trigger')")}
        assert {"entry_by_session", "entry_by_kind", "entry_by_uuid", "chunk_by_source",
                "memory_by_name", "embed_queue_rewritten", "recall_trace_by_entry",
                "recall_candidate_by_source", "proposal_by_entry"} <= names
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        raw.execute("INSERT INTO chunk_fts (chunk_fts, rank) VALUES ('integrity-check', 1)")
        left = {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
        assert not left & {f"{t}_new" for t in TABLES}
    finally:
        raw.close()
