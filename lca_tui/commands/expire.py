"""``lca-tui expire [--dry-run] [--yes]``: the retention pass — one ``expire`` proposal (pending,
for a person or the auto-apply policy) for each active memory past
``memory.retention_days.<type>``, never a critical or evergreen one; and the transcript entries
past ``transcript.retention_days.<kind>``, erased through the privacy erasure (their closure,
verified with the probes of ``erase``, one tombstone) once confirmed: ``--yes``, or typing
``erase`` at a terminal. ``--dry-run`` lists both (counts per kind and session, the closure)
and changes nothing. Exit 1 when a proposal failed, a verification failed, or entries past
their retention were left because the erasure was not confirmed."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.text import Text

from lca_tui.output import add_json_flag, console, fail, print_json, store_from, table
from store import plural, visible


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("expire", parents=parents,
                       help="propose expiring the memories past memory.retention_days.<type>; "
                            "erase the transcript entries past transcript.retention_days.<kind>")
    p.add_argument("--dry-run", action="store_true",
                   help="list what is past its retention; propose and erase nothing")
    p.add_argument("--yes", action="store_true",
                   help="erase the transcript entries past their retention without asking "
                        "(the erasure is for good; see --dry-run first)")
    p.add_argument("--delete-exports", action="store_true",
                   help="also delete the export files holding the erased entries")
    add_json_flag(p)
    p.set_defaults(func=run)


def _print_memories(report: Any, dry_run: bool) -> None:
    out = console()
    n = len(report.due)
    out.print(f"{plural(n, 'memory', 'memories')} past {'its' if n == 1 else 'their'} "
              "retention" + ("" if n else " (memory.retention_days.<type>; 0 keeps for ever)"),
              markup=False, highlight=False)
    for e in report.due:
        out.print(f"  memory {e.memory_id} ({e.type}): {e.age_days:.0f} days since "
                  f"{e.since[:10]}, retention {e.days}", markup=False, highlight=False)
    if not dry_run:
        added = report.proposals_added
        out.print(f"{plural(added, 'expire proposal')} added"
                  + (f", {report.skipped} proposed before" if report.skipped else ""),
                  markup=False, highlight=False)
    for e in report.errors:
        out.print(f"problem: {e}", markup=False, highlight=False)


def _print_entries(due: Any, closure: Any) -> None:
    out = console()
    n = len(due.entries)
    if not n:
        if due.limits:
            out.print("0 transcript entries past their retention", markup=False)
        return
    out.print(f"{n:,} transcript {plural(n, 'entry', 'entries', counted=False)} past "
              f"{'its' if n == 1 else 'their'} retention", markup=False, highlight=False)
    kinds = list(due.by_kind())
    t = table("session", *kinds, title="entries due, by kind")
    for session, counts in due.by_session().items():
        t.add_row(Text(visible(session)), *(f"{counts.get(k, 0):,}" for k in kinds))
    t.add_row("all", *(f"{due.by_kind()[k]:,}" for k in kinds))
    out.print(t)
    c = table("table", "records", title="erase closure")
    for name, count in closure.counts().items():
        c.add_row(name, f"{count:,}")
    out.print(c)
    for memory_id, why in sorted(closure.review.items()):
        out.print(Text(f"memory {memory_id} will be flagged for review: {why}"))
    for path in closure.export_files():
        out.print(Text(visible(f"export file holding it: {path}")))


def _confirm() -> bool:
    from lca_tui.output import err_console

    if not sys.stdin.isatty():
        return False
    err_console.print("Type erase to erase these entries for good (anything else keeps "
                      "them): ", end="")
    try:
        return input().strip() == "erase"
    except EOFError:
        return False


def run(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        report = store.expire_pass(dry_run=args.dry_run)
        due = store.transcript_due()
        closure = store.transcript_closure(due) if due.entries else None
        result = None
        left = shown = False
        if closure is not None and not args.dry_run:
            if not args.yes and not args.json and sys.stdin.isatty():
                shown = True
                _print_memories(report, False)
                _print_entries(due, closure)
            if args.yes or (shown and _confirm()):
                result = store.erase_transcript(due, confirmed=closure,
                                                delete_exports=args.delete_exports)
            else:
                left = True
    code = 1 if report.errors or left or (result and not result.verification.passed) else 0
    if args.json:
        doc = report.to_json()
        doc["transcript"] = {**due.to_json(),
                             "closure": closure.counts() if closure is not None else {},
                             "erased": None if result is None else result.to_json()}
        print_json(doc)
        if left:
            fail("transcript entries past their retention were kept: erasing them needs --yes")
        return code
    if not shown:
        _print_memories(report, args.dry_run)
        if closure is not None:
            _print_entries(due, closure)
    if left:
        fail(f"{plural(len(due.entries), 'transcript entry', 'transcript entries')} past "
             "their retention kept: "
             "erasing them is for good, pass --yes (`lca-tui expire --dry-run` lists them)")
    if result is not None:
        out = console()
        t = table("probe", "result", "detail", title="verification")
        for p in result.verification.probes:
            t.add_row(p.name, "pass" if p.passed else "FAIL", Text(visible(p.detail)))
        out.print(t)
        for path in result.exports_deleted:
            out.print(Text(visible(f"deleted export file {path}")))
        verdict = "passed" if result.verification.passed else "FAILED"
        out.print(f"{plural(len(due.entries), 'transcript entry', 'transcript entries')} "
                  f"erased in "
                  f"{result.duration_ms / 1000:.2f} s; tombstone {result.tombstone_id}; "
                  f"verification {verdict}", markup=False, highlight=False)
    return code

