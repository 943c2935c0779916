"""The command palette: sessions, traces and memories by id prefix (ranked above fuzzy matches)
or title, stored titles shown literally; every action of the current screen (its bindings with
their descriptions), those that cannot act now left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from screens.recall import RecallScreen

from tests.helpers_shell import wait_until
from tests.helpers_shell import load_count, load_log
from tests.helpers_ui import WORKER_SESSION, _app, _loaded


async def test_palette_finds_sessions_traces_and_memories(demo_path: Path) -> None:
    from lca_tui.palette import StoreCommands

    app = _app(demo_path, "overview")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        provider = StoreCommands(app.screen)
        await provider.startup()

        async def first(query: str) -> str:
            hits = [h async for h in provider.search(query)]
            assert hits, query
            return max(hits, key=lambda h: h.score).match_display.plain

        session = app.store.sessions()[0]
        assert (await first(session.id[:6])).startswith(f"session {session.id}")
        assert (await first("staging credentials")).startswith("trace ")
        memory = next(m for m in app.store.memories() if m.name)
        assert (await first(memory.name)).startswith(f"memory {memory.id}")
        trace_hit = max([h async for h in provider.search("staging credentials")],
                        key=lambda h: h.score)
        await trace_hit.command()
        await wait_until(pilot, lambda: isinstance(app.screen, RecallScreen)
                         and app.screen.trace is not None
                         and app.screen.trace.query == "where are the staging credentials",
                         what="the trace on Recall")


async def test_palette_ranks_an_id_prefix_above_fuzzy_matches(demo_path: Path) -> None:
    """Ctrl+P `e40` opens the session whose id starts with e40 (not the first session, whose
    text happens to contain an e, a 4 and a 0); a memory id prefix opens that memory."""
    from lca_tui.palette import StoreCommands

    app = _app(demo_path, "overview")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        provider = StoreCommands(app.screen)
        await provider.startup()

        async def ranked(query: str) -> list[str]:
            hits = sorted([h async for h in provider.search(query)], key=lambda h: -h.score)
            return [h.match_display.plain for h in hits]

        sessions = app.store.sessions()
        assert sessions[0].id[:8] != WORKER_SESSION
        worker = next(s for s in sessions if s.id.startswith(WORKER_SESSION))
        found = await ranked(WORKER_SESSION[:3])
        assert found[0].startswith(f"session {worker.id}"), found[:3]
        assert len(found) > 1  # fuzzy matches exist, and rank below
        memory = app.store.memories()[-1]  # ids are numbers: "memory N" says which kind
        found = await ranked(f"memory {memory.id}")
        assert found[0].startswith(f"memory {memory.id} "), found[:3]


async def test_palette_shows_stored_titles_literally() -> None:
    from textual.command import Matcher

    from lca_tui.palette import highlight

    shown = highlight(Matcher("deploy"), "memory 3 [bold]deploy[/bold] \x1b[31m")
    assert shown.plain == "memory 3 [bold]deploy[/bold] \\x1b[31m"


async def _actions(app, demo_path: Path):  # type: ignore[no-untyped-def]
    from lca_tui.palette import ScreenActions

    return [text for text, _, _ in ScreenActions(app.screen).actions()]


async def test_palette_reaches_the_screens_actions_and_runs_them(demo_path: Path) -> None:
    """Proposals' approve, reject, edit and consolidation pass are in the palette with their
    keys; choosing one runs it (here: approve opens its confirmation)."""
    from textual.screen import ModalScreen

    from lca_tui.palette import ScreenActions

    app = _app(demo_path, "proposals")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        await wait_until(pilot, lambda: app.screen.detail is not None, what="a proposal")
        texts = await _actions(app, demo_path)
        for wanted in ("Approve (a)", "Reject (r)", "Edit (e)", "Export CSV (x)"):
            assert wanted in texts, texts
        assert not any(t.startswith("Quit") for t in texts)  # the app's own stay system ones
        provider = ScreenActions(app.screen)
        hit = max([h async for h in provider.search("approve")], key=lambda h: h.score)
        assert hit.match_display.plain == "Approve (a)"
        await hit.command()
        await wait_until(pilot, lambda: isinstance(app.screen, ModalScreen),
                         what="approve's confirmation")


async def test_palette_leaves_out_actions_that_cannot_act_now(demo_path: Path) -> None:
    """Privacy's erase is offered; on a read-only store it is not (nor approve on Proposals),
    while what only reads (Export CSV) still is."""
    from lca_tui.app import make_app
    from store import Settings

    from tests.helpers_shell import FIXED_NOW, load_count

    app = _app(demo_path, "privacy")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.current_mode == "privacy", what="Privacy")
        await pilot.pause()
        assert "Erase (e)" in await _actions(app, demo_path)
    ro = make_app(demo_path, Settings.load({"store.read_only": "true"}), now=FIXED_NOW,
                  mode="privacy")
    async with ro.run_test(message_hook=load_log(ro), size=(120, 40)) as pilot:
        await pilot.pause()
        texts = await _actions(ro, demo_path)
        assert "Erase (e)" not in texts and "Redact (r)" not in texts
        assert "Export CSV (x)" in texts
        ro.switch_mode("proposals")
        await wait_until(pilot, lambda: ro.current_mode == "proposals"
                         and load_count(ro.screen) >= 1, what="Proposals")
        assert "Approve (a)" not in await _actions(ro, demo_path)


async def test_a_trace_opened_while_recall_first_loads_stays_shown(
        demo_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recall's first load read which trace to show (the newest) before a trace was opened
    from the palette; that load, arriving after the opened trace is shown, does not replace
    it (it did, once, in a CI run)."""
    import threading

    real, gate, read = RecallScreen.load_data, threading.Event(), threading.Event()

    def late(self: RecallScreen) -> Any:
        data = real(self)  # read before the trace is opened
        read.set()
        assert gate.wait(60), "the test never let the load go"
        return data

    monkeypatch.setattr(RecallScreen, "load_data", late)
    app = _app(demo_path, "overview")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        wanted = next(t for t in app.store.traces()
                      if t.query == "where are the staging credentials")
        newest = app.store.traces()[0]
        assert newest.id != wanted.id
        try:
            await app.switch_mode("recall")
            await wait_until(pilot, read.is_set, what="the first load's read")
            screen = app.screen
            assert isinstance(screen, RecallScreen)
            screen.open_trace(int(wanted.id or 0))
            await wait_until(pilot, lambda: screen.trace is not None
                             and screen.trace.id == wanted.id, what="the opened trace")
        finally:
            gate.set()
        await wait_until(pilot, lambda: load_count(screen) >= 1, what="the first load")
        await pilot.pause(0.3)
        assert screen.trace is not None and screen.trace.id == wanted.id
