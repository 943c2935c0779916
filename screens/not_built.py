"""The screen shown for a registry entry whose capability has not landed yet.

It says plainly which screen is missing and what it will show, and nothing else: no sample
figures, no empty tables that look like data.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Center, Vertical
from textual.screen import Screen
from textual.widgets import Header, Static

from screens.registry import ScreenSpec
from widgets.footer import FitFooter


class NotBuiltScreen(Screen[None]):
    """A plain notice standing in for a screen that is not built yet."""

    HELP: ClassVar[str] = (
        "This screen is not built yet: the capability it shows has not landed in this "
        "version of lca-tui. The other screens work; switch with the number keys 1-8 or the "
        "command palette (ctrl+p)."
    )

    def __init__(self, spec: ScreenSpec) -> None:
        super().__init__(id=f"screen-{spec.mode}", classes="not-built")
        self.spec = spec
        self.title = spec.title

    def compose(self) -> ComposeResult:
        yield Header()
        with Center(), Vertical(id="not-built", classes="panel"):
            yield Static(self.notice(), id="not-built-notice", markup=False)
        yield FitFooter()

    def notice(self) -> Text:
        """The words on the screen: what is missing and what it will show."""
        spec = self.spec
        text = Text(end="")
        text.append(f"{spec.title}: not built yet\n\n", style="bold")
        text.append(f"The {spec.title} screen (key {spec.key}) is not part of this version of "
                    "lca-tui: its capability has not landed yet, so there is nothing to show "
                    "here, and nothing is shown in its place.\n\n")
        text.append("When it lands, it will show: ", style="bold")
        text.append(spec.summary)
        text.append("\n\nThe screens that are built are reachable with the number keys and "
                    "the command palette (ctrl+p).", style="dim")
        return text
