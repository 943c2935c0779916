"""The shared vocabulary (``store/core/vocab.py``) is spelled once: the sensitivity levels, the
progress callback's type, a counted noun's ``s`` (``plural``) and a percentile (``percentiles``,
one interpolation and one rounding) appear nowhere else in the code, which imports them. Migrations
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
    "the sensitivity levels ranked by hand":
        re.compile(r"""["']public["']:\s*\d.*["']private["']:\s*\d"""),
    "Progress": re.compile(r"Callable\[\[str,\s*int,\s*int\],\s*None\]"),
    "an inline plural (use plural)":
        re.compile(r"""\{\s*['"]s['"]\s+if\b|\belse\s+['"]s['"]\s*\}"""
                   r"""|\bif [\w.]+ == 1 else f?["'][^"']*(s|ies)["']"""
                   r"""|\{\w+\}s\b"""),
    "a percentile of its own (use percentiles)":
        re.compile(r"def _?(pct|percentiles?)\(|quantiles\(|np\.percentile\(|np\.median\("),
}


def test_the_vocabulary_is_spelled_only_in_vocab() -> None:
    found = [f"{path.relative_to(ROOT)}:{n}: {what}"
             for folder in ("store", "lca_tui", "screens", "widgets")
             for path in sorted((ROOT / folder).rglob("*.py"))
             if path != VOCAB and MIGRATIONS not in path.parents
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for what, pattern in SPELLED.items() if pattern.search(line)]
    assert found == []


def test_percentiles_interpolate_and_round_one_way() -> None:
    from store import percentiles

    # linear between closest ranks: p50 of 1..4 is 2.5, p95 is 3 + 0.85
    assert percentiles([4.0, 1.0, 3.0, 2.0]) == {"p50": 2.5, "p95": 3.85, "max": 4.0,
                                                 "mean": 2.5}
    # every figure rounded to 3 decimals, whatever the percentiles asked
    got = percentiles([0.12344, 0.12346, 1 / 3], qs=(10, 25))
    assert got == {"p10": 0.123, "p25": 0.123, "max": 0.333, "mean": 0.193}
    assert percentiles([2.0004, 2.0008])["p50"] == 2.001  # 2.0006: 3 decimals, not 2
    assert percentiles([7.25]) == {"p50": 7.25, "p95": 7.25, "max": 7.25, "mean": 7.25}
    assert percentiles([]) == {}  # no values, no figure


def test_plural_counts_and_agrees() -> None:
    from store import plural

    assert plural(1, "chunk") == "1 chunk"
    assert plural(1204, "entry", "entries") == "1,204 entries"
    assert plural(0, "line") == "0 lines"
    assert plural(2, "tombstone", counted=False) == "tombstones"
    assert plural(1, "holds", "hold", counted=False) == "holds"
