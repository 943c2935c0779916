"""A client's configuration file, changed with care: the part ``settings_file`` (Claude Code's
``settings.json``, for ``hooks install``) and ``mcp_config`` (an MCP client's configuration,
for ``mcp install``) share.

A plan says what an install or uninstall will do to one file (``FilePlan``: its bytes before,
the changes in words); ``write_plan`` carries it out: a backup (``FILE.lca-tui.bak``) before
every write, the write atomic and through a symlink to its target; an install into a file
holding nothing of ours keeps its exact bytes (``.lca-tui.orig``, or ``.lca-tui.absent`` when
there was no file) and an uninstall that leaves the same content restores them, so install +
uninstall is byte-identical.

Standard library only.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class FilePlan:
    """What an install or uninstall will do to one file."""

    path: Path
    action: str  # "install" or "uninstall"
    before: bytes | None  # the file's bytes now (None: no file)
    changes: list[str] = field(default_factory=list, kw_only=True)

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def read_regular(path: Path, error: type[ValueError]) -> bytes | None:
    """The file's bytes (None: no file); ``error`` when it is there but not a regular file."""
    if not path.exists():
        return None
    if not path.is_file():
        raise error(f"{path} is not a regular file")
    return path.read_bytes()


def sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(f"{path.name}.lca-tui.{suffix}")


def target_of(path: Path) -> Path:
    """Where writing ``path`` must go: the file a symlink points to (the link is kept, as
    a user who keeps settings.json in a dotfiles repository linked into place expects)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def write_atomic(path: Path, payload: bytes, mode: int | None) -> None:
    """Write ``payload`` to ``path`` (through a symlink, to its target) atomically. Only
    the file's own folder is created (``.claude``), never a tree of folders."""
    path = target_of(path)
    path.parent.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dump(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def same_json(a: bytes, b: bytes) -> bool:
    """Whether two files hold the same JSON (an empty file is ``{}``)."""
    try:
        return json.loads(a.decode("utf-8") or "{}") == json.loads(b.decode("utf-8") or "{}")
    except (UnicodeDecodeError, ValueError):
        return False


def write_plan(plan: FilePlan, after: bytes, ours_now: bool,
               same: Callable[[bytes, bytes], bool], new_mode: int | None = None,
               make_parents: bool = False) -> list[Path]:
    """Carry out ``plan`` (the caller checked it changes something), ``after`` being the
    file's new bytes; ``ours_now``: the file holds our entry already; ``same(a, b)``: two
    contents are the same to the client. Returns the files written."""
    path = plan.path
    mode = path.stat().st_mode & 0o7777 if plan.before is not None else new_mode
    written: list[Path] = []
    backup, orig, absent = sidecar(path, "bak"), sidecar(path, "orig"), sidecar(path, "absent")
    # The backup first. It keeps the user's own file: a file holding nothing of ours is
    # backed up; one holding ours (an uninstall, an update) is only when no backup exists,
    # so the backup made before the install is never replaced by our own version.
    if plan.before is not None and not (ours_now and backup.exists()):
        write_atomic(backup, plan.before, 0o600)
        written.append(backup)
    if plan.action == "install":
        if not ours_now and not orig.exists() and not absent.exists():
            if plan.before is None:
                write_atomic(absent, b"", 0o600)
                written.append(absent)
            else:
                write_atomic(orig, plan.before, 0o600)
                written.append(orig)
        if plan.before is None and make_parents:
            target_of(path).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, after, mode)
        written.append(path)
        return written
    restored = False
    if orig.exists() and same(orig.read_bytes(), after):
        write_atomic(path, orig.read_bytes(), mode)
        restored = True
    elif absent.exists() and same(b"", after):
        target_of(path).unlink()
        restored = True
    if not restored:
        write_atomic(path, after, mode)
    written.append(path)
    orig.unlink(missing_ok=True)
    absent.unlink(missing_ok=True)
    return written
