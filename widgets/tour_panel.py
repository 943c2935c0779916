"""The guided tour's panel: a short box docked above the footer, so it takes rows from the
screen's layout instead of covering them (the row a step talks about stays in view)."""

from __future__ import annotations

from rich.text import Text
from textual.keys import key_to_character
from textual.widgets import Static


class TourPanel(Static):
    """One tour step: its heading in the top border, what the screen shows and which key to
    press. The text is plain (built with markup off: it quotes stored names)."""

    DEFAULT_CSS = """
    TourPanel {
        dock: bottom;
        margin-bottom: 1;
        height: auto;
        max-height: 8;
        padding: 0 1;
        border-top: solid $accent;
        border-title-color: $accent;
        border-title-style: bold;
        background: $boost;
    }
    """

    def __init__(self, heading: str, text: str, **kwargs: object) -> None:
        super().__init__(Text(text, end=""), markup=False, **kwargs)  # type: ignore[arg-type]
        self.border_title = heading
        self.text = text


def key_name(keys: str) -> str:
    """The first of ``keys`` (a binding's ``"a,b"``) as a sentence names it: the character it
    types (``]`` for ``right_square_bracket``), else its name (``enter``, ``f6``, ``ctrl+n``)."""
    key = keys.split(",")[0].strip()
    char = key_to_character(key)
    return char if char is not None and char.isprintable() and not char.isspace() else key
