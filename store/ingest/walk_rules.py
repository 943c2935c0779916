"""Which folders ``ingest DIR`` walks: every one, hidden ones too (``ingest ~`` must find
``~/.claude``, ``~/.codex``, ``~/.gemini``, a ``.claude-sessions/`` folder), except those that
never hold sessions — version-control metadata, virtual environments, package trees and
caches — which are left out and counted in the report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.ingest.base import ImportContext

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


MARKDOWN = "Markdown files of no known memory layout"
CLAUDE_MEMORY = "Claude Code agent, command and skill definitions (not memory)"


def known_memory_layout(ctx: ImportContext, folder: Path) -> bool:
    """Below the folders named on the command line, a folder of Markdown is imported as a
    memory directory only in a layout known here: MindStone's (``MEMORY.md``, ``LOG.md``,
    ``IDENTITY.md``, ``USER.md``, or ``<type>_<slug>.md`` files with front matter) or the
    bound memory directory. Claude Code's memory (``~/.claude``, a project's CLAUDE.md files,
    rules, auto and subagent memory) is imported by ``claude_memory`` from the folder that
    holds it, which claims its folders before the walk reaches them; ``.claude/agents``,
    ``.claude/commands`` and ``.claude/skills`` hold definitions, not memory, and are left
    out; any other Markdown (a blog, a project's docs) too. Each is counted in the report."""
    from store.ingest.acp import has_mindstone_memories

    if folder.resolve() in ctx.roots:
        return True
    parts = folder.resolve().parts
    if ".claude" in parts and (folder.name in ("agents", "commands", "skills")
                               or "skills" in parts):
        ctx.skipped_dirs[CLAUDE_MEMORY] += 1
        return False
    if (folder / "MEMORY.md").is_file() or \
            has_mindstone_memories(folder):
        return True
    ctx.skipped_dirs[MARKDOWN] += sum(1 for p in folder.glob("*.md") if p.is_file()
                                      and p.resolve() not in ctx.handled)
    return False


def skipped_note(ctx: ImportContext) -> str:
    walked = {k: n for k, n in ctx.skipped_dirs.items() if k not in (MARKDOWN, CLAUDE_MEMORY)}
    parts = []
    if walked:
        parts.append("folders that never hold sessions, not walked: " + ", ".join(
            f"{name} ({n})" for name, n in sorted(walked.items())))
    for key in (CLAUDE_MEMORY, MARKDOWN):
        if ctx.skipped_dirs.get(key):
            parts.append(f"{key}, skipped: {ctx.skipped_dirs[key]} (name a folder on the "
                         "command line to import it as a memory directory)")
    return "; ".join(parts)
