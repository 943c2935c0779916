"""The app on a store opened read-only (``--read-only``): approve, reject, edit, consolidate,
erase, redact and a health fix each say in one line that they are refused, open no dialog and
change nothing; the title says read-only; the file's bytes are the same after the session."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from lca_tui.app import make_app
from store import Settings

from tests.helpers_shell import FIXED_NOW, load_count, load_log, wait_until, workers_done


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _said(app: Any) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def _press_refused(pilot: Pilot[Any], key: str, action: str) -> None:
    app = pilot.app
    screen = app.screen
    await pilot.press(key)
    line = (f"read-only: {action} is refused (the store was opened with --read-only; open "
            "it without to change it)")
    await wait_until(pilot, lambda: line in _said(app), what=f"{key}: {action} refused")
    assert app.screen is screen, f"{key} opened {app.screen!r}"
    app.clear_notifications()


async def test_every_writing_key_is_refused_with_one_line(demo_path: Path) -> None:
    before = _sha(demo_path)
    settings = Settings.load({"store.read_only": "true"})
    app = make_app(demo_path, settings, now=FIXED_NOW, mode="proposals")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: load_count(app.screen) >= 1
                         and app.screen.detail is not None, what="Proposals")
        assert app.sub_title.endswith("(read-only)")
        pending = app.screen.detail.info.id
        for key, action in (("a", "approving a proposal"), ("r", "rejecting a proposal"),
                            ("e", "editing a proposal"), ("c", "consolidating")):
            await _press_refused(pilot, key, action)
        assert app.store.proposal(pending).status == "pending"

        app.switch_mode("health")
        await wait_until(pilot, lambda: app.current_mode == "health"
                         and load_count(app.screen) >= 1, what="Health")
        await workers_done(app)
        await pilot.pause()
        assert app.screen.result.id is None  # scanned, not stored
        await _press_refused(pilot, "f", "applying a health fix")

        app.switch_mode("privacy")
        await wait_until(pilot, lambda: app.current_mode == "privacy", what="Privacy")
        await pilot.pause()
        for action, doing in (("erase", "erasing"), ("redact", "redacting")):
            await app.screen.run_action(f"change('{action}')")
            await wait_until(pilot, lambda doing=doing: any(
                s.startswith(f"read-only: {doing} is refused") for s in _said(app)), what=doing)
    assert _sha(demo_path) == before
