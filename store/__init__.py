"""The continuity store: pure Python, no UI imports anywhere below this package.

Packages by capability, each saying in its ``__init__`` what it owns and may import:
``core`` (the bottom: db, migrations, models, settings, writes, index, embedder, vec/FTS),
``ingest``, ``recall``, ``context``, ``export``, ``governance``, ``health``, ``privacy``,
``tour`` (the demo's guided tour), ``harness``. ``facade.Store`` is the top: the harness API
with every capability's operations (documented in ``store/facade.py``). ``open_store`` is the
entry point; ``NewSession`` / ``NewEntry`` are what a harness appends; a ``RecordRef`` (kind,
id) is how the store points at a record (the app opens it on the screen that shows that kind).

**The one door.** Code outside ``store/`` (the CLI, the app, a script) imports ``store`` and
the names below, never a module deeper down: ``Store`` and ``open_store``, the errors, the
record types the store hands out, the shared vocabulary (text helpers, settings, marks), and the
few operations of the clients that sit on top of the facade (the hook, the daemon, the
benchmarks, the demo). ``tests/project/test_import_graph.py`` enforces it, with no exception:
the hook's slow path reaches the daemon's client (``daemon_request`` …) through this door too.

These names are imported on first use (``PUBLIC`` says from where), so that ``from store
import X`` costs the module holding ``X`` and no more: a module such as
``store.harness.client`` (what a hook runs when the daemon answers it) stays lean, while
importing the facade pulls in SQLAlchemy and NumPy (~0.45 s).

Importing ``store`` itself (``from store import open_store`` / ``Store``) is importing the
facade: capabilities must not (they take a ``store.core.base.StoreBase``). Only what sits on top
of the facade, like the CLI, may: ``store.harness``, ``store.bench`` and ``store.demo``.
Capabilities import ``store.core`` and other capabilities' public names; a ``_name`` is private
to its module. ``tests/project/test_import_graph.py`` enforces all of this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from store.bench import TOPICS, run_bench, synthetic_query, synthetic_text
    from store.context.records import Compaction, PruneEvent, Series, SeriesKey, Tail
    from store.core.assets import asset_path
    from store.listings import Listings, open_listings
    from store.core.base import resolve_agent
    from store.core.errors import (
        NotFound,
        ReadOnly,
        StoreError,
        StoreLocked,
        StoreTooNew,
        StoreUnavailable,
    )
    from store.core.location import (
        default_store_path,
        is_url,
        local_anchor,
        mask_url,
        would_open,
    )
    from store.core.plan import PlanStale
    from store.core.records import rebuild as rebuild_record
    from store.core.records import (
        AuditInfo,
        EntryInfo,
        EntryPage,
        RecordKind,
        RecordRef,
        Subject,
        HookRunInfo,
        SearchHit,
        SessionInfo,
        Stats,
        agent_label,
        helper_role,
    )
    from store.core.search import SECRET_ENTRY_MASK
    from store.core.settings import Settings, SettingsError, config_path, parse_assignment
    from store.core.textsafe import (
        SQL_INT_MAX,
        SQL_INT_MIN,
        clip_words,
        one_line,
        out_of_range,
        visible,
    )
    from store.core.embed import (
        before_loading_in_a_thread,
        embedder_key,
        load_early,
        load_embedder,
        settle_early,
    )
    from store.core.timeutil import local_time, now_iso, parse_iso, when
    from store.core.vocab import (
        FORMAT_NAMES,
        SENSITIVITIES,
        Progress,
        Sensitivity,
        percentiles,
        plural,
    )
    from store.core.version import CODE_VERSION
    from store.core.writes import NewEntry, NewSession
    from store.changes import ChangeMark, Changes
    from store.copy import CopyReport
    from store.harness.backends_bench import run_build_budget, run_side_by_side
    from store.demo import build_demo
    from store.tour.steps import TourStep
    from store.facade import Store, open_store
    from store.governance.proposals import NEEDS_CONTENT, ProposalError
    from store.governance.records import MASK as MEMORY_MASK
    from store.governance.records import (
        ApprovalOption,
        ChainLink,
        CheckInfo,
        IntegrityProblem,
        MemoryDetail,
        MemoryPage,
        MemoryRow,
        PassSummary,
        ProposalInfo,
        ProposalSummary,
    )
    from store.evals.locomo import CATEGORY_NAMES as LOCOMO_CATEGORIES
    from store.evals.locomo import KS as LOCOMO_KS
    from store.evals.locomo import run as run_locomo
    from store.harness.bench import embed_throughput as bench_embed_throughput
    from store.harness.bench import hook_latency as bench_hook_latency
    from store.harness.bench import load as bench_load
    from store.harness.bench import mixed_texts as bench_mixed_texts
    from store.harness.bench import session_import as bench_session_import
    from store.harness.bench import statusline_latency as bench_statusline_latency
    from store.harness.bench import time_process as bench_time_process
    from store.harness.bench import time_rows as bench_time_rows
    from store.harness.bench import wait_embedded as bench_wait_embedded
    from store.harness.mcp_config import ConfigFileError as McpConfigError
    from store.harness.mcp_config import apply as apply_mcp_plan
    from store.harness.mcp_config import config_path as mcp_config_path
    from store.harness.mcp_config import plan_install as plan_mcp_install
    from store.harness.mcp_config import plan_uninstall as plan_mcp_uninstall
    from store.harness.mcp_config import server_entry as mcp_server_entry
    from store.harness.settings_file import SettingsFileError as HookSettingsError
    from store.harness.settings_file import apply as apply_hooks_plan
    from store.harness.settings_file import plan_install as plan_hooks_install
    from store.harness.settings_file import plan_uninstall as plan_hooks_uninstall
    from store.harness.settings_file import plugin_enabled as hooks_plugin_enabled
    from store.harness.settings_file import settings_path as hooks_settings_path
    from store.harness.settings_file import status as hooks_status
    from store.harness.client import DaemonError
    from store.harness.client import NoAck as DaemonNoAck
    from store.harness.client import NotRunning as DaemonNotRunning
    from store.harness.client import describe as describe_daemon
    from store.harness.client import probe as daemon_probe
    from store.harness.client import request as daemon_request
    from store.harness.client import running_pid as daemon_pid
    from store.harness.paths import (
        UnsafeDirectory,
        daemon_log,
        on_server,
        resolve_store,
        socket_path,
        store_name,
    )
    from store.harness.daemon import AlreadyRunning
    from store.harness.daemon import serve as serve_daemon
    from store.harness.failures import log_failure, logged_failures
    from store.harness.signals import logged_hook_failures
    from store.harness.hook import handle as handle_hook
    from store.health.records import (
        FixPlan,
        FixReport,
        RowView,
        ScanResult,
        SignalResult,
        TrendPoint,
    )
    from store.health.registry import spec as signal_spec
    from store.ingest.base import file_problem
    from store.privacy.api import STAGES, PrivacyResult, TombstoneInfo
    from store.privacy.closure import Closure
    from store.privacy.scope import SCOPE_KINDS, Scope, ScopeError
    from store.privacy.secrets_scan import FindingInfo, SecretScanReport
    from store.core.secrets import KINDS as SECRET_KINDS
    from store.recall.run import Move, moves_line
    from store.recall.records import MASK as TRACE_MASK
    from store.recall.records import Candidate, Trace, trace_from_dict
    from store.recall.records import term_text
    from store.governance.history import MemoryVersion
    from store.governance.retention import Expiry, RetentionReport
    from store.governance.sweep import DuplicateGroup, SweepReport
    from store.privacy.retention import EntryExpiry, TranscriptDue
    from store.conformance import MUTANTS, load_bundle, run_bundle, run_mutants
    from store.core.actor import clean as clean_actor
    from store.core.actor import for_request as actor_for_request
    from store.core.actor import acting_as
    from store.core.search import COS_WEIGHT as SEARCH_COS_WEIGHT
    from store.governance.records import loading_line
    from store.health.records import RANK as SIGNAL_RANK
    from store.health.records import scan_from_json, view_from_json, view_to_json
    from store.health.statusline import render as statusline_render

# Public name -> "module" (the same name there) or "module:name" (another name there). A
# module itself is never a public name: outside ``store/`` only functions, classes and values
# are reachable (``tests/project/test_import_graph.py``).
PUBLIC: dict[str, str] = {
    # the facade
    "Store": "store.facade", "open_store": "store.facade",
    # the listing commands' reads without the ORM
    "Listings": "store.listings", "open_listings": "store.listings",
    "NewEntry": "store.core.writes", "NewSession": "store.core.writes",
    # errors
    "StoreError": "store.core.errors", "NotFound": "store.core.errors",
    "ReadOnly": "store.core.errors",
    "StoreLocked": "store.core.errors", "StoreTooNew": "store.core.errors",
    "StoreUnavailable": "store.core.errors", "PlanStale": "store.core.plan",
    "SettingsError": "store.core.settings", "ProposalError": "store.governance.proposals",
    "ScopeError": "store.privacy.scope", "AlreadyRunning": "store.harness.daemon",
    # record types
    "EntryInfo": "store.core.records", "EntryPage": "store.core.records",
    "SearchHit": "store.core.records",
    "rebuild_record": "store.core.records:rebuild",
    "SessionInfo": "store.core.records", "Stats": "store.core.records",
    "HookRunInfo": "store.core.records", "RecordRef": "store.core.records",
    "AuditInfo": "store.core.records",
    "RecordKind": "store.core.records", "Subject": "store.core.records",
    "Compaction": "store.context.records", "PruneEvent": "store.context.records",
    "Series": "store.context.records", "SeriesKey": "store.context.records",
    "Tail": "store.context.records",
    "ApprovalOption": "store.governance.records", "ChainLink": "store.governance.records",
    "CheckInfo": "store.governance.records", "IntegrityProblem": "store.governance.records",
    "MemoryDetail": "store.governance.records", "MemoryRow": "store.governance.records",
    "MemoryPage": "store.governance.records",
    "PassSummary": "store.governance.records", "ProposalInfo": "store.governance.records",
    "ProposalSummary": "store.governance.records",
    "MemoryVersion": "store.governance.history", "DuplicateGroup": "store.governance.sweep",
    "SweepReport": "store.governance.sweep", "Expiry": "store.governance.retention",
    "RetentionReport": "store.governance.retention",
    "FixPlan": "store.health.records", "FixReport": "store.health.records",
    "RowView": "store.health.records", "ScanResult": "store.health.records",
    "SignalResult": "store.health.records", "TrendPoint": "store.health.records",
    "scan_from_json": "store.health.records", "view_from_json": "store.health.records",
    "view_to_json": "store.health.records",
    "PrivacyResult": "store.privacy.api", "TombstoneInfo": "store.privacy.api",
    "Closure": "store.privacy.closure", "Scope": "store.privacy.scope",
    "EntryExpiry": "store.privacy.retention", "TranscriptDue": "store.privacy.retention",
    "SecretScanReport": "store.privacy.secrets_scan", "FindingInfo": "store.privacy.secrets_scan",
    "SECRET_KINDS": "store.core.secrets:KINDS",
    "Move": "store.recall.run", "moves_line": "store.recall.run",
    "Candidate": "store.recall.records", "term_text": "store.recall.records",
    "Trace": "store.recall.records", "trace_from_dict": "store.recall.records",
    # shared vocabulary
    "visible": "store.core.textsafe", "one_line": "store.core.textsafe",
    "clip_words": "store.core.textsafe", "now_iso": "store.core.timeutil",
    "out_of_range": "store.core.textsafe", "SQL_INT_MAX": "store.core.textsafe",
    "SQL_INT_MIN": "store.core.textsafe",
    "parse_iso": "store.core.timeutil", "local_time": "store.core.timeutil",
    "when": "store.core.timeutil", "plural": "store.core.vocab",
    "percentiles": "store.core.vocab", "Sensitivity": "store.core.vocab",
    "SENSITIVITIES": "store.core.vocab", "FORMAT_NAMES": "store.core.vocab",
    "Progress": "store.core.vocab",
    "CODE_VERSION": "store.core.version",
    "agent_label": "store.core.records", "helper_role": "store.core.records",
    "resolve_agent": "store.core.base",
    "SECRET_ENTRY_MASK": "store.core.search", "MEMORY_MASK": "store.governance.records:MASK",
    "TRACE_MASK": "store.recall.records:MASK", "NEEDS_CONTENT": "store.governance.proposals",
    "STAGES": "store.privacy.api", "SCOPE_KINDS": "store.privacy.scope",
    "signal_spec": "store.health.registry:spec",
    "file_problem": "store.ingest.base",
    # settings and where things live
    "Settings": "store.core.settings", "config_path": "store.core.settings",
    "parse_assignment": "store.core.settings", "default_store_path": "store.core.location",
    "is_url": "store.core.location", "mask_url": "store.core.location",
    "local_anchor": "store.core.location",
    "asset_path": "store.core.assets",
    # the clients on top of the facade: hooks, the daemon, benchmarks, the demo
    "handle_hook": "store.harness.hook:handle", "serve_daemon": "store.harness.daemon:serve",
    "logged_hook_failures": "store.harness.signals", "log_failure": "store.harness.failures",
    "logged_failures": "store.harness.failures",
    # the daemon's client and where its files live (standard library only: the hook's lean path)
    "daemon_request": "store.harness.client:request",
    "daemon_probe": "store.harness.client:probe",
    "describe_daemon": "store.harness.client:describe",
    "daemon_pid": "store.harness.client:running_pid",
    "DaemonNotRunning": "store.harness.client:NotRunning",
    "DaemonError": "store.harness.client", "DaemonNoAck": "store.harness.client:NoAck",
    "resolve_store": "store.harness.paths", "store_name": "store.harness.paths",
    "on_server": "store.harness.paths", "socket_path": "store.harness.paths",
    "daemon_log": "store.harness.paths", "UnsafeDirectory": "store.harness.paths",
    # Claude Code's settings file (``hooks install``) and MCP clients' config (``mcp install``)
    "hooks_settings_path": "store.harness.settings_file:settings_path",
    "plan_hooks_install": "store.harness.settings_file:plan_install",
    "plan_hooks_uninstall": "store.harness.settings_file:plan_uninstall",
    "apply_hooks_plan": "store.harness.settings_file:apply",
    "hooks_plugin_enabled": "store.harness.settings_file:plugin_enabled",
    "hooks_status": "store.harness.settings_file:status",
    "HookSettingsError": "store.harness.settings_file:SettingsFileError",
    "mcp_config_path": "store.harness.mcp_config:config_path",
    "mcp_server_entry": "store.harness.mcp_config:server_entry",
    "plan_mcp_install": "store.harness.mcp_config:plan_install",
    "plan_mcp_uninstall": "store.harness.mcp_config:plan_uninstall",
    "apply_mcp_plan": "store.harness.mcp_config:apply",
    "McpConfigError": "store.harness.mcp_config:ConfigFileError",
    # the hook path's benchmarks (``bench``)
    "bench_load": "store.harness.bench:load",
    "bench_time_process": "store.harness.bench:time_process",
    "bench_time_rows": "store.harness.bench:time_rows",
    "bench_mixed_texts": "store.harness.bench:mixed_texts",
    "bench_embed_throughput": "store.harness.bench:embed_throughput",
    "bench_hook_latency": "store.harness.bench:hook_latency",
    "bench_statusline_latency": "store.harness.bench:statusline_latency",
    "bench_wait_embedded": "store.harness.bench:wait_embedded",
    "bench_session_import": "store.harness.bench:session_import",
    "load_embedder": "store.core.embed", "run_bench": "store.bench",
    "synthetic_query": "store.bench", "synthetic_text": "store.bench", "TOPICS": "store.bench",
    "build_demo": "store.demo", "TourStep": "store.tour.steps", "CopyReport": "store.copy",
    "ChangeMark": "store.changes", "Changes": "store.changes",
    "run_side_by_side": "store.harness.backends_bench",
    "run_build_budget": "store.harness.backends_bench",
    "before_loading_in_a_thread": "store.core.embed",
    "embedder_key": "store.core.embed", "load_early": "store.core.embed",
    "settle_early": "store.core.embed", "would_open": "store.core.location",
    "load_bundle": "store.conformance", "run_bundle": "store.conformance",
    "run_mutants": "store.conformance", "MUTANTS": "store.conformance",
    "run_locomo": "store.evals.locomo:run", "LOCOMO_KS": "store.evals.locomo:KS",
    "LOCOMO_CATEGORIES": "store.evals.locomo:CATEGORY_NAMES",
    "statusline_render": "store.health.statusline:render",
    "SIGNAL_RANK": "store.health.records:RANK",
    "SEARCH_COS_WEIGHT": "store.core.search:COS_WEIGHT",
    "clean_actor": "store.core.actor:clean", "acting_as": "store.core.actor",
    "actor_for_request": "store.core.actor:for_request",
    "loading_line": "store.governance.records",
}

__all__ = sorted(PUBLIC)


def __getattr__(name: str) -> Any:
    where = PUBLIC.get(name)
    if where is None:
        raise AttributeError(f"module 'store' has no attribute {name!r}")
    module, _, attr = where.partition(":")
    # __import__ rather than importlib: this package's own import adds nothing to a lean path
    held: Any = __import__(module, fromlist=["_"])
    value = getattr(held, attr or name)
    globals()[name] = value
    return value
