"""The confirmation a health fix asks for: exactly what it will change (its plan), y / n."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from store import FixPlan


def plan_text(plan: FixPlan) -> Text:
    out = Text(end="")
    out.append(f"{plan.fix}", style="bold")
    out.append(f"  (for {plan.signal})\n\n", style="dim")
    for line in plan.lines:
        out.append("• ")
        out.append(line)
        out.append("\n")
    if plan.possible:
        out.append("\nIt runs in one transaction, in the background, then the store is "
                   "scanned again.\n\n", style="dim")
        out.append("y", style="bold")
        out.append(" do it    ")
        out.append("n", style="bold")
        out.append(" / esc  leave the store as it is")
    else:
        out.append(f"\nNot possible now: {plan.reason}\n\n", style="bold")
        out.append("esc", style="bold")
        out.append(" close")
    return out


class FixConfirm(ModalScreen[bool]):
    """Shows a fix's plan; y runs it, n / escape does not."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Do it", id="fix-yes"),
        Binding("n", "answer(False)", "Cancel", id="fix-no"),
        Binding("escape", "answer(False)", "Cancel", show=False, id="fix-escape"),
    ]

    def __init__(self, plan: FixPlan) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        with Vertical(id="fix-box"):
            yield Static(plan_text(self.plan), id="fix-plan", markup=False)

    def on_mount(self) -> None:
        self.query_one("#fix-box").border_title = "Fix: what will change"

    def action_answer(self, yes: bool) -> None:
        self.dismiss(bool(yes) and self.plan.possible)
