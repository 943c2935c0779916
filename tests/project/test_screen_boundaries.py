"""One way between screens: outside the store no code reads a screen's attribute
by name (``getattr`` / ``hasattr`` on a screen: a screen is reached through its class's
attributes or the ``screens.navigation`` protocols), and nothing in ``store/`` names the app's
keys or its screens in the text it returns (the keys are the app's, remappable by id through
the settings' ``[keys]``; a screen is the app's mapping of a ``Subject``).

The checks read the source (AST, docstrings left out: they may explain the app) and take a
root, so the negative tests below prove each one catches its violation in a tiny fake tree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = ("lca_tui", "screens", "widgets")
SCREENS = ("Overview", "Transcript", "Context", "Recall", "Proposals", "Memories", "Health",
           "Privacy")
VERBS = ("opens", "leaves", "erases", "approves", "rejects", "previews", "lists", "resumes",
         "shows", "hides", "toggles", "goes", "moves", "copies", "filters", "redacts", "scans",
         "fixes", "next", "back")
KEY_HINT = re.compile(r"(?:^|[\s(])(?:enter|esc|escape|tab|space|[\[\]/?]|[a-zA-Z]) "
                      rf"(?:{'|'.join(VERBS)})\b")
"""A key named as a sentence names it, then what it does: ``enter opens``, ``] next``,
``t leaves``, ``a approves``."""
SCREEN_NAME = re.compile(rf"\b(?:{'|'.join(SCREENS)}) screen\b")


def _sources(root: Path, folders: tuple[str, ...]) -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8")))
            for folder in folders for path in sorted((root / folder).rglob("*.py"))]


def getattr_on_screens(root: Path) -> list[str]:
    """``getattr(<a screen>, ...)`` / ``hasattr(...)`` outside the store, where the object's
    expression names a screen (``screen``, ``self.screen``, ``app.screen``, ``target_screen``)."""
    found = []
    for path, tree in _sources(root, OUTSIDE):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("getattr", "hasattr") and node.args and \
                    re.search(r"screen\w*$", ast.unparse(node.args[0]), re.IGNORECASE):
                found.append(f"{path.relative_to(root)}:{node.lineno}: "
                             f"{ast.unparse(node)}")
    return sorted(found, key=lambda hit: (hit.split(":")[0], int(hit.split(":")[1])))


def _docstrings(tree: ast.Module) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            for statement in node.body:
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    out.add(id(statement.value))
    return out


def ui_names_in_store(root: Path) -> list[str]:
    """Strings in ``store/`` (not docstrings) that name a key and what it does, or a screen."""
    found = []
    for path, tree in _sources(root, ("store",)):
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    id(node) not in docs:
                hit = KEY_HINT.search(node.value) or SCREEN_NAME.search(node.value)
                if hit:
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {hit.group(0)!r}")
    return sorted(found, key=lambda hit: (hit.split(":")[0], int(hit.split(":")[1])))


def test_no_getattr_on_a_screen_by_name() -> None:
    assert getattr_on_screens(ROOT) == []


def test_no_ui_keys_or_screens_in_the_store() -> None:
    assert ui_names_in_store(ROOT) == []


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_getattr_on_a_screen_is_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "screens/tour.py": 'x = getattr(screen, "preview_scope", None)\n',
        "lca_tui/palette.py": 'w = getattr(self.app.screen, "WRITES", ())\n'
                              'h = hasattr(target_screen, "HELP")\n',
        "widgets/ok.py": 'v = getattr(args, "store", None)\n'})
    assert [hit.split(":")[0] + ":" + hit.split(":")[1] for hit in getattr_on_screens(root)] \
        == ["lca_tui/palette.py:1", "lca_tui/palette.py:2", "screens/tour.py:1"]


def test_ui_names_in_the_store_are_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"store/tour.py": (
        '"""The tour: enter opens a row (a docstring may say so)."""\n'
        'NAV = "] next · [ back · t leaves the tour"\n'
        'def f(n):\n'
        '    """a approves, r rejects: explained here."""\n'
        '    return f"{n} found. a approves, r rejects"\n'
        'LABEL = "recalls for the Recall screen"\n'
        'FINE = "a session opens a series; the signal is back to ok"\n')})
    assert [hit.split(": ", 1)[0] for hit in ui_names_in_store(root)] == [
        "store/tour.py:2", "store/tour.py:5", "store/tour.py:6"]
