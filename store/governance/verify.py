"""Verifying that an applied write landed (DESIGN "Consolidation proposals"): the memory
reads back with what was written, its chunks are in both indexes (a vector and an FTS row
each), a search with its own embedding finds it, and each file written to the bound memory
directory reads back with the same name, body, hits and status. The result is stored with
the proposal (``verified``, ``verification``) and as a decision. Each step can fail: a test
seeds each failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlmodel import select

from store.core.vocab import plural
from store.core import vec
from store.core.db import orm
from store.core.models import Chunk, Memory
from store.core.timeutil import now_iso
from store.core import memories
from store.governance.files import read_back
from store.governance.models import Proposal, ProposalDecision

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

KNN_PROBE = 10


def verify(store: Store, op: str, memory_id: int | None, expect: dict[str, Any],
           paths: list[Path]) -> dict[str, Any]:
    """What landed, step by step: ``{"ok": bool, "steps": [{"step", "ok", "detail"}]}``."""
    steps: list[dict[str, Any]] = []

    def step(name: str, ok: bool, detail: str) -> None:
        steps.append({"step": name, "ok": ok, "detail": detail})

    if memory_id is None:
        step("nothing to write", True, f"a {op} writes no memory")
        return {"ok": True, "steps": steps, "ts": now_iso()}
    with store.read() as conn:
        with orm(conn) as s:
            m = s.get(Memory, memory_id)
            chunks = list(s.exec(select(Chunk).where(Chunk.source_type == "memory",
                                                     Chunk.source_id == memory_id)).all())
        if m is None:
            step("reads back", False, f"memory {memory_id} is not in the store")
            return {"ok": False, "steps": steps, "ts": now_iso()}
        wrong = [k for k, v in expect.items() if getattr(m, k) != v]
        step("reads back", not wrong,
             f"memory {memory_id} '{m.name}' ({m.status}) reads back "
             + (f"with a different {', '.join(wrong)}" if wrong else
                f"as written ({', '.join(sorted(expect)) or 'present'})"))
        ok_chunks = [c.id for c in chunks if c.status == "ok" and c.id is not None]
        with_vec, with_fts = vec.indexed(conn, ok_chunks)
        failed = len(chunks) - len(ok_chunks)
        both = bool(ok_chunks) and set(ok_chunks) <= with_vec and set(ok_chunks) <= with_fts
        step("indexed", both and not failed,
             f"{plural(len(ok_chunks), 'chunk')}, {len(with_vec)} with a vector, "
             f"{len(with_fts)} in FTS{f', {failed} failed to embed' if failed else ''}")
        text = memories.index_text(m.name, m.description, m.body, m.invariant)
    qvec = store.embedder.embed([text])[0]
    with store.read() as conn:
        hits = vec.knn(conn, qvec, KNN_PROBE)
    found = [cid for cid, _ in hits if cid in set(ok_chunks)]
    best = next((round(sim, 4) for cid, sim in hits if cid in set(ok_chunks)), None)
    step("found by search", bool(found),
         f"a search with its own embedding ranks chunk {found[0]} (cos {best})" if found
         else f"not among the {KNN_PROBE} nearest vectors to its own embedding")
    for path in paths:
        try:
            fm, body = read_back(path)
        except (OSError, ValueError) as exc:
            step("file", False, f"{path}: {exc}")
            continue
        with store.read() as conn:
            with orm(conn) as s:
                row = s.get(Memory, _memory_of(conn, path) or -1)
        if row is None:
            step("file", False, f"{path}: no memory records this file")
            continue
        same = (fm.get("name") == row.name and body.strip() == row.body.strip()
                and int(fm.get("hits") or 0) == row.hits and fm.get("status") == row.status)
        step("file", same, f"{path.name}: {'reads back as stored' if same else 'differs'} "
             f"(hits {fm.get('hits')}, status {fm.get('status')})")
    return {"ok": all(s["ok"] for s in steps), "steps": steps, "ts": now_iso()}


def _memory_of(conn: Any, path: Path) -> int | None:
    with orm(conn) as s:
        row = s.exec(select(Memory.id).where(Memory.source_file == str(path))).first()
    return int(row) if row is not None else None


def record_verification(store: Store, proposal_id: int, op: str, memory_id: int | None,
                        expect: dict[str, Any], paths: list[Path],
                        now: str | None = None, actor: str | None = None) -> dict[str, Any]:
    """Verify an applied proposal and store the result with it (``now``: its time), recorded
    under the person whose approval it completes (``store.core.actor``)."""
    from store.core.actor import resolve

    who = resolve(actor, store.settings)
    try:
        result = verify(store, op, memory_id, expect, paths)
    except Exception as exc:  # a verification that cannot run is a failed verification
        result = {"ok": False, "steps": [{"step": "verify", "ok": False,
                                          "detail": f"{type(exc).__name__}: {exc}"[:300]}],
                  "ts": now_iso()}
    if now:
        result["ts"] = now
    with store.write() as conn:
        with orm(conn) as s:
            row = s.get(Proposal, proposal_id)
            if row is not None:
                row.verified = int(result["ok"])
                row.verification = json.dumps(result, ensure_ascii=False)
                s.add(row)
                s.add(ProposalDecision(
                    proposal_id=proposal_id, ts=result["ts"], actor=who,
                    decision="verified" if result["ok"] else "verify_failed",
                    reason=None if result["ok"] else "; ".join(
                        st["detail"] for st in result["steps"] if not st["ok"])[:500],
                    writer=store.writer, writer_version=store.writer_version,
                    created_at=now_iso()))
                s.flush()
    return result
