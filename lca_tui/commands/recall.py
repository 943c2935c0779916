"""``lca-tui recall QUERY``, ``traces``, ``trace ID`` and ``feedback TRACE ITEM``: recall with
its trace (DESIGN "Recall"), and the experiential feedback a harness reports."""

from __future__ import annotations

import argparse
from typing import Any

from lca_tui.output import (Listing, add_json_flag, col, console, model_meanwhile, print_json,
                            sql_int, store_from)
from store import one_line, plural, when

CHANNELS = ("private", "shared", "public")


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("recall", parents=parents,
                       help="run a resonance-weighted recall and store its trace")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--role", help="the cue's role (matched against memories' role)")
    p.add_argument("--project", help="the cue's project (memories' projects, sessions' "
                   "project)")
    p.add_argument("--channel", choices=CHANNELS, default="private",
                   help="where the answer goes: private (default, the user's own session), "
                   "shared (private memories are penalised) or public (they are filtered)")
    p.add_argument("--historical", action="store_true",
                   help="a historical recall: superseded and expired memories may be used")
    p.add_argument("--no-trace", action="store_true",
                   help="a check (did an erasure leave anything?): the same search, no trace "
                   "written — a stored trace would hold the query")
    add_json_flag(p)
    p.set_defaults(func=run_recall)

    p = sub.add_parser("traces", parents=parents, help="recall traces, newest first")
    p.add_argument("--limit", type=sql_int, default=50)
    add_json_flag(p)
    p.set_defaults(func=run_traces)

    p = sub.add_parser("trace", parents=parents,
                       help="one recall trace: every candidate's terms and decision")
    p.add_argument("trace_id", metavar="ID", type=sql_int)
    p.add_argument("--rerun", action="store_true",
                   help="re-run its query with today's settings and store; show what moved")
    add_json_flag(p)
    p.set_defaults(func=run_trace)

    p = sub.add_parser("feedback", parents=parents,
                       help="report that an injected item was used or prevented a mistake")
    p.add_argument("trace_id", metavar="TRACE", type=sql_int)
    p.add_argument("item", metavar="ITEM", help="the candidate's rank in the trace, or "
                   "memory:ID / entry:ID")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--used", dest="kind", action="store_const", const="used")
    what.add_argument("--prevented", dest="kind", action="store_const", const="prevented")
    add_json_flag(p)
    p.set_defaults(func=run_feedback)


def _adjacent(c: Any) -> str:
    """`` adj 0.571`` when the entries beside a candidate raised its S, else nothing."""
    return "" if c.adj is None else f" adj {_fmt(c.adj)}"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _harness_figures(figures: dict[str, Any]) -> str:
    """A harness's own figures for a hit, labelled as the harness's (not lca-tui's R or S)."""
    def show(value: Any) -> str:
        return _fmt(value) if isinstance(value, float) else one_line(str(value), 40)

    parts = [f"{label} {show(figures[key])}" for key, label in (
        ("score", "score"), ("providerScore", "provider score"), ("scri", "scri"),
        ("recallMode", "recall mode")) if figures.get(key) is not None]
    return "harness's own figures: " + (", ".join(parts) or "none given")


def _print_candidates(candidates: list[Any]) -> None:
    """Two or three lines a candidate: numbers, source and excerpt, reason (80 columns)."""
    from store import TRACE_MASK as MASK, term_text

    out = console()
    for c in candidates:
        t = c.terms
        if c.harness is not None:
            out.print(f"#{c.rank:<3} {c.decision:<15} {_harness_figures(c.harness)}",
                      markup=False, style="bold")
        else:
            nums = " ".join(f"{k} {term_text(t.get(k)) or '-'}" for k in "ETAQK")
            out.print(f"#{c.rank:<3} {c.decision:<15} score {_fmt(c.score) or '-':>6}  "
                      f"S {_fmt(t.get('S')) or '-'} (cos {_fmt(c.cos) or '-'} lex "
                      f"{_fmt(c.lex) or '-'}{_adjacent(c)})  {nums}", markup=False,
                      style="bold")
        text = MASK if c.masked else one_line(c.excerpt or "", 90)
        what = c.label if c.source_type == "entry" and c.label else c.kind  # worker named
        where = c.pointer + (f" {what}" if what else "")
        out.print(f"     {one_line(where)}: {text}", markup=False, overflow="ellipsis",
                  no_wrap=True)
        out.print(f"     {one_line(c.reason)}", markup=False, style="dim")


def _print_trace(trace: Any) -> None:
    out = console()
    where = ", ".join(f"{k}={v}" for k, v in (("role", trace.role), ("project", trace.project),
                                              ("channel", trace.channel)) if v)
    origin = f"re-run of trace {trace.rerun_of}" if trace.rerun_of else trace.origin
    head = (f"trace {trace.id}  {when(trace.ts, with_seconds=True)}  {origin}  query: "
            f"{one_line(trace.query)}"
            f"  [{where}{', historical' if trace.historical else ''}]")
    out.print(head, markup=False, style="bold")
    latency = (f"latency {_fmt(trace.latency_ms, 1)} ms" if trace.latency_ms is not None
               else "latency unknown (harness trace)" if trace.origin != "lca-tui"
               else "latency unknown")
    out.print(f"{latency}, model {trace.model or '-'}"
              f"{' (DEGRADED)' if trace.degraded else ''}, injected {trace.injected} of "
              f"{trace.considered} considered", markup=False)
    label = "settings" if trace.origin == "lca-tui" else "from a harness event"
    out.print(f"{label}: " + one_line(", ".join(
        f"{k}={v}" for k, v in trace.settings.items() if k != "hits" and v is not None)),
        markup=False)
    _print_candidates(trace.candidates)


def _through_daemon(args: argparse.Namespace) -> dict[str, Any] | None:
    """The recall as ``lca-tui serve`` answers it (warm: model and vectors loaded), with its
    trace, or None when no daemon serves this store (or it cannot apply this run's --set)."""
    from lca_tui.warm import ask

    return ask(args, {"op": "recall", "query": args.query, "role": args.role,
                      "project": args.project, "channel": args.channel,
                      "historical": args.historical, "with_trace": not args.json})


def _run_check(args: argparse.Namespace) -> int:
    """``recall --no-trace``: the search a recall runs, nothing written (never the daemon,
    which stores a trace for every recall it answers)."""
    with store_from(args) as store:
        result = store.probe(args.query, role=args.role, project=args.project,
                             channel=args.channel, historical=args.historical)
    items = list(result.items)
    if args.json:
        data = result.to_json()
        data["trace_id"] = None
        data["trace_written"] = False
        print_json(data)
        return 0
    out = console()
    for item in items:
        where = (f"memory {item.source_id} {item.label or ''}" if item.source_type == "memory"
                 else f"{(item.session_id or '')[:8]}#{item.seq} {item.label or ''}")
        out.print(f"[{item.rank}] {one_line(where)}  score {item.score:.3f}", markup=False,
                  style="bold")
        out.print(one_line(item.text, 300), markup=False)
    if not items:
        out.print("nothing injected", markup=False)
    out.print(f"{plural(len(result.trace.candidates), 'candidate')} considered; no trace "
              "written (--no-trace): the query is kept nowhere", markup=False)
    return 0


def run_recall(args: argparse.Namespace) -> int:
    if args.no_trace:
        return _run_check(args)
    answered = _through_daemon(args)
    if answered is not None:
        if args.json:
            print_json(answered["result"])
            return 0
        from store import trace_from_dict

        items = [argparse.Namespace(**i) for i in answered["result"]["items"]]
        trace = trace_from_dict(answered["trace"])
    else:
        with model_meanwhile(args, bool(args.query.strip())), store_from(args) as store:
            result = store.recall(args.query, args.role, args.project, args.channel,
                                  args.historical)
        if args.json:
            print_json(result.to_json())
            return 0
        items, trace = list(result.items), result.trace
    out = console()
    for item in items:
        where = (f"memory {item.source_id} {item.label or ''}" if item.source_type == "memory"
                 else f"{(item.session_id or '')[:8]}#{item.seq} {item.label or ''}")
        out.print(f"[{item.rank}] {one_line(where)}  score {item.score:.3f}", markup=False,
                  style="bold")
        out.print(one_line(item.text, 300), markup=False)
    if not items:
        out.print("nothing injected", markup=False)
    _print_trace(trace)
    return 0


def run_traces(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        traces = store.traces(args.limit)
    if args.json:
        print_json([dict(t.to_json(), candidates=None) for t in traces])
        return 0
    t = Listing(col("id", whole=True, right=True), col("time", whole=True, drop=3),
                col("origin", whole=True, drop=4), col("latency ms", whole=True, right=True,
                                                       drop=2),
                col("injected", whole=True, right=True, drop=1), col("query", min_width=20))
    for tr in traces:
        origin = f"re-run of {tr.rerun_of}" if tr.rerun_of else tr.origin
        t.add_row(str(tr.id), when(tr.ts, with_seconds=True), origin, _fmt(tr.latency_ms, 1),
                  f"{tr.injected} of {tr.considered}", one_line(tr.query, 60))
    t.print()
    return 0


def run_trace(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        if not args.rerun:
            trace = store.trace(args.trace_id)
            if args.json:
                print_json(trace.to_json())
            else:
                _print_trace(trace)
            return 0
        result, moves = store.rerun(args.trace_id)
    if args.json:
        print_json({"trace": result.to_json(), "moves": [vars(m) for m in moves]})
        return 0
    _print_trace(result.trace)
    from store import moves_line

    moved = [m for m in moves if m.changed]
    if not moved:
        console().print(moves_line(moves, args.trace_id), markup=False, soft_wrap=True)
        return 0
    t = Listing(col("source", whole=True), col("rank before", whole=True, right=True),
                col("rank now", whole=True, right=True), col("decision before", whole=True),
                col("decision now", whole=True), title=moves_line(moves, args.trace_id))
    for m in moved:
        t.add_row(m.pointer, str(m.old_rank or "-"), str(m.new_rank or "-"),
                  m.old_decision or "-", m.new_decision or "-")
    t.print()
    return 0


def run_feedback(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        result = store.feedback(args.trace_id, args.item, args.kind)
    if args.json:
        print_json(result.as_json())
        return 0
    line = (f"trace {result.trace_id} #{result.rank} ({result.source_type} "
            f"{result.source_id}): {result.kind} "
            + ("recorded" if result.recorded else "already recorded"))
    if result.hits is not None:
        line += f"; hits {result.hits}, prevented {result.prevented}"
    console().print(line, markup=False)
    return 0
