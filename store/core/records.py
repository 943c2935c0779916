"""Plain dataclasses the store hands out: no ORM session ever leaves ``store/``. The
``*_info`` functions build them from the SQLModel rows (``store.core.models``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from store.core.textsafe import storable

_R = TypeVar("_R")

if TYPE_CHECKING:
    from store.core.models import Entry, Memory


def loads(raw: str | None, default: Any) -> Any:
    """A JSON column's value; ``default`` when empty or not JSON (stored by hand, say)."""
    if not raw:
        return default
    try:
        return json.loads(raw)
    except ValueError:
        return default

# Agents a harness runs for itself, not workers a task was handed to: agent id prefix → what
# it is. Claude Code writes its compaction summariser and its prompt suggester as subagent
# transcripts (``subagents/agent-acompact-*.jsonl``, ``agent-aprompt_suggestion-*.jsonl``).
# Claude Code 2.0.x also starts a session with a "Warmup" sidechain (a ``Warmup`` prompt, in the
# main file or as a flat ``agent-*.jsonl``): the importer names it ``warmup-<id>``.
HELPER_ROLES = {"acompact-": "compaction summariser", "aprompt_suggestion-": "prompt suggester",
                "warmup-": "warmup sidechain"}
# The short form, for narrow table cells (9 wide: the Transcript's agent column).
HELPER_SHORT = {"compaction summariser": "compactor", "prompt suggester": "suggester",
                "warmup sidechain": "warmup"}
WARMUP_PREFIX = "warmup-"
# How ``import_skip`` names a content block left out of a line that was imported:
# ``block/<type>`` (every other row counts whole lines).
BLOCK_PREFIX = "block/"
# A worker written inline in its orchestrator's transcript without an id of its own (Claude
# Code 1.0.x sidechains) is named from its first line: ``sidechain-<8 hex>``.
SIDECHAIN_PREFIX = "sidechain-"


def helper_role(agent: str | None) -> str | None:
    """What a harness's own helper agent is (``compaction summariser``), or None."""
    for prefix, role in HELPER_ROLES.items():
        if agent and agent.startswith(prefix):
            return role
    return None


def agent_label(agent: str | None, short: bool = False) -> str:
    """An agent as people read it: ``main``, a worker's id, or what a helper is
    (``compaction summariser (acompact-946d2b)``). ``short``, for cells 9 wide: ``compactor``,
    and an inline sidechain's id without its prefix (``c0ffee01``)."""
    role = helper_role(agent)
    if role is not None:
        return HELPER_SHORT[role] if short else f"{role} ({agent})"
    if short and agent and agent.startswith(SIDECHAIN_PREFIX) and len(agent) > len(
            SIDECHAIN_PREFIX):
        return agent[len(SIDECHAIN_PREFIX):]
    return agent or "?"


RecordKind = Literal["session", "series", "trace", "memory", "proposal"]
"""What a ``RecordRef`` names: a session (``at``: one of its entries' ``seq``), a session's
context series (``at``: the agent), a recall trace, a memory, a proposal."""

Subject = Literal["store", "session", "series", "trace", "proposal", "memory", "signal",
                  "erasure"]
"""What a part of the store is about, never the name of a screen: the store at a glance, a
``RecordKind``, the health signals, an erasure. A guided-tour step names one, so does a widget
asking to show more; the app maps it to the screen that shows it."""


@dataclass(frozen=True)
class RecordRef:
    """A record the store points at (a health row's source, a search hit): its kind and its
    id, never the name of a screen. ``at`` narrows it: the entry ``seq`` within a session,
    the agent of a session's context series."""

    kind: RecordKind
    id: int | str
    at: int | str | None = None

    @classmethod
    def entry(cls, session_id: str, seq: int) -> RecordRef:
        return cls("session", session_id, seq)

    @classmethod
    def series(cls, session_id: str, agent: str = "main") -> RecordRef:
        return cls("series", session_id, agent)


@dataclass(frozen=True)
class SessionInfo:
    id: str
    agent: str | None
    surface: str | None
    project: str | None
    title: str | None
    started_at: str | None
    ended_at: str | None
    source: str | None
    format: str
    entries: int
    agents: tuple[str, ...]

    @property
    def workers(self) -> tuple[str, ...]:
        """The agents a task was handed to: not main, not the harness's own helpers."""
        return tuple(a for a in self.agents if a != "main" and helper_role(a) is None)

    @property
    def helpers(self) -> tuple[str, ...]:
        """The harness's own helpers that wrote here (compaction summariser, ...)."""
        return tuple(a for a in self.agents if helper_role(a) is not None)


@dataclass(frozen=True)
class EntryInfo:
    id: int
    session_id: str
    agent: str
    seq: int
    ts: str | None
    kind: str
    content: str
    tokens: int  # the reference estimate ceil(chars / 4) + 4 (see writes.token_estimate)
    tool_name: str | None
    message_id: str | None
    source_path: str | None
    source_line: int | None
    meta: dict[str, Any]
    sensitivity: str = "public"  # secret text is masked on screen until revealed


@dataclass(frozen=True)
class EntryPage:
    """One page of a session's entries (``Store.entry_page``): ``rows`` in seq order, the
    number of entries ``before`` the first of them and the ``total`` the query matches."""
    rows: list[EntryInfo]
    before: int
    total: int

    @property
    def after(self) -> int:
        """Matching entries after the page's last row."""
        return self.total - self.before - len(self.rows)


@dataclass(frozen=True)
class MemoryInfo:
    id: int
    name: str
    description: str | None
    type: str | None
    body: str
    tags: tuple[str, ...]
    projects: tuple[str, ...]
    role: str | None
    created: str | None
    last_applied: str | None
    hits: int
    prevented: int
    half_life_days: float | None
    critical: bool
    evergreen: bool
    invariant: str | None
    authority: str
    sensitivity: str
    valid_from: str | None
    valid_to: str | None
    supersedes_ref: str | None
    supersedes_id: int | None
    superseded_by_id: int | None
    status: str
    source_file: str | None
    loadable: bool
    load_error: str | None


def entry_info(e: Entry) -> EntryInfo:
    assert e.id is not None
    return EntryInfo(e.id, e.session_id, e.agent, e.seq, e.ts, e.kind, e.content, e.tokens,
                     e.tool_name, e.message_id, e.source_path, e.source_line,
                     meta if isinstance(meta := loads(e.meta, {}), dict) else {},
                     e.sensitivity or "public")


def memory_info(m: Memory) -> MemoryInfo:
    assert m.id is not None
    return MemoryInfo(m.id, m.name, m.description, m.type, m.body, tuple(loads(m.tags, [])),
                      tuple(loads(m.projects, [])), m.role, m.created, m.last_applied,
                      int(m.hits), int(m.prevented), m.half_life_days, bool(m.critical),
                      bool(m.evergreen), m.invariant, m.authority, m.sensitivity,
                      m.valid_from, m.valid_to, m.supersedes_ref, m.supersedes_id,
                      m.superseded_by_id, m.status, m.source_file, bool(m.loadable),
                      m.load_error)


@dataclass(frozen=True)
class EmbedderInfo:
    model: str
    dim: int
    degraded: bool
    reason: str | None


@dataclass(frozen=True)
class Stats:
    path: str
    size_bytes: int
    schema_version: int
    sessions: int
    entries: int
    entries_by_kind: dict[str, int]
    memories: int
    memories_by_status: dict[str, int]
    memories_unloadable: int
    chunks: int
    chunks_by_status: dict[str, int]
    chunks_by_model: dict[str, int]
    vectors: int
    fts_rows: int
    checkpoints: int
    proposals_pending: int
    traces: int
    embedder: EmbedderInfo
    # Lines imports left out, summed over every imported file: by line type, known
    # housekeeping (by design) and types no importer knew (unknown); and apart from them the
    # content blocks left out of lines that were imported, by block type.
    skipped_by_design: dict[str, int] = field(default_factory=dict)
    skipped_unknown: dict[str, int] = field(default_factory=dict)
    entries_waiting: int = 0  # stored, waiting for embedding (the daemon or a checkpoint)
    chunks_lexical_only: int = 0  # windows past a long tool entry's head: FTS, no vector
    blocks_skipped_by_design: dict[str, int] = field(default_factory=dict)
    blocks_skipped_unknown: dict[str, int] = field(default_factory=dict)
    # Where the store lives: "sqlite" (a file; ``server_version`` is SQLite's, ``vector_version``
    # sqlite-vec's) or "postgresql" (a server; ``path`` is its URL, password masked).
    backend: str = "sqlite"
    server_version: str | None = None
    vector_version: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "entries": self.entries,
            "entries_by_kind": self.entries_by_kind,
            "memories": self.memories,
            "chunks": self.chunks,
            "proposals_pending": self.proposals_pending,
            "traces": self.traces,
            "embedder": {"model": self.embedder.model, "dim": self.embedder.dim,
                         "degraded": self.embedder.degraded},
            "path": self.path,
            "backend": self.backend,
            "server_version": self.server_version,
            "vector_version": self.vector_version,
            "size_bytes": self.size_bytes,
            "schema_version": self.schema_version,
            "memories_by_status": self.memories_by_status,
            "memories_unloadable": self.memories_unloadable,
            "chunks_by_status": self.chunks_by_status,
            "chunks_by_model": self.chunks_by_model,
            "vectors": self.vectors,
            "fts_rows": self.fts_rows,
            "checkpoints": self.checkpoints,
            "skipped": {"by_design": self.skipped_by_design, "unknown": self.skipped_unknown},
            "entries_waiting": self.entries_waiting,
            "chunks_lexical_only": self.chunks_lexical_only,
            "skipped_blocks": {"by_design": self.blocks_skipped_by_design,
                               "unknown": self.blocks_skipped_unknown},
        }


@dataclass(frozen=True)
class SearchHit:
    chunk_id: int | None  # None: an entry waiting for embedding, found by its FTS row
    source_type: str
    source_id: int
    text: str
    score: float
    cos: float | None
    lex: float | None
    session_id: str | None = None
    seq: int | None = None
    kind: str | None = None
    agent: str | None = None
    memory_name: str | None = None
    masked: bool = False  # a secret memory or entry: its text is withheld

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ImportIssue:
    """A problem an import met: the file, the line (None: the whole file), the field of the
    line (None: the line or file as a whole) and why."""

    path: str
    line: int | None
    reason: str
    field: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "field": self.field,
                "reason": self.reason}


@dataclass
class IngestReport:
    sessions_added: int = 0
    entries_added: int = 0
    memories_added: int = 0
    memories_updated: int = 0
    checkpoints_added: int = 0
    skipped_by_design: int = 0
    files: int = 0
    chunks: int = 0
    chunks_failed: int = 0
    entries_waiting: int = 0  # stored without embedding (a deferred import), queued
    erased_earlier: int = 0  # entries and memories an erasure fingerprint kept out
    entries_secret: int = 0  # new entries the secrets detector stored ``secret``
    private_spans: int = 0  # ``<private>…</private>`` spans stored redacted
    errors: list[ImportIssue] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    run_id: int | None = None  # the import run recorded in the store (``lca-tui imports``)
    # What was left out, per line type (``progress``, ``attachment/hook_success``, ...): known
    # housekeeping skipped by design, and types no importer knows yet (a note, not an error).
    # ``skipped_by_design`` above counts lines only.
    skipped_by_type: dict[str, int] = field(default_factory=dict)
    skipped_unknown: dict[str, int] = field(default_factory=dict)
    # Content blocks left out of lines that were imported, per block type (``thinking
    # (empty)``, ...): the line itself is stored, so these are not skipped lines.
    blocks_skipped_by_type: dict[str, int] = field(default_factory=dict)
    blocks_skipped_unknown: dict[str, int] = field(default_factory=dict)

    def error(self, path: str, line: int | None, reason: str,
              field_name: str | None = None) -> None:
        """Report a problem; the path and reason are made storable (a file name that is not
        valid UTF-8 has its bytes shown as ``\\xNN``)."""
        self.errors.append(ImportIssue(storable(str(path)), line, storable(reason),
                                       None if field_name is None else storable(field_name)))

    def skip(self, what: str, unknown: bool = False, n: int = 1, block: bool = False) -> None:
        """Count ``n`` lines (with ``block``: content blocks) of type ``what`` left out."""
        if block:
            counts = self.blocks_skipped_unknown if unknown else self.blocks_skipped_by_type
        else:
            counts = self.skipped_unknown if unknown else self.skipped_by_type
            self.skipped_by_design += 0 if unknown else n
        counts[what] = counts.get(what, 0) + n

    def count_memory(self, written: Any) -> None:
        """Count one ``store.core.memories.MemoryWrite``: added or updated, and its chunks."""
        self.memories_added += written.action == "created"
        self.memories_updated += written.action == "updated"
        self.erased_earlier += written.action == "erased"
        self.chunks += written.chunks
        self.chunks_failed += written.failed

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions_added": self.sessions_added,
            "entries_added": self.entries_added,
            "memories_added": self.memories_added,
            "skipped_by_design": self.skipped_by_design,
            "skipped": {"by_design": dict(sorted(self.skipped_by_type.items())),
                        "unknown": dict(sorted(self.skipped_unknown.items()))},
            "skipped_blocks": {"by_design": dict(sorted(self.blocks_skipped_by_type.items())),
                               "unknown": dict(sorted(self.blocks_skipped_unknown.items()))},
            "errors": [e.to_json() for e in self.errors],
            "memories_updated": self.memories_updated,
            "checkpoints_added": self.checkpoints_added,
            "files": self.files,
            "chunks": self.chunks,
            "chunks_failed": self.chunks_failed,
            "entries_waiting": self.entries_waiting,
            "erased_earlier": self.erased_earlier,
            "notes": self.notes,
            "run_id": self.run_id,
        }


@dataclass
class ReindexReport:
    entries: int = 0
    memories: int = 0
    chunks: int = 0
    chunks_failed: int = 0
    derived: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class HookRunInfo:
    """One hook run (``hook_run``): when, which event, how it ended and through what (the
    daemon or in-process), how long it took, and what it added or injected."""

    id: int
    ts: str
    event: str
    status: str
    via: str
    duration_ms: float | None
    entries_added: int
    injected: int
    error: str | None


def rebuild(cls: type[_R], data: dict[str, Any]) -> _R:
    """A record from ``dataclasses.asdict(record)`` (as the daemon sends it): nested records,
    tuples and lists of records, and ``X | None`` fields rebuilt by the field types."""
    import dataclasses
    import sys
    import types
    import typing

    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))

    def value(kind: Any, raw: Any) -> Any:
        if raw is None:
            return None
        origin = typing.get_origin(kind)
        if origin in (typing.Union, types.UnionType):
            kinds = [k for k in typing.get_args(kind) if k is not type(None)]
            return value(kinds[0], raw) if len(kinds) == 1 else raw
        if dataclasses.is_dataclass(kind) and isinstance(raw, dict):
            return rebuild(kind, raw)  # type: ignore[arg-type]
        if origin in (tuple, list) and isinstance(raw, (list, tuple)):
            args = [a for a in typing.get_args(kind) if a is not Ellipsis]
            items = [value(args[0], r) if args else r for r in raw]
            return tuple(items) if origin is tuple else items
        return raw

    names = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    return cls(**{k: value(hints.get(k), v) for k, v in data.items() if k in names})


@dataclass(frozen=True)
class AuditInfo:
    """One audit event: who did what to which ids, with counts (never content)."""

    id: int
    ts: str
    actor: str
    action: str
    target_kind: str | None
    target_ids: tuple[Any, ...]
    counts: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "ts": self.ts, "actor": self.actor, "action": self.action,
                "target_kind": self.target_kind, "target_ids": list(self.target_ids),
                "counts": self.counts}
