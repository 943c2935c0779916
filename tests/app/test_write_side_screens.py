"""The write-side screens as their users meet them: counted nouns agree with their numbers
(Health's "enter: 1 offending row"), ``y`` says what it copied, a health signal with nothing to
judge shows ``N/A`` and counts in the title, not as a warning."""

from __future__ import annotations

from typing import Any

from screens.health import STATUS_STYLE, detail_text
from store.health.records import Row, SignalResult


def _sig(n: int, status: str = "warn") -> SignalResult:
    return SignalResult("compaction_without_checkpoint", status, float(n), str(n), 0.0, None,
                        "warn on any", "x", [Row("compaction", i) for i in range(n)], n)


def test_one_offending_row_is_singular() -> None:
    assert "enter: 1 offending row" in detail_text(_sig(1)).plain
    assert "1 offending rows" not in detail_text(_sig(1)).plain
    assert "enter: 2 offending rows" in detail_text(_sig(2)).plain


def test_not_applicable_has_a_style() -> None:
    assert "n/a" in STATUS_STYLE


def test_copy_says_what_it_copied(monkeypatch: Any) -> None:
    from lca_tui.app import LcaApp

    said: list[str] = []
    app = LcaApp.__new__(LcaApp)
    monkeypatch.setattr(LcaApp, "copy_to_clipboard", lambda self, v: None)
    monkeypatch.setattr(LcaApp, "notify", lambda self, msg, **kw: said.append(msg))
    app.copy_id("13", "proposal")
    assert said == ["copied proposal id 13 to the clipboard"]


async def test_room_to_spare_at_160x50_keeps_targets_and_tags_whole(demo_path: Any,
                                                                    run_app: Any) -> None:
    """At 160x50 the queue cut the merge's targets to `#16,…` and Memories its tags to
    `schema,…`, with half a screen to spare; both show whole now."""
    from textual.widgets import DataTable

    async with run_app(demo_path, mode="proposals", size=(160, 50)) as pilot:
        table = pilot.app.screen.query_one("#proposal-queue", DataTable)
        merge = next(r for r in pilot.app.screen.rows if r.op == "merge")
        shown = table.columns["target"].width  # type: ignore[index]
        assert shown >= len(", ".join(f"#{t}" for t in merge.targets)), shown
    async with run_app(demo_path, mode="memories", size=(160, 50)) as pilot:
        table = pilot.app.screen.query_one("#memory-table", DataTable)
        tags = next(", ".join(r.tags) for r in pilot.app.screen.rows
                    if r.name == "Ledger schema")
        assert table.columns["tags"].width >= len(tags), tags  # type: ignore[index]


async def test_y_on_recall_and_transcript_says_what_it_copied(demo_path: Any,
                                                              run_app: Any) -> None:
    """`y` on Recall said "copied id 13": it names a trace, a session, an entry."""
    async with run_app(demo_path, mode="recall") as pilot:
        screen = pilot.app.screen
        value = screen.selected_id()
        assert value is not None and screen.copy_what(value) == "trace"
    async with run_app(demo_path, mode="transcript") as pilot:
        screen = pilot.app.screen
        assert screen.copy_what("5ccec58f-0e70") == "session"
        assert screen.copy_what("5ccec58f-0e70#12") == "entry"


def test_copy_of_a_named_value_is_not_called_an_id(monkeypatch: Any) -> None:
    from lca_tui.app import LcaApp

    said: list[str] = []
    app = LcaApp.__new__(LcaApp)
    monkeypatch.setattr(LcaApp, "copy_to_clipboard", lambda self, v: None)
    monkeypatch.setattr(LcaApp, "notify", lambda self, msg, **kw: said.append(msg))
    app.copy_id("memory 8")
    app.copy_id("13", "trace")
    assert said == ["copied memory 8 to the clipboard", "copied trace id 13 to the clipboard"]
