"""Tables you can take away: every row of a table view as filtered (not only the rows on
screen) as a pandas ``DataFrame`` with the view's column headers, written to CSV."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.content import Content
from textual.widgets import DataTable

from widgets.table import FilterTable, matches

if TYPE_CHECKING:
    import pandas as pd


def _text(cell: Any) -> str:
    if isinstance(cell, (Text, Content)):
        return cell.plain
    return "" if cell is None else str(cell)


def rows_of(table: DataTable[Any]) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) of ``table``: a ``FilterTable``'s every row its filter lets through, in
    full (a cell cut to its column on screen is whole here); a ``DataTable``'s every row."""
    # a column with no label (a marker column) is named by its key
    headers = [_text(c.label).strip() or str(key.value)
               for key, c in table.columns.items()]
    if isinstance(table, FilterTable):
        cells = [list(c) for _, c, _, haystack in table._all  # noqa: SLF001 - its own module
                 if not table.filter_text or matches(haystack, table.filter_text)]
    else:
        cells = [list(table.get_row_at(i)) for i in range(table.row_count)]
    return headers, [[_text(c) for c in row][:len(headers)] for row in cells]


def frame(table: DataTable[Any]) -> pd.DataFrame:
    import pandas as pd

    headers, rows = rows_of(table)
    return pd.DataFrame(rows, columns=headers, dtype=str)


def write_csv(table: DataTable[Any], folder: Path, what: str) -> tuple[Path, int]:
    """Write ``table`` (see ``rows_of``) to a new ``lca-tui-<what>-<UTC time>.csv`` in
    ``folder``; returns the file and its row count. Never overwrites a file."""
    data = frame(table)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    folder = folder.expanduser()
    path = folder / f"lca-tui-{what}-{stamp}.csv"
    n = 2
    while path.exists():
        path = folder / f"lca-tui-{what}-{stamp}-{n}.csv"
        n += 1
    with path.open("x", encoding="utf-8", newline="") as fh:
        data.to_csv(fh, index=False)
    return path, len(data)
