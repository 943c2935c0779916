"""A health signal's trend: its value over the stored scans as a plotext line, with the warn
and fail thresholds as horizontal lines; and a one-line sparkline for tables."""

from __future__ import annotations

from textual.color import Color
from textual_plotext import PlotextPlot

from store import TrendPoint

BARS = "▁▂▃▄▅▆▇█"


def sparkline(points: list[TrendPoint], width: int = 10, floor: float | None = None) -> str:
    """The last ``width`` values as block characters (``·`` for a scan with no value).

    The scale spans at least ``floor`` (default: a tenth of the largest magnitude shown), so
    noise is not magnified: 57.1 % then 57.0 % draws two bars of about one height, not
    ``█▁``. A change smaller than the floor sits in the middle of the scale."""
    tail = points[-width:]
    values = [p.value for p in tail if p.value is not None]
    if not values:
        return "·" * len(tail)
    low, high = min(values), max(values)
    span = high - low
    if floor is None:
        floor = 0.1 * max(abs(low), abs(high))
    scale = max(span, floor)
    base = low - (scale - span) / 2
    out = []
    for p in tail:
        if p.value is None:
            out.append("·")
        elif span == 0:
            out.append(BARS[len(BARS) - 1 if high > 0 else 0])
        else:
            out.append(BARS[round((p.value - base) / scale * (len(BARS) - 1))])
    return "".join(out)


def _short(value: float) -> str:
    """An axis label in a few cells: ``0``, ``5``, ``0.25``, ``45k``, ``1.2M``."""
    for size, unit in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{unit}"
    return f"{value:.3g}"


TICK_ROWS = 6  # the rows a mark needs apart: a small trend panel's plot (any size draws the same)


def _ticks(top: float, warn: float | None, fail: float | None
           ) -> tuple[list[float], list[str]]:
    """The y-axis marks: the thresholds, the top and 0, dropping any closer than a sixth of
    the axis to one kept before it (thresholds first, then the top, then 0). Two labels that
    fall on one row are drawn in an order plotext does not fix: the picture changed from run
    to run (0 or 5 on the same row)."""
    step = top * 1.1 / TICK_ROWS
    kept: list[float] = []
    for mark in [t for t in (fail, warn) if t] + [top, 0.0]:
        if all(abs(mark - k) >= step for k in kept):
            kept.append(mark)
    kept.sort()
    return kept, [_short(m) for m in kept]


class HealthTrend(PlotextPlot):
    """One signal's values over the stored scans."""

    DEFAULT_CSS = """
    HealthTrend { height: 1fr; min-height: 6; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.points: list[TrendPoint] = []
        self.warn: float | None = None
        self.fail: float | None = None

    def show(self, points: list[TrendPoint], warn: float | None, fail: float | None) -> None:
        self.points, self.warn, self.fail = points, warn, fail
        self.replot()

    def _rgb(self, variable: str) -> tuple[int, int, int]:
        value = self.app.theme_variables.get(variable) or "#888888"
        r, g, b = Color.parse(value).rgb
        return (r, g, b)

    def replot(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.xlabel("scan")
        values = [p.value for p in self.points]
        known = [v for v in values if v is not None]
        if not known:
            plt.title("no figures yet")
            self.refresh()
            return
        plt.title("")
        xs = [i + 1 for i, v in enumerate(values) if v is not None]
        top = max(known + [t for t in (self.warn, self.fail) if t is not None] + [1.0])
        plt.ylim(0, top * 1.1)
        plt.yticks(*_ticks(top, self.warn, self.fail))
        plt.xlim(1, max(2, len(values)))
        plt.xticks([1.0, float(max(2, len(values)))], ["1", str(max(2, len(values)))])
        if self.warn is not None and self.warn > 0:
            plt.hline(self.warn, self._rgb("warning"))
        if self.fail is not None and self.fail > 0:
            plt.hline(self.fail, self._rgb("error"))
        plt.plot(xs, known, color=self._rgb("primary"), marker="braille")
        self.refresh()
