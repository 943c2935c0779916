"""Command-palette entries: every screen by name (with its number key), then help.

They are given to the palette through ``App.get_system_commands`` so they come first in the
list, above Textual's own (theme, keys, screenshot, quit).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from screens.registry import SCREENS

if TYPE_CHECKING:
    from lca_tui.app import LcaApp


def screen_commands(app: LcaApp) -> Iterator[SystemCommand]:
    """One command per screen of the registry, and help for the current screen."""
    for spec in SCREENS:
        state = "" if spec.target else " (not built yet)"
        yield SystemCommand(f"{spec.title} screen ({spec.key})", spec.summary + state,
                            partial(app.switch_mode, spec.mode))
    yield SystemCommand("Help for this screen (?)", "What this screen shows, and its keys.",
                        app.action_help)
