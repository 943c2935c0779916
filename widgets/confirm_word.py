"""A confirmation for an irreversible change: it says exactly what will change and asks to
type the word it shows (DESIGN "The TUI": an erasure is not a y / n question)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class ConfirmWord(ModalScreen[bool]):
    """Dismissed with True only when the typed text is exactly ``word``."""

    DEFAULT_CSS = """
    ConfirmWord { align: center middle; background: $background 60%; }
    ConfirmWord > #confirm-box {
        width: 72; max-width: 96%; height: auto; max-height: 90%;
        background: $surface; border: thick $error; padding: 1 2;
    }
    ConfirmWord #confirm-scroll { height: auto; max-height: 10; }
    ConfirmWord #confirm-what { height: auto; }
    ConfirmWord #confirm-ask { margin-top: 1; text-style: bold; }
    ConfirmWord #confirm-input { margin-top: 1; }
    ConfirmWord #confirm-hint { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="confirm-cancel"),
        Binding("pageup", "scroll(-1)", "Scroll up", show=False, id="confirm-scroll-up"),
        Binding("pagedown", "scroll(1)", "Scroll down", show=False,
                id="confirm-scroll-down"),
    ]
    # rows around the list: border and padding (4), the ask (2), the input (4), the hint (1)
    AROUND = 11

    def __init__(self, title: str, what: Text, word: str) -> None:
        super().__init__()
        self.heading = title
        self.what = what
        self.word = word

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box") as box:
            box.border_title = self.heading
            with VerticalScroll(id="confirm-scroll"):
                yield Static(self.what, id="confirm-what", markup=False)
            yield Static(Text(f"Type {self.word} and press enter to go ahead.", end=""),
                         id="confirm-ask", markup=False)
            yield Input(placeholder="the word above", id="confirm-input")
            yield Static("esc or another word: nothing changes · pgup/pgdn scroll",
                         id="confirm-hint", markup=False)

    def on_mount(self) -> None:
        self._fit()
        self.query_one(Input).focus()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """The list takes what the terminal leaves once the ask, the input and the hint
        have their rows (90% of the height): the input is always on screen, the list
        scrolls."""
        height = self.app.size.height
        self.query_one("#confirm-scroll").styles.max_height = max(
            3, int(height * 0.9) - self.AROUND)

    def action_scroll(self, pages: int) -> None:
        scroll = self.query_one("#confirm-scroll", VerticalScroll)
        if pages < 0:
            scroll.scroll_page_up()
        else:
            scroll.scroll_page_down()

    @on(Input.Submitted, "#confirm-input")
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() == self.word)

    def action_cancel(self) -> None:
        self.dismiss(False)
