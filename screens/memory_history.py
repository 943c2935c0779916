"""The ``h`` modal of the Memories screen: every version of the memory's chain (who, when,
the diff; an erased version as erased, never its text). Enter on a version asks to file the
revert proposal that brings it back — an ordinary proposal, reviewed on screen 4."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from store import MemoryVersion, plural, when

_DIFF_LINES = 12  # per version; the whole diff is `lca-tui history MEMORY`


def version_text(v: MemoryVersion) -> Text:
    """One version as the modal lists it (text from the store: no markup)."""
    out = Text(end="")
    out.append(f"v{v.version}", style="bold")
    out.append(" (current)" if v.current else "")
    out.append(f"  {v.op}" + (f" of memory {v.memory_id}" if v.memory_id else "")
               + (f" · proposal {v.proposal_id}" if v.proposal_id else "")
               + (" · its proposal was erased" if v.proposal_erased else "")
               + f" · {when(v.ts)}" + (f" · by {v.actor}" if v.actor else ""))
    if v.erased:
        out.append("\n  erased: its text is gone", style="italic")
    elif v.op in ("expire", "quarantine"):
        out.append(f"\n  {'expired' if v.op == 'expire' else 'quarantined'}: no longer "
                   "recalled, its text unchanged", style="italic")
    elif v.masked:
        out.append("\n  (secret: text withheld)", style="italic")
    else:
        lines = (v.diff.splitlines()[2:] if v.diff else (v.text or "").splitlines())
        for line in lines[:_DIFF_LINES]:
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
            out.append("\n  " + line, style=style)
        if len(lines) > _DIFF_LINES:
            out.append(f"\n  … {len(lines) - _DIFF_LINES} more lines", style="dim")
    return out


class HistoryModal(ModalScreen[int | None]):
    """The versions, oldest first; Enter picks one to revert to, Escape closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,h", "close", "Close", id="history-close"),
    ]

    def __init__(self, memory_id: int, versions: list[MemoryVersion]) -> None:
        super().__init__(classes="gov-modal")
        self.memory_id = memory_id
        self.versions = versions

    def revertible(self) -> list[int]:
        """The indexes of the versions a revert can bring back: not the current one (it is
        the text already), not an erased or secret one (no text to copy)."""
        return [i for i, v in enumerate(self.versions)
                if not (v.erased or v.masked or v.current)]

    def compose(self) -> ComposeResult:
        with Vertical(classes="gov-box panel") as box:
            box.border_title = (f"History of memory {self.memory_id} · "
                                f"{plural(len(self.versions), 'version')}")
            can = self.revertible()
            # Enter is offered only where it can act: the highlight starts on the latest
            # version before the current one and never rests on the current one
            box.border_subtitle = ("enter revert to this version · esc close" if can else
                                   "nothing to revert to: the current version is this "
                                   "text already · esc close")
            yield OptionList(*(Option(version_text(v), id=str(v.version),
                                      disabled=i not in can)
                               for i, v in enumerate(self.versions)), id="history-versions")

    def on_mount(self) -> None:
        can = self.revertible()
        self.query_one("#history-versions", OptionList).highlighted = can[-1] if can else None

    @on(OptionList.OptionSelected, "#history-versions")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0) or None)

    def action_close(self) -> None:
        self.dismiss(None)
