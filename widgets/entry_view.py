"""A scrollable pane showing one transcript entry (or one search hit) verbatim and safely."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from store import EntryInfo, SearchHit, agent_label
from widgets.fmt import when
from widgets.safe import join, safe_text
from widgets.text_pane import TextPane

SECRET_MASK = "[secret entry: text withheld — press r to reveal it]"
_USAGE = (("input_tokens", "input"), ("cache_creation_input_tokens", "cache write"),
          ("cache_read_input_tokens", "cache read"), ("output_tokens", "output"))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def meta_line(meta: dict[str, Any]) -> Text | None:
    """What the entry's meta says that a reader wants: model and usage, compaction figures,
    the harness event's name. Values are stored text: shown literally."""
    parts: list[Text | str] = []
    if isinstance(meta.get("model"), str):
        parts.append(safe_text(f"model {meta['model']}"))
    usage = meta.get("usage")
    if isinstance(usage, dict):
        figures = [f"{label} {n:,}" for key, label in _USAGE
                   if (n := _int(usage.get(key))) is not None]
        if figures:
            parts.append("usage: " + ", ".join(figures))
    if (pre := _int(meta.get("preTokens"))) is not None:
        parts.append(f"tokens before compaction {pre:,}")
    if isinstance(meta.get("trigger"), str):
        parts.append(safe_text(f"trigger {meta['trigger']}"))
    if meta.get("summary") is True:
        parts.append("compaction summary")
    if isinstance(meta.get("event"), str):
        parts.append(safe_text(f"event {meta['event']}"))
    return join(parts) if parts else None


def entry_header(entry: EntryInfo) -> Text:
    """``#12 · 2026-01-26 14:03:12 · assistant · agent main · ~120 tokens · tool Bash`` (the
    time local, in the one format of ``widgets.fmt.when``). The source path is shown below by
    ``SourceLine``, shortened to the pane's width."""
    parts: list[Text | str] = [
        Text(f"#{entry.seq}", style="bold"),
        when(entry.ts, with_seconds=True) if entry.ts else "no time",
        Text(entry.kind, style="bold"),
        safe_text(f"agent {agent_label(entry.agent)}"),
        f"~{entry.tokens:,} tokens",
    ]
    if entry.tool_name:
        parts.append(safe_text(f"tool {entry.tool_name}"))
    if entry.sensitivity != "public":
        parts.append(Text(entry.sensitivity, style="bold"))
    out = join(parts)
    if (meta := meta_line(entry.meta)) is not None:
        out.append("\n")
        out.append(meta)
    return out


def source_of(entry: EntryInfo) -> str:
    """Where the entry was read from: ``path:line``, or "" when unknown."""
    if not entry.source_path:
        return ""
    return entry.source_path + (f":{entry.source_line}" if entry.source_line else "")


def fit_path(path: str, width: int) -> str:
    """``path`` in at most ``width`` cells when it can be: leading folders give way to
    ``…/`` a whole folder at a time; the file name (an id, a line number) is never cut."""
    if cell_len(path) <= width or "/" not in path:
        return path
    parts = path.split("/")
    for i in range(1, len(parts)):
        shown = "…/" + "/".join(parts[i:])
        if cell_len(shown) <= width:
            return shown
    return "…/" + parts[-1]


class SourceLine(Static):
    """``source PATH:LINE``, dimmed, on one line: shortened to fit at each width."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)
        self.where = ""

    def show(self, where: str) -> None:
        self.where = where
        self.display = bool(where)
        self.refresh(layout=True)

    def render(self) -> Text:
        width = max(8, self.content_region.width or self.size.width or 80)
        return safe_text(f"source {fit_path(self.where, width - len('source '))}",
                         style="dim")


def hit_header(hit: SearchHit) -> Text:
    """Where a search hit comes from and its scores."""
    if hit.source_type == "entry":
        where = safe_text(f"entry #{hit.seq} of session {hit.session_id or '?'} · "
                          f"{hit.kind or '?'} · agent {agent_label(hit.agent)}")
    else:
        where = safe_text(f"memory {hit.memory_name or hit.source_id}")
    scores = [f"score {hit.score:.3f}", "cos -" if hit.cos is None else f"cos {hit.cos:.3f}",
              "lex -" if hit.lex is None else f"lex {hit.lex:.3f}"]
    out = join([Text("search hit", style="bold"), where])
    out.append("\n")
    out.append(join(scores))
    if hit.source_type == "entry":
        out.append("\nenter opens this entry in its session", style="dim")
    else:
        out.append("\nenter opens this memory on the Memories screen", style="dim")
    return out


class EntryView(Vertical):
    """Header + the full verbatim text, scrollable; nothing in it is ever interpreted.

    The text goes to a ``TextPane``, which wraps long text off the main thread and draws only
    the lines in view, so highlighting a multi-megabyte entry never freezes the UI."""

    DEFAULT_CSS = """
    EntryView { height: 1fr; }
    EntryView > #entry-head { padding: 0 1; background: $boost; height: auto; max-height: 8; }
    EntryView > #entry-source { padding: 0 1; background: $boost; height: auto; }
    EntryView > #entry-content { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="entry-head", markup=False)
        yield SourceLine(id="entry-source")
        yield TextPane("", id="entry-content")

    def show_entry(self, entry: EntryInfo, revealed: bool = False) -> None:
        """Show an entry; a secret one's text is masked unless ``revealed``."""
        self.border_title = f"Entry #{entry.seq}"
        if entry.sensitivity == "secret" and not revealed:
            self._show(entry_header(entry), SECRET_MASK, source_of(entry))
            return
        self._show(entry_header(entry), entry.content or "", source_of(entry))

    def show_hit(self, hit: SearchHit) -> None:
        self.border_title = "Search hit"
        self._show(hit_header(hit), hit.text)

    def show_note(self, note: str) -> None:
        self.border_title = "Entry"
        self._show(Text(note, style="dim", end=""), "")

    def _show(self, head: Text, body: str, source: str = "") -> None:
        self.query_one("#entry-head", Static).update(head)
        self.query_one("#entry-source", SourceLine).show(source)
        self.query_one("#entry-content", TextPane).show(body)

    @property
    def content_text(self) -> str:
        """The stored text of the body being shown, complete (tests read it)."""
        return self.query_one("#entry-content", TextPane).text
