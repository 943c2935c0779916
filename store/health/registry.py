"""The signal registry: every health signal is a ``SignalSpec`` registered here by its module.

A scan measures every registered signal in ``ORDER`` (the DESIGN table's order; signals added
later go after). A capability adds a signal by writing a module whose ``measure`` functions are
decorated with ``@signal(...)`` and naming that module in ``SIGNAL_MODULES`` (or calling
``add_module``): the harness integration adds ``hook_failures`` that way. Modules are imported
by name when a scan first runs, so this module imports none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlmodel import SQLModel

from store.core.db import orm
from store.health.records import Row, SignalResult

if TYPE_CHECKING:
    from sqlalchemy import Connection
    from sqlmodel import Session

    from store.core.base import StoreBase as Store
    from store.core.settings import Settings

ORDER = ("duplicate_ratio", "shared_index_writers", "loader_drift", "critical_budget",
         "checkpoint_noop", "compaction_without_checkpoint", "index_lag", "embedding_failures",
         "embedding_drift", "evidence_orphans", "threshold_order", "stale_writer",
         "vector_support", "supersession_integrity", "stale_proposals", "memory_duplicates",
         "hook_failures")

SIGNAL_MODULES: list[str] = [
    "store.health.signals_index",
    "store.health.signals_memory",
    "store.health.signals_context",
    "store.health.signals_writers",
    "store.health.signals_claude",
    "store.harness.signals",
    "store.health.signals_secrets",
]


@dataclass
class ScanContext:
    """What a signal reads: one read connection (one consistent snapshot), the settings, the
    scan's clock, the tables this store has, and a cache shared by the signals of one scan."""

    store: Store
    conn: Connection
    now: datetime
    tables: set[str]
    limit: int
    settings: Settings | None = None
    """Where ``setting`` reads (None: the store's): the daemon's caller's ``--set`` apply."""
    cache: dict[str, Any] = field(default_factory=dict)

    def setting(self, name: str) -> Any:
        return (self.settings or self.store.settings)[name]

    def orm(self) -> Session:
        """A SQLModel session on the scan's connection (for reads through the models)."""
        if "orm" not in self.cache:
            self.cache["orm"] = orm(self.conn)
        return self.cache["orm"]  # type: ignore[no-any-return]

    def close(self) -> None:
        session = self.cache.pop("orm", None)
        if session is not None:
            session.close()


Measure = Callable[[ScanContext], SignalResult]


@dataclass(frozen=True)
class SignalSpec:
    name: str
    summary: str
    measure: Measure
    fix: str | None = None


_SPECS: dict[str, SignalSpec] = {}
_loaded: set[str] = set()


def signal(name: str, summary: str, fix: str | None = None) -> Callable[[Measure], Measure]:
    """Register the decorated function as the measure of signal ``name``."""
    def wrap(measure: Measure) -> Measure:
        _SPECS[name] = SignalSpec(name, summary, measure, fix)
        return measure
    return wrap


def add_module(module: str) -> None:
    """Name one more module that registers signals (imported at the next scan)."""
    if module not in SIGNAL_MODULES:
        SIGNAL_MODULES.append(module)


def specs() -> list[SignalSpec]:
    """Every registered signal, in ``ORDER`` then registration order."""
    for module in SIGNAL_MODULES:
        if module not in _loaded:
            importlib.import_module(module)
            _loaded.add(module)
    rank = {n: i for i, n in enumerate(ORDER)}
    return sorted(_SPECS.values(), key=lambda s: rank.get(s.name, len(ORDER)))


def spec(name: str) -> SignalSpec:
    for s in specs():
        if s.name == name:
            return s
    raise ValueError(f"no health signal {name!r}: one of {', '.join(s.name for s in specs())}")


# -- helpers the signals share ------------------------------------------------------------------
def grade(value: float | None, warn: float | None, fail: float | None) -> str:
    """``fail`` above ``fail``, ``warn`` above ``warn``, else ``ok``; ``unknown`` with no
    value. Both comparisons are strictly greater."""
    if value is None:
        return "unknown"
    if fail is not None and value > fail:
        return "fail"
    if warn is not None and value > warn:
        return "warn"
    return "ok"


def result(ctx: ScanContext, name: str, status: str, value: float | None, display: str,
           warn: float | None, fail: float | None, rule: str, explanation: str,
           rows: list[Row] | None = None, total: int | None = None,
           detail: dict[str, Any] | None = None) -> SignalResult:
    """A ``SignalResult`` with its rows cut to the offending limit (the total kept) and the
    registered fix named when the signal is not ok."""
    rows = rows or []
    fix = _SPECS[name].fix if name in _SPECS and status in ("warn", "fail") else None
    return SignalResult(name, status, value, display, warn, fail, rule, explanation,
                        rows[:ctx.limit], len(rows) if total is None else total,
                        detail or {}, fix)


def columns(model: type[SQLModel]) -> Any:
    """A model's table columns (``columns(Chunk).id``): multi-column Core selects read better
    with them than with ``col(Model.x)``, and typing them loosely keeps rows' values plain."""
    return model.__table__.c  # type: ignore[attr-defined]


def percent(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 2) if whole else 0.0
