"""Pages of a long list (``Store.entry_page``, ``Store.memory_page``): read by key, every row
once and in order, the last page, the filter's words, and the counts before and in all."""

from __future__ import annotations

from pathlib import Path

from store import Store

from tests.helpers_paging import BIG, big_memories, big_store


def test_entry_pages_by_key_cover_the_session_once_in_seq_order(tmp_path: Path) -> None:
    store = Store(big_store(tmp_path / "s.db", 1_050))
    seen: list[int] = []
    page = store.entry_page(BIG, limit=100)
    while True:
        assert page.before == len(seen) and page.total == 1_050
        seen += [e.seq for e in page.rows]
        if not page.after:
            break
        page = store.entry_page(BIG, after=(page.rows[-1].seq, page.rows[-1].id), limit=100)
    assert seen == list(range(1, 1_051))
    last = store.entry_page(BIG, last=True, limit=100)
    assert [e.seq for e in last.rows] == list(range(951, 1_051)) and last.before == 950
    tools = store.entry_page(BIG, words=["TOOL_C"], limit=1_000)  # kind, any case: seq 2, 6, …
    assert tools.total == 263 == len(tools.rows) and {e.kind for e in tools.rows} == {"tool_call"}
    worker = store.entry_page(BIG, "w1", limit=10)
    assert worker.total == 1_050 // 7 and {e.agent for e in worker.rows} == {"w1"}
    assert store.entry_page(BIG, words=["main", "w1"]).total == 0
    store.close()


def test_memory_pages_by_key_follow_list_memories_order(tmp_path: Path) -> None:
    store = Store(big_memories(tmp_path / "m.db", 730))
    every = [m.id for m in store.list_memories()]
    seen: list[int] = []
    page = store.memory_page(limit=100)
    while page.rows:
        assert page.before == len(seen) and page.total == 730 and page.active == 584
        seen += [m.id for m in page.rows]
        page = store.memory_page(after=page.key, limit=100)
    assert seen == every
    last = store.memory_page(last=True, limit=100)
    assert [m.id for m in last.rows] == every[-100:] and last.before == 630
    at = store.memory_page(at=every[300], limit=5)
    assert [m.id for m in at.rows] == every[300:305] and at.before == 300
    refs = store.memory_page(words=["Superseded", "refer"], limit=1_000)  # 10, 30, …, 730
    assert refs.total == 37 and {(m.status, m.type) for m in refs.rows} == {
        ("superseded", "reference")}
    store.close()
