"""``lca-tui memories``, ``memory ID``, ``chain ID`` and ``audit``: durable memories with
their evidence and supersession chains, and the audit log. None of them loads the embedding
model; a secret memory's text is withheld everywhere."""

from __future__ import annotations

import argparse

from rich.table import Table

from lca_tui.output import (sql_int, Listing, add_json_flag, col, console, fail, print_json,
                             listings_from, store_from)
from store import one_line, visible, when

STATUSES = ("active", "superseded", "disputed", "quarantined", "expired")
WITHHELD = "[secret: text withheld]"
WIDE = 110  # below this many columns, lists print one line an item


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("memories", parents=parents, help="durable memories, by type and name")
    p.add_argument("--status", choices=STATUSES, help="only memories in this state")
    p.add_argument("--type", dest="type_", metavar="TYPE", help="only memories of this type")
    add_json_flag(p)
    p.set_defaults(func=run_memories)

    p = sub.add_parser("memory", parents=parents,
                       help="one memory: metadata, text, evidence, chain, integrity problems")
    p.add_argument("memory_id", metavar="ID", type=sql_int)
    add_json_flag(p)
    p.set_defaults(func=run_memory)

    p = sub.add_parser("chain", parents=parents,
                       help="a memory's whole supersession chain, oldest first")
    p.add_argument("memory_id", metavar="ID", type=sql_int)
    add_json_flag(p)
    p.set_defaults(func=run_chain)

    p = sub.add_parser("audit", parents=parents,
                       help="the audit log, newest first (ids and counts, never content)")
    p.add_argument("--limit", type=sql_int, default=50, help="at most this many (default 50)")
    p.add_argument("--action", help="only this action (e.g. proposal_approved)")
    add_json_flag(p)
    p.set_defaults(func=run_audit)


def run_memories(args: argparse.Namespace) -> int:
    with listings_from(args) as store:
        rows = store.list_memories(args.status, args.type_)
    if args.json:
        print_json({"memories": [r.to_json() for r in rows]})
        return 0
    out = console()
    if not rows:
        what = " ".join(w for w in (f"with status {args.status}" if args.status else "",
                                    f"of type {args.type_}" if args.type_ else "") if w)
        out.print(f"no memories {what}".strip() if what else
                  "no memories: import a memory directory or approve a proposal",
                  markup=False)
        return 0
    if out.width < WIDE:  # one line a memory
        for r in rows:
            marks = "".join(m for m, on in ((" critical", r.critical),
                                            (" NOT-LOADABLE", not r.loadable),
                                            (" !contradiction", r.flagged)) if on)
            text = WITHHELD if r.text is None else _gist(r.text)
            out.print(f"{r.id:>3} {r.type or '-'} [{r.status}{marks}] {r.hits}/{r.prevented} "
                      f"{one_line(r.name, 36)}: {one_line(text, 200)}", markup=False,
                      overflow="ellipsis", no_wrap=True)
        return 0
    cells = [(str(r.id), r.type or "", r.status + (" !" if r.flagged else ""),
              "yes" if r.critical else "", "" if r.loadable else "NO",
              f"{r.hits}/{r.prevented}") for r in rows]
    heads = ("id", "type", "status", "crit", "load", "hits/prev")
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(heads)]
    name_w = min(32, max([4] + [len(r.name) for r in rows]))
    text_w = max(10, out.width - sum(widths) - name_w - 3 * (len(heads) + 2) - 1)
    t = Table(header_style="bold")
    for h, w in zip(heads, widths, strict=True):
        t.add_column(h, width=w)
    t.add_column("name", width=name_w)
    t.add_column("text", width=text_w)
    for r, c in zip(rows, cells, strict=True):
        t.add_row(*c, one_line(r.name, name_w),
                  WITHHELD if r.text is None else one_line(_gist(r.text), text_w))
    out.print(t)
    if any(r.flagged for r in rows):
        out.print("! an unresolved contradiction flag (kept both)", markup=False,
                        style="dim")
    return 0


def _gist(body: str) -> str:
    """The body without its Markdown headings (they repeat the name)."""
    lines = [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return " ".join(ln.strip() for ln in lines)


def _interval(valid_from: str | None, valid_to: str | None) -> str:
    """``2026-11-10 → 2026-12-01``: local dates, as the app shows them."""
    from store import when

    return f"{when(valid_from)[:10] if valid_from else '…'} → " \
        f"{when(valid_to)[:10] if valid_to else 'now'}"


def chain_lines(links: list, mark: int | None = None) -> list[str]:
    """The chain as text, oldest first, a successor indented under the memory it replaced.
    A merge gives a memory several predecessors, but only one of them can stand right above
    it: each other one says where it went (``→ merged into 17``), and the merge names all
    it merged, so no memory reads as an unconnected root."""
    lines = []
    for i, c in enumerate(links):
        pad = "  " * c.depth
        preds = list(c.supersedes)
        came = ""
        if c.proposal_id or len(preds) > 1:
            how = [f"proposal {c.proposal_id}"] if c.proposal_id else []
            if len(preds) > 1:
                how.append("merges " + ", ".join(map(str, preds)))
            came = f" ({'; '.join(how)})"
        fork = f"  FORK: superseded by {', '.join(map(str, c.successors))}" \
            if len(c.successors) > 1 else ""
        went = ""
        if len(c.successors) == 1:
            (succ,) = c.successors
            nxt = links[i + 1] if i + 1 < len(links) else None
            if nxt is None or nxt.id != succ or nxt.depth != c.depth + 1:
                merged = next((x for x in links if x.id == succ and len(x.supersedes) > 1),
                              None)
                went = f"  → {'merged into' if merged else 'superseded by'} {succ}"
        here = "  ←" if c.id == mark else ""
        lines.append(f"{pad}{'└ ' if c.depth else ''}memory {c.id} [{c.status}] "
                     f"{_interval(c.valid_from, c.valid_to)}  {one_line(c.name, 50)}{came}"
                     f"{fork}{went}{here}")
    return lines


def print_chain(links: list, mark: int | None = None) -> None:
    out = console()
    for line in chain_lines(links, mark):
        out.print(line, markup=False)


def run_memory(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        d = store.memory_detail(args.memory_id)
    if args.json:
        print_json(d.to_json())
        return 0
    out = console()
    r = d.row
    out.print(f"memory {r.id}  {one_line(r.name)}  [{r.type or '-'}, {r.status}]", markup=False,
              style="bold")
    facts = [f"sensitivity {r.sensitivity}", f"authority {r.authority}",
             f"hits {r.hits}, prevented {r.prevented}", _interval(r.valid_from, r.valid_to)]
    if r.critical:
        facts.append("critical")
    if r.tags:
        facts.append("tags " + ", ".join(r.tags))
    out.print("; ".join(facts), markup=False)
    if not r.loadable:
        out.print(f"NOT LOADABLE: {one_line(d.load_error or '')}", markup=False, style="red")
    if r.source_file:
        out.print(f"file: {one_line(r.source_file)}", markup=False, style="dim")
    if d.loading:
        from store import loading_line

        out.print(f"loads: {one_line(loading_line(d.loading))}", markup=False)
    out.print(WITHHELD if d.body is None else visible(d.body), markup=False)
    for e in d.evidence:
        where = (f"{(e.session_id or '?')[:8]}#{e.seq} (entry {e.entry_id})" if e.entry_id
                 else e.file or e.note or "?")
        out.print(f"evidence: {one_line(where)}" + (f" — {one_line(e.note)}" if e.note and
                                                     e.entry_id else ""),
                  markup=False, style="dim")
    for f in d.flags:
        state = f"resolved {when(f.resolved_at)}" if f.resolved_at else "unresolved"
        out.print(f"flag: {f.kind} with memory {f.other_id} ({state}; proposal "
                  f"{f.proposal_id}): {one_line(f.reason or '')}", markup=False,
                  style="yellow")
    if d.proposals:
        out.print("proposals that made or touched it: " + ", ".join(map(str, d.proposals)),
                  markup=False, style="dim")
    if len(d.chain) > 1:
        out.print("supersession chain:", markup=False, style="bold")
        print_chain(list(d.chain), r.id)
    for p in d.problems:
        out.print(f"INTEGRITY {p.kind}: {one_line(p.detail)}", markup=False, style="red")
    return 0


def run_chain(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        links = store.chain(args.memory_id)
    if args.json:
        print_json({"chain": [c.to_json() for c in links]})
        return 0
    print_chain(links, args.memory_id)
    return 0


AUDIT_IDS = 5  # ids an audit line names before it counts the rest (`--json` keeps all)


def _some_ids(ids: list) -> str:
    """``1, 2, 3, 4, 5 … (600 in all)``: an event over 600 chunks is one readable line."""
    if len(ids) <= AUDIT_IDS + 1:
        return ", ".join(map(str, ids))
    return f"{', '.join(map(str, ids[:AUDIT_IDS]))} … ({len(ids):,} in all; --json lists them)"


def run_audit(args: argparse.Namespace) -> int:
    if args.limit < 1:
        return fail(f"--limit must be 1 or more (got {args.limit})")
    with listings_from(args) as store:
        rows = store.audit_events(args.limit, args.action)
    if args.json:
        print_json({"events": [r.to_json() for r in rows]})
        return 0
    from store import when

    if not rows:
        console().print("no audit events" + (f" with action {args.action}" if args.action
                                             else ""), markup=False)
        return 0
    t = Listing(col("id", whole=True, right=True), col("time", whole=True),
                col("actor", drop=3, min_width=10), col("action", whole=True),
                col("target", drop=2, min_width=12), col("counts", drop=1, min_width=24))
    for r in rows:
        ids = _some_ids([i for i in r.target_ids if i is not None])
        counts = ", ".join(f"{k} {v}" for k, v in r.counts.items())
        t.add_row(str(r.id), when(r.ts, with_seconds=True), one_line(r.actor, 30), r.action,
                  f"{r.target_kind or ''} {ids}".strip(), counts)
    t.print()
    return 0
