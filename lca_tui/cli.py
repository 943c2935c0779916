"""The ``lca-tui`` command line: one subcommand per module in ``lca_tui.commands``.

Each command module defines ``register(subparsers, parents)``, adding its parser with
``set_defaults(func=...)``; ``func(args) -> int`` is the exit code. ``--json`` prints one JSON
document on stdout and nothing else; errors go to stderr with a non-zero exit. Importing this
module stays lean: the app (textual) is imported only when the app is opened.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: a hook the daemon answers needs none of them
    import argparse
    from collections.abc import Sequence


def _add_common(parser: argparse.ArgumentParser, top: bool) -> None:
    import argparse

    """``--store`` and ``--set``, accepted before or after the command.

    The command's copies default to SUPPRESS so that they never overwrite what was given
    before the command; ``--set`` values from both places are merged (``output.settings_from``).
    """
    parser.add_argument("--store", metavar="PATH|URL",
                        default=None if top else argparse.SUPPRESS,
                        help="the store file, or a PostgreSQL server with pgvector "
                             "(postgresql://user@host:port/db) (default: $LCA_STORE, else "
                             "the store.url setting, else ~/.local/share/lca-tui/store.db)")
    parser.add_argument("--actor", metavar="NAME", default=None if top else argparse.SUPPRESS,
                        help="the person recorded on decisions, audit events and tombstones "
                        "(default: $LCA_ACTOR, the identity.name setting, else your OS "
                        "account)")
    parser.add_argument("--read-only", action="store_true",
                        default=False if top else argparse.SUPPRESS,
                        help="open the store with every writing action refused (approve, "
                        "erase, fixes, ...): nothing is written, not even a recall's trace "
                        "(the store.read_only setting)")
    parser.add_argument("--theme", choices=("dark", "light"),
                        default=None if top else argparse.SUPPRESS,
                        help="the app's colours (the app.theme setting; default dark)")
    parser.add_argument("--set", dest="overrides_top" if top else "overrides",
                        action="append", default=[] if top else argparse.SUPPRESS,
                        metavar="NAME=VALUE", help="override a setting for this run "
                        "(repeatable; see `lca-tui config`)")


def build_parser() -> argparse.ArgumentParser:
    import argparse
    import importlib
    import pkgutil

    from lca_tui import commands

    parent = argparse.ArgumentParser(add_help=False)
    _add_common(parent, top=False)
    parser = argparse.ArgumentParser(
        prog="lca-tui",
        description="Inspect and govern the local continuity store of a long-running agent.")
    _add_common(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        importlib.import_module(f"{commands.__name__}.{info.name}").register(sub, [parent])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if _command_word(words) == "hook" and not {"-h", "--help"} & set(words):
        # A Claude Code hook: answered before the full parser is imported, and always with
        # exit 0 — exit 2 (argparse's) would block the user's prompt.
        from lca_tui.commands.hook import fast_main

        return fast_main(words)
    if _command_word(words) == "statusline" and not {"-h", "--help"} & set(words):
        # Claude Code's status line: answered at once, never failing (always exit 0)
        from lca_tui.commands.statusline import fast_main as status_main

        return status_main(words)
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "store", None) == "":  # not a silent fall-back to the default store
        from lca_tui.output import fail

        return fail("--store is empty: give the store file's path (or leave --store out "
                    "for the default)")
    if getattr(args, "actor", None) is not None:
        from store import clean_actor as clean
        from store import set_process_actor

        if clean(args.actor) is None:
            from lca_tui.output import fail

            return fail("--actor is empty: name the person (or leave --actor out)")
        set_process_actor(args.actor)
    if args.command is None:
        from lca_tui.commands.app import open_app

        return fail_safe(open_app, args)
    return fail_safe(args.func, args)


def _command_word(words: list[str]) -> str | None:
    """The command named in ``words`` (the first word that is no option or option value)."""
    i = 0
    while i < len(words):
        if words[i] in ("--store", "--set", "--actor", "--theme"):
            i += 2
        elif words[i].startswith("-"):
            i += 1
        else:
            return words[i]
    return None


def fail_safe(func, args) -> int:  # type: ignore[no-untyped-def]
    """Run a command; expected errors become one clear line on stderr and exit 2."""
    from lca_tui.output import fail
    from store import StoreError
    from store import SettingsError

    try:
        return int(func(args) or 0)
    except (StoreError, SettingsError, ValueError, FileNotFoundError) as exc:
        return fail(str(exc))
    except OSError as exc:  # a file the command was given or writes: one line, no traceback
        where = f" ({exc.filename})" if exc.filename else ""
        return fail(f"{exc.strerror or exc}{where}")
    except KeyboardInterrupt:
        return fail("interrupted", code=130)


if __name__ == "__main__":
    sys.exit(main())
