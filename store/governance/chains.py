"""Supersession as links (LCA §6.3): writing a link, reading a chain, checking integrity.

A link is old memory → new memory, with the proposal that made it (none when an importer read
it from a file) and its time. ``merge`` gives several links into one memory; two links out of
one memory is a **fork**, an integrity problem, never settled by the last writer. The pointer
columns ``memory.supersedes_id`` / ``superseded_by_id`` are kept consistent with the links:
every link sets them (through the memory-write module), and ``integrity`` reports where they
disagree. A chain is read from links and pointers together, so a store whose pointers predate
the links still shows its chains.

``integrity(store)`` is public: the Health screen calls it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import Connection
from sqlmodel import col, select

from store.core.db import orm
from store.core.errors import NotFound
from store.core.models import Memory
from store.core.timeutil import now_iso
from store.core import memories
from store.governance.models import SupersessionLink
from store.governance.records import ChainLink, IntegrityProblem

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store


class ForkError(ValueError):
    """A link would give a memory a second successor (a fork)."""


def link(conn: Connection, store: Store, old_id: int, new_id: int, *,
         proposal_id: int | None = None, source: str = "proposal", ts: str | None = None,
         retire: bool = True, pointers: bool = True, allow_fork: bool = False) -> bool:
    """Record that ``new_id`` supersedes ``old_id`` (inside the caller's transaction): the
    link row, the pointer columns (unless an importer set them already: ``pointers=False``),
    and — with ``retire`` — the old memory ``superseded`` with ``valid_to`` set (kept when it
    already ends earlier). False when the link existed.

    A memory that already has another successor is never linked again (``ForkError``: the
    caller's transaction rolls back) — a fork is not settled by the last writer. Only an
    importer recording what files say (``allow_fork=True``) stores one, for ``integrity`` to
    report."""
    if old_id == new_id:
        raise ValueError(f"memory {old_id} cannot supersede itself")
    when = ts or now_iso()
    with orm(conn) as s:
        have = s.exec(select(SupersessionLink).where(SupersessionLink.old_id == old_id,
                                                     SupersessionLink.new_id == new_id)).first()
        if not allow_fork:
            others = set(s.exec(select(SupersessionLink.new_id).where(
                SupersessionLink.old_id == old_id)).all())
            current = s.get(Memory, old_id)
            if current is not None and current.superseded_by_id is not None:
                others.add(current.superseded_by_id)
            others.discard(new_id)
            if others:
                by = ", ".join(map(str, sorted(others)))
                raise ForkError(f"memory {old_id} is already superseded by {by}: linking it to "
                                f"{new_id} would fork the chain (supersede {by} instead)")
        if have is None:
            s.add(SupersessionLink(old_id=old_id, new_id=new_id, proposal_id=proposal_id,
                                   ts=when, source=source, writer=store.writer,
                                   writer_version=store.writer_version, created_at=now_iso()))
            s.flush()
        old = s.get(Memory, old_id)
        if old is None:
            raise LookupError(f"no memory {old_id}")
        valid_to = old.valid_to if old.valid_to and old.valid_to <= when else when
        already = old.status
    if pointers:
        memories.supersede(conn, new_id, old_id)
    if retire and (already in ("active", "disputed") or valid_to != old.valid_to):
        status = already if already in ("quarantined", "expired") else "superseded"
        memories.set_status(conn, store, old_id, status, valid_to=valid_to)
    return have is None


def sync_links(conn: Connection, store: Store) -> int:
    """After an import: a link (source ``import``) for every pointer ``supersedes_id`` that
    has none, and each memory so superseded marked ``superseded`` with ``valid_to`` (its
    successor's ``valid_from``, else its ``created``) — an importer that reads a supersession
    sets status and validity, not only a pointer. Two memories superseding one both get
    their link: a fork, reported by ``integrity``. Returns the links added."""
    with orm(conn) as s:
        naming = s.exec(select(Memory).where(col(Memory.supersedes_id).is_not(None))
                        .order_by(col(Memory.id))).all()
        have = {(ln.old_id, ln.new_id) for ln in s.exec(select(SupersessionLink)).all()}
    added = 0
    for newer in naming:
        assert newer.id is not None and newer.supersedes_id is not None
        if (newer.supersedes_id, newer.id) in have:
            continue
        when = newer.valid_from or newer.created or now_iso()
        added += link(conn, store, newer.supersedes_id, newer.id, source="import", ts=when,
                      pointers=False, allow_fork=True)
    return added


@dataclass
class _Graph:
    """Links and pointers of the whole store, as edges old → new."""

    nodes: dict[int, Memory]
    succ: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    pred: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    links: dict[tuple[int, int], SupersessionLink] = field(default_factory=dict)
    pointer_edges: set[tuple[int, int]] = field(default_factory=set)
    missing: set[int] = field(default_factory=set)

    def add(self, old: int, new: int) -> None:
        self.succ[old].add(new)
        self.pred[new].add(old)


def _graph(conn: Connection) -> _Graph:
    with orm(conn) as s:
        nodes = {m.id: m for m in s.exec(select(Memory)).all() if m.id is not None}
        links = list(s.exec(select(SupersessionLink).order_by(col(SupersessionLink.id))).all())
    g = _Graph(nodes)
    for ln in links:
        g.links[(ln.old_id, ln.new_id)] = ln
        g.add(ln.old_id, ln.new_id)
    for m in nodes.values():
        assert m.id is not None
        if m.supersedes_id is not None:
            g.pointer_edges.add((m.supersedes_id, m.id))
            g.add(m.supersedes_id, m.id)
        if m.superseded_by_id is not None:
            g.pointer_edges.add((m.id, m.superseded_by_id))
            g.add(m.id, m.superseded_by_id)
    for old, new in list(g.links) + list(g.pointer_edges):
        g.missing.update(x for x in (old, new) if x not in nodes)
    return g


def _component(g: _Graph, start: int) -> set[int]:
    seen, todo = {start}, [start]
    while todo:
        n = todo.pop()
        for m in g.succ.get(n, set()) | g.pred.get(n, set()):
            if m not in seen and m in g.nodes:
                seen.add(m)
                todo.append(m)
    return seen


def _order(g: _Graph, members: set[int]) -> tuple[list[int], dict[int, int]]:
    """Oldest first (Kahn's order; ties by valid_from / created, then id) and each memory's
    depth; members of a cycle come last, by id."""
    def key(i: int) -> tuple[str, int]:
        m = g.nodes[i]
        return (m.valid_from or m.created or m.created_at or "", i)

    indeg = {n: len([p for p in g.pred.get(n, set()) if p in members]) for n in members}
    depth = {n: 0 for n in members}
    ready = sorted((n for n in members if indeg[n] == 0), key=key)
    out: list[int] = []
    while ready:
        n = ready.pop(0)
        out.append(n)
        for m in sorted(g.succ.get(n, set()) & members, key=key):
            depth[m] = max(depth[m], depth[n] + 1)
            indeg[m] -= 1
            if indeg[m] == 0:
                ready.append(m)
                ready.sort(key=key)
    out.extend(sorted(members - set(out)))
    return out, depth


def chain(store: Store, memory_id: int) -> list[ChainLink]:
    """The whole supersession chain (tree, after merges) of ``memory_id``, oldest first,
    whichever of its memories is asked. A memory in no chain is a chain of one."""
    with store.read() as conn:
        g = _graph(conn)
    if memory_id not in g.nodes:
        raise NotFound(f"no memory {memory_id}: `lca-tui memories` lists them")
    members = _component(g, memory_id)
    order, depth = _order(g, members)
    out = []
    for n in order:
        m = g.nodes[n]
        preds = sorted(p for p in g.pred.get(n, set()) if p in g.nodes)
        succs = sorted(x for x in g.succ.get(n, set()) if x in g.nodes)
        into = [g.links[(p, n)] for p in preds if (p, n) in g.links]
        proposal = next((ln.proposal_id for ln in into if ln.proposal_id is not None), None)
        by = m.superseded_by_id if m.superseded_by_id in succs else (succs[0] if succs
                                                                      else None)
        out.append(ChainLink(n, m.name, m.status, m.valid_from, m.valid_to, tuple(preds), by,
                             proposal, tuple(succs), depth[n],
                             into[0].ts if into else None,
                             any(ln.source == "erasure" for ln in into)))
    return out


def erasure_bridges(conn: Connection, erased: set[int]
                   ) -> tuple[list[tuple[int, int]], set[int]]:
    """The supersession links an erasure must keep a chain whole by: for every erased memory,
    each nearest surviving predecessor → each nearest surviving successor (walking through
    erased members). Also the surviving memories whose ``supersedes_ref`` named an erased one
    (the erased memory's name or file name: its text must not stay there)."""
    if not erased:
        return [], set()
    g = _graph(conn)

    def reach(start: int, edges: dict[int, set[int]]) -> set[int]:
        out, seen, todo = set(), {start}, [start]
        while todo:
            for m in edges.get(todo.pop(), set()):
                if m in seen or m not in g.nodes:
                    continue
                seen.add(m)
                if m in erased:
                    todo.append(m)
                else:
                    out.add(m)
        return out

    bridges: set[tuple[int, int]] = set()
    refs: set[int] = set()
    for x in erased:
        if x not in g.nodes:
            continue
        later = reach(x, g.succ)
        refs.update(n for n in later if x in g.pred.get(n, set()))
        bridges.update((p, n) for p in reach(x, g.pred) for n in later)
    return sorted(bridges), refs


def _cycles(g: _Graph) -> list[list[int]]:
    """Every cycle's members (strongly connected components of more than one memory)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[int] = []
    found: list[list[int]] = []
    counter = 0
    nodes = sorted(set(g.succ) | set(g.pred))
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(g.succ.get(root, set()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(g.succ.get(nxt, set())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == node:
                        break
                if len(comp) > 1 or node in g.succ.get(node, set()):
                    found.append(sorted(comp))
    return found


def integrity(store: Store) -> list[IntegrityProblem]:
    """Supersession problems in the whole store: ``cycle``, ``dangling`` (a link or pointer
    to a memory that does not exist, or a ``supersedes`` naming no stored memory), ``fork``
    (one memory superseded by two), ``superseded_but_active`` and ``pointer_mismatch``."""
    with store.read() as conn:
        g = _graph(conn)
    return problems_in(g)


def problems_in(g: _Graph, only: set[int] | None = None) -> list[IntegrityProblem]:
    out: list[IntegrityProblem] = []

    def add(kind: str, ids: list[int], detail: str) -> None:
        if only is None or set(ids) & only:
            out.append(IntegrityProblem(kind, tuple(ids), detail))

    for comp in _cycles(g):
        add("cycle", comp, "supersession cycle: " + " → ".join(map(str, comp + comp[:1])))
    for old, new in sorted(set(g.links) | g.pointer_edges):
        gone = [x for x in (old, new) if x not in g.nodes]
        if gone:
            what = "link" if (old, new) in g.links else "pointer"
            add("dangling", [old, new], f"{what} {old} → {new} names memory "
                f"{', '.join(map(str, gone))}, which does not exist")
    for m in g.nodes.values():
        assert m.id is not None
        if m.supersedes_ref and m.supersedes_id is None and not g.pred.get(m.id):
            add("dangling", [m.id], f"memory {m.id} says it supersedes {m.supersedes_ref!r}, "
                "which names no stored memory")
    for old, news in sorted(g.succ.items()):
        live = sorted(n for n in news if n in g.nodes)
        if old not in g.nodes:
            continue
        if len(live) > 1:
            add("fork", [old, *live], f"memory {old} is superseded by {len(live)} memories "
                f"({', '.join(map(str, live))}): a fork, decide which one replaces it")
        if live and g.nodes[old].status == "active":
            add("superseded_but_active", [old, *live], f"memory {old} is superseded by "
                f"{', '.join(map(str, live))} but still active")
    for (old, new) in sorted(g.links):
        if old in g.nodes and new in g.nodes and g.nodes[old].superseded_by_id is None:
            add("pointer_mismatch", [old, new], f"link {old} → {new} has no pointer: memory "
                f"{old}'s superseded_by is empty")
    for (old, new) in sorted(g.pointer_edges - set(g.links)):
        if old in g.nodes and new in g.nodes:
            add("pointer_mismatch", [old, new], f"pointer {old} → {new} has no link row")
    return out


def problems_of(store: Store, memory_id: int) -> list[IntegrityProblem]:
    """The integrity problems that involve ``memory_id``."""
    with store.read() as conn:
        g = _graph(conn)
    return problems_in(g, {memory_id})
