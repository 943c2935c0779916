"""A stacked bar of a recall candidate's weighted contributions: α·S, β·E, γ·T, δ·A, ε·Q to
the right of zero, −λ·K to the left, so a bar's length is its score's make-up at a glance.

``bar_text`` renders one bar as a ``rich.text.Text`` (for a ``DataTable`` cell); ``ScoreBar`` is
the widget form and ``legend_text`` the key. Colours come from the app's theme.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

POSITIVE = ("S", "E", "T", "A", "Q")
FULL = "█"
ZERO = "│"


def palette_from_theme(theme: Any) -> dict[str, str]:
    """A colour for each term from a Textual theme (fallbacks when a slot is unset)."""
    def pick(*names: str) -> str:
        for name in names:
            value = getattr(theme, name, None)
            if value:
                return str(value)
        return "white"

    return {"S": pick("primary"), "E": pick("success", "secondary"),
            "T": pick("warning", "accent"), "A": pick("secondary", "primary"),
            "Q": pick("accent", "secondary"), "K": pick("error")}


def scale_for(rows: list[Mapping[str, float]], width: int, neg_cells: int) -> float:
    """Cells per score unit so the largest positive total of ``rows`` fills the bar."""
    biggest = max((sum(max(0.0, r.get(t, 0.0)) for t in POSITIVE) for r in rows), default=0.0)
    room = max(1, width - neg_cells - 1)
    return room / biggest if biggest > 0 else 0.0


def bar_text(contributions: Mapping[str, float], width: int, scale: float, neg_cells: int,
             palette: Mapping[str, str]) -> Text:
    """One bar ``width`` cells wide: K's cells right-aligned in the first ``neg_cells``, a
    zero mark, then S E T A Q stacked (cumulative rounding keeps the total exact)."""
    out = Text(no_wrap=True, end="")
    k = abs(min(0.0, contributions.get("K", 0.0)))
    k_cells = min(neg_cells, round(k * scale))
    out.append(" " * (neg_cells - k_cells))
    out.append(FULL * k_cells, style=palette.get("K", "red"))
    out.append(ZERO, style="dim")
    cum, drawn = 0.0, 0
    for term in POSITIVE:
        cum += max(0.0, contributions.get(term, 0.0))
        end = round(cum * scale)
        cells = max(0, min(end, width - neg_cells - 1) - drawn)
        out.append(FULL * cells, style=palette.get(term, "white"))
        drawn += cells
    out.append(" " * max(0, width - neg_cells - 1 - drawn))
    return out


def legend_text(palette: Mapping[str, str], weights: Mapping[str, float] | None = None
                ) -> Text:
    """The key: each term's colour and, given the weights, its weight."""
    names = {"S": "alpha", "E": "beta", "T": "gamma", "A": "delta", "Q": "epsilon",
             "K": "lambda"}
    out = Text(end="")
    for term in (*POSITIVE, "K"):
        out.append(FULL, style=palette.get(term, "white"))
        label = f" {'−' if term == 'K' else ''}{term}"
        if weights is not None and names[term] in weights:
            label += f"×{float(weights[names[term]]):.2f}"
        out.append(label + "  ")
    return out


class ScoreBar(Widget):
    """A single stacked contribution bar (for a detail view; tables use ``bar_text``)."""

    DEFAULT_CSS = """
    ScoreBar {
        height: 1;
        width: 1fr;
    }
    """

    contributions: reactive[dict[str, float]] = reactive(dict, layout=False)
    scale: reactive[float] = reactive(0.0)

    def __init__(self, contributions: Mapping[str, float] | None = None, *,
                 scale: float | None = None, neg_cells: int = 4, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.neg_cells = neg_cells
        self.set_reactive(ScoreBar.contributions, dict(contributions or {}))
        self.set_reactive(ScoreBar.scale, scale or 0.0)

    def render(self) -> Text:
        width = max(self.neg_cells + 2, self.size.width)
        scale = self.scale or scale_for([self.contributions], width, self.neg_cells)
        return bar_text(self.contributions, width, scale, self.neg_cells,
                        palette_from_theme(self.app.current_theme))
