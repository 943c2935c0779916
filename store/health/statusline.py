"""What ``lca-tui statusline`` shows, as data: one session's context pressure against its
checkpoint threshold, the pending proposals, the worst signal of the latest stored health
scan. Reads only (a status line runs every few hundred milliseconds; it never scans health
itself, it reads the scan the hooks, the app or ``lca-tui health`` stored)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from store.core.errors import NotFound
from store.health.records import RANK

if TYPE_CHECKING:
    from store.facade import Store as Store

# worst first; "unknown" is shown before "warn" (RANK ranks them the same); "n/a" (nothing to
# judge) after "ok"
_ORDER = {"fail": 0, "unknown": 1, "warn": 2, "ok": 3, "n/a": 4}


def pressure(store: Store, session_id: str | None) -> dict[str, Any] | None:
    """The latest snapshot of ``session_id``'s main agent against its thresholds, or None
    when the session has none (or is unknown)."""
    if not session_id:
        return None
    try:
        series = store.series(session_id)
    except (NotFound, ValueError):
        return None
    latest = series.latest
    if latest is None:
        return None
    window = latest.window_tokens or series.window_tokens
    checkpoint = latest.checkpoint_threshold or series.checkpoint_threshold
    compact = latest.auto_compact_threshold or series.auto_compact_threshold
    used = latest.used_tokens
    state = ("over auto-compact" if compact and used >= compact
             else "over checkpoint" if checkpoint and used >= checkpoint else "below")
    return {"session_id": series.session_id, "agent": series.agent, "ts": latest.ts,
            "used_tokens": used, "window_tokens": window,
            "checkpoint_threshold": checkpoint, "auto_compact_threshold": compact,
            "percent_of_checkpoint": round(100.0 * used / checkpoint, 1) if checkpoint else None,
            "percent_of_window": round(100.0 * used / window, 1) if window else None,
            "state": state}


def worst_signals(store: Store) -> list[dict[str, Any]]:
    """Each signal of the latest stored scan (name, status, scan time), worst first; empty
    when no scan was ever stored."""
    latest: dict[str, Any] = {}
    for name, points in store.health_trends(limit=1).items():
        if points:
            latest[name] = points[-1]
    rows = [{"name": n, "status": p.status, "ts": p.ts} for n, p in latest.items()]
    rows.sort(key=lambda r: (_ORDER.get(r["status"], 1), -RANK.get(r["status"], 1), r["name"]))
    return rows


def summary(store: Any, session_id: str | None = None) -> dict[str, Any]:
    """``store``: a facade ``Store`` (the daemon's is typed as its base). ``{"pressure",
    "pending", "worst"}`` (``worst``: the first of ``worst_signals`` that
    is not ok, else None)."""
    signals = worst_signals(store)
    bad = next((s for s in signals if s["status"] != "ok"), None)
    return {"pressure": pressure(store, session_id),
            "pending": len(store.proposals("pending")),
            "worst": bad, "signals": len(signals)}


def render(summary: dict[str, Any] | None) -> str:
    """The status line's text: ``lca ctx 64% of checkpoint · 2 pending · health warn NAME``
    (``!`` after the percentage once over the checkpoint; ``lca no store`` for None)."""
    if summary is None:
        return "lca no store"
    parts = []
    p = summary.get("pressure")
    if p is None:
        parts.append("ctx -")
    elif p.get("percent_of_checkpoint") is not None:
        mark = "!" if p["state"] != "below" else ""
        parts.append(f"ctx {p['percent_of_checkpoint']:.0f}%{mark} of checkpoint")
    else:
        parts.append(f"ctx {p['used_tokens']:,} tokens")
    parts.append(f"{int(summary.get('pending') or 0)} pending")
    worst = summary.get("worst")
    if worst:
        parts.append(f"health {worst['status']} {worst['name']}")
    else:
        parts.append("health ok" if summary.get("signals") else "health -")
    return "lca " + " · ".join(parts)
