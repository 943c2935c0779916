"""``lca-tui`` with no command opens the app on the store (``--store``, ``LCA_STORE`` or the
default path)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lca_tui.output import fail, settings_from


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The app has no subcommand of its own: ``lca-tui`` alone opens it."""


def open_app(args: argparse.Namespace) -> int:
    """Open the app on the store the arguments name."""
    return run_app(getattr(args, "store", None), args)


def run_app(store_path: Path | str | None, args: argparse.Namespace, tour: bool = False) -> int:
    """Run the app until it quits; shared by ``lca-tui`` and ``lca-tui demo``."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return fail("the app needs a terminal (stdin and stdout must be a TTY); the commands "
                    "in `lca-tui --help` work without one")
    from lca_tui import collector

    collector.pause()  # until the store is open (lca_tui/collector.py says why)
    try:
        from lca_tui.app import make_app

        app = make_app(store_path, settings_from(args), tour=tour)
        app.run()
    finally:  # (the app settles it as soon as the store is open; this, when it never ran)
        collector.settle()
    if app.open_error is not None:  # the app opens the store after its first frame
        raise app.open_error
    return int(app.return_code or 0)
