"""Small formatters the screens, widgets and the CLI share: times (local, absolute and relative
to ``app.now()``), sizes, plurals, agent marks. Every result is plain text; the caller wraps it
in ``Text``. No UI imports: the CLI uses it too."""

from __future__ import annotations

from datetime import datetime

from store import SessionInfo, local_time, parse_iso, plural, when

# The store's, re-exported: the screens format counts and times with the rest here.
__all__ = ["local", "plural", "when"]
local = local_time


def zone_name() -> str:
    """The local time zone's name (``UTC``, ``CET``): said once where times are listed."""
    return datetime.now().astimezone().strftime("%Z") or "local"


def short_when(ts: str | None) -> str:
    """``2026-01-26 14:03:12`` (local time): the one format (``when``) with seconds, for
    lists of events a second apart."""
    return when(ts, with_seconds=True)


def clock(ts: str | None) -> str:
    """``14:03:12`` (local time): for lists within one day, the day said once above them."""
    dt = local(ts)
    return dt.strftime("%H:%M:%S") if dt else "-"


def day(ts: str | None) -> str | None:
    """``2026-01-26`` (local): the day of a timestamp, None when it has none."""
    dt = local(ts)
    return dt.strftime("%Y-%m-%d") if dt else None


def ago(ts: str | None, now: datetime) -> str:
    """How long before ``now``: ``42 s ago``, ``5 min ago``, ``3 h ago``, ``12 d ago``."""
    dt = parse_iso(ts)
    if dt is None:
        return "-"
    seconds = (now - dt).total_seconds()
    if seconds < 0:
        return "in the future"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return f"{int(seconds)} s ago"


def size(n_bytes: int) -> str:
    """``2.4 MB`` (binary multiples, one decimal)."""
    value = float(n_bytes)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def agents_mark(session: SessionInfo) -> str:
    """``main``, ``main + 1 worker``, ``main + 3 workers`` (or ``2 workers`` without main)."""
    workers = len(session.workers)
    has_main = "main" in session.agents
    if not workers:
        return "main" if has_main or not session.agents else ", ".join(session.agents)
    word = plural(workers, "worker", counted=False)
    return f"main + {workers} {word}" if has_main else f"{workers} {word}"


def project_tail(project: str | None, width: int = 30) -> str:
    """The end of a project path (the part that tells projects apart), cut to ``width``."""
    if not project:
        return "-"
    return project if len(project) <= width else "…" + project[-(width - 1):]


NO_CHECKPOINT_WHY = ("why it matters: what the window held that no checkpoint had archived "
                     "and indexed now lives only in the summary, out of recall's reach")
NO_CHECKPOINT_FIX = ("what fixes it: a PreCompact hook that records a checkpoint (a "
                     "\"checkpoint\" record to `lca-tui context record`) before the harness "
                     "compacts")
