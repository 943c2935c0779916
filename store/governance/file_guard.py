"""Never overwrite a bound memory file behind the agent's back (issue 10, review defect 1).

Before lca-tui rewrites a memory's file in the bound directory it asks whether the file on
disk changed since lca-tui last wrote it (the SHA-256 of the bytes it wrote is kept in the
memory's ``front_matter`` under ``FILE_HASH_KEY``, never written into the file) or, for a file
lca-tui has not written yet (imported, claimed), whether the file still says what the store
holds (body, name, description, type, tags, critical, invariant). A file changed that way is
rewritten only when nothing would be lost: it already says what the store now holds
(approving the revise the agent's own edit became), no counter of it is ahead of the store's,
and its keys lca-tui does not manage are kept; otherwise the write-back is refused with
``FileConflict``:

- applying a proposal: the whole apply rolls back and the proposal is ``failed`` with the
  reason (nothing half-written; import the directory so the change is proposed, then approve
  again);
- recall feedback (``files.write_back``): the counters are stored, the file is left as the
  agent wrote it and an audit event ``memory_file_conflict`` says so.

A file that was deleted is not brought back (``files.stage_memory``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from store.core.models import Memory

FILE_HASH_KEY = "_lca_file_sha256"
_COMPARED = ("name", "description", "type", "invariant")


class FileConflict(RuntimeError):
    """The bound memory file changed on disk since lca-tui read or wrote it."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def recorded_hash(m: Memory) -> str | None:
    """The hash of the bytes lca-tui last wrote to ``m``'s file (None: never written)."""
    try:
        data = json.loads(m.front_matter or "{}")
    except ValueError:
        return None
    value = data.get(FILE_HASH_KEY) if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _parse(raw: bytes) -> tuple[dict[str, Any], str] | None:
    """(front matter, body) of a memory file's bytes; None when it cannot be read as one."""
    try:
        text = raw.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None
    if not text.startswith("---\n"):
        return {}, text.strip("\n")
    head, sep, body = text[4:].partition("\n---")
    if not sep:
        return None
    try:
        data = yaml.safe_load(head)
    except yaml.YAMLError:
        return None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None
    return data, body.lstrip("-").strip("\n")


def differs(raw: bytes, m: Memory) -> list[str]:
    """What the file's bytes say differently from memory ``m`` (its content, not counters
    or lifecycle): ``["unreadable"]`` when they cannot be read as a memory file."""
    parsed = _parse(raw)
    if parsed is None:
        return ["unreadable"]
    fm, body = parsed
    out = []
    if body.strip() != (m.body or "").strip():
        out.append("body")
    for key in _COMPARED:
        if key in fm and (str(fm[key]).strip() if fm[key] is not None else None) != (
                (getattr(m, key) or "").strip() or None):
            out.append(key)
    if "tags" in fm:
        tags = fm["tags"] if isinstance(fm["tags"], list) else [fm["tags"]]
        if [str(t) for t in tags if t is not None] != json.loads(m.tags or "[]"):
            out.append("tags")
    if "critical" in fm and bool(fm["critical"]) != bool(m.critical):
        out.append("critical")
    return out


def changed_on_disk(path: Path, m: Memory) -> list[str] | None:
    """Whether ``path`` changed since lca-tui last wrote it or, never written by lca-tui, no
    longer says what memory ``m`` (as stored before this write) holds: the reasons, or None
    when unchanged or missing."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    recorded = recorded_hash(m)
    if recorded is not None:
        return None if sha256_bytes(raw) == recorded else ["bytes"]
    return differs(raw, m) or None


def check(path: Path, before: list[str] | None, after: Memory,
          managed: tuple[str, ...]) -> dict[str, Any]:
    """Raise ``FileConflict`` when the file changed (``before``: what ``changed_on_disk``
    said before the write) and rewriting it would lose something: content that differs
    from what ``after`` holds, or a counter (``hits``, ``prevented``) the agent's loader
    took past the store's. Otherwise the front-matter keys of the file that lca-tui does not
    manage (``managed``), to keep when it is rewritten."""
    if not before:
        return {}
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    still = differs(raw, after)
    parsed = _parse(raw)
    fm = parsed[0] if parsed is not None else {}
    for key in ("hits", "prevented"):
        try:
            ahead = int(fm.get(key) or 0) > int(getattr(after, key) or 0)
        except (TypeError, ValueError):
            ahead = True
        if ahead:
            still.append(key)
    if still:
        what = "changed on disk" if before == ["bytes"] else f"differs ({', '.join(before)})"
        raise FileConflict(
            f"memory file {path} {what} since lca-tui last read or wrote it; it was not "
            f"overwritten ({', '.join(still)} differ from memory {after.id}): import the "
            "directory so the change is proposed, then approve again")
    return {k: v for k, v in fm.items() if k not in managed and k != FILE_HASH_KEY}
