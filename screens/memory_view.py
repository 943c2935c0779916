"""What the Memories screen shows of memories, as Rich text built from the store's records:
a table row, and one memory's metadata, load error, integrity problems, flags and body
(masked while secret, until revealed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.style import Style
from rich.text import Text

from store import MEMORY_MASK as MASK
from store import IntegrityProblem, MemoryDetail, MemoryRow, loading_line, one_line
from widgets.fmt import when
from widgets.safe import cell, join, safe_text

SECRET_NOTE = "[secret: its text is withheld — press r to reveal it]"


def flags_cell(row: MemoryRow, problems: dict[int, list[IntegrityProblem]]) -> Text:
    """``⚠`` for an integrity problem, ``⚑`` for an unresolved contradiction flag."""
    out = Text(end="")
    if problems.get(row.id):
        out.append("⚠", style="bold")
    if row.flagged:
        out.append("⚑", style="bold")
    return out


def text_cell(row: MemoryRow, width: int) -> Text:
    """``Name — the body's start`` (the body withheld when secret)."""
    out = Text(one_line(row.name, width), style="bold", no_wrap=True, overflow="ellipsis",
               end="")
    room = width - len(out.plain) - 3
    if room > 4:
        out.append(" — ", style="dim")
        body = "[secret]" if row.masked or row.text is None else (row.description or row.text)
        out.append(cell(body, width=room, style="dim" if row.masked else ""))
    return out


def yes(flag: bool, word: str = "yes") -> str:
    return word if flag else ""


def shown_file(path: str, store_folder: Path | None) -> str:
    """A memory's file as shown: relative to the store's folder when it lies there (the demo's
    data, a memory directory kept beside the store), else as stored."""
    if store_folder is not None:
        try:
            return f"{Path(path).relative_to(store_folder.resolve())} (in the store's folder)"
        except ValueError:
            pass
    return path


def head_text(detail: MemoryDetail, store_folder: Path | None = None) -> Text:
    r = detail.row
    out = Text(end="")
    out.append(f"#{r.id} ", style="bold")
    out.append(safe_text(r.name, style="bold"))
    out.append("\n")
    out.append(join([r.type or "no type", Text(r.status, style="bold" if r.status != "active"
                                                else ""),
                     f"authority {r.authority}", f"sensitivity {r.sensitivity}",
                     "critical" if r.critical else "not critical",
                     "loadable" if r.loadable else Text("NOT loadable", style="bold")]))
    valid = f"valid {when(r.valid_from)[:16] if r.valid_from else '?'} → " \
            f"{when(r.valid_to)[:16] if r.valid_to else 'now'}"
    out.append("\n")
    out.append(join([valid, f"created {when(detail.created)}",
                     f"last applied {when(detail.last_applied)}",
                     f"hits {r.hits:,}", f"prevented {r.prevented:,}"], sep=" · "))
    facts = []
    if r.tags:
        facts.append(safe_text("tags " + ", ".join(r.tags)))
    if r.projects:
        facts.append(safe_text("projects " + ", ".join(r.projects)))
    if detail.role:
        facts.append(safe_text(f"role {detail.role}"))
    if facts:
        out.append("\n")
        out.append(join(facts))
    if r.source_file:
        out.append("\n")
        out.append(safe_text(f"file {shown_file(r.source_file, store_folder)}", style="dim"))
    if detail.loading:
        out.append("\n")
        out.append(loading_text(detail.loading))
    if r.description:
        out.append("\n")
        out.append(safe_text(r.description, style="italic"))
    return out


def loading_text(meta: dict[str, Any]) -> Text:
    """How Claude Code loads the memory (``loading_line``), bold when part of it never
    loads."""
    bad = meta.get("cut") or any(i.get("problem") for i in meta.get("imports", []))
    return safe_text(loading_line(meta), style="bold" if bad else "")


def problems_text(detail: MemoryDetail, error: Style) -> Text | None:
    """The load error, integrity problems and contradiction flags (None when there are none)."""
    out = Text(end="")
    if detail.load_error or not detail.row.loadable:
        out.append("⚠ the agent's loader cannot read it: ", style=error + Style(bold=True))
        out.append(safe_text(detail.load_error or "recorded as not loadable"))
        out.append("\n")
    for p in detail.problems:
        out.append(f"⚠ integrity ({p.kind.replace('_', ' ')}): ", style=error + Style(bold=True))
        out.append(safe_text(p.detail))
        out.append("\n")
    for f in detail.flags:
        state = f"resolved {when(f.resolved_at)}" if f.resolved_at else "unresolved"
        out.append(f"⚑ {f.kind} with #{f.other_id} ({state}", style="bold")
        out.append(f"; proposal {f.proposal_id})" if f.proposal_id else ")", style="bold")
        if f.reason:
            out.append(safe_text(f": {one_line(f.reason, 160)}"))
        out.append("\n")
    if detail.proposals:
        out.append(f"proposals that made or touched it: "
                   f"{', '.join(f'#{p}' for p in detail.proposals)} (p opens the latest)",
                   style="dim")
    out.rstrip()
    return out if out.plain else None


def body_text(detail: MemoryDetail, revealed: str | None) -> Text:
    """The invariant and the body; a secret's shown only once revealed."""
    out = Text(end="")
    secret = detail.row.masked
    if secret and revealed is None:
        out.append(SECRET_NOTE, style="italic")
        return out
    if secret:
        out.append("revealed (secret: r hides it again)\n", style="bold")
    if detail.invariant:
        out.append("invariant: ", style="bold")
        out.append(safe_text(detail.invariant))
        out.append("\n\n")
    body = revealed if secret else detail.body
    out.append(safe_text(body if body is not None else MASK))
    return out


def evidence_where(session_id: str | None, seq: int | None, file: str | None) -> str:
    if session_id is not None:
        return f"{session_id[:8]}#{seq}"
    return file.rsplit("/", 1)[-1] if file else "-"
