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


def test_a_rerun_counts_moves_within_the_trace() -> None:
    """A re-run lists the sources of both traces: 45 re-ranked, 5 new and 5 dropped out
    of a 50-candidate trace was "55 candidates moved"; each count is said within the
    trace now."""
    from store.recall.run import Move, moves_line

    moves = [Move(f"entry {i}", i, i + 1, "dropped", "dropped", 0.5, 0.4) for i in range(45)]
    moves += [Move(f"entry {100 + i}", None, 46 + i, None, "dropped", None, 0.3)
              for i in range(5)]
    moves += [Move(f"entry {200 + i}", 46 + i, None, "dropped", None, 0.2, None)
              for i in range(5)]
    assert sum(m.changed for m in moves) == 55
    line = moves_line(moves, 7)
    assert line == "45 of 50 candidates moved since trace 7; 5 new, 5 dropped out"
    same = [Move("entry 1", 1, 2, "injected", "injected", 0.5, 0.5, tie_only=True)]
    assert moves_line(same) == ("nothing moved: every candidate kept its rank and decision "
                                "(equal scores aside)")


def test_a_term_has_one_format_in_the_app_and_the_cli() -> None:
    """T was `1.0` in the app's table and `1.00` in `lca-tui trace`: both use term_text."""
    from screens.recall import _term
    from store import term_text

    assert [_term(v) for v in (1.0, 0.55, -0.05, 0.0, None)] == \
        [term_text(v) for v in (1.0, 0.55, -0.05, 0.0, None)] == \
        ["1.00", ".55", "-.05", ".00", ""]
