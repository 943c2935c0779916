"""``lca-tui scan-secrets``: the secrets detector over a store imported before it existed
(new entries and memories go through it as they are written), or ``--list`` of what it found:
kinds and counts per record, never a value. See docs/privacy.md "Secrets caught at capture"."""

from __future__ import annotations

import argparse

from lca_tui.output import add_json_flag, console, print_json, progress_on_stderr, store_from
from lca_tui.output import table
from store import plural


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "scan-secrets", parents=parents,
        help="run the secrets detector over entries and memories written before it existed",
        description="Run the secrets detector (keys, tokens, private keys, JWTs, passwords in "
        "URLs and KEY=value lines; e-mail and phone when privacy.detect_email / "
        "privacy.detect_phone are on) over every entry and memory not scanned yet. A hit is "
        "marked secret, its kinds recorded (never the value), its chunks, vectors and FTS "
        "rows rebuilt with placeholders, the recall traces' copies masked. Not a reindex: "
        "only what it finds is rebuilt.")
    p.add_argument("--dry-run", action="store_true",
                   help="count what would be marked; change nothing")
    p.add_argument("--list", action="store_true",
                   help="list the records with findings (kinds and counts, no value)")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        if args.list:
            found = store.secret_findings()
            if args.json:
                print_json([f.to_json() for f in found])
                return 0
            t = table("record", "kinds", "found", "via", "state",
                      title="secrets found (values never kept)")
            for f in found:
                t.add_row(f"{f.source_type} {f.source_id}",
                          ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in f.kinds.items()),
                          f.found_at[:19].replace("T", " "), f.via,
                          "dismissed" if f.dismissed else
                          "redacted" if set(f.kinds) == {"private-span"} else "secret")
            out = console()
            out.print(t) if found else out.print("nothing found by the secrets detector")
            return 0
        with progress_on_stderr("scan-secrets") as progress:
            report = store.scan_secrets(dry_run=args.dry_run, progress=progress,
                                        actor=getattr(args, "actor", None))
    if args.json:
        print_json(report.to_json())
        return 0
    verb = "would mark" if report.dry_run else "marked"
    kinds = ", ".join(f"{k} {n}" for k, n in report.kinds.items()) or "none"
    console().print(
        f"scanned {plural(report.entries_scanned, 'entry', 'entries')} and "
        f"{plural(report.memories_scanned, 'memory', 'memories')} in {report.seconds:.1f} s; "
        f"{verb} secret: {plural(report.entries_marked, 'entry', 'entries')}, "
        f"{plural(report.memories_marked, 'memory', 'memories')} (kinds: {kinds}); "
        f"{plural(report.chunks_rebuilt, 'chunk')} rebuilt, "
        f"{plural(report.traces_masked, 'trace record')} masked", markup=False)
    return 0
