"""Derivers: records interpreted from stored entries (context snapshots from usage figures,
recall traces and proposal history from a harness's bookkeeping events, ...).

Each deriver is ``derive(conn, entry_ids)``: with a list, it interprets those new entries;
with ``None`` it rebuilds everything it derives from the whole store (``reindex``), deleting
what it derived before. A capability with a deriver is registered by ``store.facade`` (the top
of the store), so ``core`` names no capability.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from sqlalchemy import Connection

# "module:function" strings, imported on first use so the import path stays lean.
DERIVERS: list[str] = []


def register_deriver(spec: str) -> None:
    """Add a ``"module:function"`` deriver (once)."""
    if spec not in DERIVERS:
        DERIVERS.append(spec)


def _resolve(spec: str) -> Callable[[Connection, list[int] | None], dict[str, int]]:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def run_derivers(conn: Connection, entry_ids: list[int] | None) -> dict[str, int]:
    """Run every deriver; returns counts of what each derived, keyed ``deriver.record``."""
    counts: dict[str, int] = {}
    for spec in DERIVERS:
        for record, n in _resolve(spec)(conn, entry_ids).items():
            counts[record] = counts.get(record, 0) + n
    return counts
