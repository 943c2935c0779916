"""``lca-tui`` with no command opens the app on the store."""

from __future__ import annotations

import argparse

from lca_tui.output import fail


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """The app has no subcommand of its own: ``lca-tui`` alone opens it."""


def open_app(args: argparse.Namespace) -> int:
    return fail("the app is not built yet; see `lca-tui --help` for the commands")
