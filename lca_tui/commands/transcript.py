"""``lca-tui sessions``, ``entries SESSION`` and ``search TEXT``: the transcript."""

from __future__ import annotations

import argparse
from dataclasses import asdict, replace

from lca_tui.output import (sql_int, Listing, add_json_flag, col, console, fail, print_json,
                            listings_from, model_meanwhile, store_from)
from store import agent_label, helper_role
from store import one_line
from widgets.fmt import agents_mark
from store import when


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("sessions", parents=parents, help="list sessions, latest first")
    add_json_flag(p)
    p.set_defaults(func=sessions)

    p = sub.add_parser("entries", parents=parents, help="a session's entries, verbatim",
                       description="A session's entries, verbatim: on a terminal long lines "
                       "wrap at words; into a pipe or a file each line is written as stored, "
                       "never re-wrapped.")
    p.add_argument("session", metavar="SESSION", help="session id (a unique prefix will do)")
    p.add_argument("--agent", help="only this agent's entries ('main' or a worker id; a "
                   "unique prefix will do); without it, every agent's entries by time")
    p.add_argument("--limit", type=sql_int, help="at most this many entries")
    p.add_argument("--offset", type=sql_int, default=0)
    add_json_flag(p)
    p.set_defaults(func=entries)

    p = sub.add_parser("search", parents=parents, help="search entries and memories")
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--mode", choices=("hybrid", "fts", "semantic"), default="hybrid",
                   help="fts: BM25 only; semantic: vectors only; hybrid (default): 0.7·cos + "
                   "0.3·lex")
    p.add_argument("--limit", type=sql_int)
    add_json_flag(p)
    p.set_defaults(func=search)


def sessions(args: argparse.Namespace) -> int:
    with listings_from(args) as store:
        rows = store.sessions()
    if args.json:
        print_json([dict(asdict(s), workers=list(s.workers), helpers=list(s.helpers))
                    for s in rows])
        return 0
    t = Listing(col("session", whole=True), col("started", whole=True, drop=2),
                col("last entry", whole=True, drop=4), col("entries", whole=True, right=True),
                col("agents", whole=True, drop=3), col("project", drop=5, min_width=20),
                col("format", whole=True, drop=6))
    for s in rows:
        # the app's "main + 1 worker", then the harness's own helpers by what they are
        agents = agents_mark(s) + "".join(f", {role}" for role in sorted(
            {str(helper_role(h)) for h in s.helpers}))
        t.add_row(s.id, when(s.started_at), when(s.ended_at), f"{s.entries:,}", agents,
                  one_line(s.project or ""), s.format)
    t.print()
    return 0


def entries(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 1:
        return fail(f"--limit must be 1 or more (got {args.limit})")
    with store_from(args) as store:
        if args.agent == "":  # resolved like context's --agent: an error naming the agents
            from store import resolve_agent

            session = store.session(args.session)
            resolve_agent("", session.agents, f"session {session.id[:8]}")
        rows = store.entries(args.session, args.agent, args.offset, args.limit,
                             by_time=not args.agent)
    from store import SECRET_ENTRY_MASK

    # a secret entry's text is withheld here as on every screen (search and memories too)
    rows = [replace(e, content=SECRET_ENTRY_MASK) if e.sensitivity == "secret" else e
            for e in rows]
    if args.json:
        print_json([asdict(e) for e in rows])
        return 0
    out = console()
    # verbatim: on a terminal long lines wrap at words; into a pipe or a file every line is
    # written as stored (no width applies), so an id or a path is never split
    unwrapped = not out.is_terminal
    for e in rows:
        head = f"#{e.seq} {when(e.ts, with_seconds=True)} {e.kind}" + (
            f" [{one_line(e.tool_name)}]" if e.tool_name else "")
        head += f" agent={one_line(agent_label(e.agent))} ~{e.tokens:,} tokens"
        out.print(head, markup=False, style="bold", soft_wrap=unwrapped)
        out.print(_verbatim(e.content), markup=False, highlight=False, soft_wrap=unwrapped)
    return 0


def _verbatim(content: str) -> str:
    from store import visible

    return visible(content)


def search(args: argparse.Namespace) -> int:
    from lca_tui.warm import ask

    answered = ask(args, {"op": "search", "query": args.text, "limit": args.limit,
                          "mode": args.mode})
    if answered is not None:  # the daemon's (warm) search: the same hits
        from store import SearchHit

        hits = [SearchHit(**h) for h in answered["hits"]]
    else:  # the query embedded (not --mode fts): the model loads while the store opens
        with model_meanwhile(args, args.mode != "fts" and bool(args.text.strip())), \
                store_from(args) as store:
            limit = args.limit or store.settings["search.limit"]
            hits = store.search(args.text, limit, args.mode)
    if args.json:
        print_json([h.to_json() for h in hits])
        return 0
    t = Listing(col("score", whole=True, right=True), col("cos", whole=True, right=True, drop=2),
                col("lex", whole=True, right=True, drop=1), col("source", whole=True),
                col("kind", whole=True, drop=3), col("text", min_width=24))
    for h in hits:
        if h.source_type == "entry":
            where, kind = f"{(h.session_id or '?')[:8]}#{h.seq}", h.kind or ""
        else:
            where, kind = f"memory {h.source_id}", one_line(h.memory_name or "", 40)
        t.add_row(f"{h.score:.3f}", "" if h.cos is None else f"{h.cos:.3f}", f"{h.lex:.3f}",
                  where, kind, one_line(h.text, 100))
    if not hits:
        console().print(f"no hits for {one_line(args.text, 80)!r} ({args.mode} search)",
                        markup=False, soft_wrap=True)
        return 0
    t.print()
    return 0
