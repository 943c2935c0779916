"""Seeds for the health tests: a small store with sessions and memories, and the ways each
incident is made (another writer, another embedder, a stale hook, memory files)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from store import Store
from store.core.timeutil import to_iso
from store.core.writes import NewEntry, NewSession
from store.health.records import ScanResult

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)

TOPICS = ["the release pipeline builds the image and migrates staging first",
          "ledger amounts are integer cents and never floats",
          "pytest runs with -x so the first failure stops the suite",
          "the FX rate cache must be warm before the nightly report",
          "psycopg 3 replaced psycopg2 in the database layer",
          "commit messages stay short and in the imperative"]


def ts(minutes_ago: float) -> str:
    return to_iso(NOW - timedelta(minutes=minutes_ago))


def add_session(store: Store, session_id: str = "s1", n: int = 12, start: float = 600,
                step: float = 5.0) -> list[int]:
    """A session of ``n`` user/assistant turns about the topics; returns the entry ids."""
    entries = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        kind = "user" if i % 2 == 0 else "assistant"
        entries.append(NewEntry(kind, f"{kind} turn {i}: {topic} (note {i})", session_id,
                                source_offset=i, ts=ts(start - i * step)))
    return store.append_entries(NewSession(session_id, "harness", started_at=ts(start)),
                                entries)


def write_memory(folder: Path, slug: str, *, body: str = "A rule worth keeping.",
                 **front: Any) -> Path:
    """A MindStone memory file ``<slug>.md`` with the given front matter keys."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"name: {front.pop('name', slug)}"]
    nested = front.pop("nested", None)
    for key, value in front.items():
        lines.append(f"{key}: {str(value).lower() if isinstance(value, bool) else value}")
    if nested:
        lines.append("metadata:")
        lines += [f"  {k}: {str(v).lower() if isinstance(v, bool) else v}"
                  for k, v in nested.items()]
    path = folder / f"{slug}.md"
    path.write_text("\n".join(lines) + "\n---\n\n" + body + "\n", encoding="utf-8")
    return path


def scan(store: Store, **kwargs: Any) -> ScanResult:
    return store.health(now=NOW, **kwargs)


def ids(signal: Any) -> set[Any]:
    return {r.id for r in signal.offending}


def consistent(result: ScanResult) -> None:
    """What ``--json`` promises: a signal graded by thresholds has the status the thresholds
    give its value; one graded by rule has no thresholds. ``n/a`` (docs/health.md: nothing to
    judge) has no value: the thresholds it shows are the ones that would grade one."""
    from store.health.registry import grade

    for sig in result.to_json()["signals"]:
        warn, fail = sig["thresholds"]["warn"], sig["thresholds"]["fail"]
        if sig["status"] == "n/a":
            assert sig["value"] is None, sig["name"]
        elif sig["graded_by"] == "thresholds":
            assert grade(sig["value"], warn, fail) == sig["status"], sig["name"]
        else:
            assert (warn, fail) == (None, None), sig["name"]
