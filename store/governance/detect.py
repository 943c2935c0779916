"""What a session states plainly, found without a language model (DESIGN "The consolidation
pass"): explicit requests to remember something, corrections of the assistant's previous turn,
and compaction summaries. Pure functions over stored entries; ``consolidate`` turns what they
find into proposals.

Precision matters as much as recall: a turn that merely contains "remember" or "never" in
passing ("I can't remember why", "it never worked") is not a request. A request is an
imperative at the start of a sentence; a correction is a user turn that answers an assistant
turn and opens by rejecting it, or the harness's own interruption marker.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol


class EntryLike(Protocol):
    """A stored entry (``store.core.models.Entry`` or ``records.EntryInfo``)."""

    @property
    def id(self) -> int | None: ...
    @property
    def session_id(self) -> str: ...
    @property
    def agent(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def tool_name(self) -> str | None: ...


@dataclass(frozen=True)
class Found:
    """One thing worth proposing: ``kind`` is ``request``, ``correction`` or ``handoff``."""

    kind: str
    type: str  # the memory type proposed: feedback, user, handoff
    content: str
    rationale: str
    evidence: tuple[tuple[int | None, int, int], ...]  # (entry id, span)
    meta: dict[str, object] = field(default_factory=dict)


# Harness text that sits in user lines but was not typed as an instruction.
_HARNESS = re.compile(r"^\s*<(command-name|command-message|local-command-[\w-]+|"
                      r"system-reminder|user-prompt-submit-hook)\b")
_INTERRUPT = re.compile(r"^\s*\[Request interrupted by user(?: for tool use)?\]\s*$")

# Sentence openers that may precede an imperative: "please", "and", "ok," ...
_LEAD = r"(?:(?:ok(?:ay)?|so|and|also|please|oh|btw|note)[,:]?\s+)*"
_REQUEST = re.compile(
    r"^" + _LEAD + r"(?P<cue>"
    r"remember(?:\s+that\b|\s+to\b|\s*:)"
    r"|(?:from now on|going forward)\b|in (?:the )?future\s*[,:]"
    r"|always\s+(?!been\b|was\b|is\b|has\b|had\b)[a-z]"
    r"|never\s+(?!mind\b|been\b|was\b|is\b|has\b|had\b|did\b|worked\b|works\b)[a-z]"
    r"|(?:don'?t|do not) ever\b"
    r"|i (?:always |really )?prefer\b|i'?d prefer\b|i would prefer\b"
    r"|make sure (?:to )?(?:always|never)\b"
    r")",
    re.IGNORECASE,
)
# A question is not an instruction ("do you remember ...?", "always?", "... what do you
# think"), even without its question mark.
_QUESTION = re.compile(r"\?\s*$|\b(?:what do you think|do you think|what about|should we|"
                       r"shall we|could we|wdyt|any thoughts)\b", re.IGNORECASE)

# A turn that opens by rejecting ("no, …", "nope", "actually, …") — weak on its own: "No,
# thanks, that's perfect" and "Actually, that looks great" approve. "stop" / "undo" /
# "revert" reject only when aimed at what the assistant did ("stop.", "revert that",
# "undo your change"); "Stop the dev server", "Revert the version bump" are instructions.
_OPENER = re.compile(
    r"^" + _LEAD + r"(?:"
    r"no[,.!:]\s|no\s+(?:that|this|it|you|don'?t|do not|not|wait|stop|use)\b|nope\b"
    r"|actually[,\s]|don'?t do that\b"
    r"|(?:stop|undo|revert)(?:\s*[.!,:;]|\s*$|\s+(?:it|that|this|those|these|doing|changing|"
    r"touching|what you|your|everything you)\b)"
    r")",
    re.IGNORECASE,
)
# Cues that reject whatever else the turn says.
_STRONG = re.compile(
    r"^" + _LEAD + r"(?:wrong\b|incorrect\b|not what i\b|that'?s not it\b)"
    r"|\b(?:that|this|it)(?:'s| is| was) (?:wrong|not (?:right|correct|what)|incorrect)\b"
    r"|\bnot what i (?:asked|wanted|meant|said)\b"
    r"|\b(?:still|again) (?:does ?n[o']t|doesn'?t|is ?n[o']t|isn'?t|fails?|broken|not working)\b"
    r"|\b(?:does ?n[o']t|doesn'?t|did ?n[o']t|didn'?t) work\b"
    r"|\buse \S+(?: \S+){0,3},? not \S+"
    r"|\b(?:you (?:broke|deleted|removed|forgot)|that broke)\b",
    re.IGNORECASE,
)
# Approval: with it, a weak opener is not a correction ("no, thanks", "actually, great").
_APPROVAL = re.compile(
    r"\b(?:no,? (?:thanks|thank you|worries|problem|need)|perfect|looks? (?:great|good|fine)|"
    r"lgtm|ship it|well done|nice|awesome|exactly|that works|works now|great)\b",
    re.IGNORECASE)


def is_correction_text(text: str) -> bool:
    """Whether a user turn's text rejects what came before it (see ``_OPENER``)."""
    if _STRONG.search(text):
        return True
    return bool(_OPENER.search(text)) and not _APPROVAL.search(text)

# A sentence ends at . ! ? followed by white space or the end of the text ("Node 18.17",
# "settings.py", ".env" go on), or at a line break; not after an abbreviation ("e.g.").
_END = re.compile(r"[.!?]+(?=\s|$)|\n")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|vs|cf|approx|resp|incl|esp)\.$", re.IGNORECASE)
_CHARS = 600


def _sentences(text: str) -> Iterable[tuple[int, int, str]]:
    start = 0
    bounds = []
    for m in _END.finditer(text):
        if m.group() != "\n" and _ABBREV.search(text[start:m.end()]):
            continue
        bounds.append((start, m.end()))
        start = m.end()
    bounds.append((start, len(text)))
    for a, b in bounds:
        s = text[a:b]
        lead = len(s) - len(s.lstrip())
        body = s.strip()
        if body:
            yield a + lead, a + lead + len(body), body


def _excerpt(text: str, limit: int = 160) -> str:
    one = " ".join(text.split())
    if len(one) <= limit:
        return one
    cut = one[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def is_typed_turn(entry: EntryLike) -> bool:
    """A user turn the person typed (not harness text, not a worker's prompt)."""
    return (entry.kind == "user" and entry.agent == "main"
            and not _HARNESS.match(entry.content) and bool(entry.content.strip()))


def requests(entry: EntryLike) -> list[Found]:
    """Explicit requests in one typed user turn: one proposal per request sentence."""
    if not is_typed_turn(entry) or _INTERRUPT.match(entry.content):
        return []
    found = []
    for start, end, sentence in _sentences(entry.content):
        m = _REQUEST.match(sentence)
        if not m or _QUESTION.search(sentence):
            continue
        cue = m.group("cue").lower()
        mtype = "user" if "prefer" in cue else "feedback"
        text = sentence[:_CHARS]
        found.append(Found(
            "request", mtype, text,
            f"explicit request in a user turn (“{cue.strip()}”)",
            ((entry.id, start, end),), {"cue": cue.strip(), "session": entry.session_id,
                                        "seq": entry.seq}))
    return found


def _previous_action(history: Sequence[EntryLike], prefer_text: bool = False
                     ) -> EntryLike | None:
    """The latest assistant turn or tool call of the main agent since the person's last
    turn. ``prefer_text``: the assistant's latest text in that stretch when it has one (a
    correction answers what the assistant said it did, not the last command it happened to
    run); an interruption stops the tool call in flight, so it takes the latest action."""
    fallback = None
    for e in reversed(history):
        if e.agent != "main":
            continue
        if e.kind == "assistant" or (e.kind == "tool_call" and not prefer_text):
            return e
        if e.kind == "tool_call" and fallback is None:
            fallback = e
        if is_typed_turn(e) and not _INTERRUPT.match(e.content):
            break  # the previous turn was the person's own
    return fallback


_TOOL_KEYS = ("description", "command", "file_path", "notebook_path", "path", "pattern", "url",
              "query", "prompt", "subject")


def describe(entry: EntryLike) -> str:
    """A short human description of an assistant turn or tool call ("Bash (Check Phoenix
    startup output)"), never the raw tool JSON."""
    if entry.kind != "tool_call":
        return _excerpt(entry.content).rstrip(".")
    name = entry.tool_name or "a tool"
    try:
        data = json.loads(entry.content)
    except ValueError:
        data = None
    if isinstance(data, dict):
        for key in _TOOL_KEYS:
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return f"{name} ({_excerpt(value, 100)})"
        return f"a {name} call"
    return f"{name} ({_excerpt(entry.content, 100)})"


def correction(entry: EntryLike, history: Sequence[EntryLike]) -> Found | None:
    """A user turn correcting the assistant's previous turn, with both turns as evidence."""
    if not is_typed_turn(entry):
        return None
    interrupted = bool(_INTERRUPT.match(entry.content))
    if not interrupted and not is_correction_text(entry.content):
        return None
    prev = _previous_action(history, prefer_text=not interrupted)
    if prev is None:
        return None
    what = describe(prev)
    if interrupted:
        content = (f"The user interrupted the assistant's action: {what}. Do not repeat it "
                   "without asking.")
        rationale = "the user interrupted what the assistant was doing"
    else:
        content = (f"Correction from the user after the assistant's turn ({what}): "
                   f"{_excerpt(entry.content, _CHARS)}")
        rationale = "a user turn that corrects the assistant's previous turn"
    return Found("correction", "feedback", content, rationale,
                 ((prev.id, 0, len(prev.content)), (entry.id, 0, len(entry.content))),
                 {"session": entry.session_id, "seq": entry.seq, "corrects_seq": prev.seq,
                  "interrupt": interrupted})


def handoff(entry: EntryLike) -> Found | None:
    """A compaction summary (the text that carries the session past the compaction)."""
    if entry.kind != "compaction" or len(entry.content.strip()) < 40:
        return None
    return Found("handoff", "handoff", entry.content[:20000],
                 "compaction summary: what carries the session past the compaction",
                 ((entry.id, 0, len(entry.content)),),
                 {"session": entry.session_id, "seq": entry.seq})


def scan(entries: Sequence[EntryLike], history: Sequence[EntryLike] = ()) -> list[Found]:
    """Everything worth proposing in ``entries`` (in order); ``history`` is what came before
    them in the same session, so a correction at the start of a pass sees its target."""
    found: list[Found] = []
    seen: list[EntryLike] = list(history)
    for e in entries:
        asked = requests(e)
        found.extend(asked)
        c = None if asked else correction(e, seen)  # "No, from now on …" is one request
        if c:
            found.append(c)
        h = handoff(e)
        if h:
            found.append(h)
        seen.append(e)
    return found
