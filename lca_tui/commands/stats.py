"""``lca-tui stats``: counts by record and kind, and the embedder in use."""

from __future__ import annotations

import argparse
from typing import Any

from rich.text import Text

from lca_tui.output import Listing, add_json_flag, col, console, listings_from, print_json
from store import one_line, visible


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("stats", parents=parents, help="counts of every record")
    add_json_flag(p)
    p.set_defaults(func=run)


def backend_line(stats: Any) -> str:
    """Which backend holds the store, with its versions."""
    if stats.backend == "postgresql":
        return (f"backend: PostgreSQL {stats.server_version}, pgvector "
                f"{stats.vector_version or 'missing'}")
    return (f"backend: SQLite {stats.server_version}, sqlite-vec "
            f"{stats.vector_version or 'not loaded'}")


def run(args: argparse.Namespace) -> int:
    with listings_from(args) as store:
        stats = store.stats()
    if args.json:
        print_json(stats.to_json())
        return 0
    out = console()
    # the path on a line of its own, never wrapped: it must stay copyable
    out.print(f"{visible(stats.path)} ({stats.size_bytes:,} bytes, schema "
              f"{stats.schema_version})", markup=False, soft_wrap=True, style="bold")
    out.print(backend_line(stats), markup=False, soft_wrap=True)
    t = Listing(col("record", whole=True), col("count", whole=True, right=True))
    t.add_row("sessions", f"{stats.sessions:,}")
    t.add_row("entries", f"{stats.entries:,}")
    for kind, n in stats.entries_by_kind.items():
        t.add_row(f"  {kind}", f"{n:,}")
    t.add_row("memories", f"{stats.memories:,}")
    for status, n in stats.memories_by_status.items():
        t.add_row(f"  {status}", f"{n:,}")
    t.add_row("  not loadable", f"{stats.memories_unloadable:,}")
    t.add_row("chunks", f"{stats.chunks:,}")
    for status, n in stats.chunks_by_status.items():
        t.add_row(f"  {status}", f"{n:,}")
    t.add_row("vectors / FTS rows", f"{stats.vectors:,} / {stats.fts_rows:,}")
    t.add_row("checkpoints", f"{stats.checkpoints:,}")
    t.add_row("proposals pending", f"{stats.proposals_pending:,}")
    t.add_row("recall traces", f"{stats.traces:,}")
    for label, counts in (("lines skipped by design", stats.skipped_by_design),
                          ("lines skipped, type unknown", stats.skipped_unknown),
                          ("content blocks skipped by design", stats.blocks_skipped_by_design),
                          ("content blocks skipped, type unknown",
                           stats.blocks_skipped_unknown)):
        t.add_row(label, f"{sum(counts.values()):,}")
        for what, n in counts.items():
            t.add_row(Text(f"  {one_line(what, 60)}"), f"{n:,}")
    t.print(out)
    e = stats.embedder
    line = f"embedder: {e.model} ({e.dim} dimensions)"
    if e.degraded:
        line += f" DEGRADED: {e.reason}"
    out.print(visible(line), markup=False, soft_wrap=True,
              style="bold red" if e.degraded else None)
    return 0
