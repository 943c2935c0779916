"""``lca-tui demo``: build the demo store (a few weeks of an agent at work) and open the app."""

from __future__ import annotations

import argparse

from lca_tui.output import add_json_flag, console, print_json, progress_on_stderr, settings_from
from store import is_url, mask_url, visible
from store import plural, when


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
    p.add_argument("--tour", action="store_true",
                   help="open the app on the guided tour's first step (] next, [ back, t "
                   "leaves and resumes; t starts it on any screen of the demo store)")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lca_tui.commands.ingest import problems_table
    from store import build_demo

    settings = settings_from(args)
    with progress_on_stderr("demo") as progress:
        result = build_demo(args.store, settings=settings, progress=progress)
    if args.json:
        print_json(result.to_json())
        return 0
    r = result.report
    out = console()
    # a server's URL is shown with its password masked
    shown = visible(mask_url(str(result.path)) if is_url(result.path) else str(result.path))
    out.print(f"demo store: {shown}", markup=False, soft_wrap=True)
    out.print(f"data files: {visible(str(result.data_dir))} "
              f"({plural(result.timestamps_shifted, 'timestamp')} moved by "
              f"{plural(result.shift.days, 'day')}; the story ends "
              f"{when(result.story_end.isoformat())})", markup=False, soft_wrap=True)
    from store import open_store

    store = open_store(str(result.path), settings)  # what the store holds, not import counts
    try:
        st = store.stats(with_embedder=False)
    finally:
        store.close()
    out.print(f"the store holds {plural(st.sessions, 'session')}, "
              f"{plural(st.entries, 'entry', 'entries')}, "
              f"{plural(st.memories, 'memory', 'memories')}, "
              f"{plural(st.checkpoints, 'checkpoint')}, {plural(st.chunks, 'chunk')}, "
              f"{plural(st.proposals_pending, 'pending proposal')}, "
              f"{plural(st.traces, 'recall trace')}", markup=False, soft_wrap=True)
    if r.errors:
        problems_table(r.errors, f"{plural(len(r.errors), 'problem')} the demo data holds on "
                       "purpose").print(out)
    if args.no_open:
        out.print(f"open it with: lca-tui --store {shown} (t there starts the guided "
                  "tour)", markup=False, soft_wrap=True)
        return 0
    from lca_tui.commands.app import run_app

    return run_app(result.path, args, tour=args.tour)
