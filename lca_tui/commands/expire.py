"""``lca-tui expire [--dry-run]``: the retention pass — one ``expire`` proposal (pending, for a
person or the auto-apply policy) for each active memory past ``memory.retention_days.<type>``;
never a critical or evergreen one."""

from __future__ import annotations

import argparse

from lca_tui.output import add_json_flag, console, print_json, store_from


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("expire", parents=parents,
                       help="propose expiring the memories past memory.retention_days.<type>")
    p.add_argument("--dry-run", action="store_true",
                   help="list what is past its retention; propose nothing")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        report = store.expire_pass(dry_run=args.dry_run)
    if args.json:
        print_json(report.to_json())
        return 1 if report.errors else 0
    out = console()
    n = len(report.due)
    out.print(f"{n} memor{'y' if n == 1 else 'ies'} past {'its' if n == 1 else 'their'} "
              "retention" + ("" if n else " (memory.retention_days.<type>; 0 keeps for ever)"),
              markup=False, highlight=False)
    for e in report.due:
        out.print(f"  memory {e.memory_id} ({e.type}): {e.age_days:.0f} days since "
                  f"{e.since[:10]}, retention {e.days}", markup=False, highlight=False)
    if not args.dry_run:
        added = report.proposals_added
        out.print(f"{added} expire proposal{'s' if added != 1 else ''} added"
                  + (f", {report.skipped} proposed before" if report.skipped else ""),
                  markup=False, highlight=False)
    for e in report.errors:
        out.print(f"problem: {e}", markup=False, highlight=False)
    return 1 if report.errors else 0
