"""``lca-tui consolidate [SESSION]``: the consolidation pass — what sessions stated plainly
since their last pass becomes pending proposals for a person to approve."""

from __future__ import annotations

import argparse
import sys

from lca_tui.output import add_json_flag, console, print_json, store_from, table
from store import plural


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("consolidate", parents=parents,
                       help="propose memories from what sessions stated since the last pass")
    p.add_argument("session", nargs="?", help="one session (id or prefix); default: all")
    p.add_argument("--no-proposer", action="store_true",
                   help="do not run governance.proposer_command this time")
    p.add_argument("--sweep", action="store_true",
                   help="only the near-duplicate sweep: one merge proposal per group of "
                        "active memories that say the same thing")
    add_json_flag(p)
    p.set_defaults(func=run)


def run_sweep(args: argparse.Namespace) -> int:
    if args.session is not None:
        print("lca-tui consolidate: --sweep goes over every active memory: it takes no "
              "session", file=sys.stderr)
        return 2
    with store_from(args) as store:
        report = store.sweep_duplicates()
    if args.json:
        print_json(report.to_json())
        return 1 if report.errors else 0
    out = console()
    n = report.proposals_added
    out.print(f"{plural(report.groups, 'group')} of near-duplicate "
              f"memories: {plural(n, 'merge proposal')} added"
              + (f", {report.skipped} proposed before" if report.skipped else ""),
              markup=False, highlight=False)
    for e in report.errors:
        out.print(f"problem: {e}", markup=False, highlight=False)
    if n:
        out.print("review them with `lca-tui proposals` or on screen 4", markup=False,
                  highlight=False)
    return 1 if report.errors else 0


def run(args: argparse.Namespace) -> int:
    if args.sweep:
        return run_sweep(args)
    with store_from(args) as store:
        report = store.consolidate(args.session, use_proposer=not args.no_proposer)
    failed = bool(report.proposer.get("error"))
    if args.json:  # the document is printed either way; a proposer failure exits 1
        print_json(report.to_json())
        if failed:
            print(f"lca-tui consolidate: proposer command failed: {report.proposer['error']}",
                  file=sys.stderr)
        return 1 if failed else 0
    out = console()
    t = table("found", "proposed", title="consolidation pass over "
              f"{plural(len(report.sessions), 'session')}")
    for kind, n in sorted(report.by_kind.items()):
        t.add_row(kind, str(n))
    out.print(t)
    skipped = sum(report.skipped.values())
    out.print(f"{plural(report.proposals_added, 'proposal')}"
              f" added; {skipped} skipped as already known "
              f"({', '.join(f'{k} {v}' for k, v in sorted(report.skipped.items())) or 'none'})",
              markup=False, highlight=False)
    if report.proposer["ran"]:
        err = report.proposer.get("error")
        out.print(f"proposer command: {'FAILED: ' + err if err else 'ok'}", markup=False,
                  highlight=False)
    for e in report.errors:
        out.print(f"problem: {e}", markup=False, highlight=False)
    if report.proposals_added:
        out.print("review them with `lca-tui proposals` or on screen 4", markup=False,
                  highlight=False)
    return 1 if failed else 0
