"""Paged tables: a session too long to hold is read a page at a time by key, the
next page when the cursor nears the end, the last on G / end, and its `/` filter goes to the
store's query, debounced: six characters typed fast run one query."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store.core.base import StoreBase
from widgets.table import FilterTable

from tests.helpers_paging import BIG, big_store
from tests.helpers_shell import load_count, load_log, wait_until
from tests.helpers_ui import _app

ENTRIES = 2_000
PAGE = 100


class Reads:
    """Every ``entry_page`` / ``entries`` call a screen made, with the rows each returned."""

    def __init__(self) -> None:
        self.pages: list[tuple[dict[str, Any], int]] = []
        self.whole: int = 0


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Reads]:
    log = Reads()
    page, whole = StoreBase.entry_page, StoreBase.entries

    def counted_page(self: StoreBase, *args: Any, **kwargs: Any) -> Any:
        got = page(self, *args, **kwargs)
        log.pages.append((kwargs, len(got.rows)))
        return got

    def counted_whole(self: StoreBase, *args: Any, **kwargs: Any) -> Any:
        log.whole += 1
        return whole(self, *args, **kwargs)

    monkeypatch.setattr(StoreBase, "entry_page", counted_page)
    monkeypatch.setattr(StoreBase, "entries", counted_whole)
    monkeypatch.setattr("screens.transcript.ENTRY_PAGE", PAGE)
    yield log


@pytest.fixture(scope="module")
def big_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return big_store(tmp_path_factory.mktemp("big") / "big.db", ENTRIES)


@pytest.fixture
def big(big_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "big.db"
    path.write_bytes(big_template.read_bytes())
    return path


def _subtitle(screen: Any) -> str:
    return str(screen.query_one("#lists").border_subtitle)


async def test_a_long_session_is_read_one_page_at_a_time(big: Path, reads: Reads) -> None:
    app = _app(big, "transcript")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        table = screen.query_one("#entries", FilterTable)
        assert screen.session_id == BIG
        assert [n for _, n in reads.pages] == [PAGE] and reads.whole == 0
        assert table.row_count == PAGE and table.paged and table.page_total == ENTRIES
        assert "rows 1–100 of 2,000" in _subtitle(screen)
        assert "2,000" in str(screen.query_one("#lists").border_title)

        table.focus()
        table.move_cursor(row=PAGE - 5, animate=False)  # near the end: the next page
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 2, what="next page")
        assert table.row_count == 2 * PAGE and len(reads.pages) == 2
        assert reads.pages[-1][0]["after"] == (PAGE, screen.entries[PAGE - 1].id)
        assert screen.highlighted_entry().seq == PAGE - 4  # the cursor stayed
        assert "rows 1–200 of 2,000" in _subtitle(screen)

        await pilot.press("G")  # the last page, the cursor on the last entry
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 3, what="last page")
        assert reads.pages[-1][0]["last"] is True and table.row_count == PAGE
        assert screen.highlighted_entry().seq == ENTRIES
        assert "rows 1,901–2,000 of 2,000" in _subtitle(screen)

        await pilot.press("g")  # and back to the first
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 4, what="first page")
        assert screen.highlighted_entry().seq == 1 and "rows 1–100 of 2,000" in _subtitle(screen)
        assert reads.whole == 0 and all(n == PAGE for _, n in reads.pages)


async def test_six_keys_typed_fast_filter_with_one_query(big: Path, reads: Reads,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Pilot waits for the app to idle after each key: on a loaded 2-core machine that can
    # take longer than the 0.15 s a person's typing rests; "fast" here is within 1.5 s
    monkeypatch.setattr("widgets.table.FILTER_DEBOUNCE_S", 1.5)
    app = _app(big, "transcript")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        table = screen.query_one("#entries", FilterTable)
        table.focus()
        before = len(reads.pages)
        await pilot.press("slash", *"tool_c")
        field = screen.query_one("#entries-filter")
        assert field.value == "tool_c"  # echoed at once; the query waits for typing to rest
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 2, what="filtered")
        await pilot.pause(0.5)
        filtered = reads.pages[before:]
        assert len(filtered) == 1 and load_count(screen, "entries") == 2
        assert filtered[0][0]["words"] == ("tool_c",)
        kinds = {screen.entries[r].kind for r in range(table.row_count)}
        assert kinds == {"tool_call"} and table.page_total == ENTRIES // 4
        assert 'filter "tool_c": 500 of 2,000' in _subtitle(screen)
        assert "rows 1–100 of 500" in _subtitle(screen)


MEMORIES = 1_000


class MemoryReads:
    def __init__(self) -> None:
        self.pages: list[tuple[dict[str, Any], int]] = []
        self.whole = 0


@pytest.fixture
def memory_reads(monkeypatch: pytest.MonkeyPatch) -> MemoryReads:
    import store.governance.views as views

    log = MemoryReads()
    page, whole = views.memory_page, views.list_memories

    def counted_page(store: Any, **kwargs: Any) -> Any:
        got = page(store, **kwargs)
        log.pages.append((kwargs, len(got.rows)))
        return got

    def counted_whole(*args: Any, **kwargs: Any) -> Any:
        log.whole += 1
        return whole(*args, **kwargs)

    monkeypatch.setattr(views, "memory_page", counted_page)
    monkeypatch.setattr(views, "list_memories", counted_whole)
    monkeypatch.setattr("screens.memories.MEMORY_PAGE", PAGE)
    return log


@pytest.fixture(scope="module")
def many_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.helpers_paging import big_memories

    return big_memories(tmp_path_factory.mktemp("many") / "many.db", MEMORIES)


@pytest.fixture
def many(many_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "many.db"
    path.write_bytes(many_template.read_bytes())
    return path


async def test_many_memories_are_read_one_page_at_a_time(many: Path,
                                                         memory_reads: MemoryReads,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setattr("widgets.table.FILTER_DEBOUNCE_S", 1.5)  # (as above: Pilot's pace)
    app = _app(many, "memories")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen) >= 1, what="memories")
        table = screen.query_one("#memory-table", FilterTable)
        rows = [n for _, n in memory_reads.pages if n]
        assert rows == [PAGE] and memory_reads.whole == 0 and table.row_count == PAGE
        assert table.paged and table.total == MEMORIES
        assert str(table.border_title) == "Memories · 1,000 · 800 active"
        assert "rows 1–100 of 1,000" in str(table.border_subtitle)

        table.focus()
        table.move_cursor(row=PAGE - 3, animate=False)
        await wait_until(pilot, lambda: load_count(screen, "rows") >= 1, what="next page")
        assert table.row_count == 2 * PAGE and screen.selected == screen.rows[PAGE - 3].id

        await pilot.press("G")
        await wait_until(pilot, lambda: load_count(screen) >= 2, what="last page")
        assert table.row_count == PAGE and "rows 901–1,000 of 1,000" in str(table.border_subtitle)
        assert table.cursor_key() == str(screen.rows[-1].id) == str(screen.selected)

        await pilot.press("slash", *"supers refer")  # superseded references: every 20th
        await wait_until(pilot, lambda: load_count(screen) >= 3, what="filtered")
        await pilot.pause(0.5)
        assert load_count(screen) == 3
        filtered = [kw for kw, _ in memory_reads.pages if kw.get("words")]
        assert filtered == [{"after": None, "at": None, "last": False, "limit": PAGE,
                             "words": ("supers", "refer")}]
        assert table.page_total == MEMORIES // 20 == table.row_count
        assert {(r.status, r.type) for r in screen.rows} == {("superseded", "reference")}
        assert f'filter "supers refer": {MEMORIES // 20} of 1,000' in str(table.border_subtitle)
