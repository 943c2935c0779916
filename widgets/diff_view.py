"""A line diff of two stored texts (a memory as it is, the text a proposal would write),
made with ``difflib`` and shown safely.

``diff_lines`` is the unified diff as plain lines (what tests compare); ``DiffView`` renders it
with the theme's colours: removed lines on ``$error``, added on ``$success``, hunk headers
dimmed, and inside a changed line the words that changed in bold. Both texts are data: control
characters are made visible and markup is never read.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from store import visible

CONTEXT = 2
MAX_LINES = 400  # a diff longer than this is cut, with a line saying how much was left out


def diff_lines(old: str, new: str, old_label: str = "memory", new_label: str = "candidate",
               context: int = CONTEXT) -> list[str]:
    """The unified diff of ``old`` → ``new`` (labels in the ``---`` / ``+++`` header); an
    empty list when they are the same."""
    return [line.rstrip("\n") for line in difflib.unified_diff(
        old.splitlines(), new.splitlines(), old_label, new_label, n=context, lineterm="")]


def _words(line: str) -> list[str]:
    out: list[str] = []
    word = ""
    for ch in line:
        if ch.isspace():
            if word:
                out.append(word)
                word = ""
            out.append(ch)
        else:
            word += ch
    if word:
        out.append(word)
    return out


def _changed_line(line: str, other: str, base: Style, strong: Style) -> Text:
    """``line`` (without its +/- mark) with the words not in ``other`` in ``strong``."""
    a, b = _words(other), _words(line)
    out = Text(end="")
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        piece = visible("".join(b[j1:j2]))
        out.append(piece, style=base if tag == "equal" else base + strong)
    return out


def render_diff(lines: Sequence[str], added: Style, removed: Style, hunk: Style,
                limit: int = MAX_LINES) -> Text:
    """Styled text of a unified diff; a run of removed lines followed by as many added lines
    is compared word by word."""
    out = Text(end="")
    strong = Style(bold=True, underline=True)
    shown = list(lines[:limit])
    i = 0
    while i < len(shown):
        line = shown[i]
        if line.startswith(("---", "+++")) and i < 2:
            out.append(visible(line) + "\n", style=hunk + Style(bold=True))
            i += 1
            continue
        if line.startswith("@@"):
            out.append(visible(line) + "\n", style=hunk)
            i += 1
            continue
        if line.startswith("-"):
            j = i
            while j < len(shown) and shown[j].startswith("-"):
                j += 1
            k = j
            while k < len(shown) and shown[k].startswith("+"):
                k += 1
            minus, plus = shown[i:j], shown[j:k]
            paired = len(minus) == len(plus)
            for n, m in enumerate(minus):
                out.append("-", style=removed)
                out.append(_changed_line(m[1:], plus[n][1:], removed, strong) if paired
                           else Text(visible(m[1:]), style=removed))
                out.append("\n")
            for n, p in enumerate(plus):
                out.append("+", style=added)
                out.append(_changed_line(p[1:], minus[n][1:], added, strong) if paired
                           else Text(visible(p[1:]), style=added))
                out.append("\n")
            i = k
            continue
        if line.startswith("+"):
            out.append(visible(line) + "\n", style=added)
        else:
            out.append(visible(line) + "\n")
        i += 1
    if len(lines) > limit:
        out.append(f"… {len(lines) - limit:,} more diff lines not shown\n", style=hunk)
    out.rstrip()
    return out


class DiffView(Static):
    """A unified diff of two texts, coloured from the theme (``show(old, new)``)."""

    COMPONENT_CLASSES = {"diff--added", "diff--removed", "diff--hunk"}
    DEFAULT_CSS = """
    DiffView { height: auto; padding: 0 1; }
    DiffView > .diff--added { color: $text-success; background: $success-muted; }
    DiffView > .diff--removed { color: $text-error; background: $error-muted; }
    DiffView > .diff--hunk { color: $text-muted; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", markup=False, **kwargs)  # type: ignore[arg-type]
        self.lines: list[str] = []

    def show(self, old: str, new: str, old_label: str = "memory",
             new_label: str = "candidate") -> None:
        """Show the diff of ``old`` → ``new`` (a line saying so when they are the same)."""
        self.lines = diff_lines(old, new, old_label, new_label)
        if not self.lines:
            self.update(Text("no difference: the candidate's text is the memory's",
                             style="italic", end=""))
            return
        self.update(render_diff(self.lines, self.get_component_rich_style("diff--added"),
                                self.get_component_rich_style("diff--removed"),
                                self.get_component_rich_style("diff--hunk")))

    def show_note(self, note: str) -> None:
        """Say why there is no diff (secret text, a memory that is gone)."""
        self.lines = []
        self.update(Text(note, style="italic", end=""))
