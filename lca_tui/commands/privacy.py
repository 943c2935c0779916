"""``lca-tui erase`` / ``redact`` SCOPE, ``tombstones`` and ``mark``: privacy from the CLI.

A scope is one of ``--session ID``, ``--entry ID``, ``--memory ID``, ``--match TEXT`` (a
case-insensitive substring) or ``--regex RE``. ``--dry-run`` prints the closure only;
without ``--yes`` the command asks to type the word ``erase`` (or ``redact``) first. The exit
code is 0 when every verification probe passed, 1 when one failed (the report says which).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from rich.text import Text

from lca_tui.output import (
    add_json_flag,
    console,
    err_console,
    fail,
    print_json,
    sql_int,
    store_from,
    table,
)
from store import SENSITIVITIES, plural, visible, when

if TYPE_CHECKING:
    from store import Scope


def _scope_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scope (exactly one)")
    g.add_argument("--session", metavar="ID", help="a session (a unique id prefix will do)")
    g.add_argument("--entry", metavar="ID", type=sql_int, help="one transcript entry by id")
    g.add_argument("--memory", metavar="ID", type=sql_int, help="one memory by id")
    g.add_argument("--match", metavar="TEXT",
                   help="every record holding TEXT (case-insensitive substring)")
    g.add_argument("--regex", metavar="RE", help="every record a Python regular expression "
                   "matches (case-sensitive unless it says (?i))")


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    for action, what in (("erase", "delete a scope and everything derived from it, then "
                          "prove nothing is left"),
                         ("redact", "replace a scope with [REDACTED] in place (entries keep "
                          "their place), rebuild its index, then verify")):
        p = sub.add_parser(action, parents=parents, help=what, description=(
            f"{what[0].upper()}{what[1:]}. The closure (every record that holds or points at "
            "the scope, with counts per table, and the exports that hold it) is shown first."))
        _scope_args(p)
        p.add_argument("--dry-run", action="store_true",
                       help="print the closure only; change nothing")
        p.add_argument("--yes", action="store_true",
                       help=f"do not ask to type '{action}' before changing anything")
        p.add_argument("--delete-exports", action="store_true",
                       help="also delete the export files (outside the store) that hold it")
        p.add_argument("--reason", help="a reason kept on the tombstone (it is stored: put "
                       "no content in it)")
        p.add_argument("--after-tombstone", metavar="ID", type=int,
                       help="this erases what tombstone ID left (its verification FAILED): "
                       "when every probe passes, that FAIL is cleared by a verification "
                       "linked to this one")
        if action == "erase":
            p.add_argument("--exports-of-tombstone", metavar="ID", type=sql_int,
                           help="delete the export files an earlier erasure (tombstone ID) "
                           "left because --delete-exports was not given (no scope needed)")
        add_json_flag(p)
        p.set_defaults(func=run, action=action)

    p = sub.add_parser("tombstones", parents=parents,
                       help="what erasures and redactions left (no content)")
    p.add_argument("--verify", metavar="ID", nargs="?", const=True, type=sql_int,
                   help="finish erasures interrupted after their change (verified '-'): "
                   "checkpoint and vacuum the file, run the probes, record them; every "
                   "unverified tombstone, or tombstone ID")
    add_json_flag(p)
    p.set_defaults(func=list_tombstones)

    p = sub.add_parser("mark", parents=parents, help="set the sensitivity of a scope",
                       description="Set the sensitivity of entries (and memories): private is "
                       "never injected into a public recall, secret is never injected and is "
                       "masked on every screen until revealed. --session also sets the "
                       "session's default for entries written later. --unmark-detected "
                       "turns back what the secrets detector marked secret (a false "
                       "positive): its findings are dismissed and the change audited.")
    _scope_args(p)
    p.add_argument("--as", dest="level", choices=SENSITIVITIES,
                   help="the level to set (required unless --unmark-detected; with it, the "
                   "level to return to: default an entry's session default, a memory public)")
    p.add_argument("--unmark-detected", action="store_true",
                   help="undo the secrets detector's marking of the scope's records (only "
                   "the ones it marked); they are not marked again by a later scan")
    add_json_flag(p)
    p.set_defaults(func=run_mark)


def _scope(args: argparse.Namespace) -> Scope:
    from store import Store

    return Store.scope(session=args.session, entry=args.entry, memory=args.memory,
                       match=args.match, regex=args.regex)


def _print_closure(closure: Any) -> None:
    out = console()
    counts = closure.counts()
    t = table("table", "records", title=f"{closure.action} closure of {closure.scope.kind}")
    for name, n in counts.items():
        t.add_row(name, f"{n:,}")
    out.print(t)
    for memory_id, why in sorted(closure.review.items()):
        out.print(Text(f"memory {memory_id} will be flagged for review: {why}"))
    for path in closure.export_files():
        out.print(Text(visible(f"export file holding it: {path}")))
    if not counts:
        out.print("nothing in the store holds this scope")


def _confirm(action: str) -> bool:
    if not sys.stdin.isatty():
        return False
    err_console.print(f"Type [bold]{action}[/] to {action} these records (anything else "
                      "cancels): ", end="")
    try:
        return input().strip() == action
    except EOFError:
        return False


def run(args: argparse.Namespace) -> int:
    if getattr(args, "exports_of_tombstone", None) is not None:
        return _exports_of_tombstone(args)
    scope = _scope(args)
    with store_from(args) as store:
        note_unverified(store)
        closure = store.privacy_closure(scope, args.action)
        if args.dry_run:
            if args.json:
                print_json({"closure": closure.counts(), "exports": closure.export_files()})
            else:
                _print_closure(closure)
            return 0
        if not args.yes:
            if args.json or not sys.stdin.isatty():
                return fail(f"{args.action} changes the store for good: pass --yes (and see "
                            "--dry-run for the closure first)")
            _print_closure(closure)
            if not _confirm(args.action):
                return fail("cancelled: nothing was changed", code=1)
        result = store.privacy_run(scope, args.action, delete_exports=args.delete_exports,
                                   reason=args.reason, closure=closure,
                                   after_tombstone=args.after_tombstone)
    if args.json:
        print_json(result.to_json())
        return 0 if result.verification.passed else 1
    out = console()
    if args.yes:
        _print_closure(closure)
    t = table("probe", "result", "detail", title="verification")
    for p in result.verification.probes:
        t.add_row(p.name, "pass" if p.passed else "FAIL", Text(visible(p.detail)))
    out.print(t)
    for path in result.exports_deleted:
        out.print(Text(visible(f"deleted export file {path}")))
    if result.tombstone_id is None:
        out.print("nothing was changed (nothing holds this scope)")
    else:
        verdict = "passed" if result.verification.passed else "FAILED"
        out.print(f"{args.action} done in {result.duration_ms / 1000:.2f} s; tombstone "
                  f"{result.tombstone_id}; verification {verdict}")
        out.print("to check it yourself without storing the words again: `lca-tui recall "
                  "--no-trace TEXT` (a plain recall keeps its query in a trace)",
                  markup=False, soft_wrap=True)
    return 0 if result.verification.passed else 1


def _exports_of_tombstone(args: argparse.Namespace) -> int:
    """Delete the export files an earlier erasure left on its tombstone's list."""
    if any(v is not None for v in (args.session, args.entry, args.memory, args.match,
                                   args.regex)):
        return fail("--exports-of-tombstone takes no scope: the tombstone names the files")
    with store_from(args) as store:
        removed, failed = store.delete_erased_exports(args.exports_of_tombstone)
    if args.json:
        print_json({"tombstone_id": args.exports_of_tombstone, "deleted": removed,
                    "failed": failed})
    else:
        out = console()
        for path in removed:
            out.print(Text(visible(f"deleted export file {path}")))
        for path in failed:
            out.print(Text(visible(f"could not delete export file {path}")))
        if not removed and not failed:
            out.print(f"tombstone {args.exports_of_tombstone} left no export files")
    return 1 if failed else 0


def note_unverified(store: Any) -> None:
    """One line on stderr when an earlier erasure was interrupted before its verification."""
    line = _unverified_line(store)
    if line:
        err_console.print(Text(f"note: {line}"), soft_wrap=True)


def verify_tombstones(args: argparse.Namespace) -> int:
    """``tombstones --verify [ID]``: finish interrupted erasures, print what was found."""
    wanted = None if args.verify is True else int(args.verify)
    with store_from(args) as store:
        done = store.verify_tombstones(wanted)
        failed = [] if done else [r.id for r in store.tombstones() if r.verified is False]
    if args.json:
        print_json({"verified": [{"tombstone_id": tid, **v.to_json()} for tid, v in done],
                    "failed_earlier": failed})
    else:
        out = console()
        if not done and failed:
            out.print(f"no tombstone waits for its verification; {len(failed)} FAILED it "
                      f"({', '.join(map(str, failed))}): `lca-tui tombstones --verify ID` "
                      "runs one's probes again")
        elif not done:
            out.print("every tombstone is verified; nothing to do")
        for tid, v in done:
            t = table("probe", "result", "detail", title=f"verification of tombstone {tid}")
            for p in v.probes:
                t.add_row(p.name, "pass" if p.passed else "FAIL", Text(visible(p.detail)))
            out.print(t)
            if v.not_rerun:
                out.print(Text("not rerun (they need the erased text, kept nowhere): "
                               + "; ".join(v.not_rerun)))
            out.print(f"tombstone {tid}: verification {'passed' if v.passed else 'FAILED'}")
    return 0 if all(v.passed for _, v in done) and not failed else 1


def list_tombstones(args: argparse.Namespace) -> int:
    if args.verify is not None:
        return verify_tombstones(args)
    with store_from(args) as store:
        rows = store.tombstones()
        note = None if args.json else _unverified_line(store)
    if args.json:
        print_json({"tombstones": [r.to_json() for r in rows]})
        return 0
    t = table("id", "time", "action", "scope", "counts", "actor", "verified")
    for r in rows:
        counts = ", ".join(f"{k} {v}" for k, v in r.counts.items())
        verified = "-" if r.verified is None else ("yes" if r.verified else "FAILED")
        t.add_row(*(Text(visible(str(v))) for v in (r.id, when(r.ts, with_seconds=True),
                                                      r.action, r.scope_kind, counts,
                                                      r.actor, verified)))
    console().print(t)
    if note:
        console().print(Text(note), soft_wrap=True)
    return 0


def _unverified_line(store: Any) -> str | None:
    return store.unverified_warning()


def run_mark(args: argparse.Namespace) -> int:
    if args.level is None and not args.unmark_detected:
        return fail("mark needs --as LEVEL (public, private or secret), or --unmark-detected")
    scope = _scope(args)
    with store_from(args) as store:
        note_unverified(store)
        if args.unmark_detected:
            counts = store.unmark_detected(scope, args.level, getattr(args, "actor", None))
        else:
            counts = store.privacy_mark(scope, args.level)
    if args.json:
        print_json({"level": args.level, "counts": counts,
                    "unmark_detected": bool(args.unmark_detected)})
        return 0
    many = {"session": "sessions", "entry": "entries", "memory": "memories"}
    counted = ", ".join(plural(n, k, many.get(k)) for k, n in counts.items())
    if args.unmark_detected:
        console().print(f"no longer secret (detector's findings dismissed): {counted}",
                        markup=False)
        return 0
    console().print(f"marked {args.level}: {counted}", markup=False)
    return 0
