"""A small context-pressure summary (the latest session's main agent) for the Overview.

It follows the store on its own: while its screen is on top it checks ``data_version`` in a
thread worker every ``app.refresh_seconds`` and reads the latest series again when it moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from store.context_records import Series
from widgets.pressure_gauge import GaugeReading, PressureGauge


@dataclass
class _Read(Message):
    series: Series | None
    version: int


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
        self._version: int | None = None
        self.loads = 0

    def compose(self) -> ComposeResult:
        yield Static("loading…", id="pressure-summary-line", markup=False)
        yield PressureGauge(id="pressure-summary-gauge")

    def on_mount(self) -> None:
        self.border_title = "Context pressure (latest session)"
        self.set_interval(float(getattr(self.app, "refresh_seconds", 1.0)), self._tick)
        self._read()

    def _tick(self) -> None:
        if self.app.screen is self.screen:
            self._read(only_if_changed=True)

    @work(thread=True, exclusive=True, group="pressure-summary", exit_on_error=False)
    def _read(self, only_if_changed: bool = False) -> None:
        from store.context_series import latest_key, series

        app: Any = self.app
        store = app.store
        version = app.data_version()
        if only_if_changed and version == self._version:
            return
        key = latest_key(store)
        self.post_message(_Read(series(store, key.session_id, key.agent) if key else None,
                                version))

    @on(_Read)
    def _show(self, message: _Read) -> None:
        message.stop()
        self._version = message.version
        s = message.series
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
