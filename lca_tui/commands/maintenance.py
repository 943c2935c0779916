"""``lca-tui reindex`` and ``lca-tui config``."""

from __future__ import annotations

import argparse

from lca_tui.output import (
    Listing,
    add_json_flag,
    col,
    console,
    print_json,
    progress_on_stderr,
    settings_from,
    store_from,
)
from store import plural


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("reindex", parents=parents,
                       help="rebuild chunks, vectors, FTS and interpreted records")
    add_json_flag(p)
    p.set_defaults(func=reindex)

    p = sub.add_parser("config", parents=parents,
                       help="the settings in force and where each came from")
    add_json_flag(p)
    p.set_defaults(func=config)


def reindex(args: argparse.Namespace) -> int:
    with store_from(args) as store, progress_on_stderr("reindex") as progress:
        report = store.reindex(progress)
    if args.json:
        print_json(report.to_json())
        return 0
    console().print(f"reindexed {plural(report.entries, 'entry', 'entries')} and "
                    f"{plural(report.memories, 'memory', 'memories')}: "
                    f"{plural(report.chunks, 'chunk')} ({report.chunks_failed:,} failed); "
                    f"derived {report.derived or 'nothing'}", markup=False, soft_wrap=True)
    return 0


def config(args: argparse.Namespace) -> int:
    from store import config_path, default_store_path

    settings = settings_from(args)
    rows = settings.rows()
    if args.json:
        print_json({"store": str(args.store or default_store_path()),
                    "config_file": str(config_path()),
                    "settings": {n: {"value": v, "source": s, "doc": d}
                                 for n, v, s, d in rows}})
        return 0
    out = console()
    out.print(f"store: {args.store or default_store_path()}", markup=False, soft_wrap=True)
    out.print(f"config file: {config_path()}"
              + ("" if config_path().exists() else " (not present)"), markup=False,
              soft_wrap=True)
    t = Listing(col("setting", whole=True), col("value", min_width=10),
                col("from", drop=2, min_width=8), col("meaning", drop=1, min_width=24))
    for name, value, source, doc in rows:
        t.add_row(name, repr(value) if isinstance(value, str) else str(value), source, doc)
    t.print(out)
    return 0
