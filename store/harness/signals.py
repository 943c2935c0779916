"""The ``hook_failures`` health signal, registered with the health scan
(``store.health.registry``): harness hook runs that failed in the last 7 days — recorded in
``hook_run``, or in the failure log when they could not be recorded there (the store could not
be opened or written, the hook gave up at its deadline, the daemon did not answer; each line
described by its cause) (a failing hook is the
silent no-op of LCA Appendix D). Warn on any."""

from __future__ import annotations

from store.harness.failures import WINDOW_DAYS, failed_runs, measure, since_iso
from store.health.records import Row, SignalResult
from store.health.registry import ScanContext, result, signal


@signal("hook_failures", "harness hook runs that failed (recorded in the store, or in the "
        "failure log when the store could not take the record)")
def hook_failures(ctx: ScanContext) -> SignalResult:
    since = since_iso(ctx.now, WINDOW_DAYS)
    runs = failed_runs(ctx.conn, since) if "hook_run" in ctx.tables else []
    found = measure(runs, ctx.store.opened_as, since, WINDOW_DAYS)  # a server: its URL
    rows = [Row("hook_run" if r["where"] == "hook_run" else "hook-failures.log",
                r["id"] if r["id"] is not None else str(r.get("ts") or ""),
                f"{str(r.get('ts') or '')[:16].replace('T', ' ')} {r.get('event')} "
                f"({r.get('via')}): {r.get('error') or ''}"[:300]) for r in found.rows]
    logged = sum(1 for r in found.rows if r["where"] == "log")
    return result(ctx, "hook_failures", found.status, float(found.value), str(found.value),
                  0.0, None, f"warn > 0 in the last {WINDOW_DAYS} days", found.explanation,
                  rows, detail={"in_store": found.value - logged, "in_log": logged,
                          "unattributed_in_log": found.unattributed})
