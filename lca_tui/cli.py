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
    from collections.abc import Mapping, Sequence


def _add_common(parser: argparse.ArgumentParser, top: bool) -> None:
    """``--store`` and ``--set``, accepted before or after the command.

    The command's copies default to SUPPRESS so that they never overwrite what was given
    before the command; ``--set`` values from both places are merged (``output.settings_from``).
    """
    import argparse

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


def build_parser(command: str | None = None, full: bool = False) -> argparse.ArgumentParser:
    """The command line, lazily: only ``command``'s module is imported (and its parsers
    built in full); every other command is a stub named with its one-line help from
    ``lca_tui.commands._index``, which is all ``lca-tui --help`` shows of it. ``full``
    imports and registers every command module (what the index is generated from)."""
    import argparse

    from lca_tui.commands._index import COMMANDS

    parent = argparse.ArgumentParser(add_help=False)
    _add_common(parent, top=False)
    parser = argparse.ArgumentParser(
        prog="lca-tui",
        description="Inspect and govern the local continuity store of a long-running agent.")
    _add_common(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    if full:
        for module in command_modules():
            before = set(sub.choices)
            _register(module, sub, [parent])
            for name in sub.choices.keys() - before:
                sub.choices[name].set_defaults(command_module=module)
        return parser
    wanted = COMMANDS[command][0] if command in COMMANDS else None
    for name, (module, help_text) in COMMANDS.items():
        if module != wanted:
            sub.add_parser(name, help=help_text, add_help=False)
        elif name == next(n for n, (m, _) in COMMANDS.items() if m == wanted):
            _register(module, sub, [parent])
    return parser


def command_modules() -> list[str]:
    """Every command module's name (``lca_tui/commands/*.py``, ``_`` ones aside), sorted."""
    import pkgutil

    from lca_tui import commands

    return sorted(i.name for i in pkgutil.iter_modules(commands.__path__)
                  if not i.name.startswith("_"))


def _register(module: str, sub: argparse._SubParsersAction,
              parents: list[argparse.ArgumentParser]) -> None:
    import importlib

    importlib.import_module(f"lca_tui.commands.{module}").register(sub, parents)


def write_index() -> str:
    """``lca_tui/commands/_index.py``'s text, generated from every module's parsers."""
    import argparse

    parser = build_parser(full=True)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    rows = {name: (p.get_default("command_module"), helps.get(name))
            for name, p in sub.choices.items()}
    lines = []
    for name, (module, help_text) in rows.items():
        words, text = str(help_text).split(" "), ""
        parts = []
        for word in words:  # the help text cut into pieces that fit a 100-column line
            if text and len(text) + len(word) > 70:
                parts.append(text)
                text = ""
            text += word + " "
        parts.append(text.rstrip(" "))
        joined = "\n        ".join(repr(part) for part in parts)
        lines.append(f"    {name!r}: ({module!r},\n        {joined}),")
    return ('"""Every command: its module in ``lca_tui.commands`` and its one-line help, in the '
            "order\n``lca-tui --help`` lists them. Generated — do not edit: after adding or "
            "changing a command,\nrun ``python -m lca_tui.cli --write-index`` "
            "(``tests/cli/test_lazy_cli.py`` checks it is\ncurrent).\"\"\"\n\n"
            "COMMANDS: dict[str, tuple[str, str]] = {\n" + "\n".join(lines) + "\n}\n")


def main(argv: Sequence[str] | None = None, *,
         settings: Mapping[str, object] | None = None) -> int:
    """Run ``lca-tui`` with ``argv`` (default: the process's arguments). ``settings`` are
    setting overrides from the caller, e.g. ``{"embed.backend": "fallback"}`` (a test, a script
    running the CLI in its own process): they apply as ``--set NAME=VALUE`` given before the
    command would (so ``--set`` in ``argv`` wins over them, and a daemon or background server the
    command starts is given them too), without touching the process's environment. The
    ``hook`` and ``statusline`` fast paths ignore them: a hook's settings come from the user's
    config file and its own ``--set`` (any ``--set`` makes a hook answer in its own process
    rather than through the daemon)."""
    words = sys.argv[1:] if argv is None else list(argv)
    if _command_word(words) == "hook" and not {"-h", "--help"} & set(words):
        # A Claude Code hook: answered before the full parser is imported, and always with
        # exit 0 — exit 2 (argparse's) would block the user's prompt.
        from lca_tui.commands.hook import fast_main

        return fast_main(words, own_process=argv is None)
    if _command_word(words) == "statusline" and not {"-h", "--help"} & set(words):
        # Claude Code's status line: answered at once, never failing (always exit 0)
        from lca_tui.commands.statusline import fast_main as status_main

        return status_main(words)
    if argv is None and _command_word(words) in PAUSED:
        # a process of its own running a command a person waits for: the collector off
        # until the store is open (lca_tui/collector.py)
        from lca_tui import collector

        collector.pause()
        try:
            return _main(words, settings)
        finally:
            collector.settle()
    return _main(words, settings)


PAUSED = frozenset({"stats", "sessions", "memories", "proposals", "audit", "health", "search",
                    "recall", "approve", "reject", "edit", "verify"})
"""The commands run with the garbage collector paused until their store is open (a process
of its own only: ``main`` called with no ``argv``). Short, and opening their store through
``lca_tui.output``, which settles it; a command that runs long (``ingest``, ``serve``,
``mcp``, ``bench``) is not one of them."""


def _main(words: list[str], settings: Mapping[str, object] | None) -> int:
    parser = build_parser(_command_word(words))
    args = parser.parse_args(words)
    if settings:
        args.overrides_top = [*(f"{name}={value}" for name, value in settings.items()),
                              *args.overrides_top]
    if getattr(args, "store", None) == "":  # not a silent fall-back to the default store
        from lca_tui.output import fail

        return fail("--store is empty: give the store file's path (or leave --store out "
                    "for the default)")
    if getattr(args, "actor", None) is not None:
        from store import acting_as
        from store import clean_actor as clean

        if clean(args.actor) is None:
            from lca_tui.output import fail

            return fail("--actor is empty: name the person (or leave --actor out)")
        with acting_as(args.actor):  # this run's --actor ends with it (main may run again)
            return _run(args)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    """The command ``args`` names, else the app."""
    if args.command is None:
        from lca_tui.commands.app import open_app

        return fail_safe(open_app, args)
    return fail_safe(args.func, args)


def _command_word(words: list[str]) -> str | None:
    """The command named in ``words`` (the first word that is no option or option value;
    an option may be abbreviated, as argparse allows: ``--sto PATH``)."""
    valued = ("--store", "--set", "--actor", "--theme")
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--") and len(word) > 2 and "=" not in word and any(
                o.startswith(word) for o in valued):
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
    if sys.argv[1:] == ["--write-index"]:
        from pathlib import Path

        Path(__file__).with_name("commands").joinpath("_index.py").write_text(
            write_index(), encoding="utf-8")
        sys.exit(0)
    sys.exit(main())
