"""Stored text made safe to put on a terminal: control characters become visible escapes.

Rich markup is neutralised by the renderers (``rich.text.Text`` / Textual ``Content``, never
markup strings); this module handles what markup-free rendering does not: ESC, OSC, BEL and
the other C0/C1 control characters, which a terminal would otherwise execute. Newlines and tabs
are kept.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def visible(text: str) -> str:
    """``text`` with every control character except newline and tab shown as ``\\xNN``."""
    return _CONTROL.sub(_escape, text)


def one_line(text: str, width: int | None = None) -> str:
    """A visible single-line excerpt (newlines shown as ⏎), cut to ``width`` with an ellipsis."""
    flat = visible(text).replace("\r\n", "\n").replace("\n", " ⏎ ").replace("\t", " ")
    if width is not None and len(flat) > width:
        return flat[: max(0, width - 1)] + "…"
    return flat
