"""The ``lca-tui`` command line: one subcommand per module in ``lca_tui.commands``.

Each command module defines ``register(subparsers, parents)``, adding its parser with
``set_defaults(func=...)``; ``func(args) -> int`` is the exit code. ``--json`` prints one JSON
document on stdout and nothing else; errors go to stderr with a non-zero exit. Importing this
module stays lean: the app (textual) is imported only when the app is opened.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from lca_tui import commands
from lca_tui.output import fail


def _common_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--store", metavar="PATH",
                        help="the store file (default: $LCA_STORE, else "
                             "~/.local/share/lca-tui/store.db)")
    parent.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="NAME=VALUE", help="override a setting for this run "
                        "(repeatable; see `lca-tui config`)")
    return parent


def build_parser() -> argparse.ArgumentParser:
    parent = _common_parent()
    parser = argparse.ArgumentParser(
        prog="lca-tui", parents=[parent],
        description="Inspect and govern the local continuity store of a long-running agent.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        importlib.import_module(f"{commands.__name__}.{info.name}").register(sub, [parent])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        from lca_tui.commands.app import open_app

        return fail_safe(open_app, args)
    return fail_safe(args.func, args)


def fail_safe(func, args) -> int:  # type: ignore[no-untyped-def]
    """Run a command; expected errors become one clear line on stderr and exit 2."""
    from store.errors import StoreError
    from store.settings import SettingsError

    try:
        return int(func(args) or 0)
    except (StoreError, SettingsError, ValueError, FileNotFoundError) as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        return fail("interrupted", code=130)


if __name__ == "__main__":
    sys.exit(main())
