"""``Store``: the harness API, the one object the CLI, the app, a hook or a script uses.

It is ``StoreBase`` (connections, settings, embedder, record reads, search, appending
entries) plus every capability's public operation as a method, documented here in one place:

- ``ingest(paths)`` / ``reindex()``: import files, rebuild derived records;
  ``import_runs()`` / ``import_run(id)``: past ingest batches and the problems they met;
- ``append_entries(session, entries)``: a harness writes its transcript as it goes;
- ``recall(query, ...)`` / ``feedback(trace_id, item, kind)`` / ``traces()`` / ``trace(id)``;
- ``record_snapshot`` / ``record_prune`` / ``record_compaction`` / ``record_handoff`` /
  ``record_checkpoint``: context pressure and checkpoints;
- ``export(out_dir, ...)``;
- ``consolidate(session)`` / ``last_consolidation()``: the consolidation pass;
- ``propose(doc)`` / ``proposals()`` / ``proposal(id)`` / ``edit_proposal`` / ``approve`` /
  ``reject``: governed memory writes; ``list_memories()`` / ``memory_detail(id)`` /
  ``chain(id)`` / ``integrity()`` / ``audit_events()``;
- ``search(query)``, ``stats()``, ``sessions()``, ``entries(session)``, ``memories()``.

Rows record ``writer`` / ``writer_version``: pass your harness's own to ``open_store``.
Capabilities import ``store.core`` and never this module, so dependencies point down.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from store.core.base import Progress, StoreBase
from store.core.derive import register_deriver
from store.core.records import IngestReport, ReindexReport
from store.core.settings import Settings

# Records interpreted from stored entries; a capability with a deriver is named here.
register_deriver("store.recall.events:derive")
register_deriver("store.context.derive:derive")
register_deriver("store.governance.events:derive")


class Store(StoreBase):
    """A continuity store on one SQLite file, with every capability's operations."""

    # -- getting data in ---------------------------------------------------------------
    def ingest(self, paths: Iterable[Path | str], fmt: str | None = None,
               progress: Progress | None = None) -> IngestReport:
        """Import files or directories (format detected unless ``fmt``); idempotent."""
        from store.ingest import ingest

        return ingest(self, [Path(p) for p in paths], fmt, progress)

    def import_runs(self, limit: int | None = 50) -> list[Any]:
        """Ingest batches recorded in the store, newest first (``RunInfo``: status, counts,
        number of problems); a run whose process died mid-way is ``aborted``."""
        from store.ingest.runs import runs

        return runs(self, limit)

    def import_run(self, run_id: int | None = None) -> Any:
        """One ingest batch (the latest when ``run_id`` is None) with every problem it
        stored: file, line, field and reason."""
        from store.ingest.runs import run

        return run(self, run_id)

    def reindex(self, progress: Progress | None = None) -> ReindexReport:
        """Rebuild chunks, vectors, FTS rows and every derived record."""
        from store.ingest.reindex import reindex

        return reindex(self, progress)

    # -- recall ------------------------------------------------------------------------
    def recall(self, query: str, role: str | None = None, project: str | None = None,
               channel: str = "private", historical: bool = False, *,
               overrides: dict[str, Any] | None = None, now: datetime | None = None) -> Any:
        """Run a recall and store its trace; returns a ``RecallResult`` (``.items``)."""
        from store.recall.run import recall

        return recall(self, query, role, project, channel, historical, overrides=overrides,
                      now=now)

    def feedback(self, trace_id: int, item: str, kind: str) -> dict[str, Any]:
        """Report that a recalled item was ``used`` or ``prevented`` a mistake."""
        from store.recall.traces import feedback

        return feedback(self, trace_id, item, kind)

    def traces(self, limit: int | None = 200) -> list[Any]:
        from store.recall.traces import list_traces

        return list_traces(self, limit)

    def trace(self, trace_id: int) -> Any:
        from store.recall.traces import get_trace

        return get_trace(self, trace_id)

    # -- context pressure and checkpoints ----------------------------------------------
    def record_snapshot(self, session_id: str, used_tokens: int, *, agent: str = "main",
                        ts: str | None = None, window_tokens: int | None = None,
                        segments: Mapping[str, int] | None = None,
                        checkpoint_threshold: int | None = None,
                        auto_compact_threshold: int | None = None, event: str = "turn",
                        message_id: str | None = None) -> int:
        """Record how full the live window is; returns the snapshot id."""
        from store.context.api import record_snapshot

        return record_snapshot(self, session_id, used_tokens, agent=agent, ts=ts,
                               window_tokens=window_tokens, segments=segments,
                               checkpoint_threshold=checkpoint_threshold,
                               auto_compact_threshold=auto_compact_threshold, event=event,
                               message_id=message_id)

    def record_prune(self, session_id: str, tokens_before: int, tokens_after: int,
                     **kwargs: Any) -> int:
        """Record entries leaving the live window (``entry_ids``, ``preserved``, ...)."""
        from store.context.api import record_prune

        return record_prune(self, session_id, tokens_before, tokens_after, **kwargs)

    def record_compaction(self, session_id: str, pre_tokens: int | None, **kwargs: Any) -> int:
        """Record a compaction of the live window (``trigger``, ``summary_entry_id``, ...)."""
        from store.context.api import record_compaction

        return record_compaction(self, session_id, pre_tokens, **kwargs)

    def record_handoff(self, session_id: str, path: str | None, **kwargs: Any) -> int:
        """Record a handoff written before a compaction or replayed after one."""
        from store.context.api import record_handoff

        return record_handoff(self, session_id, path, **kwargs)

    def record_checkpoint(self, session_id: str | None, **kwargs: Any) -> int:
        """Record a checkpoint (``trigger``, ``entries_added``, ``chunks_embedded``, ...)."""
        from store.context.api import record_checkpoint

        return record_checkpoint(self, session_id, **kwargs)

    # -- consolidation -----------------------------------------------------------------
    def consolidate(self, session: str | None = None, *, use_proposer: bool = True,
                    actor: str | None = None) -> Any:
        """Run the consolidation pass over ``session`` (or all): new pending proposals."""
        from store.governance.consolidate import consolidate

        return consolidate(self, session, use_proposer=use_proposer, actor=actor)

    def last_consolidation(self) -> Any:
        """The latest consolidation pass: when it ran, over how many sessions, and what it
        proposed (a ``PassSummary``), or None when no pass has run."""
        from store.governance.consolidate import latest_pass

        return latest_pass(self)

    # -- export ------------------------------------------------------------------------
    def export(self, out_dir: Path | str, sessions: list[str] | None = None,
               memories: list[int] | None = None, force: bool = False) -> Any:
        """Write sessions and memories as MindStone-Agent NDJSON plus a manifest."""
        from store.export.writer import export

        return export(self, out_dir, sessions, memories, force)


    # -- governed memory writes ---------------------------------------------------------
    def propose(self, proposal: Mapping[str, Any] | Any, *, origin: str = "api",
                actor: str | None = None, auto_apply: bool = True) -> Any:
        """Submit a proposal (a ``propose`` JSON document, or a ``NewProposal``): checked,
        stored pending, and applied at once if ``governance.auto_apply`` allows. Returns a
        ``ProposalInfo``."""
        from store.governance import parse_proposal, submit

        new = parse_proposal(dict(proposal), origin) if isinstance(proposal, Mapping) \
            else proposal
        return submit(self, new, actor=actor, auto_apply=auto_apply)

    def proposals(self, status: str | None = None, limit: int | None = None) -> list[Any]:
        """The proposal queue, newest first (``ProposalSummary`` rows)."""
        from store.governance import list_proposals

        return list_proposals(self, status, limit)

    def proposal(self, proposal_id: int) -> Any:
        """One proposal in full: checks, edits, decisions, approval options, verification."""
        from store.governance import get_proposal

        return get_proposal(self, proposal_id)

    def edit_proposal(self, proposal_id: int, changes: Mapping[str, Any], *,
                      actor: str | None = None, reason: str | None = None) -> Any:
        """Change a pending proposal (kept in its edit history); its checks run again."""
        from store.governance import edit

        return edit(self, proposal_id, dict(changes), actor=actor, reason=reason)

    def approve(self, proposal_id: int, as_: str | None = None, reason: str | None = None,
                *, actor: str | None = None) -> Any:
        """Approve (``as_``: ``reinforce`` / ``supersede`` / ``keep-both``), apply in one
        transaction, verify; returns the proposal (``failed`` with the reason if it could
        not be applied)."""
        from store.governance import approve

        return approve(self, proposal_id, as_, reason, actor=actor)

    def reject(self, proposal_id: int, reason: str, *, actor: str | None = None) -> Any:
        """Reject a pending proposal; the reason is required."""
        from store.governance import reject

        return reject(self, proposal_id, reason, actor=actor)

    def list_memories(self, status: str | None = None, type: str | None = None) -> list[Any]:
        """Memories (``MemoryRow``, secret text withheld), by type and name."""
        from store.governance import list_memories

        return list_memories(self, status, type)

    def memory_detail(self, memory_id: int) -> Any:
        """A memory with evidence, supersession chain, flags and integrity problems."""
        from store.governance import memory_detail

        return memory_detail(self, memory_id)

    def chain(self, memory_id: int) -> list[Any]:
        """The supersession chain of a memory, oldest first (``ChainLink`` rows)."""
        from store.governance import chain

        return chain(self, memory_id)

    def integrity(self) -> list[Any]:
        """Supersession problems: cycles, dangling links, forks, superseded-but-active."""
        from store.governance import integrity

        return integrity(self)

    def audit_events(self, limit: int | None = 50) -> list[Any]:
        """The audit log, newest first (ids and counts, never content)."""
        from store.governance import audit_events

        return audit_events(self, limit)


def open_store(path: Path | str | None = None, settings: Settings | None = None,
               **kwargs: Any) -> Store:
    """Open (creating and migrating as needed) the store at ``path`` or the default one.

    ``writer`` / ``writer_version`` name the program writing; rows record them.
    """
    return Store(path, settings, **kwargs)
