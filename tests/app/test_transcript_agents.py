"""The Transcript screen interleaves every agent's entries by time."""

from __future__ import annotations

from pathlib import Path

from tests.helpers_shell import wait_until
from tests.helpers_shell import load_count, load_log
from tests.helpers_ui import _app, _loaded


async def test_all_agents_interleave_by_time(demo_path: Path) -> None:
    app = _app(demo_path, "transcript")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await _loaded(pilot)
        screen = app.screen
        session = next(s for s in screen.sessions if s.workers)
        loads = load_count(screen, "entries")
        screen.open_session(session.id)
        await wait_until(pilot, lambda: load_count(screen, "entries") > loads,
                         what="worker session")
        stamps = [e.ts for e in screen.entries]
        agents = [e.agent for e in screen.entries]
        assert stamps == sorted(stamps)
        first_worker = agents.index(session.workers[0])
        assert "main" in agents[first_worker:], "the main agent goes on after the worker"
