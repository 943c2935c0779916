"""Navigation between screens: the store points at records (``RecordRef``), never at screens;
the registry's ``opens`` is the one table from a record's kind to the screen that shows it
(the app's ``OpenRecord`` routing and ``lca-tui health --show --json``'s ``screen``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lca_tui.cli import main
from screens.registry import SCREENS, screen_for
from store import RecordRef


def test_each_kind_names_one_screen_and_unknown_kinds_none() -> None:
    assert screen_for("session").mode == "transcript"  # type: ignore[union-attr]
    assert screen_for("series").mode == "context"  # type: ignore[union-attr]
    assert screen_for("trace").mode == "recall"  # type: ignore[union-attr]
    assert screen_for("memory").mode == "memories"  # type: ignore[union-attr]
    assert screen_for("proposal").mode == "proposals"  # type: ignore[union-attr]
    assert screen_for("writer") is None
    assert {s.mode for s in SCREENS if not s.opens} == {"overview", "health", "privacy"}


def test_a_ref_is_a_value() -> None:
    """Equal kind, id and place are the same reference (hashable: a set or a key holds it)."""
    assert RecordRef.entry("s1", 4) == RecordRef("session", "s1", 4)
    assert RecordRef.series("s1") == RecordRef("series", "s1", "main")
    assert len({RecordRef("memory", 3), RecordRef("memory", 3), RecordRef("proposal", 3)}) == 2


def test_health_show_json_names_each_rows_screen(demo_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's JSON keeps naming the screen of a row (from the registry, not the store):
    a duplicated chunk's entry is on Transcript, its memory on Memories, a compaction's
    series on Context."""
    code = main(["health", "--json", "--no-save", "--show", "duplicate_ratio",
                 "--show", "compaction_without_checkpoint", "--store", str(demo_path)])
    assert code in (0, 1)
    data = json.loads(capsys.readouterr().out)
    rows = {s["name"]: s["rows"] for s in data["signals"] if "rows" in s}
    screens = {r["screen"] for r in rows["duplicate_ratio"]}
    assert screens == {"transcript", "memories"}
    for r in rows["duplicate_ratio"]:
        assert r["screen"] == ("transcript" if "] of entry " in r["label"] else "memories")
    assert rows["compaction_without_checkpoint"] and all(
        r["screen"] == "context" for r in rows["compaction_without_checkpoint"])
