"""``lca-tui sessions``, ``entries SESSION`` and ``search TEXT``: the transcript."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from lca_tui.output import add_json_flag, console, print_json, store_from, table
from store.core.records import agent_label, helper_role
from store.core.textsafe import one_line


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("sessions", parents=parents, help="list sessions, latest first")
    add_json_flag(p)
    p.set_defaults(func=sessions)

    p = sub.add_parser("entries", parents=parents, help="a session's entries, verbatim")
    p.add_argument("session", metavar="SESSION", help="session id (a unique prefix will do)")
    p.add_argument("--agent", help="only this agent's entries ('main' or a worker id)")
    p.add_argument("--limit", type=int, help="at most this many entries")
    p.add_argument("--offset", type=int, default=0)
    add_json_flag(p)
    p.set_defaults(func=entries)

    p = sub.add_parser("search", parents=parents, help="search entries and memories")
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--mode", choices=("hybrid", "fts", "semantic"), default="hybrid",
                   help="fts: BM25 only; semantic: vectors only; hybrid (default): 0.7·cos + "
                   "0.3·lex")
    p.add_argument("--limit", type=int)
    add_json_flag(p)
    p.set_defaults(func=search)


def sessions(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        rows = store.sessions()
    if args.json:
        print_json([dict(asdict(s), workers=list(s.workers), helpers=list(s.helpers))
                    for s in rows])
        return 0
    t = table("session", "format", "project", "started", "ended", "entries", "agents")
    for s in rows:
        agents = "main" + (f" + {len(s.workers)} worker(s)" if s.workers else "")
        agents += "".join(f", {role}" for role in sorted({str(helper_role(h))
                                                            for h in s.helpers}))
        t.add_row(s.id, s.format, one_line(s.project or ""), s.started_at or "", s.ended_at or "",
                  str(s.entries), agents)
    console().print(t)
    return 0


def entries(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        rows = store.entries(args.session, args.agent, args.offset, args.limit)
    if args.json:
        print_json([asdict(e) for e in rows])
        return 0
    out = console()
    for e in rows:
        head = f"#{e.seq} {e.ts or ''} {e.kind}" + (f" [{e.tool_name}]" if e.tool_name else "")
        head += f" agent={agent_label(e.agent)} ~{e.tokens} tokens"
        out.print(head, markup=False, style="bold")
        out.print(_verbatim(e.content), markup=False,
                  highlight=False)
    return 0


def _verbatim(content: str) -> str:
    from store.core.textsafe import visible

    return visible(content)


def search(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        limit = args.limit or store.settings["search.limit"]
        hits = store.search(args.text, limit, args.mode)
    if args.json:
        print_json([h.to_json() for h in hits])
        return 0
    t = table("score", "cos", "lex", "source", "text")
    for h in hits:
        where = (f"{h.session_id[:8]}#{h.seq} {h.kind}" if h.source_type == "entry"
                 else f"memory {h.source_id} {h.memory_name}")
        t.add_row(f"{h.score:.3f}", "" if h.cos is None else f"{h.cos:.3f}", f"{h.lex:.3f}",
                  where, one_line(h.text, 100))
    console().print(t)
    return 0
