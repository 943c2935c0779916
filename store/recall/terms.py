"""The six terms of resonance-weighted recall (LCA §5), as pure functions of a candidate's
stored facts and the cue, so each can be tested and explained on its own.

``R(m,c) = α·S + β·E + γ·T + δ·A + ε·Q − λ·K``; see DESIGN.md "Recall" and the docstrings
below for where this project's definitions are more specific than the paper's.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from datetime import datetime

from store.core.timeutil import parse_iso

TERMS = ("S", "E", "T", "A", "Q", "K")
WEIGHT_OF = {"S": "alpha", "E": "beta", "T": "gamma", "A": "delta", "Q": "epsilon",
             "K": "lambda"}
CHANNELS = ("private", "shared", "public")

# A for transcript entries, by kind. A user turn is the person's own word; a tool result is
# observed fact; the assistant's own turns (and its tool calls and reasoning) are its claims;
# summaries, compaction text, system lines and harness events are second-hand.
ENTRY_AUTHORITY = {"user": 0.6, "tool_result": 0.5, "assistant": 0.4, "tool_call": 0.4,
                   "reasoning": 0.4, "compaction": 0.3, "checkpoint": 0.3, "system": 0.3,
                   "event": 0.3}
APPROVED_MEMORY = 1.0
UNREVIEWED_MEMORY = 0.7


@dataclass
class Facts:
    """What the terms read about one candidate (an entry or a memory)."""

    source_type: str
    source_id: int
    kind: str | None = None
    ts: str | None = None
    project: str | None = None
    sensitivity: str = "public"  # a memory's, or an entry's (its session's by default)
    # memory only
    name: str | None = None
    status: str = "active"
    authority: str | None = None
    role: str | None = None
    projects: tuple[str, ...] = field(default_factory=tuple)
    hits: int = 0
    prevented: int = 0
    last_applied: str | None = None
    created: str | None = None
    half_life_days: float | None = None
    evergreen: bool = False
    valid_to: str | None = None
    superseded_by_id: int | None = None
    contradiction: bool = False


def similarity(cos: float | None, lex: float, w: float) -> float:
    """S = w·cos + (1−w)·lex; a chunk without a vector counts cos as 0."""
    return w * (cos or 0.0) + (1.0 - w) * lex


def experiential(hits: int, prevented: int) -> float:
    """E = min(1, ln(1 + hits + 3·prevented) / ln(51)); transcript entries have none (0)."""
    return min(1.0, math.log1p(max(0, hits) + 3 * max(0, prevented)) / math.log(51))


def reference_time(f: Facts) -> datetime | None:
    """The time T counts age from: last applied, else created, else the entry's timestamp."""
    for value in (f.last_applied, f.created, f.ts):
        dt = parse_iso(value)
        if dt is not None:
            return dt
    return None


def temporal(f: Facts, e: float, now: datetime, default_half_life: float) -> float:
    """T = 0.5 ^ (age / (half_life · (1 + 4·E))); evergreen → 1; no known time → 0.5."""
    if f.evergreen:
        return 1.0
    ref = reference_time(f)
    if ref is None:
        return 0.5
    age_days = max(0.0, (now - ref).total_seconds() / 86400.0)
    half_life = f.half_life_days if f.half_life_days and f.half_life_days > 0 \
        else default_half_life
    return float(0.5 ** (age_days / (half_life * (1.0 + 4.0 * e))))


def authority(f: Facts) -> float:
    """A: approved memory 1.0, any other memory 0.7; entries by kind (``ENTRY_AUTHORITY``)."""
    if f.source_type == "memory":
        return APPROVED_MEMORY if (f.authority or "").lower() == "approved" \
            else UNREVIEWED_MEMORY
    return ENTRY_AUTHORITY.get(f.kind or "", 0.3)


def same_project(a: str, b: str) -> bool:
    """Projects match when equal, or when one is a path whose last part is the other."""
    a, b = a.strip().rstrip("/").lower(), b.strip().rstrip("/").lower()
    if not a or not b:
        return False
    return a == b or os.path.basename(a) == b or os.path.basename(b) == a \
        or os.path.basename(a) == os.path.basename(b)


def _match(cue: str | None, have: tuple[str, ...], compare: bool = False) -> float | None:
    if not cue:
        return None
    if not have:
        return 0.5
    hit = any(same_project(cue, h) if compare else cue.strip().lower() == h.strip().lower()
              for h in have)
    return 1.0 if hit else 0.0


def task_relevance(f: Facts, role: str | None, project: str | None) -> float:
    """Q: per dimension the cue names (role, project), 1 when the candidate matches, 0.5 when
    it names none, 0 when it names another; Q is the mean over those dimensions, and 0.5 when
    the cue names neither. Memories have a role and projects; a transcript entry has only its
    session's project (no role: that dimension counts 0.5)."""
    if f.source_type == "memory":
        roles = (f.role,) if f.role else ()
        parts = [_match(role, roles), _match(project, f.projects, compare=True)]
    else:
        parts = [0.5 if role else None,
                 _match(project, (f.project,) if f.project else (), compare=True)]
    named = [p for p in parts if p is not None]
    return sum(named) / len(named) if named else 0.5


def risk(f: Facts, channel: str) -> tuple[float, list[str]]:
    """K (soft, capped at 1) and why: disputed 0.5; private in a shared channel 0.5; an
    unresolved contradiction flag 0.3 (a contradiction approved as keep-both flags both
    memories, ``memory_flag``, until one of them is superseded)."""
    k, why = 0.0, []
    if f.status == "disputed":
        k += 0.5
        why.append("disputed")
    if f.sensitivity == "private" and channel == "shared":
        k += 0.5
        why.append("private in a shared channel")
    if f.contradiction:
        k += 0.3
        why.append("unresolved contradiction")
    return min(1.0, k), why


def channel_denies(sensitivity: str, channel: str) -> bool:
    """The channel rule: secret is never served, private never into a public channel. The
    pool is filled after it (``pool.pool``) and ``hard_decision`` records it."""
    return sensitivity == "secret" or (sensitivity == "private" and channel == "public")


def hard_decision(f: Facts, channel: str, historical: bool, now: datetime
                  ) -> tuple[str, str] | None:
    """(decision, reason) for the rules that are not penalties, or None.

    Sensitivity is one channel rule for memories and transcript entries alike: secret is
    never injected (and its text is withheld from the trace), private never into a public
    channel; the other rules concern memories only."""
    noun = "memory" if f.source_type == "memory" else "entry"
    if channel_denies(f.sensitivity, channel):
        if f.sensitivity == "secret":
            return "policy_filtered", (f"secret {noun}: never injected, text withheld from "
                                       "the trace")
        return "policy_filtered", f"private {noun} in a public channel"
    if f.source_type != "memory":
        return None
    if f.status == "quarantined":
        return "policy_filtered", "quarantined memory: held back until reviewed"
    if not historical:
        if f.status == "superseded" or f.superseded_by_id is not None:
            by = f" by memory {f.superseded_by_id}" if f.superseded_by_id else ""
            return "superseded", f"superseded{by}; only a --historical recall may use it"
        valid_to = parse_iso(f.valid_to)
        if f.status == "expired" or (valid_to is not None and valid_to < now):
            return "superseded", (f"expired (valid to {f.valid_to or 'a past date'}); only a "
                                  "--historical recall may use it")
    return None


def score(terms: dict[str, float], weights: dict[str, float]) -> tuple[float, dict[str, float]]:
    """R and the weighted contribution of each term (K's contribution is negative)."""
    contributions = {}
    for t in TERMS:
        w = weights[WEIGHT_OF[t]]
        contributions[t] = -w * terms[t] if t == "K" else w * terms[t]
    return sum(contributions.values()), contributions
