"""``store copy``: every record of one store into an empty one, ids and id
counters kept, the index carried over, then verified table by table — and the way back.

Runs on both backends (``both_backends``): the sources are SQLite files, the target of each
copy is the test's backend (``make_store``), so the ``[postgres]`` case moves a store to the
server and back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlmodel import select, update

from store import NewEntry, NewSession, Store, StoreError, open_store
from store.copy import tables, verify
from store.core.models import Entry
from tests.conftest import make_store

pytestmark = pytest.mark.both_backends


def _export(store: Store, folder: Path) -> dict[str, object]:
    """Every file of a full export, the manifest's export time left out."""
    store.export(folder)
    files: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            rel = path.relative_to(folder).as_posix()
            if rel == "manifest.json":
                manifest = json.loads(path.read_text(encoding="utf-8"))
                manifest.pop("exported_at")
                files[rel] = manifest
            else:
                files[rel] = path.read_bytes()
    return files


def test_the_demo_store_there_and_back_gives_identical_exports(demo_path: Path,
                                                               tmp_path: Path) -> None:
    source = open_store(demo_path)
    there = make_store(tmp_path / "there.db")
    back = open_store(tmp_path / "back.db")
    try:
        seen: list[tuple[str, int, int]] = []
        out = source.copy_to(there, lambda label, done, total: seen.append(
            (label, done, total)))
        assert out.ok, [c.to_json() for c in out.failed()]
        home = there.copy_to(back)
        assert home.ok, [c.to_json() for c in home.failed()]
        # every table of the model was compared, with rows in the ones the demo fills
        names = {c.name for c in out.checks}
        assert names >= {t.name for t in tables()} | {"index:vectors", "index:lexical"}
        by_name = {c.name: c for c in out.checks}
        for filled in ("entry", "memory", "proposal", "proposal_check", "recall_trace",
                       "audit_event", "supersession_link", "context_snapshot", "chunk"):
            assert by_name[filled].source_rows > 0, filled
        assert by_name["index:vectors"].source_rows > 0
        # the digests of the store that came back are the source's own
        assert [(c.name, c.source_digest) for c in out.checks] == \
            [(c.name, c.target_digest) for c in home.checks]
        assert out.rows == home.rows == sum(c.source_rows for c in out.checks
                                            if not c.name.startswith("index:"))
        # the progress went from nothing to every row
        assert seen[0][1] == 0 and any(d == t == out.rows for _, d, t in seen if t)
        assert _export(source, tmp_path / "ex-source") == _export(back, tmp_path / "ex-back")
    finally:
        for s in (source, there, back):
            s.close()


def test_a_store_with_rows_is_refused_and_left_as_it_was(demo_path: Path,
                                                         tmp_path: Path) -> None:
    source = open_store(demo_path)
    target = make_store(tmp_path / "full.db")
    try:
        target.append_entries(NewSession(id="mine", format="harness"),
                              [NewEntry(kind="user", content="already here", source_key="k1")])
        before = target.stats()
        with pytest.raises(StoreError, match="not empty: .*entry 1"):
            source.copy_to(target)
        after = target.stats()
        assert (after.sessions, after.entries, after.memories) == \
            (before.sessions, before.entries, before.memories) == (1, 1, 0)
    finally:
        source.close()
        target.close()


def test_verification_names_the_table_that_differs(demo_path: Path, tmp_path: Path) -> None:
    source = open_store(demo_path)
    target = make_store(tmp_path / "copy.db")
    try:
        assert source.copy_to(target).ok
        with target.write() as conn:
            first = conn.execute(select(Entry.id).order_by(Entry.id)).scalars().first()
            conn.execute(update(Entry).where(Entry.id == first).values(content="tampered"))
        checks = verify(source, target)
        failed = [c.name for c in checks if not c.ok]
        assert failed == ["entry"]
        entry = next(c for c in checks if c.name == "entry")
        assert entry.source_rows == entry.target_rows  # same count, different content
    finally:
        source.close()
        target.close()


def _append(store: Store, n: int, start: int) -> list[int]:
    return store.append_entries(
        NewSession(id="s1", format="harness"),
        [NewEntry(kind="user", content=f"note number {i} about the boiler", source_key=f"k{i}")
         for i in range(start, start + n)])


def test_an_id_erased_in_the_source_is_not_given_again_in_the_copy(tmp_path: Path) -> None:
    source = open_store(tmp_path / "source.db")
    target = make_store(tmp_path / "copy.db")
    try:
        ids = _append(source, 3, 0)
        source.erase(entry=ids[-1])  # the highest entry id is gone; its number is spent
        assert [e.id for e in source.entries("s1")] == ids[:-1]
        assert source.copy_to(target).ok
        given_there = _append(target, 1, 10)
        given_here = _append(source, 1, 10)
        assert given_there == given_here and given_there[0] > ids[-1]
    finally:
        source.close()
        target.close()


def test_a_table_no_model_describes_refuses_the_copy(tmp_path: Path) -> None:
    source = open_store(tmp_path / "source.db")
    target = make_store(tmp_path / "copy.db")
    try:
        _append(source, 1, 0)
        with source.write() as conn:
            conn.exec_driver_sql("CREATE TABLE plugin_notes (id INTEGER PRIMARY KEY, body TEXT)")
        with pytest.raises(StoreError, match="no model for \\(plugin_notes\\)"):
            source.copy_to(target)
        assert target.stats().entries == 0
    finally:
        source.close()
        target.close()
