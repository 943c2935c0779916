"""Hook failures: the log used when the store cannot be opened, and the ``hook_failures``
health signal, which reads it together with the failed runs in ``hook_run``.

A failing hook is the silent no-op of LCA Appendix D: the session goes on, nothing is
stored, nobody notices. So every failure leaves a trace somewhere a health scan reads —
``hook_run`` when the store opens, else one JSON line in ``$XDG_STATE_HOME/lca-tui/
hook-failures.log`` naming the store. Writing the log uses the standard library only.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.harness.paths import failure_log
from store.core.vocab import plural

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

LOG_LIMIT = 1_000_000  # bytes; the log is renamed to .1 past this (one generation kept)
WINDOW_DAYS = 7


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _absolute(store: Path | str) -> str:
    """The store's absolute path, as ``logged_failures`` compares them; a server store's
    URL without its password (``paths.server_identity``: never a credential in the log)."""
    from store.harness.paths import on_server, server_identity

    if on_server(store):
        return server_identity(str(store))
    try:
        return str(Path(store).expanduser().resolve())
    except (OSError, RuntimeError):  # a symlink loop: as given, made absolute
        return os.path.abspath(os.path.expanduser(str(store)))


def log_failure(event: str, store: Path | str | None, error: str,
                session_id: str | None = None, via: str = "process") -> Path | None:
    """Append one line to the failure log; never raises (returns None if it could not)."""
    try:
        path = failure_log()
        if path.exists() and path.stat().st_size > LOG_LIMIT:
            path.replace(path.with_name(path.name + ".1"))
        named = _absolute(store) if store else None
        line = json.dumps({"ts": _now(), "event": event, "store": named,
                           "session_id": session_id, "via": via, "error": error[:500]})
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode("utf-8", "replace"))
        finally:
            os.close(fd)
        return path
    except OSError:
        return None


def logged_failures(store: Path | str | None = None, since: str | None = None
                    ) -> list[dict[str, Any]]:
    """Lines of the failure log (and its previous generation), for ``store`` if given
    (lines naming no store count for every store), from ``since`` on."""
    path = failure_log()
    want = _absolute(store) if store else None
    out: list[dict[str, Any]] = []
    for p in (path.with_name(path.name + ".1"), path):
        try:
            lines = p.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if not isinstance(row, dict):
                continue
            named = row.get("store")
            if want and named and _absolute(str(named)) != want:
                continue
            if since and str(row.get("ts") or "") < since:
                continue
            out.append(row)
    return out


def cause(row: dict[str, Any]) -> str:
    """Why a failure-log line was written, in a few words (``measure``'s explanation)."""
    error = str(row.get("error") or "")
    if row.get("via") == "deadline":
        return "gave up at the hook's deadline"
    if row.get("via") == "daemon":
        return "the daemon did not answer"
    if error.startswith("the store could not be opened"):
        return "the store could not be opened"
    if "could not be recorded" in error or error.startswith("could not record"):
        return "the run could not be recorded in the store"
    if error.startswith("could not print"):
        return "the output could not be printed"
    return "the hook command itself failed"


@dataclass
class Signal:
    """The ``hook_failures`` health signal, in the shape of the other signals: value,
    thresholds, status, a one-line explanation and the offending rows."""

    name: str
    value: int
    warn: int
    fail: int | None
    status: str
    explanation: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    unattributed: int = 0
    """Failure-log lines naming no store: said in the explanation, not counted."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def failed_runs(conn: Any, since: str) -> list[dict[str, Any]]:
    """The failed ``hook_run`` rows from ``since`` on, newest first (on ``conn``)."""
    from sqlmodel import col, select

    from store.core.db import orm
    from store.harness.models import HookRun

    with orm(conn) as s:
        runs = s.exec(select(HookRun).where(HookRun.status == "failed", HookRun.ts >= since)
                      .order_by(col(HookRun.ts).desc(), col(HookRun.id).desc())).all()
    return [{"where": "hook_run", "id": r.id, "ts": r.ts, "event": r.event,
             "session_id": r.session_id, "via": r.via, "error": r.error} for r in runs]


def since_iso(now: datetime | None, days: int) -> str:
    return ((now or datetime.now(UTC)) - timedelta(days=days)).strftime(
        "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def measure(runs: list[dict[str, Any]], store_path: Path | str | None, since: str,
            days: int) -> Signal:
    """The signal from the failed runs in the store and the failure log's lines."""
    rows = list(reversed(runs))  # oldest first, as the log's lines are
    from_log = logged_failures(store_path, since)
    # a line naming no store (a hook that could not tell which store it was for) may be any
    # store's: it is said, as information, but does not make this store warn
    unattributed = sum(1 for r in from_log if not r.get("store")) if store_path else 0
    rows += [{"where": "log", "id": None, **{k: r.get(k) for k in
              ("ts", "event", "session_id", "via", "error")}}
             for r in from_log if r.get("store") or not store_path]
    # newest first; of two in the same millisecond, the one recorded later (the log's
    # lines, and hook_run's rows, are in the order they were written)
    order = {id(r): i for i, r in enumerate(rows)}
    rows.sort(key=lambda r: (str(r.get("ts") or ""), order[id(r)]), reverse=True)
    n = len(rows)
    if n == 0:
        explanation = f"no hook failed in the last {days} days"
    else:
        causes: dict[str, int] = {}
        for r in rows:
            if r["where"] == "log":
                causes[cause(r)] = causes.get(cause(r), 0) + 1
        logged = "; ".join(f"{k} {c}" for c, k in causes.items())
        explanation = (f"{plural(n, 'hook run')} failed in the last {days} days"
                       + (f" (in the failure log {failure_log()}: {logged})" if causes
                          else "")
                       + f"; latest: {rows[0].get('event')}: {rows[0].get('error')}")
    explanation = explanation[:400]
    if unattributed:
        lines = "line names" if unattributed == 1 else "lines name"
        explanation = explanation[:300] + (
            f"; {unattributed} more {lines} no store in the failure log {failure_log()} "
            "(not counted: they may be another store's)")
    return Signal("hook_failures", n, 0, None, "warn" if n else "ok", explanation, rows,
                  unattributed)


def hook_failures(store: Store | None, store_path: Path | str | None = None,
                  days: int = WINDOW_DAYS, now: datetime | None = None) -> Signal:
    """Failed hook runs in the last ``days`` days: those recorded in the store's
    ``hook_run`` plus those logged because the store could not be opened (warn > 0).

    Pass ``store`` (open), or only ``store_path`` when the store cannot be opened. The health
    scan measures the same through ``store.harness.signals``.
    """
    since = since_iso(now, days)
    runs: list[dict[str, Any]] = []
    if store is not None:
        with store.read() as conn:
            runs = failed_runs(conn, since)
        store_path = store_path or store.opened_as  # a server's URL, not its local folder
    return measure(runs, store_path, since, days)
