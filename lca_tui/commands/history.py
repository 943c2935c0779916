"""``lca-tui history MEMORY``, ``revert MEMORY --to VERSION`` and ``undo``: every version of a
memory (who, when, the diff; an erased one as erased, never its text), and a proposal that
brings one back — an ordinary proposal in the queue, checked by the gate."""

from __future__ import annotations

import argparse

from lca_tui.output import add_json_flag, console, print_json, sql_int, store_from
from store import when


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("history", parents=parents,
                       help="every version of a memory: who, when, the diff")
    p.add_argument("memory_id", metavar="MEMORY", type=sql_int)
    add_json_flag(p)
    p.set_defaults(func=run_history)

    p = sub.add_parser("revert", parents=parents,
                       help="propose bringing back a version of a memory (the gate decides)")
    p.add_argument("memory_id", metavar="MEMORY", type=sql_int)
    p.add_argument("--to", dest="version", metavar="VERSION", type=sql_int, required=True,
                   help="the version number `lca-tui history MEMORY` shows")
    p.add_argument("--reason", help="why (kept in the proposal's rationale)")
    add_json_flag(p)
    p.set_defaults(func=run_revert)

    p = sub.add_parser("undo", parents=parents,
                       help="propose undoing the latest approval (a revert to the version "
                       "before it; an add is quarantined)")
    add_json_flag(p)
    p.set_defaults(func=run_undo)


def run_history(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        versions = store.memory_history(args.memory_id)
    if args.json:
        print_json({"memory_id": args.memory_id, "versions": [v.to_json() for v in versions]})
        return 0
    out = console()
    for v in versions:
        head = (f"version {v.version}" + (" (current)" if v.current else "")
                + f" — {v.op}" + (f" of memory {v.memory_id}" if v.memory_id else "")
                + (f", proposal {v.proposal_id}" if v.proposal_id else "")
                + (", its proposal was erased" if v.proposal_erased else "")
                + f", {when(v.ts)}" + (f", by {v.actor}" if v.actor else ""))
        out.print(head, markup=False, highlight=False)
        if v.erased:
            out.print("  erased: its text is gone", markup=False, highlight=False)
        elif v.op in ("expire", "quarantine"):
            out.print(f"  {'expired' if v.op == 'expire' else 'quarantined'}: no longer "
                      "recalled, its text unchanged", markup=False, highlight=False)
        elif v.masked:
            out.print("  (secret: text withheld)", markup=False, highlight=False)
        elif v.diff:
            for line in v.diff.splitlines()[2:]:  # the ---/+++ header names the versions
                out.print(f"  {line}", markup=False, highlight=False)
        elif v.text is not None:
            for line in v.text.splitlines() or [""]:
                out.print(f"  {line}", markup=False, highlight=False)
    return 0


def _filed(args: argparse.Namespace, info: object) -> int:
    from lca_tui.commands.proposals import print_proposal

    if args.json:
        print_json(info.to_json())  # type: ignore[attr-defined]
    else:
        print_proposal(info)
    return 0


def run_revert(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        info = store.revert_memory(args.memory_id, args.version, reason=args.reason)
    return _filed(args, info)


def run_undo(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        info = store.undo_last_approval()
    return _filed(args, info)
