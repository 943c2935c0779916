"""The bound memory directory behind the gate (DESIGN "The store"; issue 13).

After the bound directory's first import, a file the agent changed, added or deleted there
outside the gate no longer overwrites the stored memory: it becomes a ``revise`` / ``add`` /
``quarantine`` proposal (origin ``file``) whose diff against the last approved version is in
its rationale and on screen 4. The stored memory stays as approved until a person approves.

Usage counters (``hits``, ``prevented``, ``last_applied``) that the agent's loader bumps in its
own files are telemetry, not content: they are taken in place (the larger value wins) without a
proposal, so a busy agent does not flood the queue.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlmodel import col, select

from store.core.db import orm
from store.core.models import Memory
from store.governance.models import Proposal

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

# What a person approves: a change in any of these is a proposal.
CONTENT = ("name", "description", "type", "body", "tags", "projects", "role", "critical",
           "evergreen", "invariant", "sensitivity", "status", "valid_from", "valid_to",
           "supersedes_ref", "half_life_days")
COUNTERS = ("hits", "prevented", "last_applied")
_META = ("name", "description", "tags", "projects", "role", "critical", "evergreen",
         "invariant", "sensitivity", "half_life_days", "valid_from")


@dataclass
class FileChange:
    """A file of the bound directory that differs from the store: ``kind`` is ``add``,
    ``revise`` or ``quarantine``."""

    kind: str
    path: str
    row: dict[str, Any] = field(default_factory=dict)
    memory: Memory | None = None


def is_bound(store: Store, folder: Path) -> bool:
    raw = str(store.settings["memory.dir"] or "").strip()
    if not raw:
        return False
    try:
        return Path(raw).expanduser().resolve() == folder.resolve()
    except OSError:
        return False


def content_changed(memory: Memory, row: dict[str, Any]) -> list[str]:
    """The content fields where ``row`` (a parsed file) differs from ``memory``."""
    out = []
    for key in CONTENT:
        have, new = getattr(memory, key), row.get(key)
        if key in ("tags", "projects"):
            have, new = json.loads(have or "[]"), json.loads(new or "[]")
        if (have or None) != (new or None):
            out.append(key)
    return out


def counters(memory: Memory, row: dict[str, Any]) -> dict[str, Any]:
    """Counter values of ``row`` that move ``memory`` forward (never back)."""
    out: dict[str, Any] = {}
    for key in ("hits", "prevented"):
        if int(row.get(key) or 0) > int(getattr(memory, key) or 0):
            out[key] = int(row[key])
    if row.get("last_applied") and (memory.last_applied or "") < row["last_applied"]:
        out["last_applied"] = row["last_applied"]
    return out


def diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        fromfile=f"{path} (approved)", tofile=f"{path} (file)"))


def _key(*parts: object) -> str:
    raw = "|".join(str(p) for p in parts)
    return "file:" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _metadata(row: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key in _META:
        value = row.get(key)
        if key in ("tags", "projects"):
            value = json.loads(value or "[]")
            if not value:
                continue
        elif key in ("critical", "evergreen"):
            value = bool(value)
        if value is None or value == "":
            continue
        meta[key] = value
    return meta


def document(change: FileChange) -> dict[str, Any]:
    """The proposal document for one change (the ``propose`` format)."""
    row, m = change.row, change.memory
    evidence = [{"file": change.path}]
    if change.kind == "add":
        return {"op": "add", "type": row.get("type") or "project", "content": row["body"],
                "metadata": _metadata(row), "evidence": evidence,
                "rationale": "a file added to the bound memory directory outside the gate",
                "proposer": "lca-tui:memory-dir",
                "idempotency_key": _key("add", change.path, _content(row))}
    assert m is not None and m.id is not None
    if change.kind == "quarantine":
        return {"op": "quarantine", "target": m.id, "evidence": evidence,
                "rationale": ("the file was deleted from the bound memory directory outside "
                              "the gate"),
                "proposer": "lca-tui:memory-dir",
                "idempotency_key": _key("quarantine", change.path, m.content_hash)}
    fields = content_changed(m, row)
    patch = diff(m.body, row["body"], Path(change.path).name)
    plus = sum(1 for ln in patch.splitlines() if ln.startswith("+") and not ln.startswith("+++"))
    minus = sum(1 for ln in patch.splitlines() if ln.startswith("-") and not ln.startswith("---"))
    rationale = (f"the file was changed in the bound memory directory outside the gate "
                 f"({', '.join(fields)}; body +{plus} −{minus} lines against the approved "
                 "version)")
    if patch:
        rationale += "\n" + patch
    return {"op": "revise", "target": m.id, "type": row.get("type") or m.type,
            "content": row["body"], "metadata": _metadata(row), "evidence": evidence,
            "rationale": rationale, "proposer": "lca-tui:memory-dir",
            "idempotency_key": _key("revise", change.path, m.content_hash, _content(row))}


def _content(row: dict[str, Any]) -> str:
    """What a person approves in a parsed file (``CONTENT``), as the idempotency key hashes
    it: counters the agent's loader bumps do not make a new proposal."""
    return json.dumps({k: row.get(k) for k in CONTENT}, sort_keys=True, default=str)


def _pending_for(store: Store, path: str, op: str) -> Proposal | None:
    """The pending file proposal of this op whose evidence is ``path`` (at most one is kept
    per file: a later version of the file updates it)."""
    with store.read() as conn, orm(conn) as s:
        rows = s.exec(select(Proposal).where(Proposal.origin == "file", Proposal.op == op,
                                             Proposal.status == "pending")
                      .order_by(col(Proposal.id))).all()
    for row in rows:
        try:
            pointers = json.loads(row.evidence or "[]")
        except ValueError:
            continue
        if any(isinstance(p, dict) and p.get("file") == path for p in pointers):
            return row
    return None


@dataclass
class Proposed:
    """What ``propose_changes`` did: proposals made, pending ones updated to a later version
    of their file, and problems."""

    added: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        return self.added + self.updated


def propose_changes(store: Store, changes: list[FileChange]) -> Proposed:
    """Submit a proposal per change. A file that already has a pending proposal of the same
    kind updates it (an edit: its history is kept and its checks run again) instead of
    adding a second one; a change already proposed (same content) adds nothing."""
    from store.governance.apply import submit
    from store.governance.proposals import ProposalError, edit, parse_proposal

    out = Proposed()
    for change in changes:
        try:
            new = parse_proposal(document(change), origin="file", source=change.path)
            with store.read() as conn, orm(conn) as s:
                seen = s.exec(select(Proposal.id).where(
                    Proposal.idem_key == new.idem_key)).first()
            if seen is not None:
                continue
            pending = _pending_for(store, change.path, new.op)
            if pending is not None and pending.id is not None:
                try:
                    edit(store, pending.id, {"content": new.content, "type": new.type,
                                             "metadata": new.metadata,
                                             "rationale": new.rationale,
                                             "targets": list(new.targets)},
                         actor="lca-tui:memory-dir",
                         reason="the file changed again outside the gate")
                except ProposalError as exc:
                    if "changes nothing" not in str(exc):
                        raise
                    continue
                out.updated.append(pending.id)
                continue
            out.added.append(submit(store, new).id)
        except (ProposalError, ValueError) as exc:
            out.problems.append(f"{change.path}: {exc}")
    return out
