"""Tables you can take away: ``x`` (and the palette's "Export CSV") writes every row of a table
view as filtered -- not only the rows on screen -- to CSV; a CSV exported from each table view
reads back with pandas to the view's rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from lca_tui.app import make_app
from store import Settings
from widgets.table import FilterTable
from widgets.table_export import rows_of

from tests.helpers_shell import FIXED_NOW, load_count, load_log, wait_until, workers_done

VIEWS = [
    ("overview", "overview-sessions"),
    ("context", "context-series"),
    ("recall", "recall-traces"),
    ("recall", "recall-candidates"),
    ("proposals", "proposal-queue"),
    ("memories", "memory-table"),
    ("memories", "memory-evidence"),
    ("transcript", "sessions"),
    ("transcript", "entries"),
    ("health", "health-signals"),
    ("privacy", "privacy-tombstones"),
]


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


async def _export(pilot: Pilot[Any], table: DataTable[Any]) -> Path:
    screen = pilot.app.screen
    before = screen.last_export
    table.focus()
    await pilot.pause()
    await pilot.press("x")
    await wait_until(pilot, lambda: screen.last_export not in (None, before), what="export")
    path = screen.last_export
    assert path is not None
    return path


@pytest.mark.parametrize(("mode", "table_id"), VIEWS)
async def test_each_table_view_exports_all_its_rows(mode: str, table_id: str, demo_path: Path,
                                                    tmp_path: Path) -> None:
    out = tmp_path / "csv"
    out.mkdir()
    if table_id == "privacy-tombstones":  # the demo store has none: an erasure leaves one
        from tests.conftest import make_store

        with make_store(tmp_path / demo_path) as s:
            s.erase(entry=1, reason="a tombstone to export")
    app = make_app(demo_path, Settings.load({"app.export_dir": str(out)}), now=FIXED_NOW,
                   mode=mode)
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: load_count(app.screen) >= 1, what=mode)
        await workers_done(app)
        await pilot.pause()
        table = app.screen.query_one(f"#{table_id}", DataTable)
        await wait_until(pilot, lambda: table.row_count > 0, what=f"rows in {table_id}")
        path = await _export(pilot, table)
        assert path.parent == out and table_id in path.name
        headers, rows = rows_of(table)
        back = _read(path)
        assert list(back.columns) == headers
        assert back.values.tolist() == rows
        expected = table.total if isinstance(table, FilterTable) else table.row_count
        assert len(back) == expected > 0
        assert f"exported {len(back):,} row" in " ".join(str(n.message)
                                                     for n in app._notifications)


async def test_the_export_is_as_filtered_and_not_only_what_is_on_screen(
        demo_path: Path, tmp_path: Path) -> None:
    app = make_app(demo_path, Settings.load({"app.export_dir": str(tmp_path)}), now=FIXED_NOW,
                   mode="transcript")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: load_count(app.screen) >= 1, what="Transcript")
        await workers_done(app)
        table = app.screen.query_one("#entries", FilterTable)
        await wait_until(pilot, lambda: table.row_count > 0, what="entries")
        assert table.row_count > table.size.height, "the session must not fit on screen"
        whole = _read(await _export(pilot, table))
        assert len(whole) == table.total
        table.set_filter("tool")
        await pilot.pause()
        kept = table.row_count
        assert 0 < kept < table.total
        filtered = _read(await _export(pilot, table))
        assert len(filtered) == kept
        assert filtered.values.tolist() == rows_of(table)[1]


def _same(path: Path, table: DataTable[Any]) -> None:
    headers, rows = rows_of(table)
    back = _read(path)
    assert list(back.columns) == headers and back.values.tolist() == rows and len(rows) > 0


async def test_search_hits_export(demo_path: Path, tmp_path: Path) -> None:
    """Transcript's search results (``#hits``), shown only after a search."""
    app = make_app(demo_path, Settings.load({"app.export_dir": str(tmp_path)}), now=FIXED_NOW,
                   mode="transcript")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        await pilot.press("s")
        await pilot.press("ctrl+t")
        await pilot.press(*"psycopg", "enter")
        await wait_until(pilot, lambda: load_count(screen, "search") >= 1, what="search")
        table = screen.query_one("#hits", DataTable)
        await wait_until(pilot, lambda: table.row_count > 0, what="hits")
        _same(await _export(pilot, table), table)


async def test_health_offending_rows_export(demo_path: Path, tmp_path: Path) -> None:
    """Health's offending rows (``#health-rows``), shown when a signal is drilled into."""
    app = make_app(demo_path, Settings.load({"app.export_dir": str(tmp_path)}), now=FIXED_NOW,
                   mode="health")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen) >= 1, what="the first scan")
        await workers_done(app)
        await pilot.pause()
        signals = screen.query_one("#health-signals", DataTable)
        signals.move_cursor(row=signals.get_row_index("duplicate_ratio"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: load_count(screen, "rows") >= 1, what="the rows")
        await workers_done(app)
        await pilot.pause()
        table = screen.query_one("#health-rows", DataTable)
        await wait_until(pilot, lambda: table.row_count > 0, what="offending rows")
        _same(await _export(pilot, table), table)
