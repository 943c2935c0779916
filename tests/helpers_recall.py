"""Small stores for recall tests: memory files written to a folder and imported, and
transcript entries appended through the harness API."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from store import Store
from store.core.writes import NewEntry, NewSession

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def memory_file(folder: Path, slug: str, body: str, **front: Any) -> Path:
    """Write ``<type>_<slug>.md`` with YAML front matter (name defaults to the slug)."""
    front.setdefault("name", slug)
    front.setdefault("type", "reference")
    front.setdefault("created", "2026-05-30")
    path = folder / f"{front['type']}_{slug}.md"
    path.write_text("---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + body + "\n",
                    encoding="utf-8")
    return path


def import_memories(store: Store, folder: Path, memories: list[tuple[str, str, dict[str, Any]]]
                    ) -> dict[str, int]:
    """Write and import memories; returns name → memory id."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MEMORY.md").write_text("# index\n", encoding="utf-8")
    for slug, body, front in memories:
        memory_file(folder, slug, body, **front)
    store.ingest([folder])
    return {m.name: m.id for m in store.memories()}


def add_entries(store: Store, session_id: str, texts: list[tuple[str, str]],
                project: str | None = None, ts: str = "2026-05-31T10:00:00Z") -> list[int]:
    """Append (kind, text) entries to a session through the harness API."""
    session = NewSession(id=session_id, format="test", project=project, started_at=ts)
    return store.append_entries(session, [
        NewEntry(kind, body, source_key=session_id, source_offset=i, ts=ts)
        for i, (kind, body) in enumerate(texts)])


def by_name(result: Any) -> dict[str, Any]:
    """Candidates of a recall keyed by memory name (or ``entry:<id>``)."""
    out = {}
    for c in result.trace.candidates:
        key = c.label if c.source_type == "memory" and c.label else f"{c.source_type}:{c.source_id}"
        out[key] = c
    return out
