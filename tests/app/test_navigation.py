"""Navigation between screens: the store points at records (``RecordRef``), never at screens;
the registry's ``opens`` is the one table from a record's kind to the screen that shows it
(the app's ``OpenRecord`` routing and ``lca-tui health --show --json``'s ``screen``), and
``ABOUT`` the one table from a part of the store (``store.Subject``: a tour step's, a widget's
``Show``) to its screen; no screen or widget switches to another by name."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest

from lca_tui.cli import main
from screens.registry import ABOUT, SCREENS, screen_about, screen_for
from store import RecordKind, RecordRef, Subject, TourStep

ROOT = Path(__file__).resolve().parents[2]


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


def test_each_subject_has_a_screen_and_a_kinds_screen_opens_it() -> None:
    """``ABOUT`` covers every subject and every screen; a subject that is a record kind is
    shown on the screen that opens that kind (the two tables cannot disagree)."""
    assert set(ABOUT) == set(get_args(Subject))
    assert {screen_about(s).mode for s in get_args(Subject)} == {s.mode for s in SCREENS}
    for kind in get_args(RecordKind):
        assert screen_about(kind) == screen_for(kind), kind


def test_no_screen_or_widget_names_the_screen_it_goes_to() -> None:
    """Between screens there is ``OpenRecord`` (a record) or ``Show`` (a subject): no screen,
    widget or tour step switches mode by a literal name or carries a mode (the app, the
    palette and the screenshots walk the registry)."""
    literal = re.compile(r"switch_mode\(\s*['\"]")
    found = [f"{path.relative_to(ROOT)}:{n}" for folder in ("screens", "widgets")
             for path in sorted((ROOT / folder).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if literal.search(line) or "switch_mode(step." in line]
    assert found == []
    fields = set(TourStep.__dataclass_fields__)
    assert "subject" in fields and not fields & {"mode", "title"}
