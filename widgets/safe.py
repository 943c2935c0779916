"""Stored text on screen, safely: never markup, never a terminal escape.

Everything read from the store (transcript content, memory text, tool names, paths, agent ids)
is data. These helpers turn it into ``rich.text.Text`` built with ``Text(...)`` — never
``Text.from_markup`` — after ``store.core.textsafe.visible`` has shown every control character
(ESC, BEL, OSC introducers, C1) as ``\\xNN``. A ``DataTable`` cell given a plain ``str`` would be
parsed as markup, so table cells must go through ``cell()``.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style
from rich.text import Text

from store import one_line, visible


def safe_text(text: str | None, style: str | Style = "") -> Text:
    """Stored text as a ``Text`` with control characters shown and no markup read."""
    return Text(visible(text or ""), style=style, no_wrap=False, end="")


CELL_MAX = 400


def excerpt(text: str, width: int) -> str:
    """``one_line(text, width)`` without touching more of ``text`` than it can show.

    Every character becomes at least one on screen, so the first ``width + 1`` decide both
    the excerpt and whether it needs an ellipsis: a 4 MB entry costs what a short one does."""
    return one_line(text[: width + 1], width)


def cell(value: object, style: str | Style = "", width: int | None = None) -> Text:
    """A one-line table cell: stored text flattened (newlines shown as ⏎) and cut to ``width``
    (``CELL_MAX`` when not given: wider than any column, and never the whole of a huge text)."""
    raw = "" if value is None else str(value)
    shown = excerpt(raw, CELL_MAX if width is None else width)
    return Text(shown, style=style, no_wrap=True, overflow="ellipsis", end="")


def number(value: float, style: str | Style = "") -> Text:
    """A right-aligned number with thousands separators."""
    shown = f"{value:,}" if isinstance(value, int) else f"{value:,.3f}"
    return Text(shown, style=style, justify="right", end="")


def join(parts: Iterable[Text | str], sep: str = " · ") -> Text:
    """Join pieces (``str`` pieces are taken literally, never as markup)."""
    out = Text(end="")
    for i, part in enumerate(parts):
        if i:
            out.append(sep, style="dim")
        out.append(part if isinstance(part, Text) else Text(part))
    return out
