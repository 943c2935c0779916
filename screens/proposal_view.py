"""What the Proposals screen shows of one proposal, as Rich renderables built from the store's
records: its head line, the candidate, each check with its evidence (source spans quoted from
the transcript, the conflicting memory side by side), the approval choices, and — once
decided — the decision and the verification of the write.

``load_detail`` runs in a worker: it reads the proposal and the entries and memories its
checks point at, so rendering never touches the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from store import NotFound, plural
from store import EntryInfo
from store import MEMORY_MASK as MASK, CheckInfo, PassSummary, ProposalInfo, ProposalSummary
from store import one_line
from widgets.fmt import ago, when
from widgets.safe import join, safe_text

if TYPE_CHECKING:
    from store import Store

ORIGIN_LABEL = {"consolidation": "pass", "proposer": "proposer", "file": "file",
                "api": "harness", "cli": "cli", "mindstone-event": "event"}
ORIGIN_SAYS = {"consolidation": "the consolidation pass", "proposer": "the proposer command",
               "file": "a file in the bound memory directory", "api": "the harness (API)",
               "cli": "the propose command", "mindstone-event": "a harness approval event"}
CHECK_SHORT = {"duplicate": "dup", "contradiction": "contra", "source_support": "support",
               "budget": "budget", "procedure_risk": "risk", "verifier": "verifier"}
MARK = {"fail": "✗", "warn": "!", "pass": "✓"}
SIDE_CHARS = 1_200  # of each text in the side-by-side view
SPAN_CHARS = 240  # of a quoted source span
MAX_ENTRIES = 40  # entries read for one proposal's evidence


@dataclass
class MemoryText:
    """A memory a check names: its name, status and body (None when secret or gone)."""

    id: int
    name: str
    status: str | None
    body: str | None


@dataclass
class ProposalDetail:
    info: ProposalInfo
    entries: dict[int, EntryInfo] = field(default_factory=dict)
    memories: dict[int, MemoryText] = field(default_factory=dict)


def _entry_ids(info: ProposalInfo) -> list[int]:
    ids = [e.entry_id for e in info.evidence if e.entry_id is not None]
    support = info.check("source_support")
    if support is not None:
        ids += [s["entry_id"] for s in support.evidence.get("sentences", [])
                if isinstance(s.get("entry_id"), int)]
    return list(dict.fromkeys(ids))[:MAX_ENTRIES]


def _memory_ids(info: ProposalInfo) -> list[int]:
    ids: list[int] = []
    contra = info.check("contradiction")
    if contra is not None:
        ids += [int(c["memory_id"]) for c in contra.evidence.get("conflicts", [])]
    return list(dict.fromkeys(ids))


def load_detail(store: Store, proposal_id: int) -> ProposalDetail:
    """The proposal and what its evidence and checks point at (in a worker)."""
    info = store.proposal(proposal_id)
    detail = ProposalDetail(info)
    for eid in _entry_ids(info):
        try:
            detail.entries[eid] = store.entry(eid)
        except NotFound:
            continue
    for mid in _memory_ids(info):
        try:
            m = store.memory(mid)
        except NotFound:
            detail.memories[mid] = MemoryText(mid, f"memory {mid}", None, None)
            continue
        detail.memories[mid] = MemoryText(m.id, m.name, m.status,
                                          None if m.sensitivity == "secret" else m.body)
    return detail


# -- the queue ----------------------------------------------------------------------------
def checks_cell(summary: ProposalSummary, styles: dict[str, Style]) -> Text:
    """``✗contra !risk`` — the checks that did not pass (``all pass`` otherwise)."""
    bad = [c for c in summary.checks if c.result != "pass"]
    if not summary.checks:
        return Text("no checks", style="dim", end="")
    if not bad:
        return Text("all pass", style=styles["pass"], end="")
    out = Text(end="")
    for i, c in enumerate(sorted(bad, key=lambda c: c.result != "fail")):
        if i:
            out.append(" ")
        out.append(MARK[c.result] + CHECK_SHORT.get(c.kind, c.kind), style=styles[c.result])
    return out


def op_label(summary: ProposalSummary) -> str:
    return summary.shown_op or f"({summary.kind or 'event'})"


def target_label(summary: ProposalSummary) -> str:
    return ", ".join(f"#{t}" for t in summary.shown_targets) or "-"


# -- the detail ---------------------------------------------------------------------------
def head_text(info: ProposalInfo, now: datetime) -> Text:
    s = info.summary
    out = join([Text(f"proposal {s.id}", style="bold"), Text(f"{op_label(s)} {s.type or ''}"
                                                             .strip(), style="bold"),
                Text(s.status.upper() if s.status in ("failed", "rejected") else s.status,
                     style="bold" if s.status != "applied" else ""),
                f"from {ORIGIN_SAYS.get(s.origin, s.origin)}",
                f"{when(s.created)} ({ago(s.created, now)})"])
    out.append("\n")
    out.append(safe_text(s.name or "(no name)", style="bold"))
    if s.proposer:
        out.append(safe_text(f"  proposed by {s.proposer}", style="dim"))
    if info.targets:
        out.append("\ntarget: ", style="dim")
        out.append(join([safe_text(f"#{t.memory_id} {one_line(t.name or '?', 40)} "
                                   f"({t.status or 'gone'})"
                                   + (" — CHANGED since proposed" if t.changed_since else ""))
                         for t in info.targets]))
    if info.revision:
        rechecked = info.revision - len(info.edits)  # checks run again with no edit
        again = f", checks run again {rechecked}×" if rechecked > 0 else ""
        out.append(f"\nrevision {info.revision} (edited {len(info.edits)}×{again})",
                   style="dim")
    return out


def outcome_text(info: ProposalInfo, styles: dict[str, Style]) -> Text | None:
    """The decision and, once applied, the verification step by step (None while pending)."""
    if info.status == "pending" and not info.decisions:
        return None
    out = Text(end="")
    for d in info.decisions:
        line = f"{when(d.ts, with_seconds=True)}  {d.actor}: {d.decision}"
        if d.as_op:
            line += f" as {d.as_op}"
        if d.policy:
            line += f" (policy {d.policy})"
        if d.connector:
            line += f" via {d.connector}"
        out.append(safe_text(line))
        if d.reason:
            out.append(safe_text(f" — {one_line(d.reason, 200)}", style="dim"))
        out.append("\n")
    said = {d.reason for d in info.decisions if d.decision == info.status}
    if info.status_reason and info.status in ("failed", "rejected") \
            and info.status_reason not in said:  # a rejection's reason is said once
        out.append(f"{info.status}: ", style=styles["fail"])
        out.append(safe_text(info.status_reason))
        out.append("\n")
    if info.memory_id is not None:
        out.append(f"wrote memory #{info.memory_id}\n")
    if info.verification:
        ok = bool(info.verified)
        out.append("verified: the write landed\n" if ok else "VERIFICATION FAILED\n",
                   style=styles["pass" if ok else "fail"] + Style(bold=True))
        for step in info.verification.get("steps", []):
            good = bool(step.get("ok"))
            out.append(f"  {MARK['pass' if good else 'fail']} ", style=styles["pass" if good
                                                                            else "fail"])
            out.append(safe_text(f"{step.get('step')}: {one_line(str(step.get('detail')), 200)}"))
            out.append("\n")
    out.rstrip()
    return out


def candidate_text(info: ProposalInfo) -> Text:
    md = info.metadata
    facts = [f"{k} {', '.join(map(str, v)) if isinstance(v, list) else v}"
             for k, v in md.items() if k not in ("name", "description", "invariant")
             and v not in (None, "", [])]
    out = Text(end="")
    if md.get("description"):
        out.append(safe_text(f"{md['description']}\n", style="italic"))
    if facts:
        out.append(safe_text(" · ".join(facts) + "\n", style="dim"))
    if md.get("invariant"):
        out.append("invariant: ", style="bold")
        out.append(safe_text(f"{md['invariant']}\n"))
    if info.content is None:
        out.append("no content: " + ("history from a harness event" if info.summary.op is None
                                     else f"a {info.summary.op} writes no new text"),
                   style="italic")
    elif info.masked:
        out.append(MASK + " (a secret candidate: its text is not shown)", style="italic")
    else:
        out.append(safe_text(info.content))
    if info.rationale:
        out.append("\nrationale: ", style="dim")
        out.append(safe_text(info.rationale, style="dim"))
    return out


def diff_sides(info: ProposalInfo) -> tuple[str, str, str] | str | None:
    """(the target's text, the candidate's, the target's label) for a diff; a note when it
    cannot be shown; None when the proposal changes no memory's text."""
    s = info.summary
    if s.op not in ("revise", "supersede", "merge") or not info.targets:
        return None
    if info.masked or info.content is None:
        return "secret text: no diff is shown"
    target = info.targets[0]
    body = target.body if target.body is not None else target.proposed_body
    if body is None:
        return f"memory {target.memory_id} is gone: nothing to compare with"
    return body, info.content, f"memory #{target.memory_id}"


def _quote(entry: EntryInfo | None, span: Any, file: str | None = None) -> Text:
    """``e88b7591#14 [12:80] «…»``: a span quoted from its transcript entry."""
    if entry is None:
        return safe_text(f"file {file}" if file else "(the entry is gone)", style="dim")
    where = f"{entry.session_id[:8]}#{entry.seq}"
    body = entry.content
    if isinstance(span, (list, tuple)) and len(span) == 2:
        where += f" [{span[0]}:{span[1]}]"
        body = body[int(span[0]):int(span[1])]
    out = Text(where + " ", style="dim", end="")
    out.append(safe_text("«" + one_line(body, SPAN_CHARS) + "»"))
    return out


def _highlight(text: str, sentence: str | None, style: Style) -> Text:
    shown = text if len(text) <= SIDE_CHARS else text[:SIDE_CHARS] + "…"
    out = safe_text(shown)
    if sentence:
        at = shown.find(sentence)
        if at >= 0:
            out = Text(end="")
            out.append(safe_text(shown[:at]))
            out.append(safe_text(sentence, style=style))
            out.append(safe_text(shown[at + len(sentence):]))
    return out


def _contradiction(check: CheckInfo, detail: ProposalDetail, styles: dict[str, Style]
                   ) -> list[RenderableType]:
    out: list[RenderableType] = []
    info = detail.info
    strong = styles["fail"] + Style(bold=True)
    for c in check.evidence.get("conflicts", []):
        mid = int(c["memory_id"])
        mem = detail.memories.get(mid)
        table = Table(expand=True, show_edge=False, pad_edge=False, box=None,
                      header_style="bold")
        table.add_column(f"candidate (proposal {info.id})", ratio=1)
        table.add_column(safe_text(f"memory #{mid} {one_line(c.get('name') or '', 40)}"),
                         ratio=1)
        if info.masked or info.content is None:
            left = Text(MASK, style="italic")
        else:
            left = _highlight(info.content, c.get("candidate_sentence"), strong)
        if mem is None or mem.body is None:
            right = Text(MASK if mem is not None and mem.status else "(gone)", style="italic")
        else:
            right = _highlight(mem.body, c.get("memory_sentence"), strong)
        table.add_row(left, right)
        out.append(table)
        cues = [f"{q.get('kind')}: {q.get('candidate')!s} vs {q.get('memory')!s}"
                for q in c.get("cues", [])]
        out.append(safe_text(f"  differ in {'; '.join(cues) or '?'} (sentence cos "
                             f"{float(c.get('sentence_cos') or 0):.2f})", style="dim"))
    return out


def _support(check: CheckInfo, detail: ProposalDetail, styles: dict[str, Style]
             ) -> list[RenderableType]:
    out: list[RenderableType] = []
    for s in check.evidence.get("sentences", []):
        line = Text(end="")
        if s.get("inference"):
            line.append("  inference ", style=styles["warn"] + Style(bold=True))
        else:
            line.append("  supported ", style=styles["pass"])
        line.append(safe_text(one_line(str(s.get("text")), 160)))
        out.append(line)
        if not s.get("inference") and (s.get("entry_id") or s.get("file")):
            quote = Text("      ← ", style="dim", end="")
            quote.append(_quote(detail.entries.get(s.get("entry_id") or -1), s.get("span"),
                                s.get("file")))
            out.append(quote)
    return out


def _evidence_lines(check: CheckInfo, detail: ProposalDetail, styles: dict[str, Style]
                    ) -> list[RenderableType]:
    ev = check.evidence
    if check.kind == "contradiction" and check.result != "pass":
        return _contradiction(check, detail, styles)
    if check.kind == "source_support":
        return _support(check, detail, styles)
    if check.kind == "duplicate" and check.result != "pass":
        threshold = float(ev.get("threshold") or 0)
        return [safe_text(f"  memory #{m['memory_id']} {one_line(m.get('name') or '', 50)}  "
                          f"cos {float(m['cos']):.3f}"
                          + (f" ≥ {threshold:.2f}" if float(m['cos']) >= threshold else ""),
                          style="" if float(m['cos']) >= threshold else "dim")
                for m in ev.get("matches", [])[:3]]
    if check.kind == "budget" and ev.get("promotion"):
        return [Text(f"  critical set now {int(ev.get('current', 0)):,} chars + "
                     f"{int(ev.get('adding', 0)):,} − {int(ev.get('removing', 0)):,} → "
                     f"{int(ev.get('after', 0)):,} of a {int(ev.get('budget', 0)):,}-char "
                     "budget", style="dim")]
    if check.kind == "verifier":
        lines: list[RenderableType] = [safe_text(f"  command: {ev.get('command', '?')}",
                                                 style="dim")]
        if ev.get("stdout"):
            lines.append(safe_text(f"  said: {one_line(str(ev['stdout']), 200)}", style="dim"))
        return lines
    return []


def checks_group(detail: ProposalDetail, styles: dict[str, Style]) -> Group:
    """Every check of the current revision: verdict, detail, then its evidence."""
    parts: list[RenderableType] = []
    checks = sorted(detail.info.checks, key=lambda c: ("fail", "warn", "pass").index(c.result))
    if not checks:
        parts.append(Text("no checks ran (history from a harness event)", style="italic"))
    for c in checks:
        line = Text(end="")
        line.append(f"{MARK[c.result]} {c.result.upper():<4} ", style=styles[c.result]
                    + Style(bold=True))
        line.append(f"{c.kind:<15}", style="bold")
        line.append(safe_text(c.detail))
        if c.suggestion:
            line.append(f" (suggests {c.suggestion})", style="dim")
        parts.append(line)
        parts.extend(_evidence_lines(c, detail, styles))
    for part in parts:
        if isinstance(part, Text):
            part.end = "\n"
    return Group(*parts)


def evidence_text(detail: ProposalDetail) -> Text:
    """The proposal's evidence pointers, each span quoted from its entry."""
    info = detail.info
    if not info.evidence:
        return Text("no evidence given: every sentence is an inference", style="italic",
                    end="")
    out = Text(end="")
    for i, e in enumerate(info.evidence):
        if i:
            out.append("\n")
        out.append(f"{i + 1}. ", style="bold")
        if e.entry_id is not None:
            out.append(_quote(detail.entries.get(e.entry_id), e.span))
        else:
            out.append(safe_text(f"file {e.file or '?'}"))
        if e.note:
            out.append(safe_text(f"  ({e.note})", style="dim"))
    return out


def options_text(info: ProposalInfo) -> Text:
    """What ``a`` offers: each way to approve, allowed or not, and why."""
    out = Text(end="")
    for i, o in enumerate(info.options):
        if i:
            out.append("\n")
        how = f"as {o.as_op}" if o.as_op else "as proposed"
        out.append(f"{how:<14}", style="bold" if o.allowed else "dim")
        state = ("allowed" + (", needs a reason" if o.needs_reason else "")) if o.allowed \
            else "not allowed"
        out.append(f"{state}: ", style="" if o.allowed else "dim")
        out.append(safe_text(o.why, style="" if o.allowed else "dim"))
    return out


def pass_line(last: PassSummary | None, now: datetime) -> Text:
    """The Overview's line: when the latest consolidation pass ran and what it found."""
    out = Text("Consolidation ", style="bold", end="")
    if last is None:
        out.append("no pass yet (c on screen 4, or `lca-tui consolidate`)",
                   style="dim")
        return out
    n = last.proposals
    found = ", ".join(f"{k} {v}" for k, v in sorted(last.found.items(), key=lambda kv: -kv[1]))
    where = ", ".join(f"{v} {k}" for k, v in sorted(last.statuses.items()))
    out.append(f"last pass {ago(last.ts, now)} · {plural(last.sessions, 'session')}, "
               f"{last.entries:,} entries → ")
    out.append(plural(n, "proposal"), style="bold")
    if n:
        out.append(f": {found} · {where}")
    if last.pending != last.statuses.get("pending", 0):
        out.append(f" · {last.pending} pending from all passes", style="dim")
    return out
