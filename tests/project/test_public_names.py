"""store's public names (``store.PUBLIC``, imported lazily) are typed: each has its import in
the ``if TYPE_CHECKING:`` block of ``store/__init__.py``, from the module ``PUBLIC`` names, so
mypy sees the real object, not the ``Any`` of the lazy ``__getattr__``; the block imports
nothing that is not public; and no public name is a function that takes a store (a
capability is a ``Store`` method, never a function beside it)."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import store

ROOT = Path(__file__).resolve().parents[2]


def type_checking_imports(source: str) -> dict[str, str]:
    """Name bound -> "module:attribute" for each import under ``if TYPE_CHECKING:``."""
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and \
                node.test.id == "TYPE_CHECKING":
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    for alias in stmt.names:
                        found[alias.asname or alias.name] = f"{stmt.module}:{alias.name}"
    return found


def test_every_public_name_has_its_type_checking_import() -> None:
    imported = type_checking_imports((ROOT / "store" / "__init__.py").read_text("utf-8"))
    public = {name: where if ":" in where else f"{where}:{name}"
              for name, where in store.PUBLIC.items()}
    assert sorted(set(public) - set(imported)) == [], "public, typed Any"
    assert sorted(set(imported) - set(public)) == [], "imported for mypy, not public"
    assert {n: imported[n] for n in public if imported[n] != public[n]} == {}


STORE_TYPE = re.compile(r"\b(Store|StoreBase)\b")


def capability_functions(names: dict[str, object]) -> list[str]:
    """The functions among ``names`` that take a store (a parameter annotated ``Store`` or
    ``StoreBase``): a capability, which belongs on ``Store`` as a method, not beside it."""
    found = []
    for name, value in sorted(names.items()):
        if inspect.isfunction(value) and any(
                STORE_TYPE.search(str(p.annotation))
                for p in inspect.signature(value).parameters.values()):
            found.append(name)
    return found


def test_no_public_function_is_a_capability_beside_store() -> None:
    """Outside ``store/`` a capability is reached through ``Store`` only: a public function is
    shared vocabulary (text, times, numbers), a path or a config file's plan, a client's entry
    point (``open_store``, the hook, the daemon, the benchmarks) — never an operation on an
    open store (``hook_failures(store)``, ``tour_step(store, …)``, ``copy_store(a, b)`` were,
    and are ``Store.health_signal``, ``Store.tour_step``, ``Store.copy_to`` now)."""
    assert capability_functions({n: getattr(store, n) for n in store.PUBLIC}) == []


def test_a_function_taking_a_store_is_caught() -> None:
    from store.core.base import StoreBase

    def tour_step(store: StoreBase, index: int) -> int:
        return index

    def plural(n: int, word: str) -> str:
        return word

    def copy(source: str, target: store.Store | None = None) -> None:
        return None

    assert capability_functions({"tour_step": tour_step, "plural": plural, "copy": copy,
                                 "Store": store.Store}) == ["copy", "tour_step"]
