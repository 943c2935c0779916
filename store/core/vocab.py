"""Words the whole project shares, defined once: the sensitivity levels, the progress
callback, counted nouns and the percentiles a benchmark reports. Standard library and NumPy
only (NumPy imported when percentiles are asked for)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

Sensitivity = Literal["public", "private", "secret"]
"""How private a record is: ``public`` may leave the machine, ``private`` (the default) is
recalled in private channels only, ``secret`` is never shown or recalled."""
SENSITIVITIES: tuple[Sensitivity, ...] = ("public", "private", "secret")

FORMAT_NAMES: tuple[str, ...] = ("codex", "gemini", "claude-code", "mindstone", "lca-export",
                                 "acp", "acp-journal", "claude-memory", "memory-dir")
"""The input formats ``lca-tui ingest --format`` accepts, named without importing the importers
(building the command line must stay lean); ``store.ingest.formats()`` is the registry itself,
and a test holds the two equal."""

ENTRY_KINDS: tuple[str, ...] = ("user", "assistant", "tool_call", "tool_result", "reasoning",
                                 "system", "compaction", "checkpoint", "event")
"""The kinds of transcript entry the store keeps (``entry.kind``; ``store.core.writes``
refuses another), each with a ``transcript.retention_days.<kind>`` setting."""

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: how far a long operation is (the CLI and the app draw it)."""


def plural(n: int, word: str, many: str | None = None, *, counted: bool = True) -> str:
    """``1 chunk``, ``3 chunks``, ``1,204 entries`` (``many`` for irregular plurals);
    ``counted=False`` gives the word alone, agreeing with ``n`` (``tombstones 4, 7``)."""
    form = word if n == 1 else (many or word + "s")
    return f"{n:,} {form}" if counted else form


PERCENTILE_DIGITS = 3
"""How every percentile the project reports is rounded: 3 decimals (a microsecond of a
millisecond figure, a thousandth of a score)."""


def percentiles(values: Sequence[float], qs: Sequence[int] = (50, 95)) -> dict[str, float]:
    """``p50``, ``p95`` (or the percentiles ``qs`` names), ``max`` and ``mean`` of ``values``:
    linear interpolation between the closest ranks (NumPy's default, ``statistics.quantiles``'
    "inclusive"), each rounded to ``PERCENTILE_DIGITS``. No values, no figures: ``{}``."""
    if len(values) == 0:
        return {}
    import numpy as np

    arr = np.asarray(values, dtype=np.float64)
    out = {f"p{q}": round(float(np.percentile(arr, q)), PERCENTILE_DIGITS) for q in qs}
    out["max"] = round(float(arr.max()), PERCENTILE_DIGITS)
    out["mean"] = round(float(arr.mean()), PERCENTILE_DIGITS)
    return out
