"""The bound memory directory: an agent's edit is never written over (approval fails and keeps
the file), a file changed after lca-tui wrote it is caught by its hash, feedback keeps its
counts but not over an edit, a deleted file is not brought back by a reinforce, an unchanged
file is still written."""

from __future__ import annotations

from pathlib import Path

from store import Store
from store.governance import approve

from tests.conftest import make_store
from tests.helpers_gov_seed import TAX, _propose, _seed


def _bound(tmp_path: Path) -> tuple[Store, dict[str, int], Path]:
    folder = tmp_path / "mem"
    store = make_store(tmp_path / "s.db", **{"memory.dir": str(folder)})
    return store, _seed(store, tmp_path), folder


def test_approving_over_an_agents_edit_fails_and_keeps_the_file(tmp_path: Path) -> None:
    store, ids, folder = _bound(tmp_path)
    try:
        path = folder / "reference_tax.md"
        path.write_text(path.read_text() + "Also remind about the yearly VAT return.\n")
        edited = path.read_bytes()
        target = ids["Tax reminders"]
        done = _propose(store, {"op": "reinforce", "target": target})
        assert done.status == "failed"
        assert "changed on disk" in (done.status_reason or "") or "differs" in (
            done.status_reason or "")
        assert "not overwritten" in (done.status_reason or "")
        assert path.read_bytes() == edited  # the agent's line is still there
        assert store.memory(target).hits == 0  # and nothing was half-applied
        revise = _propose(store, {"op": "revise", "target": target,
                                  "content": TAX + " Monthly too."}, auto_apply=False)
        assert approve(store, revise.id).status == "failed"
        assert path.read_bytes() == edited
    finally:
        store.close()


def test_a_file_changed_after_lca_tui_wrote_it_is_caught_by_its_hash(tmp_path: Path) -> None:
    store, ids, folder = _bound(tmp_path)
    try:
        target = ids["Tax reminders"]
        first = _propose(store, {"op": "reinforce", "target": target})
        assert first.status == "applied" and first.verified
        path = folder / "reference_tax.md"
        text = path.read_text()
        assert "_lca_file_sha256" not in text  # the hash is the store's, never the file's
        path.write_text(text.replace("tags:", "owner: dana\ntags:"))  # a key of its own
        again = _propose(store, {"op": "reinforce", "target": target})
        assert again.status == "applied"  # nothing of the agent's is lost: its key is kept
        assert "owner: dana" in path.read_text() and "hits: 2" in path.read_text()
        path.write_text(path.read_text().replace("hits: 2", "hits: 7"))  # its loader counted
        edited = path.read_bytes()
        third = _propose(store, {"op": "reinforce", "target": target})
        assert third.status == "failed" and "changed on disk" in (third.status_reason or "")
        assert "hits" in (third.status_reason or "")
        path.write_text(path.read_text() + "An appended line.\n")
        edited = path.read_bytes()
        fourth = _propose(store, {"op": "reinforce", "target": target})
        assert fourth.status == "failed" and "body" in (fourth.status_reason or "")
        assert path.read_bytes() == edited and store.memory(target).hits == 2
    finally:
        store.close()


def test_recall_feedback_keeps_its_counts_but_not_over_an_agents_edit(tmp_path: Path) -> None:
    from store.governance import audit_events
    from store.recall.run import recall
    from tests.helpers_recall import NOW

    store, ids, folder = _bound(tmp_path)
    try:
        target = ids["Tax reminders"]
        path = folder / "reference_tax.md"
        path.write_text(path.read_text() + "Also remind about the yearly VAT return.\n")
        edited = path.read_bytes()
        result = recall(store, "quarterly tax filing deadlines invoice reminders", now=NOW)
        rank = next(c.rank for c in result.trace.candidates if c.source_id == target)
        store.feedback(result.trace_id, str(rank), "used")
        assert store.memory(target).hits == 1  # the feedback is kept
        assert path.read_bytes() == edited  # the file is not overwritten
        events = audit_events(store, 10, "memory_file_conflict")
        assert events and target in events[0].target_ids
    finally:
        store.close()


def test_a_deleted_file_is_not_brought_back_by_a_reinforce(tmp_path: Path) -> None:
    store, ids, folder = _bound(tmp_path)
    try:
        path = folder / "reference_tax.md"
        path.unlink()
        done = _propose(store, {"op": "reinforce", "target": ids["Tax reminders"]})
        assert done.status == "applied" and done.verified
        assert not path.exists()
        assert store.memory(ids["Tax reminders"]).hits == 1
    finally:
        store.close()


def test_an_unchanged_file_is_still_written(tmp_path: Path) -> None:
    store, ids, folder = _bound(tmp_path)
    try:
        done = _propose(store, {"op": "reinforce", "target": ids["Tax reminders"]})
        assert done.status == "applied"
        assert "hits: 1" in (folder / "reference_tax.md").read_text()
        again = _propose(store, {"op": "reinforce", "target": ids["Tax reminders"]})
        assert again.status == "applied" and "hits: 2" in (folder / "reference_tax.md"
                                                            ).read_text()
    finally:
        store.close()
