"""The health signals' BLANK (what `str.strip()` removes, used in SQL's TRIM) is written out
for speed; it must stay exactly the characters Python counts as white space."""

from __future__ import annotations

import sys

from store.health.signals_index import BLANK


def test_blank_is_every_white_space_character() -> None:
    computed = "".join(ch for ch in map(chr, range(sys.maxunicode + 1)) if ch.isspace())
    assert BLANK == computed
    assert ("x" + BLANK + "y").strip(BLANK) == ("x" + BLANK + "y").strip()
