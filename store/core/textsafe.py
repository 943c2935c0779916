"""Stored text made safe to put on a terminal: control characters become visible escapes.

Rich markup is neutralised by the renderers (``rich.text.Text`` / Textual ``Content``, never
markup strings); this module handles what markup-free rendering does not: ESC, OSC, BEL and
the other C0/C1 control characters, which a terminal would otherwise execute. Newlines and tabs
are kept.
"""

from __future__ import annotations

import re

# C0 and C1 controls (newline and tab kept); the bidirectional formatting characters that can
# make a terminal show text in another order than it is stored ("txt.exe" spoofing), the
# Arabic letter mark U+061C among them; zero-width characters (U+200B-U+200D, U+2060-U+2064,
# U+FEFF), which hide text or make two different ids look the same; and the Unicode line and
# paragraph separators U+2028/U+2029, which some terminals treat as a line break. Also what
# shows as nothing though it is not a space: the soft hyphen U+00AD, the Hangul fillers
# U+115F, U+1160, U+3164 and U+FFA0, the variation selectors U+FE00-U+FE0F and
# U+E0100-U+E01EF, and the tag characters U+E0000-U+E007F (text hidden inside an id).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u115f\u1160\u180e"
                      r"\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164"
                      r"\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every control character except newline and tab shown as ``\\xNN``, and
    bidirectional formatting, zero-width and line/paragraph separator characters as
    ``\\uNNNN``. The one escaping function: the app (``widgets.safe``) and every CLI text
    output (``lca_tui.output``) show stored data through it."""
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


def storable(text: str) -> str:
    """``text`` as valid Unicode, fit to store: a file name that is not valid UTF-8 (Python
    hands its undecodable bytes over as lone surrogates, which SQLite refuses) gets them as
    ``\\xNN`` text. Valid text is returned unchanged."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "surrogatepass")
        return raw.decode("utf-8", "backslashreplace")
    return text


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


SQL_INT_MIN, SQL_INT_MAX = -(2**63), 2**63 - 1


def out_of_range(doc: object) -> str | None:
    """Where a JSON document holds an integer SQLite cannot store (outside -2^63 … 2^63-1),
    as a message, or None. Iterative: any nesting depth ``json`` could read is walked."""
    stack: list[tuple[object, str]] = [(doc, "$")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and not SQL_INT_MIN <= value <= SQL_INT_MAX:
            return (f"the integer at {where} is out of range (the store keeps integers "
                    "from -2^63 to 2^63-1)")
        if isinstance(value, dict):
            stack.extend((v, f"{where}.{k}") for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(value))
    return None
