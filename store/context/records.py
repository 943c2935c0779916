"""The plain dataclasses of context pressure (LCA §4.5, §6.2), handed to the CLI and the app."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EVENTS = ("turn", "prune", "checkpoint", "compaction")
SEGMENTS = ("identity", "critical", "recalled", "conversation", "tool_output")


@dataclass(frozen=True)
class Snapshot:
    """How full one agent's live window was at one moment."""

    id: int
    session_id: str
    agent: str
    ts: str
    window_tokens: int | None
    used_tokens: int
    segments: dict[str, int] | None
    checkpoint_threshold: int | None
    auto_compact_threshold: int | None
    event: str
    source_entry_id: int | None
    message_id: str | None
    writer: str

    def to_json(self) -> dict[str, Any]:
        return {"ts": self.ts, "used_tokens": self.used_tokens, "event": self.event,
                "id": self.id, "window_tokens": self.window_tokens,
                "segments": self.segments, "source_entry_id": self.source_entry_id,
                "message_id": self.message_id}


@dataclass(frozen=True)
class PruneEvent:
    """What left the live window, and whether it was preserved and verified first."""

    id: int
    session_id: str
    agent: str
    ts: str
    tokens_before: int | None
    tokens_after: int | None
    entries_pruned: int
    preserved: bool | None
    verified: bool | None
    mode: str | None
    entry_ids: tuple[int, ...]
    refs: tuple[str, ...]
    source_entry_id: int | None
    entry_seqs: tuple[int, ...] = ()
    """The seqs (in this session) of the stored entries that left: how entries are named."""

    @property
    def preserved_verified(self) -> bool:
        return bool(self.preserved) and bool(self.verified)

    @property
    def tokens(self) -> int | None:
        if self.tokens_before is None or self.tokens_after is None:
            return None
        return self.tokens_before - self.tokens_after

    def to_json(self) -> dict[str, Any]:
        return {"ts": self.ts, "entries": self.entries_pruned, "tokens": self.tokens,
                "preserved_verified": self.preserved_verified, "id": self.id,
                "preserved": self.preserved, "verified": self.verified,
                "tokens_before": self.tokens_before, "tokens_after": self.tokens_after,
                "entry_ids": list(self.entry_ids), "entry_seqs": list(self.entry_seqs),
                "refs": list(self.refs)}


@dataclass(frozen=True)
class Handoff:
    """A handoff file written before (or replayed after) a compaction."""

    id: int
    session_id: str
    agent: str
    ts: str
    action: str
    path: str | None
    sha256: str | None
    token_estimate: int | None


@dataclass(frozen=True)
class Compaction:
    """A compaction of the live window: its size before, its summary or handoff, and whether
    a checkpoint ran between the previous turn and it (LCA Appendix D)."""

    id: int
    session_id: str
    agent: str
    ts: str
    pre_tokens: int | None
    trigger: str | None
    summary_entry_id: int | None
    summary_excerpt: str | None
    handoff_path: str | None
    checkpoint_before: bool
    checkpoint_what: str | None
    source_entry_id: int | None
    handoff_written: bool = False
    """A handoff was written for it (a fact of its own: a handoff is not a checkpoint)."""
    summary_at: tuple[str, int] | None = None
    """The summary entry as (session id, seq): how an entry is named everywhere."""

    def to_json(self) -> dict[str, Any]:
        return {"ts": self.ts, "pre_tokens": self.pre_tokens,
                "checkpoint_before": self.checkpoint_before, "id": self.id,
                "trigger": self.trigger, "summary_entry_id": self.summary_entry_id,
                "summary_seq": self.summary_at[1] if self.summary_at else None,
                "handoff_path": self.handoff_path, "handoff_written": self.handoff_written,
                "checkpoint": self.checkpoint_what}


@dataclass(frozen=True)
class CheckpointInfo:
    """A checkpoint: a ``checkpoint`` row, or a snapshot a harness marked ``checkpoint``."""

    origin: str
    id: int
    session_id: str | None
    agent: str | None
    ts: str
    trigger: str
    status: str
    entries_added: int
    memories_written: int
    chunks_embedded: int
    chunks_failed: int
    archive_verified: bool | None
    index_verified: bool | None
    used_tokens: int | None
    problems: tuple[str, ...] = ()
    """Stored values that could not be read (shown, not raised)."""

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["problems"] = list(self.problems)
        return out


@dataclass(frozen=True)
class SeriesKey:
    """One agent of one session that has snapshots."""

    session_id: str
    agent: str
    snapshots: int
    first_ts: str
    last_ts: str
    peak: int


@dataclass(frozen=True)
class Series:
    """One agent's context pressure over a session, thresholds resolved."""

    session_id: str
    agent: str
    window_tokens: int
    checkpoint_threshold: int
    auto_compact_threshold: int
    snapshots: tuple[Snapshot, ...]
    compactions: tuple[Compaction, ...] = ()
    prunes: tuple[PruneEvent, ...] = ()
    handoffs: tuple[Handoff, ...] = ()
    checkpoints: tuple[CheckpointInfo, ...] = ()
    settings_defaults: tuple[str, ...] = field(default=())
    problems: tuple[str, ...] = ()
    """Stored values of this series that could not be read (reported, not raised)."""

    @property
    def peak_used_tokens(self) -> int:
        return max((s.used_tokens for s in self.snapshots), default=0)

    @property
    def latest(self) -> Snapshot | None:
        return self.snapshots[-1] if self.snapshots else None

    @property
    def last_id(self) -> int:
        return max((s.id for s in self.snapshots), default=0)

    def to_json(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "agent": self.agent,
                "window_tokens": self.window_tokens,
                "peak_used_tokens": self.peak_used_tokens,
                "checkpoint_threshold": self.checkpoint_threshold,
                "auto_compact_threshold": self.auto_compact_threshold,
                "snapshots": [s.to_json() for s in self.snapshots],
                "compactions": [c.to_json() for c in self.compactions],
                "prunes": [p.to_json() for p in self.prunes],
                "handoffs": [h.__dict__ for h in self.handoffs],
                "checkpoints": [c.to_json() for c in self.checkpoints],
                "problems": list(self.problems)}


@dataclass(frozen=True)
class Tail:
    """What the live screen reads on a change: only the snapshots newer than the last seen,
    and those updated in place since (a higher ``revision``)."""

    series: Series
    added: tuple[Snapshot, ...]
    new_anywhere: tuple[Snapshot, ...]
    max_id: int
    rebuilt: bool
    updated: tuple[Snapshot, ...] = ()
    updated_anywhere: tuple[Snapshot, ...] = ()
    max_revision: int = 0
