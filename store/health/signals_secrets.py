"""The secrets signal (issue 30): what the detector caught at capture in the last 7 days, and
whether records written before it existed are still unscanned.

Catching a secret is the detector doing its work — the record is stored ``secret``, masked,
never injected, its index holds placeholders — so findings alone never warn: the value is the
count, the explanation names the kinds. It warns when entries or memories written before the
detector existed (migration 17) were never scanned: their values may sit unmasked in the
index until ``lca-tui scan-secrets`` runs.
"""

from __future__ import annotations

from datetime import timedelta

from store.core.detected import counts_since, unscanned
from store.core.timeutil import to_iso
from store.core.vocab import plural
from store.health.records import SignalResult
from store.health.registry import ScanContext, result, signal

WINDOW_DAYS = 7


@signal("secrets_found", "secrets the detector caught at capture in the last 7 days (kinds, "
        "never values), and records written before it existed never scanned",
        fix="lca-tui scan-secrets")
def secrets_found(ctx: ScanContext) -> SignalResult:
    if "secret_finding" not in ctx.tables:
        return result(ctx, "secrets_found", "n/a", None, "n/a", None, None,
                      "needs migration 17", "this store has no secret findings table yet")
    since = to_iso(ctx.now - timedelta(days=WINDOW_DAYS))
    found = counts_since(ctx.conn, since)
    total = sum(found.values())
    left = unscanned(ctx.conn)
    kinds = ", ".join(f"{k} {n}" for k, n in found.items())
    caught = (f"{plural(total, 'record')} caught holding a secret in the last {WINDOW_DAYS} "
              f"days ({kinds}): stored secret, masked, never injected" if total else
              f"no secret caught in the last {WINDOW_DAYS} days")
    rule = ("warn while records written before the detector existed are unscanned; a "
            "secret caught is the detector working (counted, never a warn)")
    if left:
        what = " and ".join(f"{kind} ids up to {top:,}" for kind, top in sorted(left.items()))
        return result(ctx, "secrets_found", "warn", float(total), str(total), None, None, rule,
                      f"{caught}; {what} were written before the detector existed and "
                      "never scanned", detail={"kinds": found, "unscanned": left})
    return result(ctx, "secrets_found", "ok", float(total), str(total), None, None, rule,
                  caught, detail={"kinds": found})
