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
