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

The one door: code outside ``store/`` (``lca_tui``, ``screens``, ``widgets``) imports ``store``
and its public names (``store.PUBLIC``), nothing deeper, by no form of import, with no exception
(the hook's lean path too takes the daemon's client as public names: ``daemon_request`` …).

No package cycles: besides modules, packages (``store.<capability>``, ``lca_tui``, ``screens``,
``widgets``) form no cycle either; the lazy names (``store.PUBLIC``, the facade's
``operation("module:function")``) count as the imports they are.

No module imports a private module of Textual's (``textual.widgets._footer``): they change in
any release.

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
OUTSIDE = ("lca_tui", "screens", "widgets")


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


def _lazy_targets(tree: ast.Module) -> list[tuple[str, str, int]]:
    """(module, name, line) a module imports lazily by a string: the values of a module-level
    ``PUBLIC`` dict (``store/__init__.py``: ``"module"`` or ``"module:name"``) and the first
    argument of ``operation("module:function", ...)`` (the facade's methods)."""
    found: list[tuple[str, str, int]] = []
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and node.targets else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if (isinstance(target, ast.Name) and target.id == "PUBLIC"
                and isinstance(value, ast.Dict)):
            for k, v in zip(value.keys, value.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Constant):
                    module, _, attr = str(v.value).partition(":")
                    found.append((module, attr or str(k.value), v.lineno))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "operation" and node.args
                and isinstance(node.args[0], ast.Constant) and ":" in str(node.args[0].value)):
            module, _, attr = str(node.args[0].value).partition(":")
            found.append((module, attr, node.lineno))
    return found


def imports_of(name: str, path: Path, type_checking: bool = False) -> list[Import]:
    """Every import in a module (top level and in functions; under TYPE_CHECKING only when
    ``type_checking``: the graph's cycles are about what runs, the door about what is named),
    relative ones resolved, plus string constants passed to ``import_module`` and the lazy
    ``PUBLIC`` / ``operation(...)`` targets (how ``"lazy"``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if (not type_checking and isinstance(node, ast.If)
                and "TYPE_CHECKING" in ast.unparse(node.test)):
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
    found += [Import(m, (a,) if a else (), line, "lazy") for m, a, line in _lazy_targets(tree)]
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
            if not _capability(m) or imp.how == "lazy":
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


def _find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
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


def cycles(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[list[str]]:
    g = graph(root, packages)
    modules = set(g)
    edges = {m: {r for d in deps if (r := _resolve(d, modules)) and r != m}
             for m, deps in g.items()}
    # a package's __init__ importing its own submodules is not a cycle with them
    for m in edges:
        edges[m] = {d for d in edges[m] if not (m and d.startswith(m + "."))}
    return _find_cycles(edges)


def package_of(module: str) -> str:
    """``store.ingest.base`` -> ``store.ingest``; ``store.facade`` and ``store`` (its
    ``__init__``) stand for themselves; outside ``store`` the top-level package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "store" and len(parts) > 1 else parts[0]


def package_cycles(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[list[str]]:
    """Cycles between packages: ``a -> b`` when a module of ``a`` imports one of ``b``."""
    g = graph(root, packages)
    modules = set(g)
    edges: dict[str, set[str]] = {}
    for m, deps in g.items():
        edges.setdefault(package_of(m), set())
        for d in deps:
            r = _resolve(d, modules)
            if r and package_of(r) != package_of(m):
                edges[package_of(m)].add(package_of(r))
    for p in list(edges.values()):
        for q in p:
            edges.setdefault(q, set())
    return _find_cycles(edges)


def public_names(root: Path) -> set[str]:
    """The names ``store/__init__.py`` exports (its ``PUBLIC`` table)."""
    tree = ast.parse((root / "store" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "PUBLIC" and isinstance(
                node.value, ast.Dict):
            return {str(k.value) for k in node.value.keys if isinstance(k, ast.Constant)}
    return set()


def _store_attribute_chains(path: Path) -> list[str]:
    """``store.x`` of a chain ``P.x.y`` written as attributes, where ``P`` names the package in
    this module: ``import store`` and ``import store.a.b`` bind ``store``, ``import store as
    s`` binds ``s``; for each use. The caller keeps those whose ``x`` is a module of the store
    (``store.health(...)`` on a ``Store`` variable is a method, and a module that never
    imports the package has only such variables)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound = {a.asname or "store" for n in ast.walk(tree) if isinstance(n, ast.Import)
             for a in n.names if a.name == "store" or (a.name.startswith("store.")
                                                       and a.asname is None)}
    bound |= {a.asname for n in ast.walk(tree) if isinstance(n, ast.Import)
              for a in n.names if a.name == "store" and a.asname}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name) and node.value.value.id in bound):
            found.append(f"store.{node.value.attr}")
    return found


def door_violations(root: Path) -> list[tuple[str, str]]:
    """Imports from outside ``store/`` of anything but ``store`` and its public names:
    ``store.x`` by any form of import, or
    ``from store import y`` for a ``y`` that ``store.PUBLIC`` does not name."""
    public = public_names(root)
    inner = {p.stem for p in (root / "store").iterdir()
             if p.stem != "__init__" and (p.is_dir() or p.suffix == ".py")} - public
    bad: list[tuple[str, str]] = []
    for m, path in modules_under(root, OUTSIDE).items():
        bad += [(m, chain) for chain in _store_attribute_chains(path)
                if chain.split(".")[1] in inner]
        for imp in imports_of(m, path, type_checking=True):
            t = imp.module
            if t == "store" and imp.how == "from":
                bad += [(m, f"store.{n}") for n in imp.names if n not in public]
            elif t.startswith("store."):
                bad.append((m, t))
    return sorted(set(bad))


def textual_private_imports(root: Path) -> list[tuple[str, str]]:
    """Imports of a Textual module whose name has a private part (``textual.widgets._footer``),
    including ``from textual.widgets import _footer``."""
    bad = []
    for m, path in modules_under(root).items():
        for imp in imports_of(m, path):
            if imp.module.split(".")[0] != "textual":
                continue
            parts = imp.module.split(".") + ([n for n in imp.names if n.startswith("_")]
                                             if imp.how == "from" else [])
            if any(p.startswith("_") and not p.startswith("__") for p in parts):
                bad.append((m, imp.module))
    return sorted(set(bad))


# -- the project ----------------------------------------------------------------------------
def test_store_imports_no_ui() -> None:
    assert ui_imports(ROOT) == []


def test_core_imports_no_capability_and_capabilities_not_the_facade() -> None:
    assert layering(ROOT) == []


def test_no_module_imports_another_modules_private_names() -> None:
    assert private_imports(ROOT) == []


def test_no_import_cycle() -> None:
    assert cycles(ROOT) == []


def test_no_package_cycle() -> None:
    assert package_cycles(ROOT) == []


def test_outside_the_store_only_its_public_names_are_imported() -> None:
    assert door_violations(ROOT) == []


def test_every_public_name_of_the_store_resolves() -> None:
    """``store.PUBLIC`` is the door: each name it lists imports (a typo would only fail on
    first use, in whatever screen or command used it)."""
    import store

    assert public_names(ROOT) == set(store.PUBLIC)
    for name in store.PUBLIC:
        assert getattr(store, name) is not None, name


def test_no_public_name_of_the_store_is_a_module() -> None:
    """Outside ``store/``, only ``Store``, its errors, record types, functions and values are
    reachable: a whole module behind a public name would be a second, untyped door."""
    import types

    import store

    modules = sorted(name for name in store.PUBLIC
                     if isinstance(getattr(store, name), types.ModuleType))
    assert modules == []


def test_no_private_textual_module_is_imported() -> None:
    assert textual_private_imports(ROOT) == []


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


def test_a_deep_import_from_outside_the_store_is_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, BASE | {
        "store/__init__.py": 'PUBLIC = {"Store": "store.facade", "visible": "store.core.db"}\n',
        "store/harness/client.py": "", "store/harness/paths.py": "",
        "lca_tui/ok.py": "from store import Store, visible\nimport store\n",
        "lca_tui/lean.py": "def f():\n    from store.harness import client, paths\n"
                           "    from store.harness.client import probe\n",
        "lca_tui/deep.py": "from store.core.db import X\n",
        "screens/mod.py": "import store.ingest.lines\n",
        "widgets/name.py": "from store import harness\n",
        "widgets/lazy.py": "def f():\n    from store.export import wire\n",
        "lca_tui/text.py": "import importlib\nM = importlib.import_module('store.core.db')\n",
        "lca_tui/typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                            "    from store.core.db import X\n",
        "lca_tui/chain.py": "import store\nY = store.core.db.X\nZ = store.Store\n",
        "lca_tui/alias.py": "import store as s\nY = s.ingest.lines.X\n"})
    assert door_violations(root) == [("lca_tui.alias", "store.ingest"),
                                     ("lca_tui.chain", "store.core"),
                                     ("lca_tui.deep", "store.core.db"),
                                     ("lca_tui.lean", "store.harness"),
                                     ("lca_tui.lean", "store.harness.client"),
                                     ("lca_tui.text", "store.core.db"),
                                     ("lca_tui.typed", "store.core.db"),
                                     ("screens.mod", "store.ingest.lines"),
                                     ("widgets.lazy", "store.export"),
                                     ("widgets.name", "store.harness")]


def test_a_package_cycle_is_caught_where_modules_have_none(tmp_path: Path) -> None:
    """ingest.a -> export.b and export.c -> ingest.d: no module cycle, a package cycle."""
    root = _tree(tmp_path, BASE | {"store/ingest/a.py": "from store.export import b\n",
                                   "store/export/b.py": "X = 1\n",
                                   "store/export/c.py": "from store.ingest.d import Y\n",
                                   "store/ingest/d.py": "Y = 1\n"})
    assert cycles(root) == []
    assert package_cycles(root) == [["store.export", "store.ingest", "store.export"]]


def test_lazy_names_count_as_imports(tmp_path: Path) -> None:
    """The facade's ``operation("m:f")`` and ``store.PUBLIC``'s values are edges: a capability
    that imported the facade back would be a cycle."""
    root = _tree(tmp_path, BASE | {
        "store/facade.py": 'class Store:\n    f = operation("store.recall.run:f")\n',
        "store/recall/run.py": "from store.facade import Store\n"})
    assert ["store.facade", "store.recall.run", "store.facade"] in cycles(root)
    assert ("store.recall.run", "store.facade") in layering(root)


def test_private_textual_modules_are_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, BASE | {
        "widgets/a.py": "from textual.widgets._footer import FooterKey\n",
        "widgets/b.py": "from textual.widgets import _footer\n",
        "widgets/c.py": "from textual.widgets import Footer\n"})
    assert textual_private_imports(root) == [("widgets.a", "textual.widgets._footer"),
                                             ("widgets.b", "textual.widgets")]
