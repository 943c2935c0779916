"""store.core.memories: the one write path for memories, in the caller's transaction."""

from __future__ import annotations

import pytest
from sqlmodel import select

from store import Store
from store.core import memories
from store.core.db import orm
from store.core.models import Chunk, Evidence, Memory


def _chunks(store: Store, memory_id: int) -> list[str]:
    with store.read() as conn, orm(conn) as s:
        return list(s.exec(select(Chunk.text).where(Chunk.source_type == "memory",
                                                     Chunk.source_id == memory_id)).all())


def test_create_update_upsert_stamp_writer_and_reindex(store: Store) -> None:
    with store.write() as conn:
        made = memories.create(conn, store, {"name": "tabs", "body": "Indent with tabs.",
                                             "type": "feedback"})
    assert made.action == "created" and made.chunks == 1
    row = store.memory(made.memory_id)
    assert (row.name, row.status, row.authority) == ("tabs", "active", "unreviewed")
    assert "Indent with tabs." in _chunks(store, made.memory_id)[0]
    with store.read() as conn:
        stored = memories.get(conn, made.memory_id)
    assert stored is not None
    assert (stored.writer, stored.writer_version) == (store.writer, store.writer_version)

    with store.write() as conn:
        changed = memories.update(conn, store, made.memory_id, {"body": "Indent with spaces."})
    assert changed.action == "updated"
    with store.read() as conn:
        after = memories.get(conn, made.memory_id)
    assert after is not None and after.content_hash != stored.content_hash
    texts = _chunks(store, made.memory_id)
    assert len(texts) == 1 and "spaces" in texts[0]  # old chunks replaced, not added to
    assert [h.source_id for h in store.search("spaces", mode="fts")] == [made.memory_id]

    fields = {"name": "file", "body": "b", "source_file": "/m/file.md"}
    with store.write() as conn:
        first = memories.upsert(conn, store, fields)
        again = memories.upsert(conn, store, fields)
        edited = memories.upsert(conn, store, dict(fields, body="c"))
    assert (first.action, again.action, edited.action) == ("created", "unchanged", "updated")
    assert first.memory_id == again.memory_id == edited.memory_id


def test_supersede_and_evidence(store: Store) -> None:
    with store.write() as conn:
        old = memories.create(conn, store, {"name": "old", "body": "x"}).memory_id
        new = memories.create(conn, store, {"name": "new", "body": "y"}).memory_id
        memories.supersede(conn, new, old)
        memories.set_status(conn, store, old, "superseded", valid_to="2026-01-01T00:00:00Z")
        first = memories.add_evidence(conn, store, new, file_path="/f.md", note="n", once=True)
        twice = memories.add_evidence(conn, store, new, file_path="/f.md", note="n", once=True)
        other = memories.add_evidence(conn, store, new, file_path="/g.md", once=True)
    assert first is not None and twice is None and other is not None
    assert store.memory(new).supersedes_id == old
    assert store.memory(old).superseded_by_id == new
    assert store.memory(old).status == "superseded"
    with store.read() as conn:
        assert [e.file_path for e in memories.evidence_of(conn, [new])] == ["/f.md", "/g.md"]


def test_resolve_supersedes_refs_by_name_or_file(store: Store) -> None:
    with store.write() as conn:
        target = memories.create(conn, store, {"name": "a", "body": "1",
                                               "source_file": "/m/feedback_a.md"}).memory_id
        by_file = memories.create(conn, store, {"name": "b", "body": "2",
                                                "supersedes_ref": "feedback_a.md"}).memory_id
        dangling = memories.create(conn, store, {"name": "c", "body": "3",
                                                 "supersedes_ref": "nowhere"}).memory_id
        assert memories.resolve_supersedes_refs(conn) == 1
    assert store.memory(by_file).supersedes_id == target
    assert store.memory(target).superseded_by_id == by_file
    assert store.memory(dangling).supersedes_id is None


def test_a_failed_transaction_leaves_nothing(store: Store) -> None:
    with pytest.raises(RuntimeError):
        with store.write() as conn:
            mid = memories.create(conn, store, {"name": "gone", "body": "never kept"}).memory_id
            memories.add_evidence(conn, store, mid, note="n")
            raise RuntimeError("crash mid-apply")
    with store.read() as conn, orm(conn) as s:
        assert s.exec(select(Memory)).all() == []
        assert s.exec(select(Evidence)).all() == []
        assert s.exec(select(Chunk)).all() == []
    assert store.search("never kept", mode="fts") == []


def test_bad_input_is_refused(store: Store) -> None:
    with store.write() as conn:
        with pytest.raises(ValueError, match="writer"):
            memories.create(conn, store, {"name": "x", "body": "y", "writer": "me"})
        with pytest.raises(LookupError):
            memories.update(conn, store, 999, {"body": "z"})
        with pytest.raises(LookupError):
            memories.supersede(conn, 999, None)
