"""The app shell: modes and keys, help, palette, live refresh, safe rendering, and the demo."""

from __future__ import annotations

import importlib
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import get_args

import pytest
from textual.widgets import DataTable

from lca_tui.app import make_app
from lca_tui.cli import main
from screens.base import StoreScreen
from screens.help import HelpScreen
from screens.navigation import OpenRecord, Opens
from screens.registry import SCREENS
from store import RecordKind, RecordRef, open_store
from store.demo import DemoError, build_demo, shift_text
from store.core.settings import Settings
from store.core.writes import NewEntry, NewSession
from tests.conftest import RunApp, make_store
from tests.helpers_shell import FIXED_NOW, load_count, rendered_segments, rendered_text, wait_until


# -- the demo store -----------------------------------------------------------------------------
def test_shift_keeps_each_format() -> None:
    """Dates stay dates, timestamps keep Z, offsets and fraction digits; junk is left alone."""
    text = ("created: 2026-01-12\n\"timestamp\":\"2026-01-12T10:00:00.123Z\" "
            "### Auto-archive — 2026-01-13T14:07:52Z at 2026-01-13T23:30:00+02:00 "
            "and 2026-01-13 08:15 not 2026-13-45 nor v2.1.38")
    out, n = shift_text(text, timedelta(days=10, hours=2))
    assert n == 5
    assert out == ("created: 2026-01-22\n\"timestamp\":\"2026-01-22T12:00:00.123Z\" "
                   "### Auto-archive — 2026-01-23T16:07:52Z at 2026-01-24T01:30:00+02:00 "
                   "and 2026-01-23 10:15 not 2026-13-45 nor v2.1.38")


def test_demo_store_tells_the_story_up_to_now(demo_template: Path) -> None:
    """Sessions with a worker and a compaction, the memory defects, every time moved."""
    store = open_store(demo_template / "demo.db", Settings.load())
    try:
        sessions = store.sessions()
        stats = store.stats(with_embedder=False)
        memories = store.memories()
        entries = [e for s in sessions for e in store.entries(s.id)]
    finally:
        store.close()
    assert len(sessions) >= 6
    assert any(s.workers for s in sessions), "a session with a subagent"
    assert stats.entries_by_kind.get("compaction", 0) >= 1
    assert any(e.meta.get("preTokens") for e in entries if e.kind == "compaction")
    assert any(m.critical and m.invariant for m in memories), "a critical memory"
    assert any(m.status == "superseded" for m in memories)
    assert any(not m.loadable for m in memories), "a memory the loader cannot read"
    latest = max(s.ended_at or s.started_at or "" for s in sessions)
    end = datetime.fromisoformat(latest)
    assert timedelta(minutes=30) <= FIXED_NOW - end <= timedelta(hours=2)
    earliest = min(s.started_at or "" for s in sessions)
    assert FIXED_NOW - datetime.fromisoformat(earliest) \
        >= timedelta(days=14)
    data = demo_template / "demo.db.demo-data"
    for f in data.rglob("*"):
        if f.is_file():
            assert "2026-01-" not in f.read_text(encoding="utf-8"), f"{f} was not shifted"
    created = re.findall(r"^created: (.+)$", (data / "memory" / "LOG.md").read_text(), re.MULTILINE)
    assert created and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", c) for c in created)


def test_demo_never_writes_over_a_store_with_records(cc_store, tmp_path: Path) -> None:
    """A non-empty store and a file that is not a store are refused; an empty store is fine."""
    before = cc_store.stats(with_embedder=False).entries
    with pytest.raises(DemoError, match="non-empty"):
        build_demo(cc_store.path, now=FIXED_NOW)
    assert cc_store.stats(with_embedder=False).entries == before
    junk = tmp_path / "notes.txt"
    junk.write_text("my notes")
    with pytest.raises(DemoError, match="not an lca-tui store"):
        build_demo(junk, now=FIXED_NOW)
    assert junk.read_text() == "my notes"
    empty = make_store(tmp_path / "empty.db")
    empty.close()
    result = build_demo(tmp_path / "empty.db", now=FIXED_NOW)
    assert result.report.sessions_added >= 6


def test_demo_command_uses_a_fresh_file_never_lca_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lca-tui demo --no-open --json` builds under XDG_DATA_HOME and leaves LCA_STORE alone."""
    assert main(["demo", "--no-open", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    path = Path(doc["path"])
    assert path.parent == tmp_path / "xdg_data_home" / "lca-tui"
    assert path.name.startswith("demo-") and path.exists()
    assert not (tmp_path / "env-store.db").exists()
    assert doc["ingest"]["sessions_added"] >= 6
    assert main(["demo", "--no-open", "--json", "--store", str(path)]) == 2
    assert "non-empty" in capsys.readouterr().err
    assert main(["demo", "--no-open", "--json", "--store", str(tmp_path / "env-store.db")]) == 2
    assert "$LCA_STORE" in capsys.readouterr().err
    assert not (tmp_path / "env-store.db").exists()


# -- the shell -------------------------------------------------------------------------------
async def test_every_number_key_shows_its_screen(demo_path: Path, run_app: RunApp) -> None:
    """Keys 1-8 switch to the registry's screens, each the real screen its entry names."""
    async with run_app(demo_path) as pilot:
        app = pilot.app
        for spec in SCREENS:
            await pilot.press(spec.key)
            await wait_until(pilot, lambda spec=spec: app.current_mode == spec.mode,
                             what=f"mode {spec.mode}")
            screen = app.screen
            assert screen.title == spec.title
            module, _, name = spec.target.partition(":")
            assert type(screen) is getattr(importlib.import_module(module), name)
            assert isinstance(screen, StoreScreen)
            await pilot.press("question_mark")
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
            # laid out once its keys render (under load that is a frame after it is shown)
            await wait_until(pilot, lambda: rendered_text(
                app.screen.query_one("#help-keys")).strip() != "", what="help's keys")
            assert str(app.screen.query_one("#help-text").render()).strip()
            keys = rendered_text(app.screen.query_one("#help-keys"))
            assert "Help" in keys and "Quit" in keys
            await pilot.press("escape")
            await wait_until(pilot, lambda screen=screen: app.screen is screen,
                             what="help closed")


def test_every_mode_has_a_real_screen_and_the_registry_says_what_it_opens() -> None:
    """Every registry entry names an importable store screen; a screen opens by reference
    exactly the record kinds its entry lists (``Opens``), and each kind has one screen."""
    kinds: list[str] = []
    for spec in SCREENS:
        module, _, name = spec.target.partition(":")
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, StoreScreen), spec.mode
        opens = getattr(cls, "OPENS", frozenset())
        assert opens == spec.opens, spec.mode
        assert (not opens) or callable(getattr(cls, "open_record", None)), spec.mode
        kinds.extend(spec.opens)
    assert sorted(kinds) == sorted(set(kinds)) == sorted(get_args(RecordKind))


async def test_open_record_routes_each_kind_to_its_screen(demo_path: Path,
                                                          run_app: RunApp) -> None:
    """An ``OpenRecord`` message posted by a screen switches to the screen of its kind and
    selects the record there."""
    async with run_app(demo_path) as pilot:
        app = pilot.app
        store = app.store
        memory = store.memories()[0]
        session = store.sessions()[0]
        app.screen.post_message(OpenRecord(RecordRef("memory", memory.id)))
        await wait_until(pilot, lambda: app.current_mode == "memories"
                         and isinstance(app.screen, Opens)
                         and getattr(app.screen, "selected", None) == memory.id,
                         what="the memory on Memories")
        app.screen.post_message(OpenRecord(RecordRef("session", session.id)))
        await wait_until(pilot, lambda: app.current_mode == "transcript"
                         and getattr(app.screen, "session_id", None) == session.id,
                         what="the session on Transcript")


async def test_palette_lists_every_screen(demo_path: Path, run_app: RunApp) -> None:
    """The command palette offers each screen by name and switches to it."""
    async with run_app(demo_path) as pilot:
        app = pilot.app
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        for spec in SCREENS:
            assert f"{spec.title} screen ({spec.key})" in commands
        commands["Transcript screen (8)"].callback()
        await wait_until(pilot, lambda: app.current_mode == "transcript", what="transcript")
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CommandPalette",
                         what="palette")


async def test_overview_follows_the_store_without_restart(demo_path: Path,
                                                         run_app: RunApp) -> None:
    """A session a harness appends while the app is open shows up on Overview."""
    async with run_app(demo_path, refresh_seconds=0.2) as pilot:
        app, screen = pilot.app, pilot.app.screen
        records = screen.query_one("#overview-records")
        before = app.store.stats(with_embedder=False).sessions
        assert re.search(rf"sessions +{before}\b", rendered_text(records))
        harness = open_store(demo_path, Settings.load(), writer="test-harness")
        try:
            harness.append_entries(
                NewSession("live-session-1", "claude-code", project="/srv/live-project",
                           started_at="2026-03-02T09:29:00.000Z",
                           ended_at="2026-03-02T09:29:30.000Z"),
                [NewEntry("user", "appended while the app runs", "live:1",
                          ts="2026-03-02T09:29:00.000Z")])
        finally:
            harness.close()
        table = screen.query_one("#overview-sessions", DataTable)
        await wait_until(pilot, lambda: "live-session-1" in table.rows, what="the new session")
        assert re.search(rf"sessions +{before + 1}\b", rendered_text(records))


HOSTILE = ("literal [bold red]x[/] and [link=x]y[/] then \x1b[31mred\x1b[0m "
           "and \x1b]52;c;aGVsbG8=\x07 end")


async def test_transcript_renders_stored_text_literally(tmp_path: Path,
                                                       run_app: RunApp) -> None:
    """Markup, an ANSI colour escape and an OSC 52 sequence show as text, never act."""
    store = make_store(tmp_path / "hostile.db")
    store.append_entries(
        NewSession("hostile-session", "claude-code", started_at="2026-03-01T10:00:00.000Z"),
        [NewEntry("assistant", HOSTILE, "hostile:1", ts="2026-03-01T10:00:00.000Z")])
    try:
        async with run_app(store=store, mode="transcript") as pilot:
            screen = pilot.app.screen
            await pilot.pause(0.1)
            content = screen.query_one("#entry-content")
            shown = rendered_text(content)
            for literal in ("[bold red]x[/]", "[link=x]y[/]", "\\x1b[31mred\\x1b[0m",
                            "\\x1b]52;c;aGVsbG8=\\x07"):
                assert literal in shown, literal
            segments = rendered_segments(content)
            assert not any("\x1b" in s.text or "\x07" in s.text for s in segments)
            assert not any(s.style and s.style.link for s in segments)
            assert not any(s.style and s.style.bold for s in segments if "x" in s.text)
            row = screen.query_one("#entries", DataTable).get_row_at(0)
            excerpt = row[-1]
            assert "[bold red]x[/]" in excerpt.plain and not excerpt.spans
            table_text = rendered_text(screen.query_one("#entries", DataTable))
            assert "[bold red]x[/]" in table_text and "\x1b" not in table_text
    finally:
        store.close()


async def test_transcript_search_opens_the_entry(demo_path: Path, run_app: RunApp) -> None:
    """`/` searches (FTS here), and enter on a hit shows that entry in its session."""
    async with run_app(demo_path, mode="transcript") as pilot:
        screen = pilot.app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        await pilot.press("s")
        await pilot.press("ctrl+t")
        assert screen.search_mode == "fts"
        await pilot.press(*"psycopg", "enter")
        await wait_until(pilot, lambda: load_count(screen, "search") >= 1, what="search")
        assert screen.hits and all("psycopg" in h.text.lower() for h in screen.hits)
        first = next(h for h in screen.hits if h.source_type == "entry")
        index = screen.hits.index(first)
        table = screen.query_one("#hits", DataTable)
        table.move_cursor(row=index)
        loads = load_count(screen, "entries")
        await pilot.press("enter")
        await wait_until(pilot, lambda: load_count(screen, "entries") > loads,
                         what="the hit's session")
        assert screen.session_id == first.session_id
        view = screen.query_one("#entry-view")
        assert view.border_title == f"Entry #{first.seq}"


async def test_agent_filter_cycles_through_workers(demo_path: Path, run_app: RunApp) -> None:
    """`a` narrows a session with a worker to main, then to the worker."""
    async with run_app(demo_path, mode="transcript") as pilot:
        screen = pilot.app.screen
        session = next(s for s in screen.sessions if s.workers)
        screen.open_session(session.id)
        await wait_until(pilot, lambda: screen.session_id == session.id and screen.entries
                         and screen.entries[0].session_id == session.id, what="session")
        total = len(screen.entries)
        for agent in ("main", session.workers[0]):
            loads = load_count(screen, "entries")
            await pilot.press("a")
            await wait_until(pilot, lambda loads=loads: load_count(screen, "entries") > loads,
                             what=f"agent {agent}")
            assert screen.agent == agent
            assert screen.entries and {e.agent for e in screen.entries} == {agent}
            assert len(screen.entries) < total


def test_now_is_frozen_when_given(demo_path: Path) -> None:
    """`app.now()` is the frozen time when given, the real time otherwise."""
    app = make_app(demo_path, now=FIXED_NOW)
    assert app.now() == FIXED_NOW
    live = make_app(demo_path)
    assert abs((live.now() - datetime.now(UTC)).total_seconds()) < 60
    app.store.close()
    live.store.close()


async def test_transcript_follows_appended_entries(demo_path: Path, run_app: RunApp) -> None:
    """Entries appended to the open session appear in its list without a restart."""
    async with run_app(demo_path, mode="transcript", refresh_seconds=0.2) as pilot:
        screen = pilot.app.screen
        session = screen.sessions[0]
        assert screen.session_id == session.id
        before = len(screen.entries)
        harness = open_store(demo_path, Settings.load(), writer="test-harness")
        try:
            harness.append_entries(
                NewSession(session.id, session.format),
                [NewEntry("user", "one more turn, live", "live-append:1",
                          ts="2026-03-02T09:20:00.000Z")])
        finally:
            harness.close()
        await wait_until(pilot, lambda: len(screen.entries) == before + 1, what="new entry")
        assert screen.entries[-1].content == "one more turn, live"
        table = screen.query_one("#entries", DataTable)
        assert table.row_count == before + 1


async def test_overview_enter_opens_the_session(demo_path: Path, run_app: RunApp) -> None:
    """Enter on a latest session opens it on the Transcript screen."""
    async with run_app(demo_path) as pilot:
        app, overview = pilot.app, pilot.app.screen
        table = overview.query_one("#overview-sessions", DataTable)
        table.focus()
        table.move_cursor(row=2)
        wanted = list(table.rows)[2].value
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.current_mode == "transcript"
                         and app.screen.entries
                         and app.screen.entries[0].session_id == wanted, what="the session")
        assert app.screen.session_id == wanted


# -- large entries, header, record counts (review fixes) ---------------------------------------
def test_excerpts_cut_before_escaping() -> None:
    """A cell of a huge text is what `one_line` of the whole would give, at the boundaries too."""
    from store.core.textsafe import one_line
    from widgets.safe import cell, excerpt

    for text in ("a" * 40, "a" * 41, "a" * 39 + "\n", "\x1b" * 41, "ab\tc\r\nd" * 20, ""):
        assert excerpt(text, 40) == one_line(text, 40), repr(text)
    huge = "x\x1b" * 1_000_000
    assert cell(huge, width=30).plain == one_line(huge, 30)
    assert len(cell(huge).plain) <= 400 and cell(huge).plain.endswith("…")


def test_wrap_keeps_every_character() -> None:
    """Wrapping cuts lines to the width, at spaces where it can, and drops nothing."""
    from rich.cells import cell_len

    from widgets.text_pane import wrap_line, wrap_text

    line = "word " * 50 + "z" * 130 + " 中文字" * 20
    for width in (1, 7, 40):
        pieces = wrap_line(line, width)
        assert "".join(pieces) == line
        assert all(0 < cell_len(p) <= max(width, 2) for p in pieces)
    assert all(len(p) <= 40 for p in wrap_line("word " * 50 + "z" * 130, 40))
    assert wrap_text("a\x1b[1mb\n\nc", 80) == ["a\\x1b[1mb", "", "c"]


BIG = 2_000_000


async def test_large_entry_keeps_the_ui_responsive(tmp_path: Path, run_app: RunApp) -> None:
    """Moving onto a ~2 MB entry and off it: the next key is handled, the entry is complete."""
    from store.core.textsafe import visible
    from widgets.text_pane import TextPane

    lines = [f"line {i:06d} " + "y" * 150 for i in range(6000)]
    big = "\n".join(lines) + "\n" + "[bold red]z[/] \x1b]52;c;QQ==\x07 " + "w" * (BIG - 900_000)
    big += " THE-END"
    assert len(big) > BIG
    store = make_store(tmp_path / "big.db")
    store.append_entries(
        NewSession("big-session", "claude-code", started_at="2026-03-01T10:00:00.000Z"),
        [NewEntry("user", "before", "big:1", ts="2026-03-01T10:00:00.000Z"),
         NewEntry("tool_result", big, "big:2", ts="2026-03-01T10:00:01.000Z"),
         NewEntry("assistant", "after", "big:3", ts="2026-03-01T10:00:02.000Z")])
    try:
        async with run_app(store=store, mode="transcript") as pilot:
            screen = pilot.app.screen
            table = screen.query_one("#entries", DataTable)
            pane = screen.query_one("#entry-content", TextPane)
            table.focus()
            await pilot.press("down", "down")
            await pilot.pause()
            assert table.cursor_row == 2, "the key after the big entry was handled"
            assert pane.text == "after" and pane.lines == ["after"]
            wraps = load_count(screen, "wrap")
            await pilot.press("up")
            await pilot.pause()
            assert table.cursor_row == 1 and pane.text == big
            await wait_until(pilot, lambda: load_count(screen, "wrap") > wraps,
                             what="the big entry wrapped")
            assert not pane.wrapping
            width = pane.scrollable_content_region.width
            assert all(len(line) <= width for line in pane.lines)
            assert "".join(pane.lines) == visible(big).replace("\n", "")
            assert len(pane.lines) > 6000
            pane.focus()
            await pilot.press("end")
            await wait_until(pilot, lambda: "THE-END" in rendered_text(pane), what="the end")
            await pilot.press("home")
            await wait_until(pilot, lambda: "line 000000" in rendered_text(pane), what="start")
            excerpt = table.get_row_at(1)[-1].plain
            assert excerpt.startswith("line 000000") and excerpt.endswith("…")
            table.focus()
            await pilot.press("up")
            await pilot.pause()
            assert table.cursor_row == 0 and pane.lines == ["before"]
    finally:
        store.close()


async def test_header_shows_the_store_name_literally(tmp_path: Path, run_app: RunApp) -> None:
    """A store file named with markup and an escape shows that name, not its effect; a path
    with `[/]` in it (a folder `[bold red]h[` holding `].db`) shows whole on Overview."""

    for folder, name in ((tmp_path, "[bold red]h[i]x\x1b[31m.db"),
                         (tmp_path / "[bold red]h[", "].db")):
        folder.mkdir(exist_ok=True)
        path = folder / name
        make_store(path).close()
        async with run_app(path) as pilot:
            app = pilot.app
            await pilot.pause()
            shown = name.replace("\x1b", "\\x1b")
            header = rendered_text(app.screen.query_one("HeaderTitle"))
            assert f"Overview — {shown}" in header
            assert "\x1b" not in header and "\\[" not in header
            panel = rendered_text(app.screen.query_one("#overview-store"))
            assert f"/{shown}" in "".join(ln.strip(" │") for ln in panel.split("\n"))


async def test_overview_counts_recall_traces(demo_path: Path, run_app: RunApp) -> None:
    """Records list the recall traces the store holds (the demo ran four recalls)."""
    async with run_app(demo_path) as pilot:
        app, screen = pilot.app, pilot.app.screen
        await pilot.pause()
        traces = app.store.stats(with_embedder=False).traces
        assert traces >= 1
        text = rendered_text(screen.query_one("#overview-records"))
        assert re.search(rf"recall traces +{traces}\b", text)


async def test_overview_shows_zero_recall_traces(tmp_path: Path, run_app: RunApp) -> None:
    """An empty store says 0 recall traces, not nothing."""
    store = make_store(tmp_path / "empty.db")
    try:
        async with run_app(store=store) as pilot:
            screen = pilot.app.screen
            await pilot.pause()
            text = rendered_text(screen.query_one("#overview-records"))
            assert re.search(r"recall traces +0\b", text)
            assert "proposals" not in text
    finally:
        store.close()


async def test_overview_shows_the_pressure_at_80x24(demo_path: Path, run_app: RunApp) -> None:
    """At 80x24 the context-pressure panel is below the fold: the Store pane says how full the
    latest window is, in view without scrolling (the panel was off screen, its figure
    nowhere); at 120x40 the panel shows and the Store pane does not repeat it."""
    async with run_app(demo_path, size=(80, 24)) as pilot:
        screen = pilot.app.screen
        await pilot.pause()
        key = pilot.app.store.latest_series_key()
        series = pilot.app.store.series(key.session_id, key.agent)
        pct = 100.0 * series.latest.used_tokens / series.window_tokens
        pane = screen.query_one("#overview-store")
        assert pane.region.bottom <= 23
        text = rendered_text(pane)
        assert f"context       {pct:.1f} % of {series.window_tokens:,}" in text, text
    async with run_app(demo_path, size=(120, 40)) as pilot:
        screen = pilot.app.screen
        await pilot.pause()
        assert "context" not in rendered_text(screen.query_one("#overview-store"))


async def test_overview_enter_opens_health_first(demo_path: Path, run_app: RunApp) -> None:
    """docs/app.md: the Overview's health line, enter opens Health — enter right after the
    Overview opens went to the sessions table instead."""
    async with run_app(demo_path) as pilot:
        app = pilot.app
        await wait_until(pilot, lambda: app.focused is not None, what="a focus")
        assert app.focused is not None and app.focused.id == "overview-health"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.current_mode == "health", what="Health")
