"""A health scan: every registered signal measured on one consistent read of the store, then
stored (``health_scan`` + ``health_signal`` rows) so that each signal has a trend.

Storing follows a policy: ``always`` (the CLI, an explicit rescan), ``changed`` (an open app
rescanning because the store moved: a scan identical to the last stored one is stored again
only after ``health.trend_seconds``, so the trend is not flooded and the app's own write does
not set off an endless rescan), ``never``.
"""

from __future__ import annotations

import json
import threading
import time
import weakref
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from sqlalchemy import inspect
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import col, select

from store.core.db import orm
from store.core.timeutil import parse_iso, to_iso
from store.health.models import HealthScan, HealthSignal
from store.health.records import ScanResult, SignalResult, TrendPoint
from store.health.registry import ScanContext, specs

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store
    from store.core.settings import Settings

Save = Literal["always", "changed", "never"]


def scan(store: Store, *, now: datetime | None = None, save: Save = "always",
         settings: Settings | None = None, writer: tuple[str, str] | None = None
         ) -> ScanResult:
    """Measure every signal; store the scan as ``save`` says (its id is then set).

    ``settings`` (default the store's): what the signals' ``health.*`` thresholds are read
    from — the warm daemon passes the caller's ``--set`` this way; ``writer`` (name, version;
    default the store's) is recorded on the stored scan — the daemon's caller's."""
    now = now or datetime.now(UTC)
    store.embedder_info()  # load the embedder before the read: two signals ask about it
    settings = settings or store.settings
    limit = int(settings["health.offending_limit"])
    measures = specs()  # imports the signal modules: not part of the scan's time
    started = time.perf_counter()
    results: list[SignalResult] = []
    with store.read() as conn:
        tables = set(inspect(conn).get_table_names())
        ctx = ScanContext(store, conn, now, tables, limit, settings)
        try:
            for spec in measures:
                try:
                    results.append(spec.measure(ctx))
                except (SQLAlchemyError, OSError, ValueError, TypeError,
                        ArithmeticError) as exc:  # one broken signal (a bad stored value), not
                    # the scan: the signal is unknown with the error, the others are measured
                    results.append(SignalResult(
                        spec.name, "unknown", None, "error", None, None, "",
                        f"could not be measured: {type(exc).__name__}: {exc}"[:300]))
        finally:
            ctx.close()
    duration = round((time.perf_counter() - started) * 1000, 1)
    found = ScanResult(to_iso(now), duration, results)
    if save != "never" and not store.read_only:  # read-only: measured, never stored
        found.id = _save(store, found, save == "changed", settings,
                         writer or (store.writer, store.writer_version))
    _remember(store, found)
    return found


def measure(store: Store, name: str, *, now: datetime | None = None) -> SignalResult:
    """One signal (``ValueError`` naming the signals for an unknown ``name``) measured now,
    as the scan measures it; nothing is stored."""
    from store.health.registry import spec

    found = spec(name)
    with store.read() as conn:
        ctx = ScanContext(store, conn, now or datetime.now(UTC),
                          set(inspect(conn).get_table_names()),
                          int(store.settings["health.offending_limit"]))
        try:
            return found.measure(ctx)
        finally:
            ctx.close()


def stored_status(status: str) -> str:
    """The status as the ``health_signal`` table keeps it: its CHECK (migration 7) predates
    ``n/a``, which is stored as ``ok`` with no value (``n/a`` always has none) and read back
    as ``n/a`` (``read_status``)."""
    return "ok" if status == "n/a" else status


def read_status(status: str, value: float | None) -> str:
    return "n/a" if status == "ok" and value is None else status


def _same(previous: list[HealthSignal], found: ScanResult) -> bool:
    old = {(s.name, read_status(s.status, s.value), s.value, s.offending_count)
           for s in previous}
    new = {(s.name, s.status, s.value, s.offending_total) for s in found.signals}
    return old == new


def _save(store: Store, found: ScanResult, only_if_changed: bool, settings: Settings,
          who: tuple[str, str]) -> int | None:
    (writer, version), created = who, to_iso(datetime.now(UTC))
    with store.write() as conn, orm(conn) as session:
        if only_if_changed:
            last = session.exec(select(HealthScan).order_by(col(HealthScan.id).desc())
                                .limit(1)).first()
            if last is not None:
                previous = list(session.exec(select(HealthSignal).where(
                    col(HealthSignal.scan_id) == last.id)).all())
                then, now = parse_iso(last.ts), parse_iso(found.scanned_at)
                recent = (then is not None and now is not None and 0 <= (now - then)
                          .total_seconds() < int(settings["health.trend_seconds"]))
                if recent and _same(previous, found):
                    return None
        row = HealthScan(ts=found.scanned_at, status=found.status,
                         duration_ms=found.duration_ms, writer=writer, writer_version=version,
                         created_at=created)
        session.add(row)
        session.flush()
        for s in found.signals:
            session.add(HealthSignal(
                scan_id=row.id or 0, name=s.name, status=stored_status(s.status),
                value=s.value, warn=s.warn, fail=s.fail, explanation=s.explanation,
                offending_count=s.offending_total,
                offending=json.dumps([[r.kind, r.id] for r in s.offending]), writer=writer,
                writer_version=version, created_at=created))
        session.flush()
        return row.id


def trends(store: Store, limit: int = 30) -> dict[str, list[TrendPoint]]:
    """Each signal's figures over the last ``limit`` stored scans, oldest first."""
    with store.read() as conn, orm(conn) as session:
        scans = session.exec(select(HealthScan).order_by(col(HealthScan.id).desc())
                             .limit(limit)).all()
        if not scans:
            return {}
        when = {s.id: s.ts for s in scans}
        rows = session.exec(select(HealthSignal).where(col(HealthSignal.scan_id).in_(
            list(when))).order_by(col(HealthSignal.scan_id))).all()
    out: dict[str, list[TrendPoint]] = {}
    for r in rows:
        out.setdefault(r.name, []).append(TrendPoint(r.scan_id, when[r.scan_id],
                                                     read_status(r.status, r.value), r.value))
    return out


def scan_count(store: Store) -> int:
    with store.read() as conn, orm(conn) as session:
        return len(session.exec(select(HealthScan.id)).all())


# -- the latest scan per open store (the Overview's one-line summary) -------------------------
_LATEST: weakref.WeakKeyDictionary[Store, tuple[float, ScanResult]] = \
    weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def _remember(store: Store, found: ScanResult) -> None:
    with _GUARD:
        _LATEST[store] = (time.monotonic(), found)


def summary(store: Store, *, now: datetime | None = None, max_age: float = 30.0
            ) -> ScanResult:
    """The latest scan this process made of ``store`` if younger than ``max_age`` seconds,
    else a new one (stored when it differs from the last stored scan)."""
    with _GUARD:
        cached = _LATEST.get(store)
    if cached is not None and time.monotonic() - cached[0] < max_age:
        return cached[1]
    return scan(store, now=now, save="changed")
