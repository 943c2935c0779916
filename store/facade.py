"""``Store``: the harness API, the one object the CLI, the app, a hook or a script uses.

It is ``StoreBase`` (connections, settings, embedder, record reads, search, appending
entries) plus every capability's public operation as a method. Every operation a harness
needs, in one place (``from store import Store, open_store, NewSession, NewEntry``):

Getting data in
    ``ingest(paths, fmt=None)`` import files or folders (format detected), idempotent;
    ``append_entries(session, entries)`` a harness writes its transcript as it goes
    (``NewSession``, ``NewEntry``; idempotent by source + position + content hash);
    ``reindex()`` rebuild chunks, vectors, FTS rows and every derived record;
    ``import_runs()`` / ``import_run(id)`` past ingest batches and the problems they met.
Recall
    ``recall(query, role=, project=, channel=, historical=)`` → ``RecallResult``
    (``.items`` to inject, ``.trace_id``); ``probe(query)`` the same, writing no trace;
    ``feedback(trace_id, item, "used" | "prevented")``; ``traces()``, ``trace(id)``.
Context pressure and checkpoints
    ``record_snapshot``, ``record_prune``, ``record_compaction``, ``record_handoff``,
    ``record_checkpoint`` (each returns the new row's id; bad input raises ``ValueError``
    naming the field, and nothing is written); ``series(session, agent)``,
    ``checkpoints(session)`` read them back.
Governed memory writes
    ``propose(doc)``, ``proposals()``, ``proposal(id)``, ``edit_proposal``, ``approve``,
    ``reject``; ``consolidate(session)`` proposes from stored entries and
    ``last_consolidation()`` says when the latest pass ran and what it found; ``list_memories()``,
    ``memory_detail(id)``, ``chain(id)``, ``integrity()``, ``audit_events()``.
Export
    ``export(out_dir, sessions=, memories=, force=)``; ``exports()`` lists those recorded.
Health
    ``health()`` a scan of every signal (stored, for trends); ``health_trends()``,
    ``health_rows(rows)``; ``health_fix_plan(fix)`` / ``health_fix(fix)`` and
    ``compact_duplicates(dry_run)`` the safe fixes, previewed first.
Privacy
    ``privacy_preview(action, scope)`` the closure, nothing changed; ``erase(scope)``,
    ``redact(scope)`` then verify; ``tombstones()``; ``verify_tombstones(id?)`` finishes an
    interrupted one; ``mark(level, scope)``. A scope is one
    of ``session=``, ``entry=``, ``memory=``, ``match=``, ``regex=``.
Reads
    ``search(query, limit=, mode="hybrid" | "fts" | "semantic")`` (a probe: writes nothing),
    ``stats()``, ``sessions()``, ``session(id)``, ``entries(session)``, ``entry(id)``,
    ``memories()``, ``memory(id)``.

Every row records ``writer`` / ``writer_version``: pass your harness's own to
``open_store(path, writer=..., writer_version=...)`` (default: lca-tui and its version).
Capabilities import ``store.core`` and never this module, so dependencies point down; the
capability modules are imported inside each method so that opening a store stays lean.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.core.base import Progress, StoreBase
from store.core.derive import register_deriver
from store.core.records import IngestReport, ReindexReport
from store.core.settings import Settings

if TYPE_CHECKING:
    from store.context.records import CheckpointInfo, Series
    from store.export.writer import ExportReport
    from store.recall.run import RecallResult
    from store.recall.traces import Trace

# Records interpreted from stored entries; a capability with a deriver is named here.
register_deriver("store.recall.events:derive")
register_deriver("store.context.derive:derive")
register_deriver("store.governance.events:derive")


class Store(StoreBase):
    """A continuity store on one SQLite file, with every capability's operations."""

    # -- getting data in ---------------------------------------------------------------
    def ingest(self, paths: Iterable[Path | str], fmt: str | None = None,
               progress: Progress | None = None, defer: bool = False) -> IngestReport:
        """Import files or directories (format detected unless ``fmt``); idempotent.
        ``defer`` stores transcript entries without embedding them: searchable by FTS at
        once, embedded later (``embed_waiting``)."""
        from store.ingest import ingest

        return ingest(self, [Path(p) for p in paths], fmt, progress, defer)

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
               overrides: dict[str, Any] | None = None,
               now: datetime | None = None) -> RecallResult:
        """Run a recall and store its trace; returns a ``RecallResult`` (``.items``)."""
        from store.recall.run import recall

        return recall(self, query, role, project, channel, historical, overrides=overrides,
                      now=now)

    def probe(self, query: str, role: str | None = None, project: str | None = None,
              channel: str = "private", historical: bool = False, *,
              overrides: dict[str, Any] | None = None,
              now: datetime | None = None) -> RecallResult:
        """The same recall, writing nothing (no trace): to look, not to inject."""
        from store.recall.run import recall

        return recall(self, query, role, project, channel, historical, probe=True,
                      overrides=overrides, now=now)

    def feedback(self, trace_id: int, item: str, kind: str) -> dict[str, Any]:
        """Report that a recalled item was ``used`` or ``prevented`` a mistake."""
        from store.recall.traces import feedback

        return feedback(self, trace_id, item, kind)

    def traces(self, limit: int | None = 200) -> list[Trace]:
        """Recall traces, newest first, without their candidates."""
        from store.recall.traces import list_traces

        return list_traces(self, limit)

    def trace(self, trace_id: int) -> Trace:
        """One recall trace with every candidate, its terms, score and decision."""
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

    def record_prune(self, session_id: str, tokens_before: int, tokens_after: int, *,
                     agent: str = "main", ts: str | None = None,
                     entry_ids: Iterable[int] = (), entries_pruned: int | None = None,
                     preserved: bool | None = None, verified: bool | None = None,
                     window_tokens: int | None = None, mode: str | None = None) -> int:
        """Record entries leaving the live window; ``verified`` left out is checked here
        (true when every entry id named is stored). Returns the prune event id."""
        from store.context.api import record_prune

        return record_prune(self, session_id, tokens_before, tokens_after, agent=agent, ts=ts,
                            entry_ids=entry_ids, entries_pruned=entries_pruned,
                            preserved=preserved, verified=verified,
                            window_tokens=window_tokens, mode=mode)

    def record_compaction(self, session_id: str, pre_tokens: int | None, *,
                          agent: str = "main", ts: str | None = None,
                          trigger: str | None = None, summary_entry_id: int | None = None,
                          handoff_path: str | None = None) -> int:
        """Record a compaction of the live window (its summary must be an entry of the
        session); returns its id."""
        from store.context.api import record_compaction

        return record_compaction(self, session_id, pre_tokens, agent=agent, ts=ts,
                                 trigger=trigger, summary_entry_id=summary_entry_id,
                                 handoff_path=handoff_path)

    def record_handoff(self, session_id: str, path: str | None, *, agent: str = "main",
                       ts: str | None = None, action: str = "written",
                       sha256: str | None = None, token_estimate: int | None = None) -> int:
        """Record a handoff ``written`` before a compaction or ``replayed`` after one."""
        from store.context.api import record_handoff

        return record_handoff(self, session_id, path, agent=agent, ts=ts, action=action,
                              sha256=sha256, token_estimate=token_estimate)

    def record_checkpoint(self, session_id: str | None, *, trigger: str = "harness",
                          ts: str | None = None, status: str = "ok", agent: str = "main",
                          entries_added: int = 0, memories_written: int = 0,
                          chunks_embedded: int = 0, chunks_failed: int = 0,
                          archive_verified: bool | None = None,
                          index_verified: bool | None = None,
                          duration_ms: float | None = None,
                          used_tokens: int | None = None,
                          through_entry_id: int | None = None) -> int:
        """Record a checkpoint (store-wide with ``session_id`` None); with ``used_tokens``
        also a ``checkpoint`` snapshot; ``through_entry_id``: the highest entry a
        consolidation pass covered. Returns the checkpoint id."""
        from store.context.api import record_checkpoint

        return record_checkpoint(self, session_id, trigger=trigger, ts=ts, status=status,
                                 agent=agent, entries_added=entries_added,
                                 memories_written=memories_written,
                                 chunks_embedded=chunks_embedded, chunks_failed=chunks_failed,
                                 archive_verified=archive_verified,
                                 index_verified=index_verified, duration_ms=duration_ms,
                                 used_tokens=used_tokens, through_entry_id=through_entry_id)

    def series(self, session_id: str, agent: str = "main") -> Series:
        """One agent's context pressure over a session, with its events and the settings
        applied where the harness reported no window or thresholds."""
        from store.context.series import series

        return series(self, session_id, agent)

    def checkpoints(self, session_id: str | None = None) -> list[CheckpointInfo]:
        """Checkpoint rows and ``checkpoint`` snapshots (of one session), latest first."""
        from store.context.series import checkpoints

        return checkpoints(self, session_id)

    # -- consolidation -----------------------------------------------------------------
    def consolidate(self, session: str | None = None, *, use_proposer: bool = True,
                    actor: str | None = None) -> Any:
        """Run the consolidation pass over ``session`` (or all): new pending proposals.
        It also scans the bound memory directory (``memory.dir``, once imported) through the
        same gate as ``ingest``: files changed, added or deleted there outside the gate
        become proposals, counted under ``file``."""
        from store.governance.consolidate import consolidate

        return consolidate(self, session, use_proposer=use_proposer, actor=actor,
                           scan_files=self._scan_bound_dir)

    def _scan_bound_dir(self) -> list[str] | None:
        """Import the bound memory directory through the gate; returns the problems met
        (None when unbound or not imported yet: its first import is ``ingest``'s)."""
        from store.ingest import ingest
        from store.ingest.memory_dir import gated_dir

        folder = gated_dir(self)
        if folder is None:
            return None
        report = ingest(self, [folder], fmt="memory-dir", record=False)
        return [f"{e.path}{':' + str(e.line) if e.line else ''}: {e.reason}"
                for e in report.errors]

    def last_consolidation(self) -> Any:
        """The latest consolidation pass: when it ran, over how many sessions, and what it
        proposed (a ``PassSummary``), or None when no pass has run."""
        from store.governance.consolidate import latest_pass

        return latest_pass(self)

    # -- export ------------------------------------------------------------------------
    def export(self, out_dir: Path | str, sessions: list[str] | None = None,
               memories: list[int] | None = None, force: bool = False) -> ExportReport:
        """Write sessions and memories as MindStone-Agent NDJSON plus a manifest."""
        from store.export.writer import export

        return export(self, out_dir, sessions, memories, force)

    def exports(self) -> list[dict[str, Any]]:
        """Every export recorded in the store, newest first."""
        from store.export.writer import exports

        return exports(self)

    # -- privacy -----------------------------------------------------------------------
    def privacy_preview(self, action: str = "erase", *, session: str | None = None,
                        entry: int | None = None, memory: int | None = None,
                        match: str | None = None, regex: str | None = None) -> Any:
        """The closure of one scope (counts per table, exports); nothing changes."""
        from store.privacy.api import preview

        return preview(self, _scope(session, entry, memory, match, regex), action)

    def erase(self, *, session: str | None = None, entry: int | None = None,
              memory: int | None = None, match: str | None = None, regex: str | None = None,
              delete_exports: bool = False, actor: str | None = None,
              reason: str | None = None) -> Any:
        """Erase a scope and everything derived from it, then verify; a ``PrivacyResult``."""
        from store.privacy.api import run

        return run(self, _scope(session, entry, memory, match, regex), "erase",
                   delete_exports=delete_exports, actor=actor, reason=reason)

    def redact(self, *, session: str | None = None, entry: int | None = None,
               memory: int | None = None, match: str | None = None, regex: str | None = None,
               delete_exports: bool = False, actor: str | None = None,
               reason: str | None = None) -> Any:
        """Replace a scope with ``[REDACTED]`` in place, rebuild its index, then verify."""
        from store.privacy.api import run

        return run(self, _scope(session, entry, memory, match, regex), "redact",
                   delete_exports=delete_exports, actor=actor, reason=reason)

    def unverified_tombstones(self) -> list[int]:
        """Tombstones with no stored verification (an erasure interrupted after its commit)."""
        from store.privacy.recover import unverified

        return unverified(self)

    def verify_tombstones(self, tombstone_id: int | None = None) -> list[Any]:
        """Finish interrupted erasures: checkpoint, VACUUM, the probes that need no erased
        text, stored; every unverified tombstone, or the one named. (id, Verification) each."""
        from store.privacy.recover import verify

        return verify(self, tombstone_id)

    def tombstones(self, with_probes: bool = False) -> list[Any]:
        """What erasures and redactions left: scope kind, counts, time, actor; no content."""
        from store.privacy.api import tombstones

        return tombstones(self, with_probes)

    def mark(self, level: str, *, session: str | None = None, entry: int | None = None,
             memory: int | None = None, match: str | None = None,
             regex: str | None = None) -> dict[str, int]:
        """Set the sensitivity (public, private, secret) of a scope's entries / memories."""
        from store.privacy.api import mark

        return mark(self, _scope(session, entry, memory, match, regex), level)


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

    def finish_interrupted(self) -> dict[str, Any]:
        """Settle what killed writes left: file journals of the bound directory, applies
        never verified (``lca-tui verify``); tombstones are ``verify_tombstones``."""
        from store.governance.apply import finish_interrupted

        return finish_interrupted(self)

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

    # -- health ------------------------------------------------------------------------
    def health(self, *, now: datetime | None = None, save: str = "always") -> Any:
        """Measure every health signal; returns a ``ScanResult`` (stored unless ``save`` is
        ``never``; ``changed`` stores it only when it differs from the last stored scan)."""
        from store.health.scan import scan

        return scan(self, now=now, save=save)  # type: ignore[arg-type]

    def health_trends(self, limit: int = 30) -> dict[str, list[Any]]:
        """Each signal's status and value over the last ``limit`` stored scans."""
        from store.health.scan import trends

        return trends(self, limit)

    def health_rows(self, rows: list[Any]) -> list[Any]:
        """Offending rows with a label and the screen that shows each (``RowView``)."""
        from store.health.drill import describe

        return describe(self, rows)

    def health_fix_plan(self, fix: str) -> Any:
        """What a health fix (``compact-duplicates``, ``reembed``, ``index-lag``) would do."""
        from store.health.fixes import plan

        return plan(self, fix)

    def health_fix(self, fix: str, progress: Progress | None = None,
                   previewed: Any = None) -> Any:
        """Run a health fix; returns a ``FixReport``. ``previewed``: the ``FixPlan`` the user
        confirmed — the fix acts on what it listed (the store may have moved since)."""
        from store.health.fixes import apply

        return apply(self, fix, progress, previewed)

    def compact_duplicates(self, dry_run: bool = False,
                           progress: Progress | None = None) -> Any:
        """The one shared duplicate-compaction pass (one row per source and span, every
        reference re-pointed, an audit event); ``dry_run`` only says what it would do."""
        from store.health.fixes import compact_duplicates

        return compact_duplicates(self, dry_run, progress)


def open_store(path: Path | str | None = None, settings: Settings | None = None,
               **kwargs: Any) -> Store:
    """Open (creating and migrating as needed) the store at ``path`` or the default one.

    ``writer`` / ``writer_version`` name the program writing; rows record them.
    """
    return Store(path, settings, **kwargs)


def _scope(session: str | None, entry: int | None, memory: int | None, match: str | None,
           regex: str | None) -> Any:
    from store.privacy.api import scope_from

    return scope_from(session=session, entry=entry, memory=memory, match=match, regex=regex)
