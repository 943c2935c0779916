"""Shared CLI plumbing: opening the store from arguments, JSON and Rich output, errors."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from store.core.textsafe import one_line, visible


def inert(value: object) -> Text:
    """A value that came from a file or the store (an id, a path, a name, text) as a one-line
    ``Text``: never read as markup, every control, bidi and zero-width character shown through
    ``store.core.textsafe`` (the app's escaping, shared). Tables call it for every ``str``
    cell; call it for any data you put in a cell yourself."""
    return Text(one_line("" if value is None else str(value)), end="")


class SafeConsole(Console):
    """A console for data: ``str`` arguments are printed through ``visible`` (markup and emoji
    codes are off), so no transcript can write to the terminal or style the output."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # type: ignore[override]
        kwargs.setdefault("markup", False)
        kwargs.setdefault("emoji", False)
        super().print(*(visible(o) if isinstance(o, str) else o for o in objects), **kwargs)


class SafeTable(Table):
    """A Rich table whose ``str`` cells go through ``inert``: data is never markup."""

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:  # type: ignore[override]
        super().add_row(*(inert(r) if isinstance(r, str) else r for r in renderables), **kwargs)


err_console = SafeConsole(stderr=True, highlight=False, markup=False, emoji=False)


def console() -> Console:
    """Stdout for tables; when it is not a terminal (a pipe, a file) tables get 160 columns
    (or $COLUMNS) instead of Rich's 80, so ids and paths are not folded."""
    if sys.stdout.isatty():
        return SafeConsole(highlight=False, markup=False, emoji=False)
    return SafeConsole(highlight=False, markup=False, emoji=False,
                       width=int(os.environ.get("COLUMNS") or 0) or 160)


def fail(message: str, code: int = 2) -> int:
    """One error line on stderr, never wrapped: a path in it must stay copyable (and any
    data in it shown through ``visible``)."""
    sys.stderr.write(f"lca-tui: {visible(message)}\n")
    sys.stderr.flush()
    return code


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def settings_from(args: argparse.Namespace) -> Any:
    from store.core.settings import Settings, parse_assignment

    given = [*(getattr(args, "overrides_top", None) or []),
             *(getattr(args, "overrides", None) or [])]
    overrides = dict(parse_assignment(a) for a in given)
    return Settings.load(overrides)


def open_from(args: argparse.Namespace, **kwargs: Any) -> Any:
    """The store named by ``--store`` / ``LCA_STORE`` / the default path."""
    from store import open_store

    return open_store(getattr(args, "store", None), settings_from(args), **kwargs)


@contextmanager
def store_from(args: argparse.Namespace, **kwargs: Any) -> Iterator[Any]:
    store = open_from(args, **kwargs)
    try:
        yield store
    finally:
        store.close()


def table(*columns: str, title: str | None = None) -> Table:
    t = SafeTable(title=title, show_lines=False, header_style="bold")
    for col in columns:
        t.add_column(col, overflow="fold")
    return t


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document")
