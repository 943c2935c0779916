"""Replaying a recorded history of proposals through the gate, at the times it happened (the
demo store is built this way, so its chain was made by approved proposals and its queue holds
proposals whose checks really ran).

A folder of ``*.json`` files, replayed in the order of their ``at``::

    {"at": "2026-01-26T15:20:00Z",            # when it was proposed
     "origin": "consolidation",               # default "api"
     "proposal": { ...a propose document... },
     "targets_by_name": ["Memory name", ...], # targets named, prepended to the proposal's
     "content_from": "file.md",               # the content read from a file beside it
     "decide": {"approve": true, "as": "supersede", "reason": "...", "at": "...",
                "actor": "dana"} | {"reject": "reason", "at": "...", "actor": "dana"}}

Without ``decide`` the proposal stays pending (unless the auto-apply policy takes it). A file
that cannot be replayed raises with its name: the history is the caller's own data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from store.core.db import orm
from store.core.models import Memory
from store.core.timeutil import normalise_iso
from store.core.vocab import Progress
from store.governance.apply import approve, reject, submit
from store.governance.proposals import ProposalError, parse_proposal
from store.governance.records import ProposalInfo

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store


def _memory_named(store: Store, name: str, where: str) -> int:
    with store.read() as conn:
        with orm(conn) as s:
            found = s.exec(select(Memory.id).where(Memory.name == name)
                           .order_by(col(Memory.id).desc())).first()
    if found is None:
        raise ProposalError(f"{where}: no memory named {name!r}")
    return int(found)


def _time(value: Any, where: str) -> str:
    stamp = normalise_iso(str(value)) if value else None
    if stamp is None:
        raise ProposalError(f"{where}: 'at' must be an ISO-8601 time, got {value!r}")
    return stamp


def replay_one(store: Store, path: Path, record: dict[str, Any]) -> ProposalInfo:
    where = path.name
    doc = dict(record.get("proposal") or {})
    named = [_memory_named(store, n, where) for n in record.get("targets_by_name") or []]
    if named:
        given = doc.pop("targets", None) or doc.pop("target", None) or []
        doc["targets"] = named + (given if isinstance(given, list) else [given])
    if record.get("content_from"):
        doc["content"] = (path.parent / str(record["content_from"])).read_text(encoding="utf-8")
    at = _time(record.get("at"), where)
    info = submit(store, parse_proposal(doc, str(record.get("origin") or "api"), where),
                  actor=doc.get("proposer"), now=at)
    decide = record.get("decide")
    if not isinstance(decide, dict) or info.status != "pending":
        return info
    when = _time(decide.get("at") or at, where)
    actor = str(decide.get("actor") or "") or None
    if decide.get("reject"):
        return reject(store, info.id, str(decide["reject"]), actor=actor, now=when)
    if decide.get("approve"):
        return approve(store, info.id, decide.get("as"), decide.get("reason"), actor=actor,
                       now=when)
    return info


def replay_proposals(store: Store, folder: Path, progress: Progress | None = None
                     ) -> list[ProposalInfo]:
    """Replay every ``*.json`` history file in ``folder`` (none when it does not exist);
    ``progress`` hears ``("replaying proposals", done, total)``."""
    if not folder.is_dir():
        return []
    records = []
    for path in sorted(folder.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ProposalError(f"{path.name}: not JSON ({exc})") from None
        records.append((_time(record.get("at"), path.name), path, record))
    out = []
    for i, (_, path, record) in enumerate(sorted(records)):
        if progress:
            progress("replaying proposals", i, len(records))
        out.append(replay_one(store, path, record))
    if progress:
        progress("replaying proposals", len(records), len(records))
    return out
