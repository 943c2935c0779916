"""Stored text made safe to put on a terminal: control characters become visible escapes.

Rich markup is neutralised by the renderers (``rich.text.Text`` / Textual ``Content``, never
markup strings); this module handles what markup-free rendering does not: ESC, OSC, BEL and
the other C0/C1 control characters, which a terminal would otherwise execute. Newlines and tabs
are kept.
"""

from __future__ import annotations

import re

# C0 and C1 controls (newline and tab kept), and the bidirectional formatting characters that
# can make a terminal show text in another order than it is stored ("txt.exe" spoofing).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character except newline and tab shown as ``\\xNN``, and
    bidirectional formatting characters as ``\\uNNNN``."""
    return _CONTROL.sub(_escape, text)


def one_line(text: str, width: int | None = None) -> str:
    """A visible single-line excerpt (newlines shown as ⏎), cut to ``width`` with an ellipsis.

    The cut falls at a word boundary, so a number, an id or a path is shown whole or not at
    all ("floor 0.25" never becomes "floor 0.2…"); only a first word longer than ``width`` is
    cut inside."""
    raw = text if width is None else text[: width + 1]  # escaping only lengthens: cut first
    flat = visible(raw).replace("\r\n", "\n").replace("\n", " ⏎ ").replace("\t", " ")
    if width is not None and len(flat) > width:
        return clip_words(flat, width)
    return flat


def clip_words(flat: str, width: int) -> str:
    """``flat`` (one line) cut to at most ``width`` characters at a word boundary, ending in
    an ellipsis when anything was cut."""
    if len(flat) <= width:
        return flat
    head = flat[: max(0, width - 1)]
    if not flat[len(head)].isspace():
        cut = head.rfind(" ")
        if cut > 0:
            head = head[:cut]
    return head.rstrip(" ⏎") + "…"
