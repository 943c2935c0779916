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

err_console = Console(stderr=True, highlight=False)


def console() -> Console:
    """Stdout for tables; when it is not a terminal (a pipe, a file) tables get 160 columns
    (or $COLUMNS) instead of Rich's 80, so ids and paths are not folded."""
    if sys.stdout.isatty():
        return Console(highlight=False)
    return Console(highlight=False, width=int(os.environ.get("COLUMNS") or 0) or 160)


def fail(message: str, code: int = 2) -> int:
    """One error line on stderr, never wrapped: a path in it must stay copyable."""
    sys.stderr.write(f"lca-tui: {message}\n")
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
    t = Table(title=title, show_lines=False, header_style="bold")
    for col in columns:
        t.add_column(col, overflow="fold")
    return t


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document")


@contextmanager
def progress_reporter(quiet: bool = False) -> Iterator[Any]:
    """A ``progress(label, done, total)`` callback on stderr: a live bar in a terminal; in a
    pipe, a log or CI, a plain line when the stage changes, every two seconds, and at the
    end of a stage (so a long model load or embedding never looks hung). ``quiet``: none."""
    import time

    if quiet:
        yield None
        return
    if sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(console=err_console, transient=True) as bar:
            task = bar.add_task("", total=None)

            def update(label: str, done: int, total: int) -> None:
                bar.update(task, description=label, completed=done, total=total or None)

            yield update
        return
    last: dict[str, Any] = {"label": None, "at": 0.0}

    def line(label: str, done: int, total: int) -> None:
        now = time.monotonic()
        if label != last["label"] or now - last["at"] >= 2.0 or done >= total:
            last.update(label=label, at=now)
            sys.stderr.write(f"{label}: {done:,}/{total:,}\n" if total > 1 or done < total
                             else f"{label}: done\n")
            sys.stderr.flush()

    yield line
