"""The events of one context series in time order — compactions (with their summary or
handoff and whether a checkpoint ran before), prune events (whether what left was preserved
and verified first), handoffs — with the ones that lost continuity standing out."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widgets import Static

from store.context.records import Series
from store.core.textsafe import one_line
from widgets.fmt import when

NO_CHECKPOINT = "no checkpoint before this compaction"
NOT_PRESERVED = "not preserved before pruning"


def _t(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _yes(v: bool | None) -> str:
    return "unknown" if v is None else "yes" if v else "no"


class PressureEvents(Static):
    """Compactions, prunes and handoffs of a series; ✗ marks the ones to look at."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"pressure-events--bad", "pressure-events--good",
                                             "pressure-events--detail"}
    DEFAULT_CSS = """
    PressureEvents { height: auto; }
    PressureEvents > .pressure-events--bad { color: $error; text-style: bold; }
    PressureEvents > .pressure-events--good { color: $success; }
    PressureEvents > .pressure-events--detail { color: $text-muted; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", markup=False, **kwargs)  # type: ignore[arg-type]
        self.flagged = 0

    def show(self, series: Series | None) -> None:
        self.update(self.text_for(series))

    def text_for(self, series: Series | None) -> Text:
        style = self.get_component_rich_style
        bad, good, detail = (style("pressure-events--bad"), style("pressure-events--good"),
                             style("pressure-events--detail"))
        rows: list[tuple[str, int, Text]] = []
        self.flagged = 0
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
            if c.summary_excerpt:
                line.append(f"\n    summary (entry {c.summary_entry_id}): ", style=detail)
                line.append(one_line(c.summary_excerpt, 72), style=detail)
            if c.handoff_written:
                # a fact of its own: a handoff is not a checkpoint (archive + index)
                line.append("\n    handoff written: ", style=detail)
                line.append(one_line(c.handoff_path or "path not recorded", 90), style=detail)
            if not c.summary_excerpt and not c.handoff_written:
                line.append("\n    no summary or handoff linked", style=detail)
            rows.append((c.ts, 0, line))
        for p in series.prunes:
            ok = p.preserved_verified
            line = verdict(ok, f"{when(p.ts, with_seconds=True)}  prune {_t(p.tokens_before)} "
                           f"→ {_t(p.tokens_after)} tokens, {p.entries_pruned} entries left: ",
                           "preserved and verified first", NOT_PRESERVED)
            if not ok:
                line.append(f" (preserved: {_yes(p.preserved)}, verified: {_yes(p.verified)})",
                            style=detail)
            if p.entry_ids or p.refs:
                ids = ", ".join(str(i) for i in p.entry_ids[:8])
                more = "…" if len(p.entry_ids) > 8 else ""
                line.append(f"\n    entries that left: {ids or 'none found in the store'}"
                            f"{more}", style=detail)
            rows.append((p.ts, 1, line))
        for h in series.handoffs:
            line = Text(f"· {when(h.ts, with_seconds=True)}  handoff {h.action}: ", end="")
            line.append(one_line(h.path or "path not recorded", 90), style=detail)
            rows.append((h.ts, 2, line))
        for n, problem in enumerate(series.problems):
            rows.append(("\uffff", 3 + n, Text(f"! unreadable: {one_line(problem, 110)}",
                                               style=bad, end="")))
        if not rows:
            return Text("No compactions, prune events or handoffs in this series.",
                        style=detail, end="")
        rows.sort(key=lambda r: (r[0], r[1]))
        out = Text(end="")
        for i, (_, _, line) in enumerate(rows):
            if i:
                out.append("\n")
            out.append(line)
        return out
