"""``/`` filters a table as you type (entries by kind, traces by query), esc clears it, and the
filter's subtitle shows typed markup as text."""

from __future__ import annotations

from pathlib import Path

from widgets.table import FilterTable

from tests.helpers_shell import FIXED_NOW, wait_until
from tests.helpers_shell import load_count, load_log
from tests.helpers_ui import _app, _loaded, _rows
from tests.helpers_ui import demo  # noqa: F401 (a pytest fixture, named as a parameter)


async def test_filter_subtitle_shows_typed_markup_as_text(demo: Path) -> None:
    from lca_tui.app import make_app
    from screens.transcript import TranscriptScreen
    from tests.helpers_shell import rendered_text, wait_until

    app = make_app(demo, now=FIXED_NOW, mode="transcript", refresh_seconds=3600)
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen)
                         and load_count(app.screen, "entries") >= 1, what="entries")
        app.screen.query_one("#entries").focus()
        await pilot.press("slash", *"[red]x", "backslash")
        await pilot.pause()
        shown = rendered_text(app.screen.query_one("#lists"))
        assert 'filter "[red]x\\": 0 of ' in shown, shown


async def test_slash_filters_entries_by_kind_and_esc_clears(demo_path: Path) -> None:
    app = _app(demo_path, "transcript")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        table = screen.query_one("#entries", FilterTable)
        table.focus()
        everything = table.row_count
        await pilot.press("slash", *"tool_call")
        kinds = _rows(table, "kind")
        assert kinds and set(kinds) == {"tool_call"} and len(kinds) < everything
        assert "of" in str(screen.query_one("#lists").border_subtitle)
        assert screen.highlighted_entry().kind == "tool_call"
        await pilot.press("enter")
        assert app.focused is table and set(_rows(table, "kind")) == {"tool_call"}
        await pilot.press("slash", "escape")
        assert table.row_count == everything and not table.filter_text


async def test_slash_filters_traces_by_query(demo_path: Path) -> None:
    app = _app(demo_path, "recall")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        table = app.screen.query_one("#recall-traces", FilterTable)
        table.focus()
        await pilot.press("slash", *"staging cred")
        assert _rows(table, "query") == ["where are the staging credentials"]
        await pilot.press("escape")
        assert table.row_count == 4


async def test_esc_in_the_table_clears_a_kept_filter(demo_path: Path) -> None:
    """A filter kept with enter: the footer offers esc in the table, and esc shows every row
    again and hides the filter's line (esc there did nothing and said nothing); without a
    filter esc is not the table's key."""

    app = _app(demo_path, "transcript")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        table = screen.query_one("#entries", FilterTable)
        table.focus()
        everything = table.row_count
        assert not table.check_action("clear_filter", ())
        await pilot.press("slash", *"tool_call", "enter")
        await pilot.pause()
        assert app.focused is table and table.row_count < everything
        assert "Clear filter" in {k.description for k in screen.query("FooterKey")}
        await pilot.press("escape")
        await pilot.pause()
        assert table.row_count == everything and not table.filter_text
        field = screen.query_one("#entries-filter")
        assert not field.display and field.value == ""
        assert not screen.query_one("#lists").border_subtitle
        assert "Clear filter" not in {k.description for k in screen.query("FooterKey")}
