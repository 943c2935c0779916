"""What changed since a mark (``Store.changes_since``): the highest ids, the sessions
with new entries, the memories and proposals written or touched since, the audit actions, and
when a change cannot be applied in place (an erasure). On both backends."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import Changes, NewEntry, NewSession, Store
from tests.conftest import make_store

pytestmark = pytest.mark.both_backends


def _session(store: Store, sid: str, n: int, start: int = 0) -> None:
    store.append_entries(NewSession(sid, "claude-code", started_at="2026-03-01T10:00:00Z"),
                         [NewEntry("user", f"line {i} of {sid} about coffee", f"{sid}:{i}",
                                   ts=f"2026-03-01T10:00:{i:02d}Z")
                          for i in range(start, start + n)])


def _memory(store: Store, name: str, body: str) -> int:
    info = store.propose({"op": "add", "type": "user", "content": body,
                          "metadata": {"name": name}}, auto_apply=False)
    done = store.approve(info.id)
    assert done.memory_id is not None, done
    return done.memory_id


def test_nothing_moved_names_nothing(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s.db")
    try:
        _session(store, "s1", 3)
        first = store.changes_since()
        assert first.since is None and first.now.entry > 0
        again = store.changes_since(first.now)
        assert not again.any and again.in_place
        assert again.sessions == again.memories == again.proposals == again.actions == ()
    finally:
        store.close()


def test_entries_of_another_store_name_their_sessions(tmp_path: Path) -> None:
    """Another Store on the same file appends: the change names the sessions, in the order
    their first new entry came, and the highest entry id moved by what was written."""
    store = make_store(tmp_path / "s.db")
    other = make_store(tmp_path / "s.db")
    try:
        _session(store, "s1", 3)
        mark = store.changes_since().now
        _session(other, "s2", 2)
        _session(other, "s1", 1, start=3)
        got = store.changes_since(mark)
        assert got.sessions == ("s2", "s1")
        assert got.now.entry == mark.entry + 3
        assert got.moved("entry") and not got.moved("trace") and not got.moved("proposal")
        assert got.in_place and not got.erased
        assert [e.seq for e in store.entries("s1", after_id=mark.entry)] == [3]
    finally:
        other.close()
        store.close()


def test_proposals_and_memories_touched_since(tmp_path: Path) -> None:
    """A new proposal (and the memory it made) is named; a rejected one is named again, an
    untouched one is not."""
    store = make_store(tmp_path / "s.db")
    try:
        kept = _memory(store, "Tea", "Dana drinks green tea in the afternoon.")
        waiting = store.propose({"op": "add", "type": "user", "content":
                                 "Dana walks to work on Fridays.",
                                 "metadata": {"name": "Walk"}}, auto_apply=False)
        mark = store.changes_since().now
        made = _memory(store, "Coffee", "Dana prefers dark roast coffee in the morning.")
        got = store.changes_since(mark)
        assert made in got.memories and kept not in got.memories
        new_proposals = [p.id for p in store.proposals(ids=got.proposals)]
        assert waiting.id not in got.proposals and len(new_proposals) == 1
        assert "proposal_approved" in got.actions and got.in_place
        mark = got.now
        store.reject(waiting.id, "not durable")
        got = store.changes_since(mark)
        assert got.proposals == (waiting.id,) and got.memories == ()
        assert [m.id for m in store.list_memories(ids=[made])] == [made]
    finally:
        store.close()


def test_an_erasure_cannot_be_applied_in_place(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s.db")
    try:
        _session(store, "s1", 3)
        _session(store, "s2", 2)
        mark = store.changes_since().now
        store.erase(session="s2", reason="test")
        got: Changes = store.changes_since(mark)
        assert got.erased and not got.in_place
    finally:
        store.close()


def test_new_traces_and_scans_move_their_marks(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s.db")
    try:
        _session(store, "s1", 3)
        mark = store.changes_since().now
        store.recall("coffee")
        store.health()
        got = store.changes_since(mark)
        assert got.moved("trace") and got.moved("scan") and not got.moved("entry")
        assert [t.id for t in store.traces(after_id=mark.trace)] == [got.now.trace]
    finally:
        store.close()
