"""A store with one big session (its entries bulk-inserted, no chunks or vectors): what a
paged table is tested and measured on."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import insert

from store import Store
from store.core.models import Entry, Memory
from store.core.models import Session as SessionRow

BIG = "big-session-0001"
KINDS = ("user", "assistant", "tool_call", "tool_result")


def big_store(path: Path, entries: int, *, batch: int = 20_000) -> Path:
    """A store at ``path`` whose session ``BIG`` holds ``entries`` entries (seq 1..n, kinds
    in turn, every 7th written by the worker ``w1``), written in bulk: 200k in seconds."""
    store = Store(path)
    who = {"writer": "test:paging", "writer_version": "0", "created_at": "2026-01-01T00:00:00Z"}
    with store.write() as conn:
        conn.execute(insert(SessionRow.__table__), [{  # type: ignore[attr-defined]
            "id": BIG, "agent": "claude-code", "surface": "cli", "project": "/work/big",
            "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-02T00:00:00Z",
            "source": "test", "format": "claude-code", **who}])
        for start in range(0, entries, batch):
            conn.execute(insert(Entry.__table__), [{  # type: ignore[attr-defined]
                "session_id": BIG, "agent": "w1" if n % 7 == 0 else "main", "seq": n,
                "ts": f"2026-01-01T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:{n % 60:02d}Z",
                "kind": KINDS[n % 4], "content": f"entry number {n}", "content_hash": str(n),
                "tokens": 8, "idem_key": f"big:{n}", **who}
                for n in range(start + 1, min(start + batch, entries) + 1)])
    store.close()
    return path


MEMORY_TYPES = ("feedback", "project", "reference", "user")


def big_memories(path: Path, memories: int, *, batch: int = 20_000) -> Path:
    """A store at ``path`` holding ``memories`` memories (types in turn, every 5th
    superseded, every 11th tagged ``db``), written in bulk."""
    store = Store(path)
    who = {"writer": "test:paging", "writer_version": "0", "created_at": "2026-01-01T00:00:00Z"}
    with store.write() as conn:
        for start in range(0, memories, batch):
            conn.execute(insert(Memory.__table__), [{  # type: ignore[attr-defined]
                "name": f"memory-{n:06d}", "description": f"about thing {n}",
                "type": MEMORY_TYPES[n % 4], "body": f"the body of memory {n}",
                "tags": '["db"]' if n % 11 == 0 else "[]",
                "status": "superseded" if n % 5 == 0 else "active",
                "content_hash": str(n), "updated_at": "2026-01-01T00:00:00Z", **who}
                for n in range(start + 1, min(start + batch, memories) + 1)])
    store.close()
    return path
