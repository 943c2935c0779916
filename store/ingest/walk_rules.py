"""Which folders ``ingest DIR`` walks: every one, hidden ones too (``ingest ~`` must find
``~/.claude``, ``~/.codex``, ``~/.gemini``, a ``.claude-sessions/`` folder), except those that
never hold sessions — version-control metadata, virtual environments, package trees and
caches — which are left out and counted in the report."""

from __future__ import annotations

from pathlib import Path

NEVER_SESSIONS = frozenset({
    ".git", ".hg", ".svn", ".jj", "node_modules", "__pycache__", ".venv", "venv", ".tox",
    ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", ".npm", ".pnpm-store",
    ".yarn", ".cargo", ".rustup", ".gradle", ".m2", ".Trash", "site-packages"})


def never_holds_sessions(folder: Path) -> str | None:
    """Why ``folder`` is not walked (its kind, as the report names it), or None."""
    if folder.name in NEVER_SESSIONS:
        return folder.name
    if (folder / "pyvenv.cfg").is_file():
        return "virtual environments"
    return None
