"""The entry and text panes: non-ASCII text wrapped at spaces, a source path that gives way at
folders (never mid-id), the source line shortened."""

from __future__ import annotations

from pathlib import Path

from tests.helpers_ui import _entry


def test_wrap_line_cuts_non_ascii_text_at_spaces() -> None:
    from rich.cells import cell_len

    from widgets.text_pane import wrap_line

    line = "Café au lait — une phrase assez longue pour être coupée aux espaces, voilà"
    pieces = wrap_line(line, 20)
    assert "".join(pieces) == line
    assert all(cell_len(p) <= 20 for p in pieces)
    assert all(p.endswith(" ") for p in pieces[:-1]), pieces  # every cut at a space
    wide = "中文 " * 12
    assert all(cell_len(p) <= 9 and p.endswith(" ") for p in wrap_line(wide, 9)[:-1])


def test_source_path_gives_way_at_folders_never_mid_id() -> None:
    from widgets.entry_view import fit_path

    path = ("/home/dana/.claude/projects/-home-dana-projects-ledgerline/"
            "e4039782-67e5-43c9-ae73-35a01662e2ce.jsonl:118")
    assert fit_path(path, 200) == path
    short = fit_path(path, 70)
    assert short.startswith("…/") and short.endswith("e4039782-67e5-43c9-ae73-35a01662e2ce"
                                                      ".jsonl:118") and len(short) <= 70
    assert fit_path(path, 20) == "…/e4039782-67e5-43c9-ae73-35a01662e2ce.jsonl:118"


async def test_entry_pane_shows_the_source_line_shortened(tmp_path: Path) -> None:
    from textual.app import App, ComposeResult

    from widgets.entry_view import EntryView

    path = "/home/dana/.claude/projects/-home-dana-projects-ledgerline/e4039782-67e5.jsonl"

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield EntryView()

    app = One()
    async with app.run_test(size=(50, 12)) as pilot:
        view = app.query_one(EntryView)
        view.show_entry(_entry(source_path=path, source_line=7))  # type: ignore[arg-type]
        await pilot.pause()
        line = str(view.query_one("#entry-source").render())
        assert line.startswith("source …/") and line.endswith("e4039782-67e5.jsonl:7"), line
        assert len(line) <= 48
