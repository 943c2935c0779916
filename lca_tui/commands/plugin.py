"""``lca-tui plugin path``: where the Claude Code plugin shipped in this package lies
(``lca_tui/plugin``: ``.claude-plugin/plugin.json``, ``hooks/hooks.json`` with the hooks
``lca-tui hooks install`` writes, ``.mcp.json`` starting ``lca-tui mcp``), for
``claude --plugin-dir "$(lca-tui plugin path)"``; the repository's
``.claude-plugin/marketplace.json`` lists it for ``claude plugin install``."""

from __future__ import annotations

import argparse
from pathlib import Path

from lca_tui.output import add_json_flag, console, print_json


def plugin_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "plugin"


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("plugin", parents=parents,
                       help="the Claude Code plugin shipped in this package (plugin path)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    v = verbs.add_parser("path", parents=parents, help="print the plugin folder's path")
    add_json_flag(v)
    v.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    folder = plugin_dir()
    if not (folder / ".claude-plugin" / "plugin.json").is_file():
        raise FileNotFoundError(f"the plugin folder is missing from this installation "
                                f"({folder}): reinstall lca-tui")
    if args.json:
        print_json({"path": str(folder)})
    else:
        console().print(str(folder), markup=False, soft_wrap=True)
    return 0
