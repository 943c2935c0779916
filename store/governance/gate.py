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

from store.core.models import Memory

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
                "idempotency_key": _key("add", change.path, json.dumps(row, sort_keys=True,
                                                                      default=str))}
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
            "idempotency_key": _key("revise", change.path, m.content_hash,
                                    json.dumps({k: row.get(k) for k in CONTENT},
                                               sort_keys=True, default=str))}


def propose_changes(store: Store, changes: list[FileChange]) -> tuple[list[int], list[str]]:
    """Submit a proposal per change; returns (proposal ids, problems)."""
    from store.governance.apply import submit
    from store.governance.proposals import ProposalError, parse_proposal

    ids, problems = [], []
    for change in changes:
        try:
            info = submit(store, parse_proposal(document(change), origin="file",
                                                source=change.path))
        except (ProposalError, ValueError) as exc:
            problems.append(f"{change.path}: {exc}")
            continue
        ids.append(info.id)
    return ids, problems
