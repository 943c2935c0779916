"""lca-tui's MCP server in a client's configuration: install and uninstall, with the care
``settings_file`` takes with Claude Code's ``settings.json`` (both through ``config_file``).

- JSON clients hold ``{"mcpServers": {NAME: {"command", "args", ...}}}``: Claude Code
  (``~/.claude.json``, or a project's ``.mcp.json``), Claude Desktop
  (``claude_desktop_config.json`` where Anthropic documents it: macOS and Windows), Cursor
  (``~/.cursor/mcp.json`` or a project's ``.cursor/mcp.json``), Gemini CLI
  (``~/.gemini/settings.json`` or a project's ``.gemini/settings.json``). Only the
  ``lca-tui`` entry is touched; every other key is kept as it is.
- Codex CLI holds TOML (``$CODEX_HOME/config.toml``, default ``~/.codex``): install appends
  one ``[mcp_servers.lca-tui]`` table between two marker comments and uninstall removes
  exactly those lines (an existing table of that name, not ours, is refused).
- A backup (``FILE.lca-tui.bak``) before every write, the write atomic and through a symlink
  to its target; an install into a file holding nothing of ours keeps its exact bytes
  (``.lca-tui.orig``, or ``.lca-tui.absent`` when there was no file) and an uninstall that
  leaves the same content restores them: install + uninstall is byte-identical.

Standard library only.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.harness.config_file import (
    FilePlan,
    dump,
    read_regular,
    same_json,
    sidecar,
    write_plan,
)
from store.harness.paths import written_store
from store.harness.settings_file import executable

NAME = "lca-tui"
JSON_CLIENTS = ("claude-code", "claude-desktop", "cursor", "gemini")
BEGIN = "# lca-tui: begin (lca-tui mcp install; `lca-tui mcp uninstall --client codex` removes)"
END = "# lca-tui: end"


class ConfigFileError(ValueError):
    """A client configuration that cannot be read or changed safely."""


def config_path(client: str, project: str | Path | None = None) -> Path:
    """The configuration file lca-tui writes for ``client`` (``project``: that project's,
    for the clients that have one)."""
    home = Path.home()
    if project is not None:
        folder = Path(project).expanduser()
        if not folder.is_dir():
            raise ConfigFileError(f"the project folder {project} does not exist (or is not a "
                                  "folder): give an existing project's folder; nothing was "
                                  "written")
        folder = folder.resolve()
        if client == "claude-code":
            return folder / ".mcp.json"
        if client == "cursor":
            return folder / ".cursor" / "mcp.json"
        if client == "gemini":
            return folder / ".gemini" / "settings.json"
        raise ConfigFileError(f"{client} has no per-project MCP configuration; leave out "
                              "--project")
    if client == "claude-code":
        return home / ".claude.json"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "gemini":
        return home / ".gemini" / "settings.json"
    if client == "codex":
        return Path(os.environ.get("CODEX_HOME") or home / ".codex").expanduser() / \
            "config.toml"
    if client == "claude-desktop":
        if sys.platform == "darwin":
            return home / "Library" / "Application Support" / "Claude" / \
                "claude_desktop_config.json"
        if sys.platform == "win32" and os.environ.get("APPDATA"):
            return Path(os.environ["APPDATA"]) / "Claude" / "claude_desktop_config.json"
        raise ConfigFileError("Claude Desktop's configuration path is documented for macOS and "
                              f"Windows only, not for {sys.platform}: nothing was written")
    raise ConfigFileError(f"unknown client {client!r}")


def server_entry(client: str, store: str | None, channel: str = "private",
                 exe: list[str] | None = None) -> dict[str, Any]:
    """The server's entry: how the client starts ``lca-tui mcp``."""
    words = [*(exe or executable()), "mcp"]
    if store:
        try:
            words += ["--store", written_store(store)]
        except ValueError as exc:
            raise ConfigFileError(str(exc)) from exc
    if channel != "private":
        words += ["--channel", channel]
    entry: dict[str, Any] = {"command": words[0], "args": words[1:]}
    if client == "claude-code":
        entry = {"type": "stdio", **entry}
    return entry


@dataclass
class Plan(FilePlan):
    """What an install or uninstall will do to a client's configuration file."""

    client: str
    after: bytes | None  # the file's new bytes (None: unchanged)

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "client": self.client, "action": self.action,
                "changes": self.changes}


def _read(path: Path) -> bytes | None:
    return read_regular(path, ConfigFileError)


def _json(path: Path, raw: bytes | None) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigFileError(f"{path} is not valid JSON ({exc}); fix it first, nothing was "
                              "changed") from exc
    if not isinstance(data, dict):
        raise ConfigFileError(f"{path} holds a JSON {type(data).__name__}, not an object")
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise ConfigFileError(f'{path}: "mcpServers" is not an object; nothing was changed')
    return data


def _toml_block(entry: dict[str, Any]) -> str:
    def q(text: str) -> str:
        return json.dumps(text)  # a JSON string is a valid TOML basic string

    args = ", ".join(q(a) for a in entry["args"])
    return (f"{BEGIN}\n[mcp_servers.{NAME}]\ncommand = {q(entry['command'])}\n"
            f"args = [{args}]\n{END}\n")


def _toml_ours(text: str) -> tuple[int, int] | None:
    """The (start, end) offsets of our block in ``text``, or None."""
    start = text.find(BEGIN)
    if start < 0:
        return None
    end = text.find(END, start)
    if end < 0:
        raise ConfigFileError(f"lca-tui's block in the Codex configuration has no end marker "
                              f"({END!r}); fix it by hand, nothing was changed")
    end += len(END)
    if text[end:end + 1] == "\n":
        end += 1
    return start, end


def _toml_check(path: Path, text: str) -> None:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{path} is not valid TOML ({exc}); fix it first, nothing was "
                              "changed") from exc
    ours = _toml_ours(text)
    rest = text if ours is None else text[:ours[0]] + text[ours[1]:]
    if data is not None and NAME in (tomllib.loads(rest).get("mcp_servers") or {}):
        raise ConfigFileError(f"{path} already has an [mcp_servers.{NAME}] table that lca-tui "
                              "did not write; remove it or leave it, nothing was changed")


def plan_install(path: Path, client: str, entry: dict[str, Any]) -> Plan:
    before = _read(path)
    if client == "codex":
        text = (before or b"").decode("utf-8", "strict") if before else ""
        _toml_check(path, text)
        block = _toml_block(entry)
        ours = _toml_ours(text)
        if ours is not None and text[ours[0]:ours[1]] == block:
            return Plan(path, "install", before, client, None)
        if ours is not None:
            new = text[:ours[0]] + block + text[ours[1]:]
            change = f"[mcp_servers.{NAME}]: updated to {entry['command']} {entry['args']}"
        else:
            sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n")
                                                               else "\n\n")
            new = text + sep + block
            change = f"[mcp_servers.{NAME}]: added {entry['command']} {entry['args']}"
        return Plan(path, "install", before, client, new.encode("utf-8"), changes=[change])
    data = _json(path, before)
    new_data = copy.deepcopy(data)
    servers = new_data.setdefault("mcpServers", {})
    old = servers.get(NAME)
    if old == entry:
        return Plan(path, "install", before, client, None)
    servers[NAME] = entry
    change = (f"mcpServers.{NAME}: {'updated' if old is not None else 'added'} "
              f"{entry['command']} {' '.join(entry['args'])}")
    return Plan(path, "install", before, client, dump(new_data), changes=[change])


def plan_uninstall(path: Path, client: str) -> Plan:
    before = _read(path)
    if before is None:
        return Plan(path, "uninstall", None, client, None)
    if client == "codex":
        text = before.decode("utf-8", "strict")
        ours = _toml_ours(text)
        if ours is None:
            return Plan(path, "uninstall", before, client, None)
        new = text[:ours[0]] + text[ours[1]:]
        return Plan(path, "uninstall", before, client, new.encode("utf-8"),
                    changes=[f"[mcp_servers.{NAME}]: removed"])
    data = _json(path, before)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or NAME not in servers:
        return Plan(path, "uninstall", before, client, None)
    new_data = copy.deepcopy(data)
    del new_data["mcpServers"][NAME]
    pristine = _pristine(path, client)
    if not new_data["mcpServers"] and (pristine is None or "mcpServers" not in pristine):
        del new_data["mcpServers"]  # the install added the table
    return Plan(path, "uninstall", before, client, dump(new_data),
                changes=[f"mcpServers.{NAME}: removed"])


def _pristine(path: Path, client: str) -> dict[str, Any] | None:
    try:
        return _json(path, sidecar(path, "orig").read_bytes())
    except (OSError, ConfigFileError):
        return None


def _same(client: str, a: bytes, b: bytes) -> bool:
    if client == "codex":  # install's blank line before its block goes with the block
        return a == b or a.rstrip(b"\n") == b.rstrip(b"\n")
    return same_json(a, b)


def _holds_ours(client: str, raw: bytes | None) -> bool:
    if raw is None:
        return False
    if client == "codex":
        return BEGIN.encode() in raw
    try:
        data = json.loads(raw.decode("utf-8") or "{}")
    except (UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("mcpServers"), dict) and \
        NAME in data["mcpServers"]


def apply(plan: Plan) -> list[Path]:
    """Carry out ``plan`` (nothing when it changes nothing); returns the files written."""
    if not plan.changed or plan.after is None:
        return []
    return write_plan(plan, plan.after, _holds_ours(plan.client, plan.before),
                      lambda a, b: _same(plan.client, a, b), new_mode=0o600, make_parents=True)


def status(client: str, path: Path) -> dict[str, Any]:
    """Whether ``path`` configures lca-tui's server for ``client``."""
    try:
        raw = _read(path)
    except ConfigFileError as exc:
        return {"path": str(path), "installed": False, "error": str(exc)}
    return {"path": str(path), "installed": _holds_ours(client, raw), "error": None}
