"""The bound memory directory (setting ``memory.dir``): applied writes land there too, as
Markdown files with YAML front matter in MindStone's field names (plus this project's
``sensitivity``, ``authority``, ``valid_from``, ``valid_to``), ``hits`` and ``prevented``
included, so the agent that loads the directory sees what the store holds.

Files are written atomically (a temporary file in the same directory, fsync, rename), with the
store file's permissions (owner-only by default), and only as the outcome of a store
transaction: ``FileWrites`` stages them, records them in a file journal inside the transaction
(``store.core.filejournal``) and plays it after the commit — a failure before the commit leaves
the store and the directory as they were, a kill after it leaves a journal the next writer
plays to the end. (Recall feedback, ``write_back``, still places its one file just before its
caller commits.) Keys of an existing file that lca-tui does not manage are kept.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from sqlalchemy import Connection
from sqlmodel import col, select

from store.core import faults, filejournal, memories
from store.core.db import orm
from store.core.models import Memory
from store.core.timeutil import parse_iso
from store.governance import file_guard

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

# MindStone's keys in its own order, then this project's.
FIELD_ORDER = ("name", "description", "type", "tags", "projects", "hits", "prevented",
               "last_applied", "created", "half_life_days", "critical", "evergreen", "status",
               "supersedes", "invariant", "role", "sensitivity", "authority", "valid_from",
               "valid_to")
_SLUG = re.compile(r"[^a-z0-9]+")


class MemoryDirError(ValueError):
    """The bound memory directory cannot be written."""


def bound_dir(store: Store) -> Path | None:
    """The bound memory directory, or None when ``memory.dir`` is empty."""
    raw = str(store.settings["memory.dir"] or "").strip()
    if not raw:
        return None
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise MemoryDirError(f"memory.dir {path} is not a directory: create it, or unset "
                             "memory.dir")
    return path.resolve()


def usable_bound_dir(store: Store) -> Path | None:
    """``bound_dir``, or None as well when the setting names no directory (for work that
    only happens when there is one to do it in)."""
    try:
        return bound_dir(store)
    except MemoryDirError:
        return None


def _when(value: str | None) -> Any:
    """A stored time as YAML writes it: a date when it is midnight UTC (MindStone's style)."""
    dt = parse_iso(value)
    if dt is None:
        return value
    if (dt.hour, dt.minute, dt.second, dt.microsecond) == (0, 0, 0, 0):
        return dt.date()
    return dt.astimezone(UTC)


def front_matter(m: Memory, supersedes: str | None, keep: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
    """The front matter of memory ``m`` (kept keys of an existing file first)."""
    values: dict[str, Any] = {
        "name": m.name, "description": m.description, "type": m.type,
        "tags": json.loads(m.tags or "[]"), "projects": json.loads(m.projects or "[]"),
        "hits": m.hits, "prevented": m.prevented, "last_applied": _when(m.last_applied),
        "created": _when(m.created), "half_life_days": m.half_life_days,
        "critical": bool(m.critical), "evergreen": bool(m.evergreen), "status": m.status,
        "supersedes": supersedes, "invariant": m.invariant, "role": m.role,
        "sensitivity": m.sensitivity, "authority": m.authority,
        "valid_from": _when(m.valid_from), "valid_to": _when(m.valid_to)}
    out = {k: v for k, v in (keep or {}).items() if k not in values}
    ordered = {k: values[k] for k in FIELD_ORDER if values.get(k) is not None}
    return {**ordered, **out}


def render(fm: dict[str, Any], body: str) -> str:
    head = yaml.safe_dump(fm, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{head}---\n\n{body.rstrip()}\n"


def _slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")[:60] or "memory"


def inside(path: str | None, folder: Path) -> Path | None:
    if not path or "#" in path:
        return None
    p = Path(path)
    return p if p.parent == folder else None


def path_for(conn: Connection, m: Memory, folder: Path, taken: set[Path]) -> Path:
    """The memory's file: its own when it came from ``folder``, else a new
    ``<type>_<slug>.md`` no other memory or file uses."""
    own = inside(m.source_file, folder)
    if own is not None:
        return own
    stem = _slug(m.name) if is_claude_auto_memory(folder) else \
        f"{_slug(m.type or 'memory')}_{_slug(m.name)}"
    with orm(conn) as s:
        used = {r for r in s.exec(select(Memory.source_file).where(
            col(Memory.source_file).is_not(None))).all()}
    n = 1
    while True:
        candidate = folder / (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
        if (str(candidate) not in used and not candidate.exists()
                and candidate not in taken):
            return candidate
        n += 1


def is_claude_auto_memory(folder: Path) -> bool:
    """A Claude Code auto-memory folder (``~/.claude/projects/<project>/memory``): a new
    memory is written there in Claude Code's layout, a topic file named by its slug and a
    line in ``MEMORY.md`` (the index Claude Code loads at start) linking to it."""
    return folder.name == "memory" and folder.parent.parent.name == "projects"


def index_line(m: Memory, path: Path) -> str:
    """The ``MEMORY.md`` line of a topic file: ``- [name](file.md) — description``."""
    about = (m.description or next((ln.strip() for ln in m.body.splitlines() if ln.strip()),
                                   "")).replace("\n", " ")
    return f"- [{m.name}]({path.name})" + (f" — {about}" if about else "")


def _kept_keys(m: Memory) -> dict[str, Any]:
    try:
        data = json.loads(m.front_matter or "{}")
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if k != file_guard.FILE_HASH_KEY}


def kept_keys(m: Memory) -> dict[str, Any]:
    """The keys of the memory's file that lca-tui does not manage (kept on a rewrite)."""
    return _kept_keys(m)


def supersedes_ref(conn: Connection, m: Memory, folder: Path) -> str | None:
    """What the memory's file says it supersedes (the old file's stem, else its name)."""
    return _supersedes_ref(conn, m, folder)


def _supersedes_ref(conn: Connection, m: Memory, folder: Path) -> str | None:
    if m.supersedes_id is None:
        return m.supersedes_ref
    with orm(conn) as s:
        old = s.get(Memory, m.supersedes_id)
    if old is None:
        return m.supersedes_ref
    own = inside(old.source_file, folder)
    return own.stem if own is not None else old.name


class FileWrites:
    """Files staged during a store transaction, put in place all together or not at all."""

    def __init__(self) -> None:
        self.staged: dict[Path, str] = {}
        self.indexes: set[Path] = set()  # staged MEMORY.md indexes (no memory's own file)
        self._done: list[tuple[Path, bytes | None]] = []
        self._before: dict[int, list[str] | None] = {}  # guard(): the file before the write
        self._undo: filejournal.Undo | None = None

    def guard(self, conn: Connection, store: Store, memory_id: int) -> None:
        """Before a write changes memory ``memory_id``: note whether its bound file changed
        on disk since lca-tui read or wrote it (``file_guard``), so ``stage_memory`` can
        refuse to overwrite it. Call it before the memory's content changes."""
        folder = bound_dir(store)
        m = memories.get(conn, memory_id)
        own = inside(m.source_file, folder) if folder is not None and m is not None else None
        if own is not None and m is not None:
            self._before.setdefault(memory_id, file_guard.changed_on_disk(own, m))

    def stage_memory(self, conn: Connection, store: Store, memory_id: int, *,
                     new_file: bool = True) -> Path | None:
        """Stage memory ``memory_id``'s file in the bound directory (None when unbound, or
        when ``new_file`` is False and the memory has no file there, or its file was
        deleted: approving a deleted file's quarantine, or a reinforce of its memory, does not
        bring the file back). A file changed on disk since lca-tui read or wrote it is not
        overwritten: ``file_guard.FileConflict`` (see ``guard``). A memory given a new
        file records it (``source_file``, ``front_matter``) through the memory-write module,
        with the hash of the bytes written; the caller re-indexes it (its content hash
        changed)."""
        folder = bound_dir(store)
        if folder is None:
            return None
        m = memories.get(conn, memory_id)
        if m is None:
            raise LookupError(f"no memory {memory_id}")
        own = inside(m.source_file, folder)
        if own is not None and not own.exists():
            return None  # the agent deleted it: a deleted file stays gone, whatever the op
        if not new_file and own is None:
            return None
        extra: dict[str, Any] = {}
        if own is not None:  # never overwrite what the agent changed (file_guard)
            before = self._before.get(memory_id) if memory_id in self._before \
                else file_guard.changed_on_disk(own, m)
            extra = file_guard.check(own, before, m, FIELD_ORDER)
        path = path_for(conn, m, folder, set(self.staged))
        ref = _supersedes_ref(conn, m, folder)
        fm = front_matter(m, ref, {**_kept_keys(m), **extra})
        self.staged[path] = render(fm, m.body)
        if own is None and is_claude_auto_memory(folder):
            self._index(folder, m, path)
        digest = file_guard.sha256_bytes(self.staged[path].encode("utf-8"))
        changes: dict[str, Any] = {}
        if m.source_file != str(path) or file_guard.recorded_hash(m) != digest:
            changes = {"source_file": str(path),
                       "front_matter": json.dumps({**fm, file_guard.FILE_HASH_KEY: digest},
                                                  default=_json_default, ensure_ascii=False)}
        if ref is not None and m.supersedes_ref != ref:
            # the file names what it supersedes as the importer will read it back: the
            # gate's own write is not a change made outside the gate
            changes["supersedes_ref"] = ref
        if changes:
            memories.update(conn, store, memory_id, changes, index=False)
        return path

    def _index(self, folder: Path, m: Memory, path: Path) -> None:
        """Stage ``MEMORY.md`` with a line linking the new topic file (unless it already
        links it), written and undone with the other staged files."""
        index = folder / "MEMORY.md"
        text = self.staged.get(index)
        if text is None:
            text = index.read_text(encoding="utf-8") if index.is_file() else ""
        if f"]({path.name})" in text:
            return
        if text and not text.endswith("\n"):
            text += "\n"
        self.staged[index] = text + index_line(m, path) + "\n"
        self.indexes.add(index)

    def claim_file(self, conn: Connection, store: Store, memory_id: int,
                   evidence: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> Path | None:
        """Link a new memory to the bound-directory file it was proposed from (an ``add``
        of a file the agent wrote outside the gate): that file becomes its own, so
        ``stage_memory`` rewrites it in place instead of writing a second copy. The file's
        front matter is kept (keys lca-tui does not manage survive). None when no evidence
        names a file of the bound directory that no other memory owns."""
        folder = usable_bound_dir(store)
        if folder is None:
            return None
        for pointer in evidence:
            path = inside(str(pointer.get("file") or ""), folder)
            if path is None or memories.find(conn, source_file=str(path)) is not None:
                continue
            try:
                fm, _ = read_back(path)
            except (OSError, ValueError, yaml.YAMLError):
                fm = {}
            memories.update(conn, store, memory_id, {
                "source_file": str(path),
                "front_matter": json.dumps(fm, default=_json_default, ensure_ascii=False)},
                index=False)
            return path
        return None

    def journal(self, conn: Connection, label: str) -> str | None:
        """Record the staged files as a redo journal in the caller's transaction
        (``filejournal``); the caller plays it after its commit."""
        return filejournal.record(conn, [filejournal.FileOp(str(p), body)
                                         for p, body in self.staged.items()], label)

    def commit(self, conn: Connection | None = None, store: Store | None = None) -> None:
        """Put every staged file in place atomically; on a failure, undo those already
        placed and raise. With ``conn`` and ``store``: first an undo journal of the old bytes
        and its commit marker in ``conn``'s transaction (``filejournal.Undo``), so that a kill
        before the commit is undone by the next writer; call ``done`` after the commit."""
        mode = filejournal.store_mode(store) if store is not None else filejournal.DEFAULT_MODE
        before = [(p, p.read_bytes() if p.is_file() and not os.path.islink(p) else None)
                  for p in self.staged]
        try:
            if conn is not None and store is not None and self.staged:
                self._undo = filejournal.Undo(store)
                self._undo.begin(conn, before)
            for folder in {p.parent for p in self.staged}:
                filejournal.clean_tmp(folder)
            for (path, body), (_, old) in zip(self.staged.items(), before, strict=True):
                filejournal.atomic_write(path, body.encode("utf-8"), mode, faults.point)
                self._done.append((path, old))
                faults.point(f"placed {path.name}")
        except BaseException:
            self.rollback()
            raise

    def done(self) -> None:
        """The transaction committed: the undo journal and its marker are no longer
        needed."""
        if self._undo is not None:
            self._undo.drop()
            self._undo.forget_marker()
            self._undo = None
        self._done.clear()

    def rollback(self) -> None:
        """Put back what the files held before ``commit`` (remove files it created)."""
        while self._done:
            path, old = self._done.pop()
            if old is None:
                path.unlink(missing_ok=True)
            else:
                filejournal.atomic_write(path, old, filejournal.DEFAULT_MODE)
        if self._undo is not None:
            self._undo.drop()
            self._undo = None


def _json_default(value: Any) -> str:
    return value.isoformat() if isinstance(value, (date, datetime)) else str(value)


def write_back(conn: Connection, store: Store, memory_id: int) -> Path | None:
    """Rewrite one memory's file in the bound directory now (recall feedback: ``hits`` /
    ``prevented``), inside the caller's transaction; None when no directory is bound, the
    memory's file is not in it or was deleted, or the file changed on disk since lca-tui
    read or wrote it (``file_guard``: it is left alone and ``memory_file_conflict`` is
    audited; the feedback itself is kept). Any other failure raises, so the caller's
    transaction rolls back."""
    folder = usable_bound_dir(store)
    if folder is None:
        return None
    files = FileWrites()
    try:
        path = files.stage_memory(conn, store, memory_id, new_file=False)
    except file_guard.FileConflict:
        # the feedback is kept; the file stays as the agent wrote it, and the log says so
        store.audit_in(conn, "memory_file_conflict", "memory", [memory_id],
                       {"write_back": 1})
        return None
    if path is None:
        return None
    files.commit(None, store)
    return path


def read_back(path: Path) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a memory file, for verification."""
    raw = path.read_text(encoding="utf-8")
    if not raw.startswith("---\n"):
        raise ValueError(f"{path} has no front matter")
    head, _, body = raw[4:].partition("\n---\n")
    data = yaml.safe_load(head)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: front matter is not a mapping")
    return data, body.strip("\n")
