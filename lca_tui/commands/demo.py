"""``lca-tui demo``: build the demo store (a few weeks of an agent at work) and open the app."""

from __future__ import annotations

import argparse

from lca_tui.output import add_json_flag, console, print_json, settings_from, table


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "demo", parents=parents, help="build the demo store and open the app on it",
        description="Build a demo store from the data shipped with lca-tui — three weeks of a "
        "coding agent at work: Claude Code sessions (one with a subagent and a compaction) and "
        "a MindStone memory directory with its defects — with every time moved so that the "
        "story ends about an hour ago, then open the app on it. It writes to a fresh file of "
        "its own unless --store is given, never into $LCA_STORE, and never over a store that "
        "holds records.")
    p.add_argument("--no-open", action="store_true", help="build the store, do not open the app")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from store.demo import build_demo

    settings = settings_from(args)
    if args.json:
        result = build_demo(args.store, settings=settings)
        print_json(result.to_json())
        return 0
    from rich.progress import Progress

    out = console()
    with Progress(console=out, transient=True) as bar:
        task = bar.add_task("building the demo store", total=None)

        def progress(label: str, done: int, total: int) -> None:
            bar.update(task, description=label, completed=done, total=total)

        result = build_demo(args.store, settings=settings, progress=progress)
    r = result.report
    out.print(f"demo store: {result.path}", markup=False, highlight=False)
    out.print(f"data files: {result.data_dir} ({result.timestamps_shifted} timestamps moved by "
              f"{result.shift.days} days; the story ends "
              f"{result.story_end:%Y-%m-%d %H:%M} UTC)", markup=False, highlight=False)
    out.print(f"sessions {r.sessions_added}, entries {r.entries_added}, memories "
              f"{r.memories_added}, checkpoints {r.checkpoints_added}, chunks {r.chunks}",
              markup=False, highlight=False)
    if r.errors:
        t = table("file", "line", "reason",
                  title=f"{len(r.errors)} problems the demo data holds on purpose")
        for e in r.errors:
            t.add_row(e.path, "" if e.line is None else str(e.line), e.reason)
        out.print(t)
    if args.no_open:
        out.print(f"open it with: lca-tui --store {result.path}", markup=False, highlight=False)
        return 0
    from lca_tui.commands.app import run_app

    return run_app(result.path, args)
