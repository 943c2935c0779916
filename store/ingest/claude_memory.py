"""Claude Code's own memory, imported as memories with how Claude Code loads each file.

The rules are Claude Code's, as its documentation states them
(https://code.claude.com/docs/en/memory; see ``docs/claude-code-memory.md``):

- CLAUDE.md files in the working directory and each of its parents (``CLAUDE.md``,
  ``.claude/CLAUDE.md``, ``CLAUDE.local.md``), the user's ``~/.claude/CLAUDE.md`` and the
  managed policy file load in full at launch; a CLAUDE.md in a folder *below* the working
  directory loads only when Claude reads files there.
- ``.claude/rules/**/*.md``: in full at launch, unless its front matter has ``paths`` (globs):
  then only when Claude reads a file matching one of them.
- ``@path`` in a memory file imports that file, resolved relative to the importing file (``~/``
  from the home folder), recursively up to 5 hops; not inside code spans or blocks.
- auto memory (``~/.claude/projects/<project>/memory/``): the first 200 lines (or 25 KB) of
  ``MEMORY.md`` at start; its topic files only when Claude reads them.
- subagent memory (``.claude/agent-memory/<agent>/``, ``agent-memory-local``): the subagent's
  ``MEMORY.md`` the same way, at the subagent's start.

Each memory's ``front_matter`` (the metadata) holds, under ``claude_code``: ``scope`` (user /
project / local / managed / auto / agent), ``load`` (launch / cut / folder / paths / topic /
import / never), ``how`` (the rule in words), and what the loader signals read: ``lines``,
``loaded_lines`` and ``cut`` for a capped index, ``paths`` and ``project_root`` for a rule,
``imports`` (each ``@path``: line, target, problem) and ``links`` (topic files an index names,
with their line), ``imported_from`` and ``depth`` for an imported file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from store.core import memories
from store.governance.chains import sync_links
from store.ingest.base import BOM, ImportContext, file_problem
from store.ingest.memory_dir import split_front_matter, write_memory

FORMAT = "claude-memory"
META_KEY = "claude_code"
INDEX_LINES = 200
INDEX_BYTES = 25_000
IMPORT_HOPS = 5
MANAGED_ENV = "LCA_TUI_CLAUDE_MANAGED"
"""A managed-policy CLAUDE.md to read instead of the system's (tests, or a policy copied
elsewhere)."""
MANAGED_PATHS = (Path("/etc/claude-code/CLAUDE.md"),
                 Path("/Library/Application Support/ClaudeCode/CLAUDE.md"))

HOW = {
    "launch": "at launch, in full",
    "cut": f"at start, its first {INDEX_LINES} lines (or {INDEX_BYTES:,} bytes) only",
    "folder": "on demand, when Claude reads files in its folder",
    "paths": "on demand, only when Claude reads a file matching its paths",
    "topic": "on demand, when Claude reads it (a topic file of auto memory)",
    "import": "with the file that imports it",
    "never": f"never: imported past the {IMPORT_HOPS}-hop limit",
}

_IMPORT = re.compile(r"(?<![\w`@])@((?:~/|\.{1,2}/|/)?[\w.\-]+(?:/[\w.\-]+)*)")
_LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")


def _managed() -> list[Path]:
    override = os.environ.get(MANAGED_ENV)
    return [Path(override)] if override else list(MANAGED_PATHS)


def is_claude_home(folder: Path) -> bool:
    """``~/.claude``: a ``.claude`` folder with ``projects/`` (where Claude Code keeps
    sessions and auto memory), or the home folder's own."""
    if folder.name != ".claude":
        return False
    return (folder / "projects").is_dir() or folder.resolve() == (Path.home() / ".claude"
                                                                   ).resolve()


def is_project(folder: Path) -> bool:
    """A project folder with Claude Code memory: ``CLAUDE.md``, ``CLAUDE.local.md``, or a
    ``.claude/`` (not a Claude home) with ``CLAUDE.md``, ``rules/`` or ``agent-memory/``."""
    if (folder / "CLAUDE.md").is_file() or (folder / "CLAUDE.local.md").is_file():
        return True
    dot = folder / ".claude"
    return dot.is_dir() and not is_claude_home(dot) and any(
        (dot / n).exists() for n in ("CLAUDE.md", "rules", "agent-memory",
                                     "agent-memory-local"))


def is_auto_memory(folder: Path) -> bool:
    """``…/projects/<project>/memory`` holding ``MEMORY.md``."""
    return (folder.name == "memory" and folder.parent.parent.name == "projects"
            and (folder / "MEMORY.md").is_file())


def is_claude_memory(folder: Path) -> bool:
    return is_claude_home(folder) or is_auto_memory(folder) or is_project(folder)


# -- reading one file ------------------------------------------------------------------------
def _read(ctx: ImportContext, path: Path) -> str | None:
    problem = file_problem(path)
    if problem:
        ctx.report.error(str(path), None, problem)
        return None
    try:
        data = path.read_bytes()
    except OSError as exc:
        ctx.report.error(str(path), None, f"cannot read: {exc.strerror}")
        return None
    data = data.removeprefix(BOM)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        ctx.report.error(str(path), line, "not UTF-8: read with replacement characters")
        return data.decode("utf-8", errors="replace")


def _front(ctx: ImportContext, path: Path, raw: str) -> tuple[dict[str, Any], str]:
    """(front matter mapping, body); front matter that does not parse is reported and left
    out (Claude Code reads the file as text either way)."""
    fm_text, body, _ = split_front_matter(raw)
    if fm_text is None:
        return {}, raw
    try:
        data = yaml.safe_load(fm_text) if fm_text.strip() else {}
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError) as exc:
        ctx.report.error(str(path), 1, f"front matter is not valid YAML "
                         f"({str(exc).splitlines()[0][:120]}): read as text")
        return {}, body
    if not isinstance(data, dict):
        return {}, body
    return data, body


def _outside_code(raw: str) -> list[tuple[int, str]]:
    """(line number, text) of the lines outside fenced code blocks, code spans blanked."""
    out, fenced = [], False
    for n, line in enumerate(raw.split("\n"), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, re.sub(r"`[^`]*`", "", line)))
    return out


def imports_of(raw: str) -> list[tuple[int, str]]:
    """Each ``@path`` of a memory file: (line, path as written). Only tokens that look like a
    path (a ``/``, a ``.`` or ``~/``) count: ``@alice`` in a sentence is a mention."""
    found = []
    for n, line in _outside_code(raw):
        for m in _IMPORT.finditer(line):
            target = m.group(1).rstrip(".")
            if "/" in target or "." in target:
                found.append((n, target))
    return found


def _resolve(base: Path, target: str) -> Path:
    if target.startswith("~/"):
        found = Path.home() / target[2:]
    else:
        found = Path(target) if Path(target).is_absolute() else base.parent / target
    return found.resolve() if found.exists() else found.absolute()


def _index_cut(raw: str) -> tuple[int, int]:
    """(lines in the file, lines loaded at start: the first 200, fewer when 25 KB come
    first)."""
    lines = raw.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    size, loaded = 0, 0
    for line in lines[:INDEX_LINES]:
        size += len(line.encode()) + 1
        if size > INDEX_BYTES:
            break
        loaded += 1
    return len(lines), loaded


# -- the importer ----------------------------------------------------------------------------
class _Run:
    """One import: every file once (the first way it is reached wins), each ``@import``
    followed."""

    def __init__(self, ctx: ImportContext, conn: Any) -> None:
        self.ctx, self.conn = ctx, conn
        self.done: set[Path] = set()

    def add(self, path: Path, scope: str, load: str, **extra: Any) -> str | None:
        """Import one file as a memory; returns its text (None when unreadable or done)."""
        real = path.resolve()
        if real in self.done:
            return None
        self.done.add(real)
        self.ctx.handled.add(real)
        raw = _read(self.ctx, path)
        if raw is None:
            return None
        self.ctx.report.files += 1
        data, body = _front(self.ctx, path, raw)
        parent_how = extra.pop("parent_how", None)
        meta: dict[str, Any] = {"scope": scope, "load": load, "how": HOW[load], **extra}
        if parent_how:  # an import loads when the file at the head of its chain does
            meta.update(how=f"{HOW[load]} ({parent_how})", via=parent_how)
        if load == "cut":
            total, loaded = _index_cut(raw)
            meta.update(lines=total, loaded_lines=loaded, cut=total > loaded)
            meta["links"] = [[n, t] for n, line in enumerate(raw.split("\n"), 1)
                             for t in _LINK.findall(line)]
        if "paths" in data:
            globs = data["paths"]
            meta["paths"] = [str(g) for g in (globs if isinstance(globs, list) else [globs])]
            if load == "launch":
                meta.update(load="paths", how=HOW["paths"])
        depth = int(extra.get("depth", 0))
        imports: list[dict[str, Any]] = []
        for line, target in imports_of(raw):
            resolved = _resolve(path, target)
            problem = None
            if not resolved.is_file():
                problem = "does not resolve"
            elif depth + 1 > IMPORT_HOPS:
                problem = f"past the {IMPORT_HOPS}-hop limit"
            imports.append({"line": line, "path": target, "target": str(resolved),
                            "problem": problem})
        if imports:
            meta["imports"] = imports
        front = {k: v for k, v in data.items() if isinstance(k, str)}
        row = {
            "name": str(data.get("name") or _name(path, scope, extra)),
            "description": str(data["description"]) if data.get("description") else None,
            "type": str(data.get("type") or _kind(path, scope)),
            "body": body.strip("\n") or raw.strip("\n"),
            "tags": "[]",
            "projects": _projects(extra),
            "status": "active", "authority": "unreviewed", "sensitivity": "public",
            "loadable": 0 if load == "never" else 1,
            "load_error": (f"imported past Claude Code's {IMPORT_HOPS}-hop limit: never "
                           "loaded") if load == "never" else None,
            "front_matter": _dump({**front, META_KEY: meta}),
        }
        write_memory(self.ctx, self.conn, path, row)
        for item in imports:
            if item["problem"] == "does not resolve":
                continue
            over = item["problem"] is not None
            self.add(Path(str(item["target"])), scope, "never" if over else "import",
                     imported_from=f"{path.resolve()}:{item['line']}", depth=depth + 1,
                     parent_how=meta.get("via") or meta["how"],
                     **({"project_root": extra["project_root"]}
                        if "project_root" in extra else {}))
        return raw

    def index(self, folder: Path, scope: str, **extra: Any) -> None:
        """An auto-memory or subagent-memory folder: MEMORY.md (cut at start), the rest topic
        files (on demand), subfolders included."""
        self._claim(folder)
        index = folder / "MEMORY.md"
        if index.is_file():
            self.add(index, scope, "cut", **extra)
        for md in sorted(folder.rglob("*.md")):
            if md.is_file() and md != index:
                self.add(md, scope, "topic", **extra)

    def _claim(self, folder: Path) -> None:
        """The walk does not take ``folder`` (or a folder below it) as a layout again."""
        if folder.is_dir():
            self.ctx.handled.add(folder.resolve())
            self.ctx.handled.update(p.resolve() for p in folder.rglob("*") if p.is_dir())

    def rules(self, folder: Path, scope: str, **extra: Any) -> None:
        self._claim(folder)
        for md in sorted(folder.rglob("*.md")):
            if md.is_file():
                self.add(md, scope, "launch", **extra)

    def agents(self, dot: Path, **extra: Any) -> None:
        for kind in ("agent-memory", "agent-memory-local"):
            for agent in sorted(p for p in (dot / kind).glob("*") if p.is_dir()):
                self.index(agent, "agent", agent=agent.name, **extra)

    def home(self, dot: Path) -> None:
        for managed in _managed():
            if managed.is_file():
                self.add(managed, "managed", "launch")
        if (dot / "CLAUDE.md").is_file():
            self.add(dot / "CLAUDE.md", "user", "launch")
        self.rules(dot / "rules", "user")
        self.agents(dot)
        for memory in sorted((dot / "projects").glob("*/memory")):
            if memory.is_dir():
                self.index(memory, "auto", project=memory.parent.name)

    def project(self, root: Path) -> None:
        extra = {"project_root": str(root.resolve())}
        # the named folder is the working folder: its own CLAUDE.md files load at launch
        # (its parents' are not read: a parent is imported when it is named or walked)
        for name, scope in (("CLAUDE.md", "project"), (".claude/CLAUDE.md", "project"),
                            ("CLAUDE.local.md", "local")):
            if (root / name).is_file():
                self.add(root / name, scope, "launch", **extra)
        dot = root / ".claude"
        if dot.is_dir():
            self.ctx.handled.add(dot.resolve())
        self.rules(dot / "rules", "project", **extra)
        self.agents(dot, **extra)
        for nested in _below(root, ("CLAUDE.md", "CLAUDE.local.md")):
            folder = nested.parent
            if folder in (root, dot):
                continue
            self.ctx.handled.add(folder.resolve())
            self.add(nested, "local" if nested.name == "CLAUDE.local.md" else "project",
                     "folder", **extra)


def _below(root: Path, names: tuple[str, ...]) -> list[Path]:
    """Files named ``names`` below ``root``, leaving out the folders the walk never enters
    (``.git``, virtual environments, ``node_modules``, caches): one pass, pruned."""
    from store.ingest.walk_rules import never_holds_sessions

    found = []
    for here, dirs, files in os.walk(root):
        base = Path(here)
        dirs[:] = sorted(d for d in dirs if never_holds_sessions(base / d) is None)
        found += [base / f for f in sorted(files) if f in names]
    return found


def _name(path: Path, scope: str, extra: dict[str, Any]) -> str:
    """``CLAUDE.md (project: shop)``, ``MEMORY.md (auto: -home-ana-shop)``, ``CLAUDE.md
    (user)``; another file by its stem."""
    if path.name not in ("CLAUDE.md", "CLAUDE.local.md", "MEMORY.md"):
        return path.stem
    if scope in ("user", "managed"):
        return f"{path.name} ({scope})"
    where = extra.get("agent") or extra.get("project") or (
        path.parent.parent.name if path.parent.name == ".claude" else path.parent.name)
    return f"{path.name} ({scope}: {where or '/'})"


def _kind(path: Path, scope: str) -> str:
    if path.name == "MEMORY.md":
        return "memory-index"
    if "rules" in path.parts:
        return "rule"
    if path.name in ("CLAUDE.md", "CLAUDE.local.md"):
        return "claude-md"
    return "auto-memory" if scope in ("auto", "agent") else "instructions"


def _projects(extra: dict[str, Any]) -> str:
    import json

    project = extra.get("project_root") or extra.get("project")
    return json.dumps([project] if project else [])


def _dump(data: dict[str, Any]) -> str:
    import json

    return json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)


def import_claude_memory(ctx: ImportContext, folder: Path) -> None:
    """Import a Claude home (``~/.claude``), a project folder, or an auto-memory folder."""
    with ctx.store.write() as conn:
        run = _Run(ctx, conn)
        if is_claude_home(folder):
            run.home(folder)
        elif is_auto_memory(folder):
            run.index(folder, "auto", project=folder.parent.name)
        else:
            run.project(folder)
        memories.resolve_supersedes_refs(conn)
        sync_links(conn, ctx.store)
        details: dict[str, Any] = {"folder": str(folder), "files": len(run.done)}
        ctx.store.audit_in(conn, "import-claude-memory", "memory", [], details)


def loading(front_matter: str | None) -> dict[str, Any] | None:
    """The ``claude_code`` metadata of a memory's stored front matter (None for others)."""
    import json

    if not front_matter or META_KEY not in front_matter:
        return None
    try:
        data = json.loads(front_matter)
    except ValueError:
        return None
    meta = data.get(META_KEY) if isinstance(data, dict) else None
    return meta if isinstance(meta, dict) else None
