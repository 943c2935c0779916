"""``lca-tui screenshots DIR``: an SVG of every screen on the demo store (the work is in
``lca_tui.screenshots``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lca_tui.output import add_json_flag, fail, print_json


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "screenshots", parents=parents, help="write an SVG of every screen on the demo store",
        description="Build the demo store in a scratch folder (never --store or $LCA_STORE), "
        "open the app on it headless at a fixed size, and write an SVG of every screen and of "
        "the guided tour's first step into DIR, as the app's own screenshot does. The clock, "
        "the settings (the defaults, with the fallback embedder; your config file is not "
        "read), the recall latency and the store are fixed, so two runs write the same "
        "pictures: docs/screenshots/ holds them, and a test fails when the app no longer "
        "draws them.")
    p.add_argument("dir", metavar="DIR", help="the folder for the SVG files (created if needed)")
    p.add_argument("--size", default="120x40", metavar="COLSxROWS",
                   help="the terminal size (default 120x40)")
    add_json_flag(p)
    p.set_defaults(func=run)


def _size(text: str) -> tuple[int, int] | None:
    cols, _, rows = text.lower().partition("x")
    try:
        size = int(cols), int(rows)
    except ValueError:
        return None
    return size if 40 <= size[0] <= 400 and 12 <= size[1] <= 200 else None


def run(args: argparse.Namespace) -> int:
    size = _size(args.size)
    if size is None:
        return fail(f"--size {args.size}: give columns x rows, as 120x40 (40-400 x 12-200)")
    out = Path(args.dir).expanduser()
    if out.exists() and not out.is_dir():
        return fail(f"{out} exists and is not a folder: give DIR a folder for the SVG files")
    if not out.parent.is_dir():
        return fail(f"the folder {out.parent} does not exist: create it first")
    out.mkdir(exist_ok=True)
    from store import parse_assignment

    overrides = dict(parse_assignment(a) for a in [*(getattr(args, "overrides_top", None) or []),
                                                   *(getattr(args, "overrides", None) or [])])
    from lca_tui.screenshots import shoot

    def say(line: str) -> None:
        if not args.json:
            sys.stderr.write(f"screenshots: {line}\n")

    shots = shoot(out, size, overrides, progress=say)
    if args.json:
        print_json({"dir": str(out.resolve()), "size": f"{size[0]}x{size[1]}",
                    "files": [s.name for s in shots]})
        return 0
    for s in shots:
        sys.stdout.write(f"{s.path}\n")
    return 0
