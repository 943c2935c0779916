"""Dependencies point down: no import cycle anywhere in the project; nothing under ``store``
imports the UI or the application; ``store.core`` imports no capability and capabilities
never import ``store.facade`` (the top)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("store", "lca_tui", "screens", "widgets")
UI = ("textual", "rich", "screens", "widgets", "lca_tui")


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    """Module -> project modules it imports (top-level and in functions, not TYPE_CHECKING)."""
    modules = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            modules[_module_name(path)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for n in ast.walk(node))
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for t in targets:
                if t.split(".")[0] in UI + ("store",):
                    deps.add(t)
        graph[name] = deps
    return graph


def _resolve(target: str, modules: set[str]) -> str | None:
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def test_store_imports_no_ui() -> None:
    bad = {m: sorted(d for d in deps if d.split(".")[0] in UI)
           for m, deps in _graph().items() if m.split(".")[0] == "store"}
    assert {m: d for m, d in bad.items() if d} == {}


def test_core_imports_no_capability_and_capabilities_not_the_facade() -> None:
    bad = []
    for m, deps in _graph().items():
        if not m.startswith("store."):
            continue
        for d in deps:
            if not d.startswith("store"):
                continue
            if m.startswith("store.core") and not d.startswith("store.core"):
                bad.append((m, d))
            capability = m.split(".")[1] not in ("core", "facade", "bench", "demo")
            if capability and d.startswith("store.facade"):
                bad.append((m, d))
    assert bad == []


def test_no_import_cycle() -> None:
    graph = _graph()
    modules = set(graph)
    edges = {m: {r for d in deps if (r := _resolve(d, modules)) and r != m}
             for m, deps in graph.items()}
    # a package's __init__ importing its own submodules is not a cycle with them
    for m in edges:
        edges[m] = {d for d in edges[m] if not (m and d.startswith(m + "."))}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    assert cycles == []


def test_store_top_level_is_small() -> None:
    top = [p.name for p in (ROOT / "store").glob("*.py")]
    assert len(top) <= 8, top
