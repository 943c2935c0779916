"""Following the store's changes in place: while a screen shows the demo store,
another ``Store`` on the same file writes; the screen shows the new or changed rows without
reading its data again whole (the store's whole-read methods are wrapped and counted), its
cursor kept on the same record; an erasure makes it read again whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.widgets import DataTable

from store import NewEntry, NewSession, Settings, Store, open_store
from tests.conftest import RunApp
from tests.helpers_shell import load_count, wait_until


class Calls:
    """Counts the calls of one Store method made without the keyword that narrows it."""

    def __init__(self, store: Store, name: str, narrowing: str) -> None:
        self.whole, self.narrow = 0, 0
        inner: Callable[..., Any] = getattr(store, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get(narrowing):
                self.narrow += 1
            else:
                self.whole += 1
            return inner(*args, **kwargs)

        setattr(store, name, counted)


def _other(path: Path) -> Store:
    return open_store(path, Settings.load(), writer="test-harness")


async def _changes(pilot: Any, screen: Any, before: int, what: str) -> None:
    await wait_until(pilot, lambda: load_count(screen, "changes") > before, what=what)


# -- Proposals ---------------------------------------------------------------------------------
async def test_proposals_insert_and_update_only_the_touched_rows(demo_path: Path,
                                                                 run_app: RunApp) -> None:
    async with run_app(demo_path, mode="proposals", refresh_seconds=0.2) as pilot:
        app, screen = pilot.app, pilot.app.screen
        table = screen.query_one("#proposal-queue", DataTable)
        table.focus()
        await pilot.press("down", "down")
        await pilot.pause(0.1)
        on = table.cursor_key()
        pending = [r.id for r in screen.rows if r.status == "pending" and str(r.id) != on]
        assert on is not None and pending
        calls = Calls(app.store, "proposals", "ids")
        seen = load_count(screen, "changes")
        other = _other(demo_path)
        try:
            new = other.propose({"op": "add", "type": "user", "content":
                                 "Dana prefers dark roast coffee in the morning.",
                                 "metadata": {"name": "Coffee"}}, auto_apply=False)
            other.reject(pending[0], "not durable")
        finally:
            other.close()
        await wait_until(pilot, lambda: str(new.id) in table.rows
                         and "rejected" in str(table.get_row(str(pending[0]))[1]),
                         what="the new proposal and the rejection")
        assert calls.whole == 0 and calls.narrow >= 1
        await _changes(pilot, screen, seen, "the change applied")
        assert table.cursor_key() == on and str(screen.selected) == on


# -- Memories ----------------------------------------------------------------------------------
async def test_memories_insert_and_update_only_the_touched_rows(demo_path: Path,
                                                                run_app: RunApp) -> None:
    async with run_app(demo_path, mode="memories", refresh_seconds=0.2) as pilot:
        app, screen = pilot.app, pilot.app.screen
        table = screen.query_one("#memory-table", DataTable)
        table.focus()
        await pilot.press("down", "down", "down")
        await pilot.pause(0.1)
        on = table.cursor_key()
        target = next(r for r in screen.rows if str(r.id) != on and r.status == "active"
                      and not r.masked)
        assert on is not None
        calls = Calls(app.store, "list_memories", "ids")
        seen = load_count(screen, "changes")
        other = _other(demo_path)
        try:
            made = other.approve(other.propose(
                {"op": "add", "type": "user", "content": "Dana walks to work on Fridays.",
                 "metadata": {"name": "Aardvark walk"}}, auto_apply=False).id).memory_id
            other.approve(other.propose({"op": "revise", "target": target.id, "content":
                                         "Revised while the app shows it."},
                                        auto_apply=False).id)
        finally:
            other.close()
        await wait_until(pilot, lambda: str(made) in table.rows and any(
            r.id == target.id and "Revised while" in (r.text or "") for r in screen.rows),
            what="the new memory and the revision")
        assert calls.whole == 0 and calls.narrow >= 1
        await _changes(pilot, screen, seen, "the change applied")
        assert table.cursor_key() == on and str(screen.selected) == on


# -- Transcript --------------------------------------------------------------------------------
async def test_transcript_appends_new_entries_and_sessions(demo_path: Path,
                                                           run_app: RunApp) -> None:
    async with run_app(demo_path, mode="transcript", refresh_seconds=0.2) as pilot:
        app, screen = pilot.app, pilot.app.screen
        entries = screen.query_one("#entries", DataTable)
        sessions = screen.query_one("#sessions", DataTable)
        entries.focus()
        await pilot.press("down", "down")
        await pilot.pause(0.1)
        on, sid, shown = entries.cursor_key(), screen.session_id, entries.row_count
        session = app.store.session(sid)
        assert on is not None and sid is not None and shown > 3
        whole_entries = Calls(app.store, "entries", "after_id")
        whole_sessions = Calls(app.store, "sessions", "ids")
        seen = load_count(screen, "changes")
        other = _other(demo_path)
        try:
            other.append_entries(NewSession(sid, session.format), [
                NewEntry("user", f"appended line {i} while the app shows it", f"live:{i}")
                for i in range(2)])
            other.append_entries(NewSession("live-session-2", "claude-code",
                                            started_at="2026-03-02T09:29:00.000Z"),
                                 [NewEntry("user", "a new session", "live2:1",
                                           ts="2026-03-02T09:29:00.000Z")])
        finally:
            other.close()
        await wait_until(pilot, lambda: entries.row_count == shown + 2
                         and "live-session-2" in sessions.rows,
                         what="the new entries and the new session")
        assert whole_entries.whole == 0 and whole_entries.narrow >= 1
        assert whole_sessions.whole == 0 and whole_sessions.narrow >= 1
        await _changes(pilot, screen, seen, "the change applied")
        assert entries.cursor_key() == on and screen.session_id == sid
        assert sessions.cursor_key() == sid
        last = entries.get_row_at(entries.row_count - 1)
        assert "appended line 1" in str(last[-1])


# -- Recall ------------------------------------------------------------------------------------
async def test_recall_adds_new_traces_at_the_top(demo_path: Path, run_app: RunApp) -> None:
    async with run_app(demo_path, mode="recall", refresh_seconds=0.2) as pilot:
        app, screen = pilot.app, pilot.app.screen
        table = screen.query_one("#recall-traces", DataTable)
        table.focus()
        await pilot.press("down")
        await pilot.pause(0.1)
        on, shown = table.cursor_key(), table.row_count
        assert on is not None and shown >= 2
        calls = Calls(app.store, "traces", "after_id")
        seen = load_count(screen, "changes")
        other = _other(demo_path)
        try:
            made = other.recall("which coffee does Dana like").trace_id
        finally:
            other.close()
        await wait_until(pilot, lambda: str(made) in table.rows, what="the new trace")
        assert calls.whole == 0 and calls.narrow >= 1
        await _changes(pilot, screen, seen, "the change applied")
        assert table.row_count == shown + 1
        assert table.get_row_index(str(made)) == 0
        assert table.cursor_key() == on and str(screen.trace_id) == on


# -- Overview ----------------------------------------------------------------------------------
async def test_overview_refreshes_the_counts_and_reads_only_what_moved(demo_path: Path,
                                                                      run_app: RunApp) -> None:
    """A new session: the counts and the latest sessions again, not the context pressure nor
    the last consolidation pass (the health line is read again only when a scan was stored,
    which the Overview's own first health read may do: not counted here)."""
    async with run_app(demo_path, refresh_seconds=0.2) as pilot:
        app, screen = pilot.app, pilot.app.screen
        await wait_until(pilot, lambda: load_count(screen, "health") >= 1, what="health line")
        table = screen.query_one("#overview-sessions", DataTable)
        series = Calls(app.store, "series", "unused")
        passes = Calls(app.store, "last_consolidation", "unused")
        before = app.store.stats(with_embedder=False).sessions
        seen = load_count(screen, "changes")
        other = _other(demo_path)
        try:
            other.append_entries(NewSession("live-session-3", "claude-code",
                                            started_at="2027-03-02T09:29:00.000Z"),
                                 [NewEntry("user", "a new session", "live3:1",
                                           ts="2027-03-02T09:29:00.000Z")])
        finally:
            other.close()
        await wait_until(pilot, lambda: "live-session-3" in table.rows, what="the new session")
        await _changes(pilot, screen, seen, "the change applied")
        assert screen._data.stats.sessions == before + 1
        assert series.whole == 0 and passes.whole == 0


async def test_an_erasure_reads_again_whole_and_keeps_the_cursor(demo_path: Path,
                                                                 run_app: RunApp) -> None:
    async with run_app(demo_path, mode="transcript", refresh_seconds=0.2) as pilot:
        app, screen = pilot.app, pilot.app.screen
        sessions = screen.query_one("#sessions", DataTable)
        sid = screen.session_id
        gone = next(s.id for s in screen.sessions if s.id != sid)
        whole = Calls(app.store, "sessions", "ids")
        other = _other(demo_path)
        try:
            other.erase(session=gone, reason="test")
        finally:
            other.close()
        await wait_until(pilot, lambda: gone not in sessions.rows, what="the erased session")
        assert whole.whole >= 1
        assert sessions.cursor_key() == sid and screen.session_id == sid
