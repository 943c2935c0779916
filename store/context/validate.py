"""Checks on the values a harness hands to the context-pressure API (``store.context.api``).

Every recorded value is checked for type and range before it reaches the store, so a bad
value is refused with a ``ValueError`` naming the field instead of being stored and breaking
every later read. The readers (``store.context.series``) also tolerate a bad stored value
(one written before these checks, or by hand) with ``stored_int``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from store.core.timeutil import normalise_iso, now_iso

MAX_TOKENS = 10**9
"""Token figures are below a billion (no context window comes near)."""
MAX_COUNT = 10**12
"""Counts and ids are below a trillion (and so fit SQLite's 64-bit integers)."""
MAX_TEXT = 4096
CHECKPOINT_STATUSES = ("ok", "failed", "partial")
HANDOFF_ACTIONS = ("written", "replayed")


def _integral(name: str, value: Any, what: str, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be {what}, got {value!r}")  # noqa: TRY004
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    if value < 0 or value >= limit:
        raise ValueError(f"{name} must be {what} below {limit:,}, got {value!r}")
    return int(value)


def tokens(name: str, value: Any, *, optional: bool = True,
           positive: bool = False) -> int | None:
    """A token figure: a non-negative integer below 10^9 (above 0 when ``positive``)."""
    if value is None and optional:
        return None
    what = "a positive number of tokens" if positive else "a non-negative number of tokens"
    n = _integral(name, value, what, MAX_TOKENS)
    if positive and n == 0:
        raise ValueError(f"{name} must be {what}, got 0")
    return n


def count(name: str, value: Any, *, optional: bool = False) -> int | None:
    """A count: a non-negative integer."""
    if value is None and optional:
        return None
    return _integral(name, value, "a non-negative integer", MAX_COUNT)


def entry_id(name: str, value: Any) -> int:
    """A stored entry id: a positive integer."""
    n = _integral(name, value, "an entry id (a positive integer)", MAX_COUNT)
    if n == 0:
        raise ValueError(f"{name} must be an entry id (a positive integer), got 0")
    return n


def entry_ids(name: str, values: Any) -> list[int]:
    if isinstance(values, str | bytes | dict) or not isinstance(values, Iterable):
        raise ValueError(f"{name} must be a list of entry ids, got {values!r}")  # noqa: TRY004
    return [entry_id(f"{name}[{i}]", v) for i, v in enumerate(values)]


def flag(name: str, value: Any) -> bool | None:
    """true, false or left out."""
    if value is None or isinstance(value, bool):
        return value
    raise ValueError(f"{name} must be true or false, got {value!r}")


def label(name: str, value: Any, *, optional: bool = True,
          allowed: tuple[str, ...] | None = None) -> str | None:
    """A non-empty string (one of ``allowed`` when given)."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    if len(value) > MAX_TEXT:
        raise ValueError(f"{name} is longer than {MAX_TEXT} characters")
    if allowed is not None and value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def duration(name: str, value: Any) -> float | None:
    """Milliseconds: a finite non-negative number, or left out."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or value < 0 or value >= MAX_COUNT:
        raise ValueError(f"{name} must be a non-negative number of milliseconds, "
                         f"got {value!r}")
    return float(value)


def stamp(value: Any) -> str:
    """An ISO-8601 timestamp in the stored form; now when left out."""
    if value is None:
        return now_iso()
    ts = normalise_iso(value) if isinstance(value, str) else None
    if ts is None:
        raise ValueError(f"ts: timestamp {value!r} is not ISO-8601")
    return ts


def stored_int(value: Any, problems: list[str], what: str) -> int | None:
    """A stored integer as read back; a value that is not one is reported, not raised."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    problems.append(f"{what}: stored value {value!r} is not an integer (ignored)")
    return None
