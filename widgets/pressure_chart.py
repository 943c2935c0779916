"""Used tokens over turns (a plotext chart): horizontal lines at the checkpoint and
auto-compact thresholds, vertical marks at compactions and checkpoints."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.color import Color
from textual_plotext import PlotextPlot


@dataclass
class ChartData:
    """The points and marks of one series (tokens, not thousands)."""

    used: list[int] = field(default_factory=list)
    times: list[str] = field(default_factory=list)
    window: int = 0
    checkpoint: int = 0
    auto_compact: int = 0
    compactions: list[str] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)

    def frame(self) -> tuple[object, ...]:
        """Everything but the points: thresholds and marks."""
        return (self.window, self.checkpoint, self.auto_compact, self.compactions,
                self.checkpoints)

    def mark_positions(self, column: float = 0.0) -> list[tuple[str, float]]:
        """Where each mark is drawn on the turn axis, checkpoints first: just after the turn
        it followed; one after the last snapshot (the usual checkpoint just before a
        compaction) at the last turn; one before every snapshot is not drawn.

        ``column`` is how many turns one character column spans: a checkpoint that would be
        drawn within a column of a compaction (a store-wide checkpoint seconds before or
        after it) moves one column to the side it happened on, so the compaction's line
        does not hide it."""
        n = len(self.used)
        out: list[tuple[str, float]] = []
        compactions = [(ts, turn_of(self.times, ts)) for ts in self.compactions]
        for ts in self.checkpoints:
            turn = turn_of(self.times, ts)
            if not turn:
                continue
            x = min(turn + 0.5, n)
            for c_ts, c_turn in compactions:
                cx = min(c_turn + 0.5, n)
                if c_turn and column > 0 and abs(x - cx) < column:
                    x = cx + column if ts > c_ts else cx - column
                    if not 1 <= x <= max(2, n):  # no room on that side: the other one
                        x = cx - column if ts > c_ts else cx + column
            out.append(("checkpoint", x))
        out += [("compaction", min(turn + 0.5, n)) for _, turn in compactions if turn]
        return out


def turn_of(times: list[str], ts: str) -> int:
    """The 1-based turn at which an event at ``ts`` happened: after the last snapshot at or
    before it (0 when it precedes every snapshot)."""
    return sum(1 for t in times if t <= ts)


def _ticks(n: int, count: int = 6) -> list[int]:
    if n <= count:
        return list(range(1, n + 1))
    step = max(1, round(n / (count - 1)))
    ticks = list(range(1, n + 1, step))
    if n - ticks[-1] < step / 2:
        ticks[-1] = n
    else:
        ticks.append(n)
    return ticks


LABELS_MIN_HEIGHT = 14
"""Below this many rows the chart leaves out its axis labels ("tokens", "turn"): a row more
for the curve on an 80x24 terminal (the panel's title says what is plotted)."""
Y_AXIS = 6
"""Columns left of the plot: the tick labels ("200k") and the axis."""


def tick_marks(d: ChartData, height: int) -> list[int]:
    """The token marks labelled on the y axis: 0, the thresholds and the top, leaving out the
    top (then the checkpoint) when the chart is too short to put them on rows of their own —
    two labels on one row would show either, depending on drawing order."""
    top = max(d.window, max(d.used))
    # the frame, the x axis and its tick labels take the rest (and the axis labels' row)
    rows = max(1, height - (5 if height >= LABELS_MIN_HEIGHT else 4))
    step = top / rows
    kept = [0]
    for mark in (d.auto_compact, d.checkpoint, top):
        if all(abs(mark - k) >= step for k in kept):
            kept.append(mark)
    return sorted(set(kept))


class PressureChart(PlotextPlot):
    """The curve of one agent's used tokens, turn by turn."""

    DEFAULT_CSS = """
    PressureChart { height: 1fr; min-height: 8; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.data = ChartData()

    def show(self, data: ChartData) -> None:
        """Replace the series shown."""
        self.data = data
        self.replot()

    def on_resize(self) -> None:
        self.replot()  # which tick labels fit depends on the height

    def same_frame(self, data: ChartData) -> bool:
        """True when ``data`` has the thresholds and marks shown now (only points differ)."""
        return self.data.frame() == data.frame()

    def extend(self, used: list[int], times: list[str]) -> None:
        """Append new points (live)."""
        self.data.used.extend(used)
        self.data.times.extend(times)
        self.replot()

    def column_turns(self) -> float:
        """How many turns one character column of the plot spans (0 before layout)."""
        plot = self.size.width - Y_AXIS - 2
        if plot <= 0:
            return 0.0
        return (max(2, len(self.data.used)) - 1) / plot

    def legend(self) -> str:
        """What the lines and marks mean, in their colours (markup for the panel's border
        subtitle; no store text in it), so a mark is never a guess."""
        def hexed(variable: str) -> str:
            r, g, b = self._rgb(variable)
            return f"#{r:02x}{g:02x}{b:02x}"

        return "  ".join(f"[bold {hexed(variable)}]{mark}[/] {what}" for mark, what, variable in (
            ("─", "checkpoint threshold", "warning"), ("─", "auto-compact", "error"),
            ("│", "compaction", "error"), ("│", "checkpoint", "success")))

    def _rgb(self, variable: str) -> tuple[int, int, int]:
        value = self.app.theme_variables.get(variable) or "#888888"
        r, g, b = Color.parse(value).rgb
        return (r, g, b)

    def replot(self) -> None:
        d = self.data
        plt = self.plt
        plt.clear_data()
        labels = self.size.height >= LABELS_MIN_HEIGHT
        plt.xlabel("turn" if labels else "")
        plt.ylabel("tokens" if labels else "")
        if not d.used:
            plt.title("no snapshots")
            self.refresh()
            return
        plt.title("")
        n = len(d.used)
        xs = list(range(1, n + 1))
        top = max(d.window, max(d.used)) / 1000
        plt.ylim(0, top)
        plt.xlim(1, max(2, n))
        ticks = _ticks(n)
        plt.xticks([float(t) for t in ticks], [str(t) for t in ticks])
        marks = tick_marks(d, self.size.height)
        plt.yticks([m / 1000 for m in marks], [f"{m / 1000:,.0f}k" for m in marks])
        plt.hline(d.checkpoint / 1000, self._rgb("warning"))
        plt.hline(d.auto_compact / 1000, self._rgb("error"))
        colour = {"checkpoint": self._rgb("success"), "compaction": self._rgb("error")}
        for kind, x in d.mark_positions(self.column_turns()):
            plt.vline(x, colour[kind])
        plt.plot(xs, [u / 1000 for u in d.used], color=self._rgb("primary"))
        self.refresh()
