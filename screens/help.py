"""The ``?`` modal: what the current screen shows, and every key in force on it."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def _where(node: object, screen: Screen[object]) -> str:
    if node is screen:
        return "this screen"
    if node is screen.app:
        return "everywhere"
    return type(node).__name__


def help_text(screen: Screen[object]) -> Text:
    """The screen's HELP text (``Screen.HELP``, which every store screen sets), or a sentence
    saying it has none."""
    body = (screen.HELP or "").strip()
    return Text(body or "This screen has no help text.", end="")


def keys_table(screen: Screen[object]) -> Table:
    """The keys in force on ``screen``: its own, the app's, then its focused widget's.

    Bindings hidden from the footer are left out, except the focused widget's (cursor keys
    and the like), which say how to move in it.
    """
    table = Table(show_header=True, header_style="bold", box=None, expand=True, pad_edge=False)
    table.add_column("key", no_wrap=True, style="bold")
    table.add_column("does")
    table.add_column("where", style="dim", no_wrap=True)
    focused = screen.focused
    rows: list[tuple[int, str, str, str]] = []
    seen: set[str] = set()
    for active in screen.active_bindings.values():
        binding, node = active.binding, active.node
        if binding.system or not binding.description:
            continue
        if node is screen or node is screen.app:
            if not binding.show:
                continue
            rank, where = (0, "this screen") if node is screen else (1, "everywhere")
        elif node is focused:
            rank, where = 2, type(node).__name__
        else:
            continue
        key = screen.app.get_key_display(binding)
        if key in seen:
            continue
        seen.add(key)
        rows.append((rank, key, binding.description, where))
    rows.append((0, "tab / shift+tab", "Move to the next / previous pane", "this screen"))
    if screen.active_bindings.get("y") is not None:
        rows.append((0, "y", "Copy the selected id (session, entry as session#seq, trace, "
                     "memory)", "this screen"))
        rows.append((0, "g / G", "Top / bottom of the focused list or pane", "this screen"))
    for _, key, does, where in sorted(rows, key=lambda r: r[0]):
        table.add_row(Text(key), Text(does), Text(where))
    return table


class HelpScreen(ModalScreen[None]):
    """Help for the screen underneath: its purpose, then its keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss", "Close", id="help-close"),
    ]

    def __init__(self, screen: Screen[object]) -> None:
        super().__init__(id="help")
        self.target = screen
        self._text = help_text(screen)
        self._keys = keys_table(screen)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box", classes="panel") as box:
            box.border_title = f"Help: {self.target.title or 'lca-tui'}"
            box.border_subtitle = "esc / ? to close"
            yield Static(self._text, id="help-text", markup=False)
            yield Static(Text("Keys", style="bold", end=""), id="help-keys-title")
            yield Static(self._keys, id="help-keys")
