"""The pieces ``FitFooter`` lays out: one key, a group of keys, a group's label.

Textual's ``Footer`` builds its row from classes it keeps private (``textual.widgets._footer``),
which may change in any release. These are ours, on Textual's public API only. They keep the
class names ``FooterKey``, ``KeyGroup`` and ``FooterLabel`` on purpose: ``Footer``'s own
stylesheet (margins, the palette key docked right, the compact variants) selects them by type
name, so the footer looks as Textual's does.
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import HorizontalGroup
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Label


class KeyGroup(HorizontalGroup):
    """Keys sharing one label (``1 2 3 … screens``)."""

    DEFAULT_CSS = """
    KeyGroup {
        width: auto;
    }
    """


class FooterKey(Widget):
    """One key and its description; a click presses the key."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"footer-key--key", "footer-key--description"}
    DEFAULT_CSS = """
    FooterKey {
        width: auto;
        height: 1;
        text-wrap: nowrap;
        background: $footer-item-background;
        .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
            padding: 0 1;
        }
        .footer-key--description {
            padding: 0 1 0 0;
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        &:hover {
            pointer: pointer;
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        &.-disabled {
            text-style: dim;
        }
        &.-compact {
            .footer-key--key {
                padding: 0;
            }
            .footer-key--description {
                padding: 0 0 0 1;
            }
        }
    }
    """

    compact = reactive(True)
    """Compact style (no padding around the key)."""

    def __init__(self, key: str, key_display: str, description: str, action: str,
                 disabled: bool = False, tooltip: str = "", classes: str = "") -> None:
        self.key = key
        self.key_display = key_display
        self.description = description
        self.action = action
        self._disabled = disabled
        super().__init__(classes=f"{classes} -disabled" if disabled else classes)
        self.set_reactive(Widget.shrink, False)
        if tooltip:
            self.tooltip = tooltip

    def render(self) -> Text:
        key_style = self.get_component_rich_style("footer-key--key")
        key_pad = self.get_component_styles("footer-key--key").padding
        if self.description:
            desc_style = self.get_component_rich_style("footer-key--description")
            desc_pad = self.get_component_styles("footer-key--description").padding
            text = Text.assemble(
                (" " * key_pad.left + self.key_display + " " * key_pad.right, key_style),
                (" " * desc_pad.left + self.description + " " * desc_pad.right, desc_style))
        else:
            text = Text.assemble((self.key_display, key_style))
        text.stylize_before(self.rich_style)
        return text

    def on_mouse_down(self) -> None:
        if self._disabled:
            self.app.bell()
        else:
            self.app.simulate_key(self.key)

    def _watch_compact(self, compact: bool) -> None:
        self.set_class(compact, "-compact")


class FooterLabel(Label):
    """A group's label, after its keys."""
