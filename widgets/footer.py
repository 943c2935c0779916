"""A footer that fits its width: keys that do not fit are left out whole, never cut.

Textual's ``Footer`` lays every key out in one row and lets the row overflow: at 80 columns the
last keys slid under the command-palette key ("…palettet"). ``FitFooter`` measures its keys
(compact style; the number keys always as one span, ``1-8 screens``: run together they read as
one number, ``12345678``) and, while the row is wider than the footer, leaves out ``q Quit``,
then the screen's own keys from the right, then
``/ Filter``, ``z Zoom`` and ``b Panes``. ``? Help`` and the palette key always stay: the help
lists every key. It lays itself out again when its width changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Footer

from widgets.footer_keys import FooterKey, FooterLabel, KeyGroup

KEPT_ACTIONS = frozenset({"help"})
"""Keys never left out (the help lists all the others)."""
DROPPED_FIRST = ("quit",)
"""App keys left out before any of the screen's own."""
SHARED_IDS = ("zoom", "side", "filter")
"""The keys every screen shares, left out last (in this order, after the screen's own)."""


@dataclass
class _Unit:
    """One key, or a group of keys with one label, as the footer shows it."""

    bindings: list[tuple[Binding, bool, str]]
    group: Any = None
    compacted: bool = False
    rank: int = 0
    """Leave-out order: higher goes first; 0 is never left out."""
    keys: list[str] = field(default_factory=list)

    def width(self) -> int:
        """Columns taken in the compact footer, margins included."""
        if self.group is not None and not self.compacted:
            return 1 + sum(cell_len(k) for k in self.keys) + 1 + cell_len(
                self.group.description) + 1
        if self.group is not None:
            return cell_len(self._span()) + 1 + cell_len(self.group.description) + 1
        binding = self.bindings[0][0]
        desc = binding.description
        return cell_len(self.keys[0]) + (1 + cell_len(desc) if desc else 0) + 1

    def _span(self) -> str:
        return f"{self.keys[0]}-{self.keys[-1]}"


class FitFooter(Footer):
    """``Footer`` whose keys fit its width (see the module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("compact", True)
        super().__init__(**kwargs)
        self._laid_for = 0
        self._laid_out: tuple[Any, ...] | None = None
        """What the footer shows now (``_layout``): a change of bindings that leaves it the
        same (a screen switched back to, a refresh of the same keys) recomposes nothing."""
        self.left_out: list[str] = []
        """The descriptions of the keys left out at the current width (tests read it)."""

    def _units(self) -> tuple[list[_Unit], tuple[Binding, bool, str] | None]:
        active = self.screen.active_bindings
        by_action: dict[str, list[tuple[Binding, bool, str]]] = {}
        for _, binding, enabled, tooltip in active.values():
            if binding.show:
                by_action.setdefault(binding.action, []).append((binding, enabled, tooltip))
        units: list[_Unit] = []
        for group, members in groupby(by_action.values(), lambda m: m[0][0].group):
            listed = list(members)
            if group is not None and len(listed) > 1:
                units.append(_Unit([m[0] for m in listed], group, compacted=True,
                                   keys=[self.app.get_key_display(m[0][0]) for m in listed]))
            else:
                units += [_Unit([m[0]], keys=[self.app.get_key_display(m[0][0])])
                          for m in listed]
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            entry = active.get(self.app.COMMAND_PALETTE_BINDING)
            if entry is not None:
                palette = (entry[1], entry[2], entry[3])
        self._rank(units)
        return units, palette

    @staticmethod
    def _rank(units: list[_Unit]) -> None:
        own = [u for u in units if u.group is None and u.bindings[0][0].action not in
               KEPT_ACTIONS and u.bindings[0][0].action not in DROPPED_FIRST
               and u.bindings[0][0].id not in SHARED_IDS]
        order = ([u for u in units if u.bindings[0][0].action in DROPPED_FIRST]
                 + own[::-1]
                 + [u for i in SHARED_IDS for u in units
                    if u.group is None and u.bindings[0][0].id == i])
        for rank, unit in enumerate(reversed(order), start=1):
            unit.rank = rank

    def _palette_width(self, palette: tuple[Binding, bool, str] | None) -> int:
        if palette is None:
            return 0
        binding = palette[0]
        return 1 + cell_len(self.app.get_key_display(binding)) + 1 + cell_len(
            binding.description) + 1

    def fit(self, units: list[_Unit], room: int) -> list[_Unit]:
        """The units shown in ``room`` columns: the highest ranks left out until the row
        fits (a group not yet written as its span is written so first)."""
        shown = list(units)

        def wide() -> bool:
            return sum(u.width() for u in shown) > room

        if wide():
            for unit in shown:
                if unit.group is not None:
                    unit.compacted = True
        for unit in sorted((u for u in shown if u.rank), key=lambda u: -u.rank):
            if not wide():
                break
            shown.remove(unit)
        return shown

    def _layout(self) -> tuple[tuple[Any, ...], list[_Unit], list[_Unit],
                               tuple[Binding, bool, str] | None, int]:
        """What the footer would show at its width: a key of it (every key's text, state and
        tooltip), the units, those shown, the palette key, the width."""
        units, palette = self._units()
        width = self.size.width or self.app.size.width
        shown = self.fit(units, width - self._palette_width(palette))
        key = (width, tuple((u.compacted, tuple(u.keys), u.group and u.group.description,
                             tuple((b.key, b.description, b.action, enabled, tooltip)
                                   for b, enabled, tooltip in u.bindings)) for u in shown),
               palette and (palette[0].key, palette[1]))
        return key, units, shown, palette, width

    def bindings_changed(self, screen: Any) -> None:
        """Recompose only when what the footer shows changed (Textual's ``Footer``
        recomposes on every change of bindings: each screen switch mounted its keys anew)."""
        if not self._bindings_ready or self._laid_out is None or not self.is_attached \
                or screen is not self.screen:
            super().bindings_changed(screen)
            return
        if not screen.app.app_focus:
            return
        if self._layout()[0] != self._laid_out:
            self.call_after_refresh(self.recompose)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        self._laid_out, units, shown, palette, width = self._layout()
        self._laid_for = width
        self.left_out = [u.bindings[0][0].description for u in units if u not in shown]
        for unit in shown:
            yield from self._widgets(unit)
        if palette is not None:
            binding, enabled, tooltip = palette
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description,
                            binding.action, classes="-command-palette", disabled=not enabled,
                            tooltip=binding.tooltip or binding.description)

    def _widgets(self, unit: _Unit) -> Iterator[Widget]:
        if unit.group is not None and unit.compacted:
            binding, enabled, _ = unit.bindings[0]
            yield FooterKey(binding.key, unit._span(), unit.group.description, binding.action,
                            disabled=not enabled, tooltip=f"{unit._span()}: "
                            f"{unit.group.description}").data_bind(compact=Footer.compact)
            return
        if unit.group is not None:
            with KeyGroup(classes="-compact" if unit.group.compact else ""):
                for (binding, enabled, tooltip), key in zip(unit.bindings, unit.keys,
                                                            strict=True):
                    yield FooterKey(binding.key, key, "", binding.action, disabled=not enabled,
                                    tooltip=tooltip or binding.description,
                                    classes="-grouped").data_bind(compact=Footer.compact)
            yield FooterLabel(unit.group.description)
            return
        binding, enabled, tooltip = unit.bindings[0]
        yield FooterKey(binding.key, unit.keys[0], binding.description, binding.action,
                        disabled=not enabled, tooltip=tooltip).data_bind(compact=Footer.compact)

    def on_resize(self, event: Resize) -> None:
        if self._bindings_ready and event.size.width != self._laid_for:
            self.call_after_refresh(self.recompose)
