"""A small context-pressure summary (the latest session's main agent) for the Overview.

A pure view: the screen that holds it reads the series in its own load worker (one change
check, one read per refresh) and hands it over with ``show``.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from store.context.records import Series
from widgets.pressure_gauge import GaugeReading, PressureGauge


def summary_line(s: Series) -> Text:
    """``main · session ae4a77f8 · 217 snapshots · peak 141,787`` and what is flagged."""
    out = Text(f"{s.agent} · session {s.session_id[:8]} · {len(s.snapshots):,} snapshots · "
               f"peak {s.peak_used_tokens:,}", end="")
    unchecked = sum(1 for c in s.compactions if not c.checkpoint_before)
    unverified = sum(1 for p in s.prunes if not p.preserved_verified)
    flags = []
    if unchecked:
        flags.append(f"{unchecked} compaction{'s' if unchecked > 1 else ''} without checkpoint")
    if unverified:
        flags.append(f"{unverified} unverified prune{'s' if unverified > 1 else ''}")
    if flags:
        out.append("   ✗ " + " · ".join(flags), style="bold")
    return out


class PressureSummary(Vertical):
    """The latest session's pressure: a one-line summary and the gauge."""

    DEFAULT_CSS = """
    PressureSummary { height: auto; }
    PressureSummary > #pressure-summary-line { height: auto; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loads = 0

    def compose(self) -> ComposeResult:
        yield Static("loading…", id="pressure-summary-line", markup=False)
        yield PressureGauge(id="pressure-summary-gauge")

    def on_mount(self) -> None:
        self.border_title = "Context pressure (latest session)"

    def show(self, s: Series | None) -> None:
        """Show the latest series (None: no snapshots yet)."""
        line = self.query_one("#pressure-summary-line", Static)
        gauge = self.query_one("#pressure-summary-gauge", PressureGauge)
        if s is None or s.latest is None:
            line.update(Text("No context snapshots yet: import a transcript or record them "
                             "with `lca-tui context record`.", end=""))
            gauge.display = False
        else:
            line.update(summary_line(s))
            gauge.display = True
            gauge.reading = GaugeReading(s.latest.used_tokens, s.window_tokens,
                                         s.checkpoint_threshold, s.auto_compact_threshold,
                                         s.latest.segments)
        self.loads += 1
