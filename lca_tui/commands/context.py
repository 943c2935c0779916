"""``lca-tui context``, ``context record`` and ``checkpoints``: context pressure (LCA §4.5,
§6.2) from the command line."""

from __future__ import annotations

import argparse
import copy
import json
import sys
from typing import Any

from lca_tui.output import Listing, add_json_flag, col, console, print_json, store_from
from store import one_line
from widgets.fmt import NO_CHECKPOINT_FIX, NO_CHECKPOINT_WHY
from store import plural, when


RECORD_HELP = """\
Read records from stdin: one JSON object, a JSON array, or JSON lines. Each object has a
"type" (default "snapshot") and a "session_id" (a stored session's id or a unique prefix of
it; an id matching no session creates one, and the output says so); "agent" defaults to
"main", "ts" (ISO-8601) to now. Window and thresholds left out fall back to the context.*
settings. Token figures are integers from 0 below 10^9 (window_tokens above 0), counts
non-negative integers; a line with a bad value is refused with its reason and the others are
recorded, each on its own.

  snapshot    used_tokens (required), window_tokens, segments {identity, critical, recalled,
              conversation, tool_output}, checkpoint_threshold, auto_compact_threshold (tokens)
              or checkpoint_percent, auto_compact_percent (of window_tokens), event (turn,
              prune, checkpoint, compaction), message_id (a repeated id updates its snapshot)
  prune       tokens_before, tokens_after (required), entry_ids (stored entry ids that left),
              entries_pruned, preserved, verified (checked against the store when left out),
              window_tokens, mode
  compaction  pre_tokens, trigger, summary_entry_id, handoff_path
  checkpoint  trigger, status, entries_added, memories_written, chunks_embedded,
              chunks_failed, archive_verified, index_verified, duration_ms, used_tokens (also
              records a checkpoint snapshot); session_id may be null for a store-wide one
  handoff     path, action (written, replayed), sha256, token_estimate

example:
  echo '{"session_id": "s1", "used_tokens": 151000, "window_tokens": 200000}' \\
    | lca-tui context record
"""


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("context", parents=parents,
                       help="context pressure: snapshots, compactions, prune events",
                       description="Context pressure per session and agent; `context record` "
                       "records snapshots from stdin.")
    p.add_argument("--session", metavar="ID", help="only this session (a unique prefix will do)")
    p.add_argument("--agent", help="only this agent ('main' or a worker id; a unique prefix "
                   "will do)")
    add_json_flag(p)
    p.set_defaults(func=show)
    actions = p.add_subparsers(dest="context_action", metavar="ACTION")
    r = actions.add_parser("record", parents=[_late(parents)], help="record snapshots, prunes, "
                           "compactions, checkpoints and handoffs given as JSON on stdin",
                           description=RECORD_HELP,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    add_json_flag(r)
    r.set_defaults(func=record)

    c = sub.add_parser("checkpoints", parents=parents,
                       help="checkpoints: checkpoint rows and checkpoint snapshots")
    c.add_argument("--session", metavar="ID", help="only this session")
    add_json_flag(c)
    c.set_defaults(func=list_checkpoints)


def _late(parents: list[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """The common options again for ``context record``, without defaults: an option given
    before ``record`` (``context --store X record``) is not reset by the nested parser."""
    late = argparse.ArgumentParser(add_help=False)
    for parent in parents:
        for action in parent._actions:
            clone = copy.copy(action)
            clone.default = argparse.SUPPRESS
            late._add_action(clone)
    return late


def _tokens(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def show(args: argparse.Namespace) -> int:
    from store import resolve_agent

    with store_from(args) as store:
        session_id = store.session(args.session).id if args.session else None
        agent = args.agent
        if agent is not None:
            keys = [k for k in store.series_keys() if session_id in (None, k.session_id)]
            where = (f"the context snapshots of session {session_id[:8]}" if session_id
                     else "the context snapshots")
            agent = resolve_agent(agent, sorted({k.agent for k in keys},
                                                key=lambda a: (a != "main", a)), where)
        found = store.all_series(session_id, agent)
    if args.json:
        print_json({"sessions": [s.to_json() for s in found]})
        return 0
    out = console()
    if not found:
        out.print("no context snapshots: import a transcript or `lca-tui context record`",
                  markup=False, soft_wrap=True)
        return 0
    t = Listing(col("session", whole=True), col("agent", whole=True),
                col("snapshots", whole=True, right=True, drop=3),
                col("window", whole=True, right=True, drop=2),
                col("peak", whole=True, right=True, drop=4),
                col("latest", whole=True, right=True),
                col("compactions", whole=True, drop=1), col("bad prunes", whole=True, drop=1))
    for s in found:
        latest = s.latest
        bad_c = sum(1 for c in s.compactions if not c.checkpoint_before)
        bad_p = sum(1 for p in s.prunes if not p.preserved_verified)
        t.add_row(s.session_id[:8], one_line(s.agent), f"{len(s.snapshots):,}",
                  _tokens(s.window_tokens), _tokens(s.peak_used_tokens),
                  _tokens(latest.used_tokens if latest else None),
                  f"{len(s.compactions)}" + (f" ({bad_c} unchecked)" if bad_c else ""),
                  f"{bad_p} of {len(s.prunes)}")
    t.print(out)
    if session_id:
        for s in found:
            _detail(out, s)
    _problems([p for s in found for p in s.problems])
    return 0


def _problems(problems: list[str]) -> None:
    """Stored values that could not be read: reported on stderr, the rest is shown."""
    for p in dict.fromkeys(problems):
        sys.stderr.write(f"lca-tui: warning: {one_line(p)}\n")


def _detail(out: Any, s: Any) -> None:
    for c in s.compactions:
        mark = "✓ " + str(c.checkpoint_what) if c.checkpoint_before else \
            "✗ no checkpoint before this compaction"
        if c.handoff_written:
            mark += " (handoff written)"
        out.print(f"{one_line(s.agent)}: compaction {when(c.ts, with_seconds=True)} pre "
                  f"{_tokens(c.pre_tokens)} tokens ({one_line(c.trigger or 'trigger unknown')})"
                  f": {mark}", markup=False, soft_wrap=True)
        if not c.checkpoint_before:
            out.print(f"    {NO_CHECKPOINT_WHY}", markup=False, soft_wrap=True)
            out.print(f"    {NO_CHECKPOINT_FIX}", markup=False, soft_wrap=True)
        if c.summary_excerpt:
            at = f" ({c.summary_at[0][:8]}#{c.summary_at[1]})" if c.summary_at else ""
            out.print(f"    summary{at}: {one_line(c.summary_excerpt)}", markup=False,
                      soft_wrap=True)
        if c.handoff_path:
            out.print(f"    handoff: {one_line(c.handoff_path)}", markup=False, soft_wrap=True)
    for p in s.prunes:
        mark = "✓ preserved and verified" if p.preserved_verified else \
            "✗ not preserved before pruning"
        out.print(f"{one_line(s.agent)}: prune {when(p.ts, with_seconds=True)} "
                  f"{_tokens(p.tokens_before)} → {_tokens(p.tokens_after)} tokens, "
                  f"{plural(p.entries_pruned, 'entry', 'entries')}: {mark}",
                  markup=False, soft_wrap=True)


JSON_TYPE = {str: "a string", int: "a number", float: "a number", bool: "true or false",
             type(None): "null", list: "an array"}


class _Unreadable(str):
    """Why a line is not JSON (a decoded JSON string is a ``str`` too, and no record)."""


def _records(raw: str) -> list[tuple[int, Any]]:
    """(line number, decoded value or ``_Unreadable``) for one object, an array or JSON
    lines."""
    try:
        whole = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        whole = None
    if isinstance(whole, dict):
        return [(1, whole)]
    if isinstance(whole, list):
        return [(i + 1, v) for i, v in enumerate(whole)]
    out: list[tuple[int, Any]] = []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError as exc:
            out.append((n, _Unreadable(f"invalid JSON: {exc.msg} at column {exc.colno}")))
        except RecursionError:
            out.append((n, _Unreadable("invalid JSON: nested too deeply")))
    return out


def _record_all(store: Any, raw: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                               list[str]]:
    """Record each line on its own (each record is its own write transaction): a line that
    fails is reported with its reason and never loses the others."""
    from store import StoreError

    recorded: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    created: list[str] = []
    for line, obj in _records(raw):
        if isinstance(obj, _Unreadable):
            errors.append({"line": line, "reason": str(obj)})
            continue
        if not isinstance(obj, dict):
            errors.append({"line": line, "reason": "not a JSON object: "
                                                    + JSON_TYPE.get(type(obj), "a value")})
            continue
        try:
            kind, rid, new = store.record(obj)
        except (ValueError, TypeError, OverflowError, StoreError) as exc:
            errors.append({"line": line, "reason": str(exc)})
            continue
        recorded.append({"line": line, "type": kind, "id": rid})
        if new is not None and new not in created:
            created.append(new)
    return recorded, errors, created


def record(args: argparse.Namespace) -> int:
    raw = sys.stdin.read()
    with store_from(args) as store:
        recorded, errors, created = _record_all(store, raw)
    if args.json:
        print_json({"recorded": recorded, "errors": errors, "created_sessions": created})
    else:
        out = console()
        out.print(f"recorded {plural(len(recorded), 'record')}", markup=False, soft_wrap=True)
        for sid in created:
            out.print(f"created session {one_line(sid)} (no stored session matched it)",
                      markup=False, soft_wrap=True)
        for e in errors:
            sys.stderr.write(f"lca-tui: stdin line {e['line']}: {one_line(e['reason'])}\n")
    if not recorded and not errors:
        sys.stderr.write("lca-tui: nothing on stdin: see `lca-tui context record --help`\n")
        return 2
    return 1 if errors else 0


def list_checkpoints(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        session_id = store.session(args.session).id if args.session else None
        rows = store.checkpoints(session_id)
    if args.json:
        print_json([c.to_json() for c in rows])
        return 0
    t = Listing(col("time", whole=True), col("origin", whole=True, drop=4),
                col("session", whole=True), col("trigger", drop=3, min_width=10),
                col("status", whole=True), col("memories", whole=True, right=True, drop=2),
                col("chunks", whole=True, drop=1), col("verified", drop=5, min_width=16))

    def flag(v: bool | None) -> str:
        return "?" if v is None else "yes" if v else "NO"

    for c in rows:
        failed = f" ({c.chunks_failed} failed)" if c.chunks_failed else ""
        t.add_row(when(c.ts, with_seconds=True), c.origin, (c.session_id or "store-wide")[:10],
                  one_line(c.trigger), c.status, str(c.memories_written),
                  f"{c.chunks_embedded}{failed}",
                  f"archive {flag(c.archive_verified)}, index {flag(c.index_verified)}")
    t.print()
    _problems([p for c in rows for p in c.problems])
    return 0
