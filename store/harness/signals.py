"""The ``hook_failures`` health signal, registered with the health scan
(``store.health.registry``): harness hook runs that failed in the last 7 days — recorded in
``hook_run``, or in the failure log when they could not be recorded there (the store could not
be opened or written, the hook gave up at its deadline, the daemon did not answer; each line
described by its cause) (a failing hook is the
silent no-op of LCA Appendix D). Warn on any."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from store.harness.failures import WINDOW_DAYS, Signal, failed_runs, measure, since_iso
from store.health.records import Row, SignalResult
from store.health.registry import ScanContext, signal, spec

OFFENDING_LIMIT = 50  # ``health.offending_limit``'s default: a store-less signal has no settings


@signal("hook_failures", "harness hook runs that failed (recorded in the store, or in the "
        "failure log when the store could not take the record)")
def hook_failures(ctx: ScanContext) -> SignalResult:
    since = since_iso(ctx.now, WINDOW_DAYS)
    runs = failed_runs(ctx.conn, since) if "hook_run" in ctx.tables else []
    # a server store is named by its URL
    return as_result(measure(runs, ctx.store.opened_as, since, WINDOW_DAYS), ctx.limit)


def logged_hook_failures(store_path: Path | str, now: datetime | None = None) -> SignalResult:
    """The ``hook_failures`` signal from the failure log alone, in the shape every signal has:
    for a store that cannot be opened or does not exist yet (with an open store,
    ``Store.health_signal("hook_failures")`` measures both halves)."""
    since = since_iso(now or datetime.now(UTC), WINDOW_DAYS)
    return as_result(measure([], store_path, since, WINDOW_DAYS), OFFENDING_LIMIT)


def as_result(found: Signal, limit: int) -> SignalResult:
    """The failures measured, as the health scan's ``SignalResult``."""
    rows = [Row("hook_run" if r["where"] == "hook_run" else "hook-failures.log",
                r["id"] if r["id"] is not None else str(r.get("ts") or ""),
                f"{str(r.get('ts') or '')[:16].replace('T', ' ')} {r.get('event')} "
                f"({r.get('via')}): {r.get('error') or ''}"[:300]) for r in found.rows]
    logged = sum(1 for r in found.rows if r["where"] == "log")
    fix = spec("hook_failures").fix if found.status in ("warn", "fail") else None
    return SignalResult("hook_failures", found.status, float(found.value), str(found.value),
                        0.0, None, f"warn > 0 in the last {WINDOW_DAYS} days",
                        found.explanation, rows[:limit], len(rows),
                        {"in_store": found.value - logged, "in_log": logged,
                         "unattributed_in_log": found.unattributed}, fix)
