"""Where the store lives by default, in the standard library alone: a hook answered by the
daemon must find the store's socket without importing SQLAlchemy."""

from __future__ import annotations

import os
from pathlib import Path


def default_store_path() -> Path:
    """``$LCA_STORE``, else ``$XDG_DATA_HOME/lca-tui/store.db`` (``~/.local/share/...``)."""
    explicit = os.environ.get("LCA_STORE")
    if explicit:
        return Path(explicit).expanduser()
    return default_folder() / "store.db"


def default_folder() -> Path:
    """Where lca-tui keeps its own files: ``$XDG_DATA_HOME/lca-tui`` (created on demand)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "lca-tui"


def blocking_file(path: Path) -> Path | None:
    """The nearest ancestor of ``path`` that exists but is not a folder (``/etc/passwd`` for
    ``/etc/passwd/x/store.db``), or None: no folder can be made under it."""
    for parent in path.parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else parent
    return None


def not_a_folder(path: Path) -> str | None:
    """A one-line reason why no store file can be made at ``path`` because an ancestor is a
    file, or None."""
    blocker = blocking_file(path)
    if blocker is None:
        return None
    return (f"cannot use {path}: {blocker} is a file, not a folder, so nothing can be created "
            "under it; name a store file in a folder (--store or $LCA_STORE)")
