"""``lca-tui propose FILE|-``, ``proposals``, ``proposal ID``, ``approve ID``, ``reject ID``
and ``edit ID FILE|-``: the approval gate for durable memory writes (DESIGN "Consolidation
proposals and the approval gate"). Only ``propose``, ``edit`` and ``approve`` load the
embedding model (the checks, the index and the verification need it)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from lca_tui.output import (sql_int, Listing, add_json_flag, col, console, fail, print_json,
                            listings_from, store_from, table)
from store import one_line, out_of_range, visible, when

STATUSES = ("pending", "approved", "applied", "failed", "rejected")
ORIGINS = ("cli", "api", "file", "consolidation", "proposer")
MARK = {"pass": "ok", "warn": "WARN", "fail": "FAIL"}


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("propose", parents=parents,
                       help="submit a proposal (JSON: op, type, target, content, metadata, "
                       "rationale, evidence); it is checked and queued")
    p.add_argument("file", metavar="FILE", help="the proposal JSON file, or - for stdin")
    p.add_argument("--origin", choices=ORIGINS, default="cli",
                   help="where the proposal comes from (default: cli)")
    p.add_argument("--no-auto-apply", action="store_true",
                   help="queue it even when governance.auto_apply would apply it")
    add_json_flag(p)
    p.set_defaults(func=run_propose)

    p = sub.add_parser("proposals", parents=parents, help="the proposal queue, newest first")
    p.add_argument("--status", choices=STATUSES, help="only proposals in this state")
    p.add_argument("--limit", type=sql_int, help="at most this many")
    add_json_flag(p)
    p.set_defaults(func=run_proposals)

    p = sub.add_parser("proposal", parents=parents,
                       help="one proposal: candidate, checks with evidence, edits, decisions")
    p.add_argument("proposal_id", metavar="ID", type=sql_int)
    add_json_flag(p)
    p.set_defaults(func=run_proposal)

    p = sub.add_parser("approve", parents=parents,
                       help="approve a proposal: apply it in one transaction, then verify")
    p.add_argument("proposal_id", metavar="ID", type=sql_int)
    p.add_argument("--as", dest="as_", choices=("reinforce", "supersede", "keep-both"),
                   help="approve as another operation (the checks say which they allow)")
    p.add_argument("--reason", help="why (required over a contradiction or a failed check)")
    add_json_flag(p)
    p.set_defaults(func=run_approve)

    p = sub.add_parser("verify", parents=parents,
                       help="finish what an interrupted write left: the bound directory's "
                       "file journals, applied proposals never verified, unverified tombstones")
    add_json_flag(p)
    p.set_defaults(func=run_verify)

    p = sub.add_parser("reject", parents=parents, help="reject a pending proposal")
    p.add_argument("proposal_id", metavar="ID", type=sql_int)
    p.add_argument("--reason", required=True, help="why (required, kept with the proposal)")
    add_json_flag(p)
    p.set_defaults(func=run_reject)

    p = sub.add_parser("edit", parents=parents,
                       help="change a pending proposal (JSON of the fields to change); its "
                       "checks run again and the edit is kept in its history")
    p.add_argument("proposal_id", metavar="ID", type=sql_int)
    p.add_argument("file", metavar="FILE", help="JSON file of changes, or - for stdin")
    p.add_argument("--reason", help="why it was edited")
    add_json_flag(p)
    p.set_defaults(func=run_edit)


def read_json(name: str) -> Any:
    """A JSON document from a file or ``-`` (stdin); errors say where."""
    where = "stdin" if name == "-" else name
    try:
        raw = sys.stdin.read() if name == "-" else open(name, encoding="utf-8").read()
    except IsADirectoryError:
        raise ValueError(f"{where}: a directory, not a JSON file") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ValueError(f"{where}: cannot read ({exc.strerror})") from None
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not JSON: line {exc.lineno} column {exc.colno}: "
                         f"{exc.msg}") from None
    except RecursionError:
        raise ValueError(f"{where}: JSON arrays or objects nested too deeply to be "
                         "read") from None
    problem = out_of_range(doc)
    if problem:
        raise ValueError(f"{where}: {problem}")
    return doc


SHORT = {"duplicate": "dup", "contradiction": "contra", "source_support": "source",
         "budget": "budget", "procedure_risk": "procedure", "verifier": "verifier"}


def _checks_line(checks: Any) -> str:
    bad = [f"{SHORT.get(c.kind, c.kind)} {MARK[c.result]}" for c in checks
           if c.result != "pass"]
    return ", ".join(bad) if bad else "all pass"


def print_proposal(info: Any) -> None:
    """A proposal for a person: what it would write, the checks, what approval needs."""
    out = console()
    s = info.summary
    targets = ", ".join(f"memory {t}" for t in s.shown_targets) or "-"
    out.print(f"proposal {s.id}  {s.shown_op or s.kind or '?'} {s.type or ''}  [{s.status}]  "
              f"origin {s.origin}  target {targets}", markup=False, style="bold")
    out.print(f"created {when(s.created, with_seconds=True)}"
              + (f" by {s.proposer}" if s.proposer else "")
              + (f"; decided {when(info.decided_at, with_seconds=True)} by {info.actor}"
                 if info.decided_at else ""), markup=False, soft_wrap=True)
    if info.status_reason:
        out.print(f"reason: {one_line(info.status_reason)}", markup=False)
    if s.name:
        out.print(f"name: {one_line(s.name)}", markup=False)
    if info.content is not None:
        out.print(visible(info.content), markup=False)
    if info.rationale:
        out.print(f"rationale: {one_line(info.rationale)}", markup=False, style="dim")
    for e in info.evidence:
        where = (f"{(e.session_id or '?')[:8]}#{e.seq} (entry {e.entry_id})" if e.entry_id
                 else e.file or "?")
        span = f" [{e.span[0]}:{e.span[1]}]" if e.span else ""
        out.print(f"evidence: {one_line(where)}{span}", markup=False, style="dim")
    if s.checks:
        t = table("check", "result", "detail")
        for c in s.checks:
            t.add_row(c.kind, MARK[c.result], one_line(c.detail, 200))
        out.print(t)
    for c in s.checks:
        if c.kind == "source_support":
            for sent in c.evidence.get("sentences", []):
                if sent.get("inference"):
                    out.print(f"  inference: {one_line(sent['text'], 120)}", markup=False,
                              style="yellow")
    if info.options and s.status in ("pending", "failed"):
        for o in info.options:
            how = f"--as {o.as_op}" if o.as_op else "approve as proposed"
            state = ("allowed" + (", needs --reason" if o.needs_reason else "")
                     if o.allowed else "not allowed")
            out.print(f"  {how}: {state} — {o.why}", markup=False)
    if info.verification:
        ok = "verified" if info.verified else "VERIFICATION FAILED"
        out.print(f"{ok}:", markup=False, style="bold")
        for step in info.verification.get("steps", []):
            out.print(f"  {'ok' if step['ok'] else 'FAIL'}  {step['step']}: "
                      f"{one_line(step['detail'], 160)}", markup=False)


def run_propose(args: argparse.Namespace) -> int:
    data = read_json(args.file)
    source = "stdin" if args.file == "-" else args.file
    with store_from(args) as store:
        info = store.propose(data, origin=args.origin, source=source,
                             auto_apply=not args.no_auto_apply)
    if args.json:
        print_json(info.to_json())
    else:
        print_proposal(info)
    return 0


def run_proposals(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 1:
        return fail(f"--limit must be 1 or more (got {args.limit})")
    with listings_from(args) as store:
        rows = store.proposals(args.status, args.limit)
    if args.json:
        print_json({"proposals": [r.to_json() for r in rows]})
        return 0
    if not rows:
        console().print(f"no proposals with status {args.status}" if args.status
                        else "no proposals", markup=False)
        return 0
    t = Listing(col("id", whole=True, right=True), col("op", whole=True),
                col("type", whole=True, drop=4), col("status", whole=True),
                col("origin", whole=True, drop=3), col("target", whole=True, drop=5),
                col("created", whole=True), col("name", drop=2, min_width=16),
                col("checks", drop=1, min_width=20))
    for r in rows:
        t.add_row(str(r.id), r.shown_op or f"({r.kind or 'event'})", r.type or "", r.status,
                  r.origin, ",".join(map(str, r.shown_targets)), when(r.created),
                  one_line(r.name or "", 60), _checks_line(r.checks))
    t.print()
    return 0


def run_proposal(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        info = store.proposal(args.proposal_id)
    if args.json:
        print_json(info.to_json())
    else:
        print_proposal(info)
    return 0


def run_approve(args: argparse.Namespace) -> int:
    from lca_tui.warm import ask

    answered = ask(args, {"op": "approve", "proposal_id": args.proposal_id, "as": args.as_,
                          "reason": args.reason}, replayable=False)
    if answered is not None:  # the daemon approved (its model warm for the verify step)
        from store import ProposalInfo, rebuild_record

        info = rebuild_record(ProposalInfo, answered["info"])
    else:
        with store_from(args) as store:
            info = store.approve(args.proposal_id, args.as_, args.reason)
    if args.json:
        print_json(info.to_json())
    else:
        print_proposal(info)
    if info.status == "failed":
        return 1
    return 0 if info.verified in (True, None) else 1


def run_reject(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        info = store.reject(args.proposal_id, args.reason)
    if args.json:
        print_json(info.to_json())
    else:
        console().print(f"proposal {info.id} rejected: {one_line(info.status_reason or '')}",
                        markup=False)
    return 0


def run_verify(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        done = store.finish_interrupted()
        tombs = store.verify_tombstones()
    report = {**done.as_json(), "tombstones_verified": {tid: v.passed for tid, v in tombs}}
    ok = all(done.proposals_verified.values()) and all(v.passed for _, v in tombs)
    if args.json:
        print_json(report)
    else:
        out = console()
        out.print(f"file journals settled: {done.journals}", markup=False)
        for pid, good in done.proposals_verified.items():
            out.print(f"proposal {pid}: {'verified' if good else 'verification FAILED'}",
                      markup=False)
        for tid, v in tombs:
            out.print(f"tombstone {tid}: {'verified' if v.passed else 'verification FAILED'}",
                      markup=False)
        if not done.proposals_verified and not tombs:
            out.print("no apply or erasure was left unverified", markup=False)
    return 0 if ok else 1


def run_edit(args: argparse.Namespace) -> int:
    changes = read_json(args.file)
    with store_from(args) as store:
        info = store.edit_proposal(args.proposal_id, changes, reason=args.reason)
    if args.json:
        print_json(info.to_json())
    else:
        print_proposal(info)
    return 0
