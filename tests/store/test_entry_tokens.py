"""An entry's token count covers a huge entry whole, within the documented bound."""

from __future__ import annotations

from store import Store


def test_entry_tokens_count_a_huge_entry_whole_within_the_documented_bound(
        store: Store) -> None:
    """No cap: a multi-megabyte entry's ``tokens`` is the estimate of all of it, and the
    model's tokenizer gives between the estimate and about twice it (the documented bound)."""
    import math

    from store.core.writes import NewEntry, NewSession

    for text in ("x" * 1_000_000, "a word of prose, " * 60_000):
        store.append_entries(NewSession(id=f"big{len(text)}", format="harness"), [
            NewEntry(kind="assistant", content=text, source_key="t", line_id="1")])
        [entry] = store.entries(f"big{len(text)}")
        assert entry.tokens == math.ceil(len(text) / 4) + 4
        with store.read() as conn:  # the model's own count, on the entry's chunks
            model = conn.exec_driver_sql(
                "SELECT SUM(tokens) - 2 * COUNT(*) FROM chunk WHERE source_type = 'entry' "
                "AND source_id = ?", (entry.id,)).scalar_one()
        assert 0.6 * entry.tokens <= model <= 2.1 * entry.tokens, (entry.tokens, model)
