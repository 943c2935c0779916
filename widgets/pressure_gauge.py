"""A gauge of the live context window: used / window as a bar, with the checkpoint and
auto-compact thresholds marked on it, coloured by zone through theme variables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from store import clip_words

ZONES = ("ok", "checkpoint", "compact")


@dataclass(frozen=True)
class GaugeReading:
    """What the gauge shows: tokens used, window size and the two thresholds (tokens)."""

    used: int
    window: int
    checkpoint: int
    auto_compact: int
    segments: dict[str, int] | None = None
    when: str = ""
    note: str = ""

    @property
    def zone(self) -> str:
        """``ok`` below the checkpoint threshold, ``checkpoint`` up to auto-compact, then
        ``compact``."""
        if self.used >= self.auto_compact:
            return "compact"
        if self.used >= self.checkpoint:
            return "checkpoint"
        return "ok"

    def percent(self, tokens: int) -> float:
        return 100.0 * tokens / self.window if self.window else 0.0


def _col(tokens: int, window: int, width: int) -> int:
    if window <= 0 or width <= 0:
        return 0
    return max(0, min(width - 1, round(tokens / window * width) - 1))


class PressureGauge(Widget):
    """used / window, with ┃ marks at the checkpoint and auto-compact thresholds."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "pressure-gauge--ok", "pressure-gauge--checkpoint", "pressure-gauge--compact",
        "pressure-gauge--empty", "pressure-gauge--mark-checkpoint",
        "pressure-gauge--mark-compact", "pressure-gauge--label"}

    DEFAULT_CSS = """
    PressureGauge { height: auto; min-height: 3; }
    PressureGauge > .pressure-gauge--ok { color: $success; }
    PressureGauge > .pressure-gauge--checkpoint { color: $warning; }
    PressureGauge > .pressure-gauge--compact { color: $error; }
    PressureGauge > .pressure-gauge--empty { color: $foreground-darken-3; }
    PressureGauge > .pressure-gauge--mark-checkpoint { color: $warning; text-style: bold; }
    PressureGauge > .pressure-gauge--mark-compact { color: $error; text-style: bold; }
    PressureGauge > .pressure-gauge--label { text-style: bold; }
    """

    reading: reactive[GaugeReading | None] = reactive(None, layout=True)

    def render(self) -> Text:
        r = self.reading
        if r is None:
            return Text("No context snapshots for this session and agent.", end="")
        style = self.get_component_rich_style
        zone = r.zone
        width = max(10, self.content_size.width or 60)
        out = Text(end="")
        head = f"{r.used:,} / {r.window:,} tokens ({r.percent(r.used):.1f} %)"
        out.append(head, style=style(f"pressure-gauge--{zone}") + style("pressure-gauge--label"))
        phrase = {"ok": "  below the checkpoint threshold",
                  "checkpoint": "  past the checkpoint threshold: a checkpoint is due",
                  "compact": "  past the auto-compact threshold"}[zone]
        out.append(phrase)
        # the time and the note go on the line they follow when they fit there, else on a
        # line of their own: a line never wraps, so no figure is split over two
        aside: list[str] = []
        if r.when:
            if len(head) + len(phrase) + 3 + len(r.when) <= width:
                out.append(f"   {r.when}", style="dim")
            else:
                aside.append(r.when)
        out.append("\n")
        filled = round(min(r.used, r.window) / r.window * width) if r.window else 0
        bar = ["█"] * filled + ["░"] * (width - filled)
        styles = [style(f"pressure-gauge--{zone}")] * filled + \
            [style("pressure-gauge--empty")] * (width - filled)
        for tokens, name in ((r.checkpoint, "checkpoint"), (r.auto_compact, "compact")):
            col = _col(tokens, r.window, width)
            bar[col] = "┃"
            styles[col] = style(f"pressure-gauge--mark-{name}")
        for ch, st in zip(bar, styles, strict=True):
            out.append(ch, style=st)
        out.append("\n")
        marks = (f" checkpoint {r.checkpoint:,} ({r.percent(r.checkpoint):.0f} %)   ",
                 f" auto-compact {r.auto_compact:,} ({r.percent(r.auto_compact):.0f} %)")
        out.append("┃", style=style("pressure-gauge--mark-checkpoint"))
        out.append(marks[0])
        out.append("┃", style=style("pressure-gauge--mark-compact"))
        out.append(marks[1])
        if r.note:
            if 2 + len(marks[0]) + len(marks[1]) + 3 + len(r.note) <= width:
                out.append(f"   {r.note}", style="dim")
            else:
                aside.append(r.note)
        if aside:
            out.append("\n" + clip_words(" · ".join(aside), width), style="dim")
        if r.segments is not None:
            out.append("\nby segment: ", style="bold")
            out.append(" · ".join(f"{k.replace('_', ' ')} {v:,}"
                                  for k, v in r.segments.items()))
        return out
