"""Dependencies point down: no import cycle anywhere in the project; nothing under ``store``
imports the UI or the application (not by ``import``, not by ``importlib.import_module("...")``);
``store.core`` imports no capability; capabilities never import the facade, neither
``store.facade`` nor through the package (``from store import open_store`` / ``Store``); and no
module imports another module's private (``_name``) names.

Who sits on top: ``store/__init__.py`` and ``store.facade`` are the harness API; ``store.harness``,
``store.bench``, ``store.demo`` and ``store.conformance`` (which plays its cases through the public
``Store`` API) are clients of it, like the CLI, so they may import the facade.
Every other package under ``store/`` is a capability or ``store.core``.

Private names: a ``_name`` is private to its module. The rule forbids the cross-package case the
house rules name (``from store.ingest.x import _y`` in ``store.export``) and, to be consistent,
the same-package case too: a name two modules share is public (no leading underscore).

The checker functions take a root, so the negative tests below build tiny fake module trees in
``tmp_path`` and prove each rule catches its violation.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("store", "lca_tui", "screens", "widgets")
UI = ("textual", "rich", "screens", "widgets", "lca_tui")
# Packages under store/ that sit on top of the facade (clients of the harness API, like the CLI).
ON_TOP = ("facade", "harness", "bench", "demo", "conformance", "evals")


@dataclass(frozen=True)
class Import:
    """One import in a module: the absolute module it names, the names taken from it (for
    ``from X import a, b``), the line, and how (``import``, ``from`` or ``string``)."""

    module: str
    names: tuple[str, ...]
    line: int
    how: str


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules_under(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for pkg in packages:
        if (root / pkg).is_dir():
            for path in (root / pkg).rglob("*.py"):
                found[module_name(root, path)] = path
    return found


def _package_of(name: str, path: Path) -> str:
    """The package a module's relative imports resolve against."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _absolute(name: str, path: Path, level: int, module: str | None) -> str:
    """``from ..x import y`` inside ``name`` as an absolute module name."""
    if level == 0:
        return module or ""
    base = _package_of(name, path).split(".")
    base = base[:len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([module] if module else []))


def _is_import_module(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in ("import_module", "__import__")


def imports_of(name: str, path: Path) -> list[Import]:
    """Every import in a module (top level and in functions, not under TYPE_CHECKING),
    relative ones resolved, plus string constants passed to ``import_module``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    found: list[Import] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [Import(a.name, (), node.lineno, "import") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(name, path, node.level, node.module)
            found.append(Import(target, tuple(a.name for a in node.names), node.lineno, "from"))
        elif (isinstance(node, ast.Call) and _is_import_module(node.func) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append(Import(node.args[0].value, (), node.lineno, "string"))
    return found


def graph(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Module -> project (and UI) modules it imports; ``from X import a`` counts X and X.a."""
    mods = modules_under(root, packages)
    out: dict[str, set[str]] = {}
    for name, path in mods.items():
        deps: set[str] = set()
        for imp in imports_of(name, path):
            for t in [imp.module] + [f"{imp.module}.{n}" for n in imp.names]:
                if t.split(".")[0] in UI + packages:
                    deps.add(t)
        out[name] = deps
    return out


def _resolve(target: str, modules: set[str]) -> str | None:
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def _capability(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "store" and len(parts) > 1 and parts[1] not in ("core",) + ON_TOP


# -- the checkers (each returns its violations as (importer, what) pairs) -------------------
def ui_imports(root: Path) -> list[tuple[str, str]]:
    return sorted((m, d) for m, deps in graph(root).items() if m.split(".")[0] == "store"
                  for d in deps if d.split(".")[0] in UI)


def layering(root: Path) -> list[tuple[str, str]]:
    """store.core importing a capability; a capability importing the facade, directly or
    through the ``store`` package (any name of it that is not a subpackage or module)."""
    mods = modules_under(root)
    bad: list[tuple[str, str]] = []
    for m, path in mods.items():
        if not m.startswith("store."):
            continue
        for imp in imports_of(m, path):
            t = imp.module
            if m.startswith("store.core") and t.startswith("store") and not (
                    t == "store.core" or t.startswith("store.core.")):
                if not (t == "store" and all(f"store.{n}" in mods and n == "core"
                                             for n in imp.names)):
                    bad.append((m, t))
            if not _capability(m):
                continue
            if t == "store.facade" or t.startswith("store.facade."):
                bad.append((m, t))
            elif t == "store" and imp.how in ("import", "string"):
                bad.append((m, "store"))
            elif t == "store":
                bad += [(m, f"store.{n}") for n in imp.names if f"store.{n}" not in mods
                        or n in ON_TOP]
    return sorted(set(bad))


def private_imports(root: Path) -> list[tuple[str, str]]:
    """``from store.x.y import _name`` (another module's private name) anywhere in store."""
    mods = modules_under(root, ("store",))
    bad = []
    for m, path in mods.items():
        for imp in imports_of(m, path):
            if imp.how != "from" or not imp.module.startswith("store"):
                continue
            for n in imp.names:
                private = n.startswith("_") and not n.startswith("__")
                if private and f"{imp.module}.{n}" not in mods and imp.module != m:
                    bad.append((m, f"{imp.module}.{n}"))
    return sorted(bad)


def cycles(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[list[str]]:
    g = graph(root, packages)
    modules = set(g)
    edges = {m: {r for d in deps if (r := _resolve(d, modules)) and r != m}
             for m, deps in g.items()}
    # a package's __init__ importing its own submodules is not a cycle with them
    for m in edges:
        edges[m] = {d for d in edges[m] if not (m and d.startswith(m + "."))}
    state: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


# -- the project ----------------------------------------------------------------------------
def test_store_imports_no_ui() -> None:
    assert ui_imports(ROOT) == []


def test_core_imports_no_capability_and_capabilities_not_the_facade() -> None:
    assert layering(ROOT) == []


def test_no_module_imports_another_modules_private_names() -> None:
    assert private_imports(ROOT) == []


def test_no_import_cycle() -> None:
    assert cycles(ROOT) == []


def test_store_top_level_is_small() -> None:
    top = [p.name for p in (ROOT / "store").glob("*.py")]
    assert len(top) <= 8, top


# -- each rule catches its violation (tiny fake trees) -----------------------------------------
def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        for parent in path.relative_to(root).parents:
            init = root / parent / "__init__.py"
            if parent != Path(".") and not init.exists():
                init.write_text("", encoding="utf-8")
    return root


BASE = {"store/__init__.py": "from store.facade import Store, open_store\n",
        "store/facade.py": "Store = object\ndef open_store(): ...\n",
        "store/core/db.py": "X = 1\n",
        "store/core/base.py": "from store.core import db\n",
        "store/ingest/acp.py": "_HEADING = 1\nHEADING = 2\n",
        "store/ingest/lines.py": "from store.core.db import X\n",
        "store/export/wire.py": "_loads = 1\n"}


def test_a_clean_fake_tree_passes(tmp_path: Path) -> None:
    root = _tree(tmp_path, BASE | {"store/recall/run.py": "from store.ingest.acp import HEADING\n"
                                   "from . import pool\nfrom store import core\n",
                                   "store/recall/pool.py": "from ..core import db\n",
                                   "store/harness/api.py": "from store import open_store\n"})
    assert (ui_imports(root), layering(root), private_imports(root), cycles(root)) == (
        [], [], [], [])


def test_relative_imports_are_resolved(tmp_path: Path) -> None:
    root = _tree(tmp_path, BASE | {"store/core/db.py": "from ..ingest import lines\n",
                                   "store/ingest/lines.py": "from ..core.db import X\n",
                                   "store/recall/run.py": "from ..facade import Store\n"})
    assert ("store.core.db", "store.ingest") in layering(root)
    assert ("store.recall.run", "store.facade") in layering(root)
    assert cycles(root), "core.db -> ingest.lines -> core.db"


def test_the_facade_through_the_package_is_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, BASE | {"store/recall/run.py": "from store import open_store\n",
                                   "store/health/scan.py": "from store import Store\n",
                                   "store/privacy/api.py": "import store\n"})
    assert layering(root) == [("store.health.scan", "store.Store"),
                              ("store.privacy.api", "store"),
                              ("store.recall.run", "store.open_store")]


def test_string_imports_of_the_ui_are_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, BASE | {
        "store/health/drill.py": "import importlib\nA = importlib.import_module('textual')\n",
        "store/recall/run.py": "from importlib import import_module\n"
                               "B = import_module('lca_tui.output')\n"})
    assert ui_imports(root) == [("store.health.drill", "textual"),
                                ("store.recall.run", "lca_tui.output")]


def test_private_names_of_another_module_are_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, BASE | {
        "store/ingest/journal.py": "from store.ingest.acp import _HEADING\n",
        "store/recall/run.py": "from ..export.wire import _loads\n"})
    assert private_imports(root) == [("store.ingest.journal", "store.ingest.acp._HEADING"),
                                     ("store.recall.run", "store.export.wire._loads")]
