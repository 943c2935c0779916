"""Checking each field of an imported line where it is read.

A value of the wrong JSON type, out of range or not finite (``1e400`` parses as infinity,
``NaN`` has no integer) is a ``FieldProblem`` naming the field and why. The importers decide
what it costs: a field the line cannot be stored without (its session id, its content) makes
the line a reported problem that is not stored; a field that only adds to it (a token figure,
a working directory, a version) is reported and left out, and the line is stored without it,
so that a bad number never loses a transcript's text.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_TOKENS = 10**9
"""Token figures are integers from 0 below a billion (as ``store.context`` records them)."""
MAX_INT = 2**63
"""Integers stored in SQLite columns fit 64 bits."""


class FieldProblem(ValueError):
    """A field of a line whose value cannot be used: ``field`` names it, ``reason`` says why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def kind(value: Any) -> str:
    """The JSON type of a decoded value, as a person would say it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def text(obj: dict[str, Any], key: str, field: str | None = None, *,
         required: bool = False, empty_ok: bool = True) -> str | None:
    """``obj[key]`` as a string; None when absent or null (unless ``required``)."""
    name = field or key
    value = obj.get(key)
    if value is None:
        if required:
            raise FieldProblem(name, "missing: the line cannot be stored without it")
        return None
    if not isinstance(value, str):
        raise FieldProblem(name, f"a JSON {kind(value)} ({_shown(value)}), not a string")
    if not value and not empty_ok:
        raise FieldProblem(name, "an empty string")
    return value


EARLIEST_YEAR = 1970
"""No transcript line was written before the Unix epoch: an earlier year (``0001``) is a
placeholder or a bug, reported rather than sorted first."""


def timestamp(obj: dict[str, Any], key: str, field: str | None = None) -> str | None:
    """``obj[key]`` as an ISO-8601 time (text), checked: None when absent or null; a string
    that is no time, or a year before 1970 or past 9998, is a ``FieldProblem``."""
    from datetime import datetime

    name = field or key
    value = as_text(obj, key, name)
    if value is None:
        return None
    raw = value.strip()
    try:
        parsed = datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith("Z") else raw)
    except ValueError:
        raise FieldProblem(name, f"{_shown(value)} is not an ISO-8601 time") from None
    if not EARLIEST_YEAR <= parsed.year <= 9998:
        raise FieldProblem(name, f"year {parsed.year} ({_shown(value)}) is not a plausible "
                           f"time (from {EARLIEST_YEAR})")
    return value


as_text = text  # ``text`` under a name that does not read as SQLAlchemy's ``text()``


def mapping(obj: dict[str, Any], key: str, field: str | None = None, *,
            required: bool = False) -> dict[str, Any] | None:
    """``obj[key]`` as an object; None when absent or null (unless ``required``)."""
    name = field or key
    value = obj.get(key)
    if value is None:
        if required:
            raise FieldProblem(name, "missing: the line cannot be stored without it")
        return None
    if not isinstance(value, dict):
        raise FieldProblem(name, f"a JSON {kind(value)} ({_shown(value)}), not an object")
    return value


def number(value: Any, field: str, *, low: float = 0, high: float = MAX_TOKENS,
           integral: bool = True) -> int | float | None:
    """A finite number in ``[low, high)`` (an integer when ``integral``); None stays None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldProblem(field, f"a JSON {kind(value)} ({_shown(value)}), not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldProblem(field, f"{value!r} is not a finite number")
    if not low <= value < high:
        raise FieldProblem(field, f"{_shown(value)} is out of range (from {low:,} below "
                           f"{high:,})")
    if integral:
        if isinstance(value, float) and not value.is_integer():
            raise FieldProblem(field, f"{value!r} is not a whole number")
        return int(value)
    return value


def tokens(obj: dict[str, Any], key: str, field: str | None = None) -> int | None:
    """A token figure: a whole number from 0 below 10^9, or None when absent."""
    value = number(obj.get(key), field or key)
    return None if value is None else int(value)


def loads(raw: str) -> tuple[Any, bool]:
    """``json.loads(raw)`` and whether it held a non-finite number (``NaN``, ``Infinity``, or
    a literal too large for a double such as ``1e400``) anywhere."""
    seen: list[bool] = []

    def parse_float(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            seen.append(True)
        return value

    def parse_constant(literal: str) -> float:
        seen.append(True)
        return float(literal)

    value = json.loads(raw, parse_float=parse_float, parse_constant=parse_constant)
    return value, bool(seen)


def non_finite(value: Any, where: str = "") -> tuple[Any, list[str]]:
    """``value`` with each non-finite number replaced by null, and the fields that held one
    (dotted paths, ``[i]`` for array items)."""
    found: list[str] = []

    def walk(v: Any, path: str, depth: int) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            found.append(path or "(the line)")
            return None
        if depth > 400:
            return v
        if isinstance(v, dict):
            return {k: walk(x, f"{path}.{k}" if path else str(k), depth + 1)
                    for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x, f"{path}[{i}]", depth + 1) for i, x in enumerate(v)]
        return v

    return walk(value, where, 0), found
