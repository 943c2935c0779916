"""``lca-tui export --out DIR [SCOPE]`` and ``lca-tui exports``."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from lca_tui.output import (
    Listing,
    add_json_flag,
    col,
    console,
    fail,
    print_json,
    sql_int,
    store_from,
)
from store import visible, when


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export", parents=parents, help="write a scope as MindStone NDJSON + a JSON manifest",
        description="Write transcripts as MindStone-Agent NDJSON (one file per session) and a "
        "manifest.json of memories, evidence and lineage. With no scope, everything. "
        "`lca-tui ingest DIR` imports an export back.")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="an empty or new directory (use --force to replace an earlier export)")
    p.add_argument("--session", action="append", default=[], metavar="ID",
                   help="export this session and the memories its entries are evidence of "
                   "(repeatable; a unique prefix is enough)")
    p.add_argument("--memory", action="append", default=[], type=sql_int, metavar="ID",
                   help="export this memory, its evidence and the entries it points at "
                   "(repeatable; `lca-tui search QUERY` shows memory ids)")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty directory, replacing the files of an earlier "
                   "export there")
    add_json_flag(p)
    p.set_defaults(func=run)

    p = sub.add_parser("exports", parents=parents, help="the exports written from this store")
    add_json_flag(p)
    p.set_defaults(func=list_exports)


def run(args: argparse.Namespace) -> int:
    from store import StoreError

    with store_from(args) as store:
        try:
            report = store.export(Path(args.out), args.session or None, args.memory or None,
                                  force=args.force)
        except StoreError as exc:
            return fail(visible(str(exc)))
    if args.json:
        print_json(report.to_json())
        return 0
    c = report.counts
    console().print(f"export {report.export_id} written to {visible(report.path)}: "
                    f"{c['sessions']} sessions, {c['entries']} entries, {c['memories']} "
                    f"memories, {c['evidence']} evidence rows, {c['checkpoints']} checkpoints, "
                    f"{c['recall_traces']} recall traces in {len(report.files)} files",
                    markup=False)
    return 0


def list_exports(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        rows = store.exports()
    if args.json:
        print_json([r.as_json() for r in rows])
        return 0
    t = Listing(col("id", whole=True, right=True), col("time", whole=True, drop=3),
                col("status", whole=True), col("scope", drop=2), col("path", whole=True),
                col("files", whole=True, right=True, drop=4), col("counts", drop=1))
    for r in rows:
        scope = r.scope if isinstance(r.scope, dict) else {}
        shown = "all" if scope.get("all") else ", ".join(
            [f"session {s}" for s in scope.get("sessions", [])]
            + [f"memory {m}" for m in scope.get("memories", [])])
        counts = ", ".join(f"{k} {v}" for k, v in (r.counts or {}).items()
                           if k not in ("writing", "pid"))
        status = r.status + (f" ({r.reason})" if r.reason else "")
        files = r.files if isinstance(r.files, list) else []
        t.add_row(*(Text(visible(str(v))) for v in (
            r.id, when(r.ts, with_seconds=True), status, shown, r.path, len(files), counts)))
    t.print()
    return 0
