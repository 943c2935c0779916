"""The shared vocabulary (``store/core/vocab.py``) is spelled once: the sensitivity levels and
the progress callback's type appear nowhere else in the code, which imports them. Migrations
(``store/core/migrations/``) are left out: each is frozen history, its CHECK constraint spells
the levels as they were when it ran."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VOCAB = ROOT / "store" / "core" / "vocab.py"
MIGRATIONS = ROOT / "store" / "core" / "migrations"
SPELLED = {
    "the sensitivity levels":
        re.compile(r"""["']public["'],\s*["']private["'],\s*["']secret["']"""),
    "Progress": re.compile(r"Callable\[\[str,\s*int,\s*int\],\s*None\]"),
}


def test_the_vocabulary_is_spelled_only_in_vocab() -> None:
    found = [f"{path.relative_to(ROOT)}:{n}: {what}"
             for folder in ("store", "lca_tui", "screens", "widgets")
             for path in sorted((ROOT / folder).rglob("*.py"))
             if path != VOCAB and MIGRATIONS not in path.parents
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for what, pattern in SPELLED.items() if pattern.search(line)]
    assert found == []
