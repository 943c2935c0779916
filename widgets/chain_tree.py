"""A supersession chain (LCA §6.3) as a tree: the newest memory at the top, under it the
memories it replaced, each with its validity interval and the proposal that made the link.

The store hands the chain oldest first (``store.governance.ChainLink``); a ``merge`` gives one
memory several predecessors, which read naturally as children here. A fork (one memory
superseded by two) shows the old memory under both successors, and a cycle stops at the first
memory seen again; the integrity problems the store found are written on the memories they
involve. Node data is the memory id: selecting a node asks the screen to show that memory.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from store import ChainLink, IntegrityProblem
from store import one_line
from widgets.fmt import when

NAME_WIDTH = 32


def interval(link: ChainLink) -> str:
    """``2026-01-20 → 2026-01-26`` (``now`` when still valid, ``?`` when unknown)."""
    start = when(link.valid_from)[:10] if link.valid_from else "?"
    end = when(link.valid_to)[:10] if link.valid_to else "now"
    return f"{start} → {end}"


def link_label(link: ChainLink, by: dict[int, ChainLink], current: int | None,
               problems: dict[int, list[str]]) -> Text:
    """One memory of the chain: ``#16 superseded 2026-01-20 → 2026-01-26 · proposal 3 ·
    name`` — what tells the links apart first, so a narrow pane cuts only the name."""
    out = Text(end="")
    here = link.id == current
    out.append(f"#{link.id} ", style="bold reverse" if here else "bold")
    out.append(link.status, style="bold" if link.status == "active" else "italic")
    out.append(f" {interval(link)}", style="dim")
    if link.supersedes:
        how = f"proposal {link.proposal_id}" if link.proposal_id else "memory files"
        verb = "merge by " if len(link.supersedes) > 1 else ""
        out.append(f" · {verb}{how}", style="dim")
    for kind in problems.get(link.id, []):
        out.append(f" ⚠ {kind.replace('_', ' ')}", style="bold")
    out.append(" · ", style="dim")
    out.append(one_line(link.name, NAME_WIDTH), style="bold" if here else "")
    return out


class ChainTree(Tree[int]):
    """The supersession chain of one memory (``show_chain``)."""

    DEFAULT_CSS = """
    ChainTree { height: 1fr; padding: 0 1; background: $surface; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("chain", **kwargs)  # type: ignore[arg-type]
        self.show_root = False
        self.guide_depth = 3
        self.links: list[ChainLink] = []

    def show_chain(self, links: Sequence[ChainLink], current: int | None = None,
                   problems: Sequence[IntegrityProblem] = ()) -> None:
        """Rebuild the tree from a chain (oldest first, as ``Store.chain`` gives it)."""
        self.links = list(links)
        by = {c.id: c for c in links}
        marks: dict[int, list[str]] = {}
        for p in problems:
            for mid in p.memory_ids:
                if p.kind not in marks.setdefault(mid, []):
                    marks[mid].append(p.kind)
        self.clear()
        heads = [c for c in reversed(links) if not any(s in by for s in c.successors)]
        if not heads and links:  # a cycle: every memory has a successor
            heads = [links[-1]]
        for head in heads:
            self._add(self.root, head, by, current, marks, set())
        self.root.expand_all()
        self.select_current(current)

    def _add(self, parent: TreeNode[int], link: ChainLink, by: dict[int, ChainLink],
             current: int | None, marks: dict[int, list[str]], seen: set[int]) -> None:
        if link.id in seen:
            parent.add_leaf(Text(f"#{link.id} again: a supersession cycle", style="bold"),
                            data=link.id)
            return
        olds = [by[i] for i in link.supersedes if i in by]
        label = link_label(link, by, current, marks)
        if not olds:
            parent.add_leaf(label, data=link.id)
            return
        node = parent.add(label, data=link.id, expand=True)
        for old in olds:
            self._add(node, old, by, current, marks, seen | {link.id})

    def select_current(self, current: int | None) -> None:
        """Put the cursor on ``current``'s node (the first, after a fork)."""
        if current is None:
            return
        for line in range(self.last_line + 1):
            node = self.get_node_at_line(line)
            if node is not None and node.data == current:
                self.move_cursor(node, animate=False)
                return
