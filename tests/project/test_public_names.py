"""store's public names (``store.PUBLIC``, imported lazily) are typed: each has its import in
the ``if TYPE_CHECKING:`` block of ``store/__init__.py``, from the module ``PUBLIC`` names, so
mypy sees the real object, not the ``Any`` of the lazy ``__getattr__``; the block imports
nothing that is not public."""

from __future__ import annotations

import ast
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
