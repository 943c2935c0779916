"""A scrollable pane for stored text of any size: wrapped off the main thread, drawn by line.

A ``Static`` holding a multi-megabyte entry wraps and renders all of it on the main thread
(seconds for 4 MB), and a soft-wrapping ``TextArea`` rewraps the whole document there too. This
pane shows the text verbatim and completely, with control characters made visible
(``store.core.textsafe.visible``), wrapped to its width; it only ever draws the lines in view.
Text up
to ``SYNC_LIMIT`` characters is wrapped at once; longer text is wrapped in a thread worker while
the pane says "loading…", so the UI keeps answering keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import get_character_cell_size
from rich.segment import Segment
from textual import on, work
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from store import visible

SYNC_LIMIT = 20_000
TAB_SIZE = 4
LOADING = "loading…"


def wrap_line(line: str, width: int) -> list[str]:
    """``line`` cut into pieces of at most ``width`` cells, at a space where one is near the
    end of a piece; no character is dropped or added."""
    width = max(1, width)
    if not line:
        return [""]
    if not line.isascii():
        return _wrap_cells(line, width)
    pieces: list[str] = []
    start, end = 0, len(line)
    while end - start > width:
        cut = line.rfind(" ", start + width // 2, start + width)
        stop = cut + 1 if cut >= 0 else start + width
        pieces.append(line[start:stop])
        start = stop
    pieces.append(line[start:])
    return pieces


def _wrap_cells(line: str, width: int) -> list[str]:
    """``wrap_line`` for text with wide or combining characters: the same cut at a space in
    the second half of a piece, widths counted in terminal cells."""
    pieces: list[str] = []
    start, n = 0, len(line)
    while start < n:
        cells, end, space = 0, start, -1
        while end < n:
            w = get_character_cell_size(line[end])
            if cells + w > width and end > start:
                break
            if line[end] == " " and cells >= width // 2:
                space = end
            cells += w
            end += 1
        if end >= n:
            pieces.append(line[start:])
            break
        stop = space + 1 if space >= 0 else end
        pieces.append(line[start:stop])
        start = stop
    return pieces or [""]


def wrap_text(text: str, width: int) -> list[str]:
    """The visible form of ``text`` as display lines of at most ``width`` cells."""
    lines: list[str] = []
    for line in visible(text).split("\n"):
        lines.extend(wrap_line(line.expandtabs(TAB_SIZE) if "\t" in line else line, width))
    return lines


class TextPane(ScrollView, can_focus=True):
    """Verbatim stored text, wrapped to the pane's width, scrollable; never interpreted."""

    DEFAULT_CSS = """
    TextPane { height: 1fr; padding: 0 1; scrollbar-gutter: stable; }
    """

    @dataclass
    class Wrapped(Message):
        """Lines wrapped by the worker for text ``token`` at ``width``. Once the current
        text's lines are drawn the message bubbles on (the screen says ``Loaded("wrap")``); a
        replaced text's stops here."""

        token: int
        width: int
        lines: list[str]

    def __init__(self, text: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._text = text
        self._token = 0
        self._width = 0
        self._lines: list[str] = []

    @property
    def text(self) -> str:
        """The stored text shown (as given, before control characters are made visible)."""
        return self._text

    @property
    def lines(self) -> list[str]:
        """The display lines currently drawn (``["loading…"]`` while a long text wraps)."""
        return self._lines

    @property
    def wrapping(self) -> bool:
        """A long text is still being wrapped (in a worker): ``lines`` shows ``loading…``."""
        return self._width == 0 and len(self._text) > SYNC_LIMIT

    def show(self, text: str) -> None:
        """Replace the text and scroll to its start."""
        self._text = text
        self._width = 0
        self.scroll_to(0, 0, animate=False, immediate=True)
        self._rewrap()

    def on_resize(self, event: Resize) -> None:
        if self.scrollable_content_region.width != self._width:
            self._rewrap()

    def _rewrap(self) -> None:
        self._token += 1
        width = self.scrollable_content_region.width
        if width <= 0:
            self._set_lines([], 0)
            return
        if len(self._text) <= SYNC_LIMIT:
            self._set_lines(wrap_text(self._text, width), width)
            return
        self._set_lines([LOADING], 0)
        self._wrap_in_thread(self._text, width, self._token)

    @work(thread=True, exclusive=True, group="text-pane-wrap", exit_on_error=False)
    def _wrap_in_thread(self, text: str, width: int, token: int) -> None:
        self.post_message(self.Wrapped(token, width, wrap_text(text, width)))

    @on(Wrapped)
    def _wrapped(self, message: Wrapped) -> None:
        if message.token != self._token:
            message.stop()
            return
        self._set_lines(message.lines, message.width)

    def _set_lines(self, lines: list[str], width: int) -> None:
        self._lines = lines
        self._width = width
        self.virtual_size = Size(width, len(lines))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        style = self.rich_style
        text = self._lines[index] if 0 <= index < len(self._lines) else ""
        return Strip([Segment(text, style)]).crop_extend(
            0, self.scrollable_content_region.width, style)
