"""lca-tui's entries in Claude Code's ``settings.json``: install, uninstall, status.

Claude Code runs command hooks listed under ``"hooks"``: ``{event: [{"matcher"?: ...,
"hooks": [{"type": "command", "command": ..., "timeout": s}]}]}``. Ours are the commands that
run ``lca-tui hook EVENT`` (recognised by their words, wherever the executable lives: the
CLI installs ``python -S …/lca_tui/hook_client.py hook EVENT``, its fast form); every other
entry is left exactly as it is.

- Install is idempotent: an entry of ours already there is kept (its command updated in place
  if the executable or store moved), a duplicate of ours is dropped, a missing one appended as
  a group of its own. Uninstall removes ours and any group, event or ``"hooks"`` table that
  held only ours and that the install added (an empty one the file had is kept).
- The file is backed up (``settings.json.lca-tui.bak``) before a write (a file already
  holding ours only when there is no backup yet: the user's own version is the one kept),
  and written atomically — through a symlink to its target, the link kept. When an install
  finds nothing of ours, the file's exact bytes are kept
  (``settings.json.lca-tui.orig``, or ``.lca-tui.absent`` when there was no file): an uninstall
  that leaves the same JSON restores those bytes, so install + uninstall is byte-identical.
  That care is ``config_file``'s, shared with ``mcp_config``.

Standard library only.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.harness.paths import written_store
from store.harness.config_file import (
    FilePlan,
    dump,
    read_regular,
    same_json,
    sidecar,
    write_plan,
)

# event → Claude Code's timeout for our command, seconds. UserPromptSubmit and Stop only store
# what is new (and recall); PreCompact and SessionEnd embed and checkpoint.
EVENTS: dict[str, int] = {"UserPromptSubmit": 30, "Stop": 30, "PreCompact": 300,
                          "SessionEnd": 300}


class SettingsFileError(ValueError):
    """A settings.json that cannot be read or changed safely."""


def settings_path(project: str | Path | None = None, user: bool = False) -> Path:
    """The user's ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR`` if set), or a
    project's ``.claude/settings.json`` (the current directory by default)."""
    if user:
        base = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
        return Path(base).expanduser() / "settings.json"
    return Path(project or Path.cwd()).expanduser().resolve() / ".claude" / "settings.json"


def executable() -> list[str]:
    """How to run this lca-tui: its console script when that is what runs, else
    ``python -m lca_tui.cli`` with this interpreter."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "lca-tui" and script.exists():
        return [str(script.resolve())]
    return [sys.executable, "-m", "lca_tui.cli"]


# Appended to every command: whatever exit status the command has when it cannot run at all
# (its interpreter or file gone: 127, Python's 2 for a missing script) becomes 1, a hook error
# Claude Code shows and goes on from; 2 would block the user's prompt. A hook that runs always
# exits 0 (lca_tui.commands.hook).
NEVER_BLOCK = " || exit 1"


def hook_command(event: str, store: Path | str | None, exe: list[str] | None = None) -> str:
    words = [*(exe or executable()), "hook", event]
    if store is not None:
        try:
            words += ["--store", written_store(store)]
        except ValueError as exc:
            raise SettingsFileError(str(exc)) from exc
    return shlex.join(words) + NEVER_BLOCK


def is_ours(command: Any) -> bool:
    """Whether a hook command runs ``lca-tui hook ...``: the console script, ``python -m
    lca_tui.cli``, or ``python -S …/lca_tui/hook_client.py`` (what install writes)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for i, word in enumerate(words[:-1]):
        if words[i + 1] != "hook":
            continue
        if Path(word).name == "lca-tui" or (word == "lca_tui.cli" and i and words[i - 1] == "-m"):
            return True
        if Path(word).parts[-2:] == ("lca_tui", "hook_client.py"):  # hooks install's own
            return True
    return False


def _ours(entry: Any) -> bool:
    return isinstance(entry, dict) and is_ours(entry.get("command"))


def _hook_event(command: str) -> str | None:
    words = shlex.split(command)
    i = words.index("hook")
    return words[i + 1] if i + 1 < len(words) else None


@dataclass
class Plan(FilePlan):
    """What an install or uninstall will do to ``settings.json``."""

    data: dict[str, Any]  # the JSON it will hold

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "action": self.action, "changes": self.changes,
                "settings": self.data}


def _load(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    raw = read_regular(path, SettingsFileError)
    if raw is None:
        return None, {}
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise SettingsFileError(f"{path} is not valid JSON ({exc}); fix it first, nothing "
                                "was changed") from exc
    if not isinstance(data, dict):
        raise SettingsFileError(f"{path} holds a JSON {type(data).__name__}, not an object")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise SettingsFileError(f'{path}: "hooks" is not an object; nothing was changed')
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list) or not all(
                isinstance(g, dict) and isinstance(g.get("hooks", []), list) for g in groups):
            raise SettingsFileError(f'{path}: "hooks.{event}" is not a list of groups with a '
                                    '"hooks" list; nothing was changed')
    return raw, data


def _holds_ours(data: dict[str, Any]) -> bool:
    return any(_ours(h) for groups in (data.get("hooks") or {}).values()
               for g in groups for h in g.get("hooks", []))


def plan_install(path: Path, store: Path | str | None, exe: list[str] | None = None) -> Plan:
    before, data = _load(path)
    plan = Plan(path, "install", before, copy.deepcopy(data))
    hooks = plan.data.setdefault("hooks", {})
    for event, timeout in EVENTS.items():
        wanted = {"type": "command", "command": hook_command(event, store, exe),
                  "timeout": timeout}
        groups = hooks.setdefault(event, [])
        found = False
        for group in groups:
            kept = []
            for entry in group.get("hooks", []):
                if not _ours(entry):
                    kept.append(entry)
                elif found:
                    plan.changes.append(f"{event}: removed a duplicate lca-tui hook")
                else:
                    found = True
                    if entry != wanted:
                        plan.changes.append(f"{event}: updated {entry.get('command')!r} to "
                                            f"{wanted['command']!r}")
                        entry = wanted
                    kept.append(entry)
            group["hooks"] = kept
        if not found:
            groups.append({"hooks": [wanted]})
            plan.changes.append(f"{event}: added {wanted['command']!r}")
        hooks[event] = [g for g in groups if g.get("hooks") or g in data.get("hooks", {})
                        .get(event, [])]
    return plan


def _pristine(path: Path) -> dict[str, Any] | None:
    """The file as it was before lca-tui's install touched it (the ``.orig`` kept then), or
    None when there is no such record (or it cannot be read)."""
    try:
        raw = sidecar(path, "orig").read_bytes()
        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def plan_uninstall(path: Path) -> Plan:
    """Remove our entries, and the containers install added for them: a group that held
    only ours; an event list, or the ``"hooks"`` table, left empty — unless the file held
    that container before the install (``.orig``), empty or not."""
    before, data = _load(path)
    plan = Plan(path, "uninstall", before, copy.deepcopy(data))
    hooks = plan.data.get("hooks")
    if not isinstance(hooks, dict):
        return plan
    had = _pristine(path)
    had_hooks = had.get("hooks") if had is not None else None
    had_events = set(had_hooks) if isinstance(had_hooks, dict) else set()
    for event in list(hooks):
        groups = hooks[event]
        new_groups = []
        for group in groups:
            entries = group.get("hooks", [])
            kept = [h for h in entries if not _ours(h)]
            for h in entries:
                if _ours(h):
                    plan.changes.append(f"{event}: removed {h.get('command')!r}")
            if kept or len(kept) == len(entries):  # keep groups that were empty already
                new_groups.append(dict(group, hooks=kept))
        if new_groups or not groups or event in had_events:
            hooks[event] = new_groups
        else:
            del hooks[event]
    if not hooks and data.get("hooks") and not isinstance(had_hooks, dict):
        del plan.data["hooks"]
    return plan


def apply(plan: Plan) -> list[Path]:
    """Carry out ``plan`` (nothing when it changes nothing); returns the files written."""
    if not plan.changed:
        return []
    ours_now = plan.before is not None and _holds_ours(_load(plan.path)[1])
    return write_plan(plan, dump(plan.data), ours_now, same_json)


def status(path: Path) -> dict[str, Any]:
    """Which events run lca-tui in ``path``, with their commands."""
    try:
        _, data = _load(path)
    except SettingsFileError as exc:
        return {"path": str(path), "exists": path.exists(), "error": str(exc), "events": {}}
    events: dict[str, list[str]] = {}
    for event, groups in (data.get("hooks") or {}).items():
        for g in groups:
            for h in g.get("hooks", []):
                if _ours(h):
                    events.setdefault(event, []).append(str(h.get("command")))
    missing = [e for e in EVENTS if e not in events]
    return {"path": str(path), "exists": path.exists(), "events": events, "missing": missing,
            "installed": not missing}


def plugin_enabled(project: str | Path | None = None) -> list[Path]:
    """The settings files (the user's, the project's and its local one) that enable
    lca-tui's Claude Code plugin (``"enabledPlugins": {"lca-tui@…": true}``). Its hooks
    stand aside while the ones ``hooks install`` writes are present (its ``bin/lca-tui-run``
    checks), so the two never both fire."""
    folder = Path(project or Path.cwd()).expanduser()
    found = []
    for path in (settings_path(user=True), folder / ".claude" / "settings.json",
                 folder / ".claude" / "settings.local.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        enabled = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(enabled, dict) and any(
                str(k).split("@")[0] == "lca-tui" and v is True for k, v in enabled.items()):
            found.append(path)
    return found
