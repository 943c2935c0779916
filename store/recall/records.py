"""The records a recall hands out (``Trace``, its ``Candidate`` rows, the injected ``Item``):
plain dataclasses with no database import, so that a command answered by the daemon
(``lca-tui recall``) rebuilds them from the reply (``from_json``) without loading the store."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

EXCERPT_CHARS = 240
MASK = "[withheld]"


@dataclass
class Candidate:
    """One candidate of a recall with its terms, contributions, score and decision."""

    rank: int
    source_type: str
    source_id: int | None
    decision: str
    reason: str
    score: float | None = None
    terms: dict[str, float | None] = field(default_factory=dict)
    cos: float | None = None
    lex: float | None = None
    adj: float | None = None  # adjacent support (run.py): the best own S of its neighbours
    contributions: dict[str, float] = field(default_factory=dict)
    excerpt: str | None = None
    label: str | None = None
    masked: bool = False
    chunk_id: int | None = None
    session_id: str | None = None
    seq: int | None = None
    kind: str | None = None
    external_id: str | None = None
    hits: int | None = None
    prevented: int | None = None
    id: int | None = None
    feedback: tuple[str, ...] = ()
    harness: dict[str, Any] | None = None  # a harness's own figures (derived traces only)

    @property
    def pointer(self) -> str:
        """Where the item lives: ``memory 12`` or ``session abcd1234#17``."""
        if self.source_type == "memory":
            return f"memory {self.source_id}"
        if self.source_type == "entry" and self.session_id is not None:
            return f"{self.session_id[:8]}#{self.seq}"
        return f"{self.source_type} {self.external_id or self.source_id or ''}".strip()

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "source_type": self.source_type,
                "source_id": self.source_id, "session_id": self.session_id, "seq": self.seq,
                "kind": self.kind, "label": self.label, "text": self.excerpt,
                "masked": self.masked, "terms": dict(self.terms),
                "similarity": {"cos": self.cos, "lex": self.lex, "adjacent": self.adj},
                "contributions": dict(self.contributions), "score": self.score,
                "decision": self.decision, "reason": self.reason,
                "feedback": list(self.feedback), "harness": self.harness}


@dataclass
class Item:
    """An injected item handed to the agent, with its source pointer."""

    source_type: str
    source_id: int
    text: str
    score: float
    rank: int
    session_id: str | None = None
    seq: int | None = None
    label: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Trace:
    """One recall: the cue, the settings in force, timing, and every candidate."""

    id: int | None
    ts: str
    query: str
    role: str | None
    project: str | None
    channel: str
    historical: bool
    settings: dict[str, Any]
    latency_ms: float | None
    model: str | None
    degraded: bool
    origin: str = "lca-tui"
    entry_id: int | None = None
    rerun_of: int | None = None
    considered: int = 0
    injected: int = 0
    candidates: list[Candidate] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"trace_id": self.id, "ts": self.ts, "query": self.query, "role": self.role,
                "project": self.project, "channel": self.channel,
                "historical": self.historical, "latency_ms": self.latency_ms,
                "model": self.model, "degraded": self.degraded, "origin": self.origin,
                "entry_id": self.entry_id, "rerun_of": self.rerun_of,
                "considered": self.considered, "injected": self.injected,
                "settings": self.settings,
                "candidates": [c.to_json() for c in self.candidates]}




def trace_from_dict(data: dict[str, Any]) -> Trace:
    """A ``Trace`` from ``dataclasses.asdict(trace)`` (as the daemon sends it)."""
    names = {f.name for f in fields(Trace)}
    values = {k: v for k, v in data.items() if k in names}
    cand_names = {f.name for f in fields(Candidate)}
    values["candidates"] = [
        Candidate(**{**{k: v for k, v in c.items() if k in cand_names},
                     "feedback": tuple(c.get("feedback") or ())})
        for c in data.get("candidates") or []]
    return Trace(**values)


def term_text(value: float | None) -> str:
    """A score term (S E T A Q K) as the app and the CLI both show it: two decimals, the
    leading zero dropped (``.55``, ``1.00``, ``-.05``); empty when there is none."""
    if value is None:
        return ""
    text = f"{value:.2f}"
    return text.replace("0.", ".", 1) if text.lstrip("-").startswith("0.") else text
