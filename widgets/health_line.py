"""The Overview's one-line health summary: the worst signals at a glance; enter (or a click)
opens the Health screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import Static

if TYPE_CHECKING:
    from store import ScanResult
from widgets.messages import Show


def summary_text(result: ScanResult | None, width: int = 2, focused: bool = False) -> Text:
    """``Health  FAIL 3 · WARN 5 · unknown 1 · ok 6 — duplicate_ratio, loader_drift, +1``,
    with the key that opens the Health screen from where the focus is: enter once the line
    has the focus, 6 from anywhere."""
    out = Text("Health        ", style="bold", end="")
    if result is None:
        out.append("scanning…", style="dim")
        return out
    counts = result.counts()
    parts = [("fail", "FAIL"), ("warn", "WARN"), ("unknown", "unknown"), ("ok", "ok")]
    shown = [(s, f"{label} {counts[s]}") for s, label in parts if counts[s]]
    for i, (status, label) in enumerate(shown):
        if i:
            out.append(" · ", style="dim")
        out.append(label, style="bold" if status in ("fail", "warn") else "")
    worst = [s.name for s in result.signals if s.status == "fail"] or \
        [s.name for s in result.signals if s.status == "warn"]
    if worst:
        more = f", +{len(worst) - width}" if len(worst) > width else ""
        out.append(" — " + ", ".join(worst[:width]) + more)
    out.append("  (enter: open)" if focused else "  (6: open)", style="dim")
    return out


class HealthLine(Static, can_focus=True):
    """Focusable summary line; enter or a click switches to the Health screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open Health", id="health-line-open"),
    ]
    DEFAULT_CSS = """
    HealthLine { height: 1; padding: 0 1; }
    HealthLine.-fail { background: $error 25%; }
    HealthLine.-warn { background: $warning 15%; }
    HealthLine:focus { text-style: reverse; }
    """

    result: ScanResult | None = None

    def show(self, result: ScanResult | None) -> None:
        self.result = result
        self.update(summary_text(result, focused=self.has_focus))
        status = result.status if result is not None else "ok"
        self.set_class(status == "fail", "-fail")
        self.set_class(status in ("warn", "unknown"), "-warn")

    def on_focus(self) -> None:
        self.update(summary_text(self.result, focused=True))

    def on_blur(self) -> None:
        self.update(summary_text(self.result, focused=False))

    def action_open(self) -> None:
        self.post_message(Show("signal"))

    def on_click(self) -> None:
        self.post_message(Show("signal"))
