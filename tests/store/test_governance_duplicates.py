"""The duplicate check: the same text is a duplicate whatever embedded the memories, no
comparable vectors is a warn that says so, it passes when every memory was compared."""

from __future__ import annotations

from pathlib import Path

from store import Store

from tests.helpers_gov_seed import _propose, _seed


def _embedded_by_another_model(store: Store) -> None:
    with store.write() as conn:
        conn.exec_driver_sql("UPDATE chunk SET model = 'another-model' "
                             "WHERE source_type = 'memory'")


def test_same_text_is_a_duplicate_whatever_embedded_the_memories(store: Store,
                                                                 tmp_path: Path) -> None:
    ids = _seed(store, tmp_path)
    _embedded_by_another_model(store)
    info = _propose(store, {"op": "add", "type": "reference",
                            "content": "  quarterly TAX filing deadlines and\ninvoice reminders."})
    dup = info.check("duplicate")
    assert dup.result == "warn" and dup.suggestion == "noop"
    assert dup.evidence["memory_id"] == ids["Tax reminders"] and "same text" in dup.detail
    assert any(o.as_op == "reinforce" and o.allowed for o in info.options)


def test_no_comparable_vectors_is_a_warn_that_says_so(store: Store, tmp_path: Path) -> None:
    _seed(store, tmp_path)
    _embedded_by_another_model(store)
    info = _propose(store, {"op": "add", "content": "The office wifi is called ledger-guest."})
    dup = info.check("duplicate")
    assert dup.result == "warn" and dup.suggestion is None
    assert "compared against 0 of 3 memories by meaning" in dup.detail
    assert "embedded by another model" in dup.detail
    assert dup.evidence["compared_by_meaning"] == 0


def test_duplicate_passes_when_every_memory_was_compared(store: Store, tmp_path: Path) -> None:
    _seed(store, tmp_path)
    info = _propose(store, {"op": "add", "content": "The office wifi is called ledger-guest."})
    dup = info.check("duplicate")
    assert dup.result == "pass" and dup.evidence["compared_by_meaning"] == 3
