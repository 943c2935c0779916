"""The events of one context series in time order — compactions (with their summary or
handoff and whether a checkpoint ran before), prune events (whether what left was preserved
and verified first), handoffs — with the ones that lost continuity standing out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static

from store import Series
from store import one_line
from widgets.fmt import NO_CHECKPOINT_FIX, NO_CHECKPOINT_WHY, plural, when

NO_CHECKPOINT = "no checkpoint before this compaction"
NOT_PRESERVED = "not preserved before pruning"


def _t(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _yes(v: bool | None) -> str:
    return "unknown" if v is None else "yes" if v else "no"


class PressureEvents(Static, can_focus=True):
    """Compactions, prunes and handoffs of a series; ✗ marks the ones to look at. Focused, up
    and down pick an event and enter opens it (a compaction's summary, a prune's entries)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"pressure-events--bad", "pressure-events--good",
                                             "pressure-events--detail",
                                             "pressure-events--cursor"}
    DEFAULT_CSS = """
    PressureEvents { height: auto; }
    PressureEvents > .pressure-events--bad { color: $error; text-style: bold; }
    PressureEvents > .pressure-events--good { color: $success; }
    PressureEvents > .pressure-events--detail { color: $text-muted; }
    PressureEvents > .pressure-events--cursor { background: $boost; }
    PressureEvents:focus > .pressure-events--cursor { background: $block-cursor-background 40%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Previous event", show=False, id="events-previous"),
        Binding("down", "move(1)", "Next event", show=False, id="events-next"),
        Binding("enter", "open", "Open", id="events-open"),
    ]

    @dataclass
    class Opened(Message):
        """Enter on an event: ``kind`` is compaction, prune or handoff; ``ref`` its record."""

        kind: str
        ref: object

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", markup=False, **kwargs)  # type: ignore[arg-type]
        self.flagged = 0
        self.cursor = 0
        self._series: Series | None = None
        self._events: list[tuple[str, object]] = []

    def show(self, series: Series | None) -> None:
        self._series = series
        self.update(self.text_for(series))

    @property
    def events(self) -> list[tuple[str, object]]:
        """(kind, record) of each event shown, in order."""
        return self._events

    def action_move(self, step: int) -> None:
        if self._events:
            self.cursor = max(0, min(len(self._events) - 1, self.cursor + step))
            self.update(self.text_for(self._series))
            self._scroll_to_cursor()

    def action_open(self) -> None:
        if self._events:
            kind, ref = self._events[min(self.cursor, len(self._events) - 1)]
            self.post_message(self.Opened(kind, ref))

    def on_focus(self) -> None:
        self.update(self.text_for(self._series))

    def on_blur(self) -> None:
        self.update(self.text_for(self._series))

    def _scroll_to_cursor(self) -> None:
        """Bring the picked event into view in the scrolling pane around this widget."""
        plain = self.text_for(self._series).plain.split("\n")
        starts = [i for i, line in enumerate(plain) if line[:2] in ("✓ ", "✗ ", "· ")]
        if self.cursor < len(starts) and self.parent is not None:
            self.parent.scroll_to(y=starts[self.cursor], animate=False)  # type: ignore[attr-defined]

    def text_for(self, series: Series | None) -> Text:
        style = self.get_component_rich_style
        bad, good, detail = (style("pressure-events--bad"), style("pressure-events--good"),
                             style("pressure-events--detail"))
        rows: list[tuple[str, int, Text, str, object]] = []
        self.flagged = 0
        self._events = []
        if series is None:
            return Text("", end="")

        def verdict(ok: bool, head: str, passed: str, failed: str) -> Text:
            """``✓ head: passed`` or ``✗ head: failed`` (counted as flagged)."""
            self.flagged += not ok
            line = Text(end="")
            line.append("✓ " if ok else "✗ ", style=good if ok else bad)
            line.append(head)
            line.append(passed if ok else failed, style=good if ok else bad)
            return line

        for c in series.compactions:
            ok = c.checkpoint_before
            line = verdict(ok, f"{when(c.ts, with_seconds=True)}  compaction at "
                           f"{_t(c.pre_tokens)} tokens "
                           f"({one_line(c.trigger or 'trigger not recorded')}): ",
                           f"{c.checkpoint_what} ran before it", NO_CHECKPOINT)
            if not ok:
                line.append(f"\n    {NO_CHECKPOINT_WHY}\n    {NO_CHECKPOINT_FIX}",
                            style=detail)
            if c.summary_excerpt:
                at = (f"{c.summary_at[0][:8]}#{c.summary_at[1]}" if c.summary_at
                      else "its entry")
                line.append(f"\n    summary ({at}, enter opens it): ", style=detail)
                line.append(one_line(c.summary_excerpt, 72), style=detail)
            if c.handoff_written:
                # a fact of its own: a handoff is not a checkpoint (archive + index)
                line.append("\n    handoff written: ", style=detail)
                line.append(one_line(c.handoff_path or "path not recorded", 90), style=detail)
            if not c.summary_excerpt and not c.handoff_written:
                line.append("\n    no summary or handoff linked", style=detail)
            rows.append((c.ts, 0, line, "compaction", c))
        for p in series.prunes:
            ok = p.preserved_verified
            line = verdict(ok, f"{when(p.ts, with_seconds=True)}  prune {_t(p.tokens_before)} "
                           f"→ {_t(p.tokens_after)} tokens, "
                           f"{plural(p.entries_pruned, 'entry', 'entries')} left: ",
                           "preserved and verified first", NOT_PRESERVED)
            if not ok:
                line.append(f" (preserved: {_yes(p.preserved)}, verified: {_yes(p.verified)})",
                            style=detail)
            if p.entry_ids or p.refs:
                names = ", ".join(f"#{n}" for n in p.entry_seqs[:8])
                more = "…" if len(p.entry_seqs) > 8 else ""
                where = f"{p.session_id[:8]} " if names else ""
                line.append(f"\n    entries that left: {where}"
                            f"{names or 'none found in the store'}{more}", style=detail)
            rows.append((p.ts, 1, line, "prune", p))
        for h in series.handoffs:
            line = Text(f"· {when(h.ts, with_seconds=True)}  handoff {h.action}: ", end="")
            line.append(one_line(h.path or "path not recorded", 90), style=detail)
            rows.append((h.ts, 2, line, "handoff", h))
        for n, problem in enumerate(series.problems):
            rows.append(("\uffff", 3 + n, Text(f"! unreadable: {one_line(problem, 110)}",
                                               style=bad, end=""), "", None))
        if not rows:
            return Text("No compactions, prune events or handoffs in this series.",
                        style=detail, end="")
        rows.sort(key=lambda r: (r[0], r[1]))
        self._events = [(kind, ref) for _, _, _, kind, ref in rows if kind]
        self.cursor = min(self.cursor, max(0, len(self._events) - 1))
        picked = [i for i, r in enumerate(rows) if r[3]][self.cursor] if self._events else -1
        out = Text(end="")
        for i, (_, _, line, _, _) in enumerate(rows):
            if i:
                out.append("\n")
            if i == picked and self.has_focus:
                line = line.copy()
                line.stylize(style("pressure-events--cursor"))
            out.append(line)
        return out
