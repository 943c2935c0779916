"""What the health capability hands out: plain dataclasses, no ORM objects.

A signal's ``offending`` rows are pointers (``Row``: a kind and an id, with a short note made of
figures); ``drill.describe`` turns them into labelled rows with the record (``RecordRef``) that
shows each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from store.core.records import RecordRef

STATUSES = ("ok", "warn", "fail", "unknown", "n/a")
RANK = {"n/a": 0, "ok": 0, "unknown": 1, "warn": 1, "fail": 2}
"""How bad a status is for ``--fail-on``: ``unknown`` (a measurement that failed) ranks as
``warn`` (DESIGN); ``n/a`` (nothing to judge: no data the signal applies to) ranks as ``ok``."""
SEVERITY = {"n/a": -1, "ok": 0, "unknown": 1, "warn": 2, "fail": 3}
"""The order statuses are shown in (worst first); ``unknown`` below ``warn``, ``n/a`` last."""


def finite(data: Any) -> Any:
    """``data`` with every NaN or infinite float replaced by None: JSON has no such numbers
    (Python would write ``NaN`` / ``Infinity``, which other parsers refuse)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    return data


def worst(statuses: list[str]) -> str:
    """The worst of ``statuses`` (``ok`` for none, or when every one is ``n/a``)."""
    found = max(statuses, key=lambda s: SEVERITY[s], default="ok")
    return "ok" if found == "n/a" else found


@dataclass(frozen=True)
class Row:
    """An offending row: ``kind`` is entry, memory, chunk, checkpoint, compaction, snapshot,
    proposal or writer; ``id`` its id (a writer's is its name); ``note`` figures only."""

    kind: str
    id: int | str
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "note": self.note}


@dataclass
class SignalResult:
    """One signal as a scan measured it."""

    name: str
    status: str
    value: float | None
    display: str
    warn: float | None
    fail: float | None
    rule: str
    explanation: str
    offending: list[Row] = field(default_factory=list)
    offending_total: int = 0
    detail: dict[str, Any] = field(default_factory=dict)
    fix: str | None = None
    """The fix that applies (``compact-duplicates``, ``reembed``, ``index-lag``), if any."""

    @property
    def graded_by(self) -> str:
        """``thresholds``: the status is ``registry.grade(value, warn, fail)`` (fail above
        ``fail``, warn above ``warn``, unknown with no value) — a script applying the
        thresholds to the value gets the status; ``rule``: no numeric threshold decides it
        (both are None) and ``rule`` says what does (a critical memory among those not
        loadable, a checkpoint's age, which parts are missing)."""
        return "rule" if self.warn is None and self.fail is None else "thresholds"

    def to_json(self) -> dict[str, Any]:
        return finite({"name": self.name, "status": self.status, "value": self.value,
                       "display": self.display, "graded_by": self.graded_by,
                       "thresholds": {"warn": self.warn, "fail": self.fail},
                       "rule": self.rule, "explanation": self.explanation,
                       "offending": [r.to_json() for r in self.offending],
                       "offending_total": self.offending_total, "detail": self.detail,
                       "fix": self.fix})


@dataclass
class ScanResult:
    """Every signal of one scan; ``id`` is the stored scan's (None when not stored)."""

    scanned_at: str
    duration_ms: float
    signals: list[SignalResult]
    id: int | None = None

    @property
    def status(self) -> str:
        return worst([s.status for s in self.signals])

    def signal(self, name: str) -> SignalResult:
        for s in self.signals:
            if s.name == name:
                return s
        raise KeyError(name)

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for sig in self.signals:
            out[sig.status] += 1
        return out

    def at_or_above(self, level: str) -> list[SignalResult]:
        """The signals at or above ``level`` (``warn`` or ``fail``; unknown ranks as warn, n/a
        as ok)."""
        return [s for s in self.signals if RANK[s.status] >= RANK[level]]

    def to_json(self) -> dict[str, Any]:
        return {"scanned_at": self.scanned_at, "scan_id": self.id,
                "duration_ms": self.duration_ms, "status": self.status,
                "counts": self.counts(), "signals": [s.to_json() for s in self.signals]}


def scan_from_json(data: dict[str, Any]) -> ScanResult:
    """A scan back from its ``to_json`` (what the daemon answers ``lca-tui health`` with):
    ``scan_from_json(r.to_json()).to_json() == r.to_json()``."""
    return ScanResult(
        str(data["scanned_at"]), float(data["duration_ms"]),
        [SignalResult(str(s["name"]), str(s["status"]), s["value"], str(s["display"]),
                      s["thresholds"]["warn"], s["thresholds"]["fail"], str(s["rule"]),
                      str(s["explanation"]), [Row(str(r["kind"]), r["id"], str(r["note"]))
                                              for r in s["offending"]],
                      int(s["offending_total"]), dict(s["detail"]), s["fix"])
         for s in data["signals"]],
        data["scan_id"])


@dataclass(frozen=True)
class TrendPoint:
    scan_id: int
    ts: str
    status: str
    value: float | None


@dataclass(frozen=True)
class RowView:
    """An offending row ready to show: a label safe to print (no secret text) and the record
    that shows it (``ref``), None when nothing does."""

    row: Row
    label: str
    ref: RecordRef | None


def view_to_json(view: RowView) -> dict[str, Any]:
    """An offending row's view as JSON (``view_from_json`` reads it back)."""
    ref = view.ref
    return {"row": view.row.to_json(), "label": view.label,
            "ref": None if ref is None else {"kind": ref.kind, "id": ref.id, "at": ref.at}}


def view_from_json(data: dict[str, Any]) -> RowView:
    row, ref = data["row"], data["ref"]
    return RowView(Row(str(row["kind"]), row["id"], str(row["note"])), str(data["label"]),
                   None if ref is None else RecordRef(ref["kind"], ref["id"], ref["at"]))


@dataclass
class FixPlan:
    """What a fix will do, said before it runs (the confirmation shows ``lines``)."""

    fix: str
    signal: str
    lines: list[str]
    counts: dict[str, int]
    possible: bool = True
    reason: str | None = None
    targets: Any = field(default=None, repr=False)
    """What the preview found to act on (the fix's own form: removed chunk id → kept id, or
    the sources and chunks to rebuild): ``apply`` given this plan acts on these and no other."""

    def to_json(self) -> dict[str, Any]:
        return {"fix": self.fix, "signal": self.signal, "lines": self.lines,
                "counts": self.counts, "possible": self.possible, "reason": self.reason}


@dataclass
class FixReport:
    """What a fix did."""

    fix: str
    counts: dict[str, int]
    lines: list[str]
    dry_run: bool = False
    per_writer: dict[str, int] = field(default_factory=dict)
    targets: Any = field(default=None, repr=False)  # a dry run's: see ``FixPlan.targets``

    def to_json(self) -> dict[str, Any]:
        return {"fix": self.fix, "dry_run": self.dry_run, "counts": self.counts,
                "per_writer": self.per_writer, "lines": self.lines}
