"""``Store``: the harness API, the one object the CLI, the app, a hook or a script uses.

It is ``StoreBase`` (connections, settings, embedder, record reads, search, appending
entries) plus every capability's public operation as a method. Every operation a harness
needs, in one place (``from store import Store, open_store, NewSession, NewEntry``):

Getting data in
    ``ingest(paths, fmt=None)`` import files or folders (format detected), idempotent;
    ``append_entries(session, entries)`` a harness writes its transcript as it goes
    (``NewSession``, ``NewEntry``; idempotent by source + position + content hash);
    ``reindex()`` rebuild chunks, vectors, FTS rows and every derived record;
    ``import_runs()`` / ``import_run(id)`` past ingest batches and the problems they met;
    ``waiting(session?)`` entries stored but not embedded yet, ``embed_waiting(session?, limit)``
    embeds them; ``copy_to(target)`` copies every record into an empty store.
Recall
    ``recall(query, role=, project=, channel=, historical=)`` → ``RecallResult``
    (``.items`` to inject, ``.trace_id``); ``probe(query)`` the same, writing no trace;
    ``feedback(trace_id, item, "used" | "prevented")``; ``traces()``, ``trace(id)``;
    ``rerun(trace_id)`` a past cue with today's settings, what moved; ``calibrate(limit)``
    percentiles of S for answers and for other candidates; ``drop_vector_cache()`` forgets the
    in-memory vector copy and its file.
Context pressure and checkpoints
    ``record_snapshot``, ``record_prune``, ``record_compaction``, ``record_handoff``,
    ``record_checkpoint`` (each returns the new row's id; bad input raises ``ValueError``
    naming the field, and nothing is written); ``record(doc)`` validates and records any of
    them from a document (``{"type": "prune", …}``, as ``lca-tui context record`` reads);
    ``series(session, agent)``, ``all_series``, ``series_keys``, ``latest_series_key``,
    ``series_tail``, ``checkpoints(session)`` read them back; ``max_snapshot_id()`` /
    ``max_revision()`` move when a snapshot is added or updated in place;
    ``status_summary(session?)`` what a status line shows.
Governed memory writes
    ``propose(doc)``, ``proposals()``, ``proposal(id)``, ``edit_proposal``, ``approve``,
    ``reject``; ``consolidate(session)`` proposes from stored entries and
    ``last_consolidation()`` says when the latest pass ran and what it found; ``list_memories()``,
    ``memory_detail(id)``, ``chain(id)``, ``integrity()``, ``audit_events()``;
    ``audit(action, target_kind, ids, counts)`` records an event of the caller's own, and
    ``audit_in(conn, …)`` one inside a capability's transaction; ``memory_history(id)`` every
    version of a memory's chain, ``revert_memory(id, to)`` / ``undo_last_approval(proposal?)``
    file the proposal that brings a version back or undoes an approval;
    ``duplicate_groups()`` the near-duplicate memories and ``sweep_duplicates()`` one ``merge``
    proposal per group; ``expiry_due()`` the memories past their retention and
    ``expire_pass(dry_run=)`` one ``expire`` proposal each; ``finish_interrupted()`` settles
    what killed writes left.
Export
    ``export(out_dir, sessions=, memories=, force=)``; ``exports()`` lists those recorded.
Health
    ``health()`` a scan of every signal (stored, for trends); ``health_trends()``,
    ``health_rows(rows)``; ``health_fix_plan(fix)`` / ``health_fix(fix, previewed=plan)``
    and ``compact_duplicates(dry_run)`` the safe fixes, previewed first (given the plan, a
    fix acts on what it listed still needing it, and says what moved: ``store.core.plan``);
    ``health_signal(name)`` one signal measured now; ``health_summary(max_age=)`` the latest
    scan this process made, if recent.
Privacy
    ``privacy_preview(action, scope)`` the closure, nothing changed; ``erase(scope)``,
    ``redact(scope)`` then verify; ``tombstones()``; ``verify_tombstones(id?)`` finishes an
    interrupted one; ``mark(level, scope)``. A scope is one
    of ``session=``, ``entry=``, ``memory=``, ``match=``, ``regex=``; ``scope(...)`` builds it
    once for ``privacy_closure(scope, action)`` / ``privacy_run(scope, action, closure=)``
    (preview, then act on exactly what it listed, else ``PlanStale``) / ``privacy_mark``;
    ``unmark_detected(scope)`` undoes a false positive of the secrets detector, whose
    ``detector()`` every write goes through; ``scan_secrets(dry_run=)`` runs it over what was
    not scanned yet and ``secret_findings()`` lists what it found; ``reveal_secret(id)`` a
    memory's text for a person who asked (audited). Retention: ``transcript_due()`` the entries
    past their kind's retention, ``transcript_closure(report)`` what erasing them touches,
    ``erase_transcript(report, confirmed=)`` erases and verifies. After an erasure:
    ``latest_tombstone()``, ``unverified_tombstones()`` / ``unverified_warning()`` (an
    interrupted one), ``delete_erased_exports(tombstone_id)`` the export files it left.
Hooks
    ``hook_runs(limit)`` the latest hook runs (``HookRunInfo``).
Reads
    ``search(query, limit=, mode="hybrid" | "fts" | "semantic")`` (a probe: writes nothing),
    ``stats()``, ``sessions()``, ``session(id)``, ``entries(session)``, ``entry(id)``,
    ``memories()``, ``memory(id)``; ``data_version()`` changes whenever another connection
    commits.
The store itself
    ``location`` (as shown to people), ``opened_as`` (what opens it again), ``on_server``
    (PostgreSQL rather than a file); ``write()`` a write transaction, waiting for the lock;
    ``refuse_if_read_only(action)`` raises ``ReadOnly``; ``embedder_info()`` (no model loaded),
    ``embedder_loaded``, ``load_embedder()``; ``indexer(progress, writer)``; ``close()``.
The demo's tour
    ``demo_refusal()`` why a store is not the demo's own file (None when it is);
    ``tour_step(index, now)``, ``tour_position()``, ``remember_tour_position(index)``.

Every row records ``writer`` / ``writer_version``: pass your harness's own to
``open_store(path, writer=..., writer_version=...)`` (default: lca-tui and its version).

How a method is made, and why. Most operations *are* a capability function
(``approve(store, proposal_id, …)``): the facade binds it as a method with ``operation``, so its
signature is written once, where it is implemented, and mypy checks every call of
``store.approve(…)`` against it (``operation`` carries the function's type through a
``ParamSpec``). The capability module is imported on the first call, not when the facade is,
so that opening a store stays lean and dependencies keep pointing down (capabilities import
``store.core``, never this module). A method is written out here only where it adds something
of its own: path conversion (``ingest``), a scope built from keywords (``erase``), a document
parsed (``propose``, ``record``), a callback (``consolidate``). Every return type is a record
(``records`` dataclasses) or a plain value; no ``Any`` in a signature here.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Generic,
    NoReturn,
    ParamSpec,
    TypeVar,
    overload,
)

from store.core.base import Progress, StoreBase
from store.core.derive import register_deriver
from store.core.errors import ReadOnly
from store.core.records import AuditInfo, IngestReport
from store.core.settings import Settings

if TYPE_CHECKING:
    from store.context import api as context_api
    from store.core.embed import Embedder
    from store.context import series as context_series
    from store.export import writer as export_writer
    from store.governance import apply as gov_apply
    from store.governance import chains as gov_chains
    from store.governance import consolidate as gov_consolidate
    from store.governance import feedback as gov_feedback
    from store.governance import history as gov_history
    from store.governance import retention as gov_retention
    from store.health.statusline import StatusSummary
    from store.governance import proposals as gov_proposals
    from store.governance import sweep as gov_sweep
    from store.governance import views as gov_views
    from store.governance.consolidate import ConsolidationReport
    from store.governance.records import ProposalInfo
    from store.health import drill as health_drill
    from store.health import fixes as health_fixes
    from store.health import scan as health_scan
    from store.ingest import reindex as ingest_reindex
    from store.ingest import runs as ingest_runs
    from store.privacy import api as privacy_api
    from store.privacy import exports as privacy_exports
    from store.privacy import recover as privacy_recover
    from store.privacy import retention as privacy_retention
    from store.privacy import secrets_scan
    from store.privacy.api import PrivacyResult
    from store.privacy.closure import Closure
    from store.privacy.scope import Scope
    from store.recall import calibrate as recall_calibrate
    from store.recall import pool as recall_pool
    from store.recall import run as recall_run
    from store.recall import traces as recall_traces
    from store.recall.run import RecallResult
    from store import copy as store_copy
    from store.tour import marker as tour_marker
    from store.tour.steps import TourStep

# Records interpreted from stored entries; a capability with a deriver is named here.
register_deriver("store.recall.events:derive")
register_deriver("store.context.derive:derive")
register_deriver("store.governance.events:derive")

P = ParamSpec("P")
R = TypeVar("R")


class operation(Generic[P, R]):  # noqa: N801 - used like a decorator, named like one
    """A capability function ``f(store, *args)`` as the method ``store.f(*args)``.

    ``target`` is ``"module:function"``, imported on each call's first look-up (so a module
    patched in a test is the one called); ``typed`` is the same function, given only to the
    type checker (``module.function if TYPE_CHECKING else None``), whose signature becomes the
    method's. ``refuses`` names what a writing operation does ("approving a proposal"): on a
    store opened read-only the method raises ``ReadOnly`` with it, before anything runs."""

    def __init__(self, target: str,
                 typed: Callable[Concatenate[StoreBase, P], R] | None = None,
                 refuses: str | None = None) -> None:
        self.target = target
        self.refuses = refuses
        self.module, _, self.function = target.partition(":")

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def resolve(self) -> Callable[..., R]:
        held = __import__(self.module, fromlist=["_"])
        func: Callable[..., R] = getattr(held, self.function)
        return func

    @overload
    def __get__(self, obj: None, owner: type) -> operation[P, R]: ...
    @overload
    def __get__(self, obj: StoreBase, owner: type) -> Callable[P, R]: ...
    def __get__(self, obj: StoreBase | None, owner: type) -> Any:
        if obj is None:
            return self
        if self.refuses is not None and obj.read_only:
            return functools.partial(_refused, self.refuses)
        return types.MethodType(self.resolve(), obj)


def _refused(action: str, *_args: object, **_kwargs: object) -> NoReturn:
    raise ReadOnly(action)


class Store(StoreBase):
    """A continuity store on one SQLite file, with every capability's operations."""

    # -- getting data in ---------------------------------------------------------------
    def ingest(self, paths: Iterable[Path | str], fmt: str | None = None,
               progress: Progress | None = None, defer: bool = False) -> IngestReport:
        """Import files or directories (format detected unless ``fmt``); idempotent.
        ``defer`` stores transcript entries without embedding them: searchable by FTS at
        once, embedded later (``embed_waiting``)."""
        from store.ingest import ingest

        self.refuse_if_read_only("importing")
        return ingest(self, [Path(p) for p in paths], fmt, progress, defer)

    # Ingest batches, newest first (``RunInfo``: status, counts, problems); one batch (the
    # latest when ``run_id`` is None) with every problem it stored.
    import_runs = operation("store.ingest.runs:runs",
                            ingest_runs.runs if TYPE_CHECKING else None)
    import_run = operation("store.ingest.runs:run", ingest_runs.run if TYPE_CHECKING else None)
    # Rebuild chunks, vectors, FTS rows and every derived record.
    reindex = operation("store.ingest.reindex:reindex",
                        ingest_reindex.reindex if TYPE_CHECKING else None,
        refuses="reindexing")

    # -- recall ------------------------------------------------------------------------
    def recall(self, query: str, role: str | None = None, project: str | None = None,
               channel: str = "private", historical: bool = False, *,
               overrides: Mapping[str, object] | None = None,
               now: datetime | None = None,
               writer: tuple[str, str] | None = None) -> RecallResult:
        """Run a recall and store its trace; returns a ``RecallResult`` (``.items``).
        ``writer``: the (name, version) its trace records, when not the store's own."""
        from store.recall.run import recall

        return recall(self, query, role, project, channel, historical, overrides=overrides,
                      now=now, writer=writer)

    def probe(self, query: str, role: str | None = None, project: str | None = None,
              channel: str = "private", historical: bool = False, *,
              overrides: Mapping[str, object] | None = None,
              now: datetime | None = None) -> RecallResult:
        """The same recall, writing nothing (no trace): to look, not to inject."""
        from store.recall.run import recall

        return recall(self, query, role, project, channel, historical, probe=True,
                      overrides=overrides, now=now)

    # A past trace's cue again with today's settings: the new result and what moved.
    rerun = operation("store.recall.run:rerun", recall_run.rerun if TYPE_CHECKING else None)
    # Report that a recalled item was ``used`` or ``prevented`` a mistake.
    feedback = operation("store.governance.feedback:feedback",
                         gov_feedback.feedback if TYPE_CHECKING else None,
        refuses="recording feedback on a recall")
    # Recall traces, newest first, without candidates; one trace with every candidate.
    traces = operation("store.recall.traces:list_traces",
                       recall_traces.list_traces if TYPE_CHECKING else None)
    trace = operation("store.recall.traces:get_trace",
                      recall_traces.get_trace if TYPE_CHECKING else None)
    # Percentiles of the score for answers and for the other candidates.
    calibrate = operation("store.recall.calibrate:calibrate",
                          recall_calibrate.calibrate if TYPE_CHECKING else None)
    # Forget this process's in-memory vector copy (after an erasure elsewhere).
    drop_vector_cache = operation("store.recall.pool:drop_cache",
                                  recall_pool.drop_cache if TYPE_CHECKING else None)

    # -- context pressure and checkpoints ----------------------------------------------
    # Each records one row and returns its id; bad input raises ``ValueError`` naming the
    # field, and nothing is written (see ``store.context.api``).
    record_snapshot = operation("store.context.api:record_snapshot",
                                context_api.record_snapshot if TYPE_CHECKING else None,
        refuses="recording a context snapshot")
    record_prune = operation("store.context.api:record_prune",
                             context_api.record_prune if TYPE_CHECKING else None,
        refuses="recording a prune event")
    record_compaction = operation("store.context.api:record_compaction",
                                  context_api.record_compaction if TYPE_CHECKING else None,
        refuses="recording a compaction")
    record_handoff = operation("store.context.api:record_handoff",
                               context_api.record_handoff if TYPE_CHECKING else None,
        refuses="recording a handoff")
    record_checkpoint = operation("store.context.api:record_checkpoint",
                                  context_api.record_checkpoint if TYPE_CHECKING else None,
        refuses="recording a checkpoint")

    def record(self, doc: Mapping[str, object]) -> tuple[str, int, str | None]:
        """Validate and record one context record document (``{"type": "snapshot" |
        "prune" | "compaction" | "handoff" | "checkpoint", …}``, the type defaulting to
        ``snapshot``, as ``lca-tui context record`` reads them): (type, new id, the session
        created or None). A bad document (not a mapping, a field missing, unknown or of the
        wrong type) raises ``ValueError`` naming it in one line, and nothing is written."""
        from store.context.api import record_document

        return record_document(self, doc)

    series = operation("store.context.series:series",
                       context_series.series if TYPE_CHECKING else None)
    checkpoints = operation("store.context.series:checkpoints",
                            context_series.checkpoints if TYPE_CHECKING else None)
    series_keys = operation("store.context.series:series_keys",
                            context_series.series_keys if TYPE_CHECKING else None)
    latest_series_key = operation("store.context.series:latest_key",
                                  context_series.latest_key if TYPE_CHECKING else None)
    all_series = operation("store.context.series:all_series",
                           context_series.all_series if TYPE_CHECKING else None)
    series_tail = operation("store.context.series:tail",
                            context_series.tail if TYPE_CHECKING else None)
    max_snapshot_id = operation("store.context.series:max_snapshot_id",
                                context_series.max_snapshot_id if TYPE_CHECKING else None)
    max_revision = operation("store.context.series:max_revision",
                             context_series.max_revision if TYPE_CHECKING else None)

    # -- consolidation -----------------------------------------------------------------
    def consolidate(self, session: str | None = None, *, use_proposer: bool = True,
                    actor: str | None = None) -> ConsolidationReport:
        """Run the consolidation pass over ``session`` (or all): new pending proposals.
        It also scans the bound memory directory (``memory.dir``, once imported) through the
        same gate as ``ingest``: files changed, added or deleted there outside the gate
        become proposals, counted under ``file``."""
        from store.governance.consolidate import consolidate

        self.refuse_if_read_only("consolidating")
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

    # The near-duplicate sweep alone: one ``merge`` proposal per group of active memories
    # that say the same thing (``consolidate`` runs it as a step); and the groups themselves.
    sweep_duplicates = operation("store.governance.sweep:sweep_duplicates",
                                 gov_sweep.sweep_duplicates if TYPE_CHECKING else None)
    duplicate_groups = operation("store.governance.sweep:find_groups",
                                 gov_sweep.find_groups if TYPE_CHECKING else None)

    # The latest consolidation pass (a ``PassSummary``), or None when none has run.
    last_consolidation = operation("store.governance.consolidate:latest_pass",
                                   gov_consolidate.latest_pass if TYPE_CHECKING else None)

    # -- export ------------------------------------------------------------------------
    # Write sessions and memories as MindStone-Agent NDJSON plus a manifest; list exports.
    export = operation("store.export.writer:export",
                       export_writer.export if TYPE_CHECKING else None,
        refuses="exporting")
    exports = operation("store.export.writer:exports",
                        export_writer.exports if TYPE_CHECKING else None)

    # -- privacy -----------------------------------------------------------------------
    @staticmethod
    def scope(*, session: str | None = None, entry: int | None = None,
              memory: int | None = None, match: str | None = None,
              regex: str | None = None) -> Scope:
        """The one scope named among ``session``, ``entry``, ``memory``, ``match``,
        ``regex`` (``ScopeError`` when none or several)."""
        from store.privacy.api import scope_from

        return scope_from(session=session, entry=entry, memory=memory, match=match,
                          regex=regex)

    def privacy_preview(self, action: str = "erase", *, session: str | None = None,
                        entry: int | None = None, memory: int | None = None,
                        match: str | None = None, regex: str | None = None) -> Closure:
        """The closure of one scope (counts per table, exports); nothing changes."""
        from store.privacy.api import preview

        return preview(self, self.scope(session=session, entry=entry, memory=memory,
                                        match=match, regex=regex), action)

    def erase(self, *, session: str | None = None, entry: int | None = None,
              memory: int | None = None, match: str | None = None, regex: str | None = None,
              delete_exports: bool = False, actor: str | None = None,
              reason: str | None = None, after_tombstone: int | None = None) -> PrivacyResult:
        """Erase a scope and everything derived from it, then verify; a ``PrivacyResult``.
        ``after_tombstone``: it erases what that tombstone's failed verification found."""
        return self._privacy_change("erase", self.scope(
            session=session, entry=entry, memory=memory, match=match, regex=regex),
            delete_exports, actor, reason, after_tombstone)

    def redact(self, *, session: str | None = None, entry: int | None = None,
               memory: int | None = None, match: str | None = None, regex: str | None = None,
               delete_exports: bool = False, actor: str | None = None,
              reason: str | None = None, after_tombstone: int | None = None) -> PrivacyResult:
        """Replace a scope with ``[REDACTED]`` in place, rebuild its index, then verify."""
        return self._privacy_change("redact", self.scope(
            session=session, entry=entry, memory=memory, match=match, regex=regex),
            delete_exports, actor, reason, after_tombstone)

    def _privacy_change(self, action: str, scope: Scope, delete_exports: bool,
                        actor: str | None, reason: str | None,
                        after_tombstone: int | None) -> PrivacyResult:
        from store.privacy.api import run

        self.refuse_if_read_only("erasing" if action == "erase" else "redacting")
        return run(self, scope, action, delete_exports=delete_exports, actor=actor,
                   reason=reason, after_tombstone=after_tombstone)

    # The same two with a ``Scope`` (``store.scope(...)``): the closure, and the change.
    privacy_closure = operation("store.privacy.api:preview",
                                privacy_api.preview if TYPE_CHECKING else None)
    # (a read-only store refuses it in ``run``, naming erasing or redacting)
    privacy_run = operation("store.privacy.api:run", privacy_api.run if TYPE_CHECKING else None)
    privacy_mark = operation("store.privacy.api:mark",
                             privacy_api.mark if TYPE_CHECKING else None,
        refuses="marking sensitivity")
    # A false positive of the secrets detector: back from secret, findings dismissed, audited.
    unmark_detected = operation("store.privacy.api:unmark_detected",
                                privacy_api.unmark_detected if TYPE_CHECKING else None,
        refuses="unmarking what the secrets detector marked")
    # The detector over a store imported before it existed; what it found so far.
    scan_secrets = operation("store.privacy.secrets_scan:scan",
                             secrets_scan.scan if TYPE_CHECKING else None)
    secret_findings = operation("store.privacy.secrets_scan:findings",
                                secrets_scan.findings if TYPE_CHECKING else None)
    # Tombstones with no stored verification (an erasure interrupted after its commit); one
    # line naming them and the command that finishes them (None when there are none).
    unverified_tombstones = operation("store.privacy.recover:unverified",
                                      privacy_recover.unverified if TYPE_CHECKING else None)
    unverified_warning = operation("store.privacy.recover:warning",
                                   privacy_recover.warning if TYPE_CHECKING else None)
    # Finish interrupted erasures: checkpoint, VACUUM, the probes that need no erased text.
    verify_tombstones = operation("store.privacy.recover:verify",
                                  privacy_recover.verify if TYPE_CHECKING else None,
        refuses="verifying tombstones")
    # What erasures and redactions left: scope kind, counts, time, actor; no content.
    tombstones = operation("store.privacy.api:tombstones",
                           privacy_api.tombstones if TYPE_CHECKING else None)
    # The newest tombstone id (0 when none): a reader that sees it move drops its copies.
    latest_tombstone = operation("store.privacy.api:latest_tombstone",
                                 privacy_api.latest_tombstone if TYPE_CHECKING else None)
    # Delete the export files an earlier erasure left on its tombstone's list.
    delete_erased_exports = operation(
        "store.privacy.exports:delete_for_tombstone",
        privacy_exports.delete_for_tombstone if TYPE_CHECKING else None,
        refuses="deleting erased exports")

    def status_summary(self, session_id: str | None = None) -> StatusSummary:
        """What a status line shows: the session's context pressure against its thresholds,
        the pending proposals, the worst signal of the latest stored health scan."""
        from store.health.statusline import StatusSummary, summary

        return StatusSummary.of(summary(self, session_id))

    def mark(self, level: str, *, session: str | None = None, entry: int | None = None,
             memory: int | None = None, match: str | None = None,
             regex: str | None = None) -> dict[str, int]:
        """Set the sensitivity (public, private, secret) of a scope's entries / memories."""
        from store.privacy.api import mark

        self.refuse_if_read_only(f"marking as {level}")
        return mark(self, self.scope(session=session, entry=entry, memory=memory, match=match,
                                     regex=regex), level)

    # -- governed memory writes ---------------------------------------------------------
    def propose(self, proposal: Mapping[str, object] | gov_proposals.NewProposal, *,
                origin: str = "api", actor: str | None = None, auto_apply: bool = True,
                source: str = "") -> ProposalInfo:
        """Submit a proposal (a ``propose`` JSON document, or a ``NewProposal``): checked,
        stored pending, and applied at once if ``governance.auto_apply`` allows. ``source``
        names where the document came from in an error."""
        from store.governance import NewProposal, parse_proposal, submit

        self.refuse_if_read_only("submitting a proposal")
        new = proposal if isinstance(proposal, NewProposal) \
            else parse_proposal(dict(proposal) if isinstance(proposal, Mapping) else proposal,
                                origin, source)
        return submit(self, new, actor=actor, auto_apply=auto_apply)

    proposals = operation("store.governance.proposals:list_proposals",
                          gov_proposals.list_proposals if TYPE_CHECKING else None)
    proposal = operation("store.governance.proposals:get_proposal",
                         gov_proposals.get_proposal if TYPE_CHECKING else None)
    # Change a pending proposal (kept in its edit history); its checks run again.
    edit_proposal = operation("store.governance.proposals:edit",
                              gov_proposals.edit if TYPE_CHECKING else None,
        refuses="editing a proposal")
    # Approve (``as_``: reinforce / supersede / keep-both), apply in one transaction, verify;
    # reject (the reason is required).
    approve = operation("store.governance.apply:approve",
                        gov_apply.approve if TYPE_CHECKING else None,
        refuses="approving a proposal")
    reject = operation("store.governance.apply:reject",
                       gov_apply.reject if TYPE_CHECKING else None,
        refuses="rejecting a proposal")
    list_memories = operation("store.governance.views:list_memories",
                              gov_views.list_memories if TYPE_CHECKING else None)
    memory_detail = operation("store.governance.views:memory_detail",
                              gov_views.memory_detail if TYPE_CHECKING else None)
    audit_events = operation("store.governance.views:audit_events",
                             gov_views.audit_events if TYPE_CHECKING else None)

    def audit(self, action: str, target_kind: str | None = None,
              target_ids: Sequence[int | str | None] | None = None,
              counts: Mapping[str, int] | None = None, *,
              actor: str | None = None) -> AuditInfo:
        """Record an audit event of the caller's own (a harness's, a script's) in a
        transaction of its own: ids and counts only, never content; the stored event back.
        (A capability records its events with ``audit_in`` inside its own transaction.)"""
        self.refuse_if_read_only("recording an audit event")
        with self.write() as conn:
            return self.audit_in(conn, action, target_kind, target_ids,
                                 dict(counts or {}), actor=actor)
    # The supersession chain of a memory, oldest first; every supersession problem.
    chain = operation("store.governance.chains:chain",
                      gov_chains.chain if TYPE_CHECKING else None)
    integrity = operation("store.governance.chains:integrity",
                          gov_chains.integrity if TYPE_CHECKING else None)
    # Every version of a memory's chain (who, when, the diff; erased ones as erased); a
    # proposal bringing one back (a supersede of the current memory, checked by the gate);
    # the same proposal for the latest approval (``undo``).
    memory_history = operation("store.governance.history:memory_history",
                               gov_history.memory_history if TYPE_CHECKING else None)
    revert_memory = operation("store.governance.history:revert",
                              gov_history.revert if TYPE_CHECKING else None,
        refuses="reverting a memory")
    undo_last_approval = operation("store.governance.history:undo",
                                   gov_history.undo if TYPE_CHECKING else None,
        refuses="undoing an approval")
    # Retention: the memories past ``memory.retention_days.<type>``, and the pass that files
    # an ``expire`` proposal for each.
    expiry_due = operation("store.governance.retention:due",
                           gov_retention.due if TYPE_CHECKING else None)
    # (a read-only store refuses it in ``expire_pass`` unless ``dry_run``)
    expire_pass = operation("store.governance.retention:expire_pass",
                            gov_retention.expire_pass if TYPE_CHECKING else None)
    # ... and the transcript entries past ``transcript.retention_days.<kind>`` (a read), the
    # closure of erasing them, and that erasure (the privacy path: verified, one tombstone).
    transcript_due = operation("store.privacy.retention:due",
                               privacy_retention.due if TYPE_CHECKING else None)
    transcript_closure = operation("store.privacy.retention:closure",
                                   privacy_retention.closure if TYPE_CHECKING else None)
    erase_transcript = operation("store.privacy.retention:erase_due",
                                 privacy_retention.erase_due if TYPE_CHECKING else None,
        refuses="erasing transcript entries past their retention")
    # Settle what killed writes left: file journals of the bound directory, applies never
    # verified, an interrupted consolidation (``lca-tui verify``); tombstones are
    # ``verify_tombstones``.
    finish_interrupted = operation("store.governance.apply:finish_interrupted",
                                   gov_apply.finish_interrupted if TYPE_CHECKING else None,
        refuses="finishing an interrupted approval")

    # -- health ------------------------------------------------------------------------
    # Measure every signal (a ``ScanResult``, stored as ``save`` says); this process's latest
    # scan when young enough; each signal over the last stored scans; offending rows labelled.
    health = operation("store.health.scan:scan", health_scan.scan if TYPE_CHECKING else None)
    health_summary = operation("store.health.scan:summary",
                               health_scan.summary if TYPE_CHECKING else None)
    health_trends = operation("store.health.scan:trends",
                              health_scan.trends if TYPE_CHECKING else None)
    health_rows = operation("store.health.drill:describe",
                            health_drill.describe if TYPE_CHECKING else None)
    # The safe fixes, previewed first: ``health_fix(fix, previewed=plan)`` acts on the plan.
    health_fix_plan = operation("store.health.fixes:plan",
                                health_fixes.plan if TYPE_CHECKING else None)
    health_fix = operation("store.health.fixes:apply",
                           health_fixes.apply if TYPE_CHECKING else None,
        refuses="applying a health fix")
    compact_duplicates = operation("store.health.fixes:compact_duplicates",
                                   health_fixes.compact_duplicates if TYPE_CHECKING else None,
        refuses="compacting duplicates")


    # -- the demo's guided tour -----------------------------------------------------------
    # Why this store is not the demo's own file (one line), None when it is: the tour runs on
    # that file only.
    demo_refusal = operation("store.tour.marker:demo_refusal",
                             tour_marker.demo_refusal if TYPE_CHECKING else None)

    def tour_step(self, index: int, now: datetime) -> TourStep:
        """Step ``index`` of the demo's tour (0-based, clamped), told from the store now."""
        from store.tour.steps import tour_step

        return tour_step(self, index, now)

    def tour_position(self) -> int:
        """The step the tour was left on (0 when it never ran)."""
        from store.tour.steps import tour_position

        return tour_position(self)

    def remember_tour_position(self, index: int) -> None:
        """Keep the step the tour is on beside the demo store (never in it; nothing on a
        store opened read-only)."""
        from store.tour.steps import remember_tour_position

        remember_tour_position(self, index)

    # -- copying and the harness's own signal ---------------------------------------------
    # Every record of this store into the empty store ``target`` (one transaction), then
    # both verified (``CopyReport.checks``); ``StoreError`` when ``target`` is not empty.
    copy_to = operation("store.copy:copy_store", store_copy.copy_store if TYPE_CHECKING else None)
    # One health signal measured now, nothing stored (``hook_failures`` for ``hooks status``).
    health_signal = operation("store.health.scan:measure",
                              health_scan.measure if TYPE_CHECKING else None)


def open_store(path: Path | str | None = None, settings: Settings | None = None, *,
               embedder: Embedder | None = None, writer: str | None = None,
               writer_version: str | None = None,
               timer: Callable[[], float] | None = None,
               read_only: bool | None = None) -> Store:
    """Open (creating and migrating as needed) the store at ``path`` or the default one.

    ``writer`` / ``writer_version`` name the program writing; rows record them. ``timer``
    measures a recall's latency (default ``time.perf_counter``; a test passes a fixed one).
    ``read_only`` (default: the ``store.read_only`` setting): every write refused.
    """
    return Store(path, settings, embedder=embedder, writer=writer,
                 writer_version=writer_version, timer=timer, read_only=read_only)

