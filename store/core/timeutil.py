"""Timestamps: stored as ISO-8601 UTC text with a trailing Z, so they sort as text."""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso() -> str:
    """The current time as stored."""
    return to_iso(datetime.now(UTC))


def to_iso(dt: datetime) -> str:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_iso(text: str | None) -> datetime | None:
    """Parse an ISO-8601 timestamp or date; None for anything unparseable."""
    if not text:
        return None
    value = str(text).strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def normalise_iso(text: str | None) -> str | None:
    """Any ISO-ish timestamp as the stored form, or None."""
    dt = parse_iso(text)
    return to_iso(dt) if dt else None


def local_time(ts: str | None) -> datetime | None:
    """A stored timestamp in the machine's local time zone (None when unreadable)."""
    dt = parse_iso(ts)
    return dt.astimezone() if dt is not None else None


def when(ts: str | None, with_seconds: bool = False) -> str:
    """``2026-01-26 14:03`` (local time) from a stored timestamp; ``-`` when there is none.
    The one time format of the app and the CLI (``--json`` keeps ISO-8601)."""
    dt = local_time(ts)
    if dt is None:
        return "-"
    return dt.strftime("%Y-%m-%d %H:%M:%S" if with_seconds else "%Y-%m-%d %H:%M")
