"""``store.core.textsafe.visible``: invisible characters are escaped, visible text stays as it
is."""

from __future__ import annotations




def test_invisible_characters_are_escaped() -> None:
    from store.core.textsafe import visible

    for char in ("\u3164", "\u115f", "\u00ad", "\U000e0000", "\U000e0041", "\U000e007f",
                 "\ufe00", "\ufe0f"):
        shown = visible(f"a{char}b")
        assert char not in shown and shown.startswith("a\\") and shown.endswith("b"), shown
    assert visible("\U000e0041") == "\\U000e0041"
    assert visible("café ✓ 日本") == "café ✓ 日本"  # what is visible stays as it is
