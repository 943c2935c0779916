"""``lca-tui store copy --from PATH_OR_URL --to PATH_OR_URL``: move a store, verified."""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from rich.text import Text

from lca_tui.output import Listing, add_json_flag, col, console, fail, print_json, \
    progress_on_stderr, settings_from


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("store", parents=parents, help="move a store: `store copy`",
                       description="Operations on a whole store.")
    inner = p.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    c = inner.add_parser(
        "copy", parents=parents, help="copy every record of a store into a new one, verified",
        description="Copy every record of one store into another, ids kept (entries, memories, "
        "links, proposals and their checks, traces, snapshots, audit, tombstones, fingerprints, "
        "the store's secret) and its index, in one transaction; then compare both, table by "
        "table: row counts and a digest of each table's content. The target must be new or "
        "empty. A store is a file path or a postgresql:// URL (where the backend supports it). "
        "Bound memory files (memory.dir) are not part of a store: copy that folder yourself.")
    c.add_argument("--from", dest="source", required=True, metavar="PATH_OR_URL",
                   help="the store to copy (it must exist; it is only read)")
    c.add_argument("--to", dest="target", required=True, metavar="PATH_OR_URL",
                   help="a new store file, or an empty store or database")
    add_json_flag(c)
    c.set_defaults(func=run)


def shown(where: str) -> str:
    """A store's name for messages: a URL with its password masked."""
    if "://" not in where:
        return where
    parts = urlsplit(where)
    if parts.password:
        netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return where


def _is_url(where: str) -> bool:
    return "://" in where


def run(args: argparse.Namespace) -> int:
    from store import StoreError, open_store

    source, target = args.source, args.target
    if not source.strip() or not target.strip():
        return fail("--from and --to each need a store: a file path or a URL")
    if not _is_url(source):
        path = Path(source).expanduser()
        if not path.is_file():
            return fail(f"no store at {path}: --from names an existing store file")
        if not _is_url(target) and Path(target).expanduser().resolve() == path.resolve():
            return fail("--from and --to name the same store: copy into a new one")
    settings = settings_from(args)
    src = open_store(source, settings)
    try:
        dst = open_store(target, settings)
        try:
            with progress_on_stderr("store copy") as progress:
                try:
                    report = src.copy_to(dst, progress, shown(source), shown(target))
                except StoreError as exc:
                    return fail(str(exc))
        finally:
            dst.close()
    finally:
        src.close()
    if args.json:
        print_json(report.to_json())
        return 0 if report.ok else 1
    out = console()
    listing = Listing(col("table", whole=True), col("rows", whole=True, right=True),
                      col("digest", whole=True), col("check", whole=True))
    for c in report.checks:
        rows = (f"{c.target_rows:,}" if c.source_rows == c.target_rows
                else f"{c.source_rows:,} → {c.target_rows:,}")
        digest = c.target_digest[:16] if c.ok else f"{c.source_digest[:8]} ≠ {c.target_digest[:8]}"
        listing.add_row(c.name, rows, digest, "same" if c.ok else "DIFFERS")
    listing.print(out)
    verdict = ("verified: every table has the same rows and content on both sides" if report.ok
               else f"FAILED: {len(report.failed())} of {len(report.checks)} differ "
                    f"({', '.join(c.name for c in report.failed())})")
    out.print(Text(f"copied {report.rows:,} rows from {report.source} to {report.target} in "
                   f"{report.seconds:.1f} s; {verdict}"))
    return 0 if report.ok else 1
