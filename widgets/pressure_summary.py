"""A small context-pressure summary (the latest session's main agent) for the Overview.

A pure view: the screen that holds it reads the series in its own load worker (one change
check, one read per refresh) and hands it over with ``show``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static

from store import parse_iso
from store import visible
from widgets.fmt import ago, plural, when
from widgets.messages import Show
from widgets.pressure_gauge import GaugeReading, PressureGauge

if TYPE_CHECKING:
    from store import Series

LIVE = timedelta(hours=1)
"""A latest snapshot older than this is not a live window: the summary says how old it is."""


def summary_line(s: Series, now: datetime | None = None) -> Text:
    """``main · session ae4a77f8 · 217 snapshots · peak 141,787``, how old the latest snapshot
    is when it is not live, and what is flagged."""
    out = Text(visible(f"{s.agent} · session {s.session_id[:8]} · "
                       f"{plural(len(s.snapshots), 'snapshot')} · "
                       f"peak {s.peak_used_tokens:,}"), end="")

    unchecked = sum(1 for c in s.compactions if not c.checkpoint_before)
    unverified = sum(1 for p in s.prunes if not p.preserved_verified)
    flags = []
    if unchecked:
        flags.append(f"{plural(unchecked, 'compaction')} without checkpoint")
    if unverified:
        flags.append(plural(unverified, "unverified prune"))
    if flags:
        out.append("   ✗ " + " · ".join(flags), style="bold")
    latest = s.latest.ts if s.latest is not None else None
    stamp = parse_iso(latest)
    if now is not None and stamp is not None and now - stamp > LIVE:
        out.append(f"\nnot live: the latest snapshot is {ago(latest, now).replace(' ago', '')}"
                   f" old ({when(latest)})", style="italic")
    return out


class PressureSummary(Vertical, can_focus=True):
    """The latest session's pressure: a one-line summary and the gauge; enter opens Context."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_context", "Open Context", id="pressure-open"),
    ]

    DEFAULT_CSS = """
    PressureSummary { height: auto; }
    PressureSummary > #pressure-summary-line { height: auto; }
    """

    def compose(self) -> ComposeResult:
        yield Static("loading…", id="pressure-summary-line", markup=False)
        yield PressureGauge(id="pressure-summary-gauge")

    def on_mount(self) -> None:
        self.border_title = "Context pressure (latest session)"

    def action_open_context(self) -> None:
        self.post_message(Show("series"))

    def show(self, s: Series | None, now: datetime | None = None) -> None:
        """Show the latest series (None: no snapshots yet); ``now`` dates a stale one."""
        line = self.query_one("#pressure-summary-line", Static)
        gauge = self.query_one("#pressure-summary-gauge", PressureGauge)
        if s is None or s.latest is None:
            line.update(Text("No context snapshots yet: import a transcript or record them "
                             "with `lca-tui context record`.", end=""))
            gauge.display = False
        else:
            line.update(summary_line(s, now))
            gauge.display = True
            gauge.reading = GaugeReading(s.latest.used_tokens, s.window_tokens,
                                         s.checkpoint_threshold, s.auto_compact_threshold,
                                         s.latest.segments)
