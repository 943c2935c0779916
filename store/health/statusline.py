"""What ``lca-tui statusline`` shows, as data: one session's context pressure against its
checkpoint threshold, the pending proposals, the worst signal of the latest stored health
scan. Reads only (a status line runs every few hundred milliseconds; it never scans health
itself, it reads the scan the hooks, the app or ``lca-tui health`` stored)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
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


@dataclass(frozen=True)
class StatusPressure:
    """One session's latest context snapshot against its thresholds (``pressure``)."""

    session_id: str
    agent: str
    ts: str
    used_tokens: int
    window_tokens: int | None
    checkpoint_threshold: int | None
    auto_compact_threshold: int | None
    percent_of_checkpoint: float | None
    percent_of_window: float | None
    state: str
    """below, over checkpoint, over auto-compact"""


@dataclass(frozen=True)
class StatusSignal:
    """A signal of the latest stored scan: its name, status and the scan's time."""

    name: str
    status: str
    ts: str


@dataclass(frozen=True)
class StatusSummary:
    """What a status line shows (``Store.status_summary``): the session's pressure (None: no
    snapshot), the pending proposals, the worst signal that is not ok (None: all ok or no
    scan) and how many signals the latest scan had. ``as_json`` is the daemon's wire form,
    the one ``render`` reads."""

    pressure: StatusPressure | None
    pending: int
    worst: StatusSignal | None
    signals: int

    @classmethod
    def of(cls, found: dict[str, Any]) -> StatusSummary:
        """The record of a ``summary`` dictionary."""
        p, w = found.get("pressure"), found.get("worst")
        return cls(StatusPressure(**p) if p else None, int(found.get("pending") or 0),
                   StatusSignal(**w) if w else None, int(found.get("signals") or 0))

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


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
