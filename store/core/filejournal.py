"""File changes outside the store (the bound memory directory) made one outcome with a store
transaction, whatever kills the process.

Two journals, one per direction:

- **redo** (an erasure's deleted files, a redaction's rewritten ones): the final state of every
  file (its bytes, or "removed") is recorded in ``store_meta`` under ``files.journal.<id>``
  inside the same transaction as the rows, and played after the commit; the row is deleted
  once every file is in place. Playing is idempotent, so a process killed before or during the
  play leaves a journal the next writer plays to the end (until then the erasure fingerprints
  already refuse the file's content).
- **undo** (an approval's new and rewritten files, placed inside its transaction so that a
  failure can still mark the proposal failed): before the first file is placed, the old bytes
  of every file (or "did not exist") are written, fsynced, to ``<store>.files-undo-<token>``
  beside the store, owner-only; the transaction inserts the marker ``files.committed.<token>``
  with its rows. After a kill, the marker tells which way it went: present, the commit happened
  and the journal is dropped; absent, the files are put back as they were.

``finish`` settles both, under the store's write lock (so never under a live writer); every
write to the bound directory calls it first, and so does ``lca-tui verify``. Files are written
with the store file's permissions (owner-only by default). Temporary files a killed write left
(``.<name>.<random>.tmp``) are removed by the next write in that folder.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, delete, insert
from sqlmodel import col, select

from store.core import faults
from store.core.models import StoreMeta

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

PREFIX = "files.journal."
MARKER = "files.committed."
UNDO_INFIX = ".files-undo-"
DEFAULT_MODE = 0o600
_TMP = re.compile(r"^\..+\.[A-Za-z0-9_]+\.tmp$")

# A test seam: called with a named point ("journal-written", "placed <name>", …) during a
# play; the kill-test suite makes it raise or ``os._exit`` at the Nth point.
Step = Callable[[str], None]


@dataclass(frozen=True)
class FileOp:
    """What one file must end up as: ``data`` (its bytes) or removed (``data`` None)."""

    path: str
    data: str | None


def store_mode(store: Store) -> int:
    """The permission bits bound files get: the store file's read/write bits (0600 when the
    store is owner-only, as it is by default)."""
    try:
        mode = stat.S_IMODE(os.stat(store.path).st_mode) & 0o666
    except OSError:
        return DEFAULT_MODE
    return mode or DEFAULT_MODE


def record(conn: Connection, ops: list[FileOp], label: str) -> str | None:
    """Record ``ops`` in the caller's transaction; returns the journal key (None: no ops)."""
    if not ops:
        return None
    key = f"{PREFIX}{secrets.token_hex(8)}"
    value = json.dumps({"label": label, "ops": [[o.path, o.data] for o in ops]},
                       ensure_ascii=False)
    conn.execute(insert(StoreMeta).values(key=key, value=value))
    return key


def pending(conn: Connection) -> list[tuple[str, str, list[FileOp]]]:
    """(key, label, ops) of every journal not yet played, oldest first is not promised."""
    out = []
    for key, value in conn.execute(select(StoreMeta.key, StoreMeta.value)
                                   .where(col(StoreMeta.key).startswith(PREFIX))
                                   .order_by(col(StoreMeta.key))).all():
        try:
            doc = json.loads(value)
            ops = [FileOp(str(p), None if d is None else str(d)) for p, d in doc["ops"]]
            label = str(doc.get("label") or "")
        except (ValueError, KeyError, TypeError):
            ops, label = [], "unreadable journal"
        out.append((str(key), label, ops))
    return out


def clean_tmp(folder: Path) -> int:
    """Remove temporary files an interrupted atomic write left in ``folder``."""
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if _TMP.match(name):
            p = folder / name
            if p.is_file() and not p.is_symlink():
                p.unlink(missing_ok=True)
                removed += 1
    return removed


def atomic_write(path: Path, data: bytes, mode: int = DEFAULT_MODE,
                 step: Step | None = None) -> None:
    """Put ``data`` at ``path`` atomically (temporary file beside it, fsync, rename), with
    permission bits ``mode`` whatever the umask. A symlink at ``path`` is replaced, never
    written through."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if step is not None:
                step(f"tmp-written {path.name}")
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def apply_ops(ops: list[FileOp], mode: int, step: Step | None = None,
              surrogates: str = "surrogatepass") -> None:
    """Make every file what ``ops`` say (idempotent)."""
    tick = step or faults.point
    for folder in sorted({str(Path(o.path).parent) for o in ops}):
        clean_tmp(Path(folder))
    for op in ops:
        path = Path(op.path)
        if op.data is None:
            if path.is_symlink() or path.exists():
                path.unlink(missing_ok=True)
            tick(f"removed {path.name}")
            continue
        data = op.data.encode("utf-8", surrogates)
        if not path.is_symlink() and path.is_file():
            try:
                same = path.read_bytes() == data and stat.S_IMODE(path.stat().st_mode) == mode
            except OSError:
                same = False
            if same:
                tick(f"placed {path.name}")
                continue
        atomic_write(path, data, mode, tick)
        tick(f"placed {path.name}")


def _marker(token: str) -> str:
    return f"{MARKER}{token}"


def undo_path(store: Store, token: str) -> Path:
    return store.path.parent / f"{store.path.name}{UNDO_INFIX}{token}"


class Undo:
    """The undo journal of one transaction's file placements (see the module docstring)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.token = secrets.token_hex(8)
        self.path = undo_path(store, self.token)

    def begin(self, conn: Connection, before: list[tuple[Path, bytes | None]]) -> None:
        """Write the journal (old bytes of every file), then the marker in ``conn``'s
        transaction; call before placing the first file."""
        doc = {"ops": [[str(p), None if old is None else old.decode("utf-8", "surrogateescape")]
                       for p, old in before]}
        atomic_write(self.path, json.dumps(doc, ensure_ascii=False).encode(
            "utf-8", "surrogateescape"), DEFAULT_MODE)
        faults.point("undo-journal written")
        conn.execute(insert(StoreMeta).values(key=_marker(self.token), value="1"))

    def drop(self) -> None:
        """After the commit (or after putting the files back): the journal is no longer
        needed; the marker goes at the next ``finish``."""
        self.path.unlink(missing_ok=True)

    def forget_marker(self) -> None:
        """After ``drop`` once committed: the marker goes too (a kill in between leaves it
        for ``finish``, which drops markers whose journal is gone)."""
        with self.store.write() as conn:
            conn.execute(delete(StoreMeta).where(col(StoreMeta.key) == _marker(self.token)))


def _settle_undo(store: Store, conn: Connection, mode: int, step: Step) -> int:
    settled = 0
    folder = store.path.parent
    prefix = f"{store.path.name}{UNDO_INFIX}"
    committed = {str(k)[len(MARKER):] for (k,) in conn.execute(
        select(StoreMeta.key).where(col(StoreMeta.key).startswith(MARKER))).all()}
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith(prefix))
    except OSError:
        names = []
    for name in names:
        token = name[len(prefix):]
        path = folder / name
        if token not in committed:
            try:
                doc = json.loads(path.read_text(encoding="utf-8", errors="surrogateescape"))
                ops = [FileOp(str(p), None if d is None else str(d)) for p, d in doc["ops"]]
            except (OSError, ValueError, KeyError, TypeError):
                ops = []  # a journal cut short was written before any file was placed
            apply_ops(ops, mode, step, surrogates="surrogateescape")
        path.unlink(missing_ok=True)
        step("undo-journal dropped")
        settled += 1
    if committed:
        conn.execute(delete(StoreMeta).where(col(StoreMeta.key).startswith(MARKER)))
    return settled


def play(store: Store, key: str | None = None, step: Step | None = None) -> int:
    """Play the journal ``key`` (or every pending one) to the end; returns how many were
    played. Runs under the store's write lock, so two processes never play at once; the
    journal row is deleted only after every file is in place."""
    played = 0
    mode = store_mode(store)
    with store.write() as conn:
        if key is None:
            played += _settle_undo(store, conn, mode, step or faults.point)
        for k, _label, ops in pending(conn):
            if key is not None and k != key:
                continue
            apply_ops(ops, mode, step)
            conn.execute(delete(StoreMeta).where(col(StoreMeta.key) == k))
            (step or faults.point)("journal-deleted")
            played += 1
    return played


def has_pending(store: Store) -> bool:
    """A redo journal or a commit marker in the store, or an undo journal beside it."""
    prefix = f"{store.path.name}{UNDO_INFIX}"
    try:
        if any(n.startswith(prefix) for n in os.listdir(store.path.parent)):
            return True
    except OSError:
        pass
    with store.read() as conn:
        return bool(conn.execute(select(StoreMeta.key).where(
            col(StoreMeta.key).startswith(PREFIX) | col(StoreMeta.key).startswith(MARKER)))
            .first())


def finish(store: Store) -> int:
    """Play what an interrupted write left (cheap when nothing is pending)."""
    return play(store) if has_pending(store) else 0
