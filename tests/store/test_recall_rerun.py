"""Comparing a recall with its re-run: equal scores trading places is not a move, being
overtaken is."""

from __future__ import annotations

from store.recall.run import compare
from store.recall.traces import Candidate, Trace


def _trace(order: list[tuple[int, float]]) -> Trace:
    return Trace(1, "2026-03-01T10:00:00Z", "q", None, None, "private", False, {}, 1.0, None,
                 False, candidates=[Candidate(rank=r, source_type="memory", source_id=sid,
                                              decision=("injected" if score > 0.6
                                                        else "not_selected"),
                                              reason="", score=score)
                                    for r, (sid, score) in enumerate(order, start=1)])


def test_equal_score_swaps_are_not_moves() -> None:
    before = _trace([(1, 0.9), (2, 0.5), (3, 0.5), (4, 0.1)])
    swapped = _trace([(1, 0.9), (3, 0.5), (2, 0.5), (4, 0.1)])
    assert not any(m.changed for m in compare(before, swapped))
    assert any(m.tie_only for m in compare(before, swapped))
    overtaken = _trace([(3, 0.9), (1, 0.8), (2, 0.5), (4, 0.1)])
    assert {m.pointer for m in compare(before, overtaken) if m.changed} == {
        "memory 1", "memory 2", "memory 3"}
