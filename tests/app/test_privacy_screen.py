"""Screen 7 (Privacy) and the app around an erasure: snapshots of the preview, the typed
confirmation and the verification report; an erasure from the CLI while the app is open; the
Transcript masking secret entries."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Tree

from lca_tui.app import make_app
from store.recall import pool
from tests.helpers_shell import (
    FIXED_NOW,
    build_demo_template,
    load_count,
    load_log,
    settled,
    wait_until,
    watch,
    workers_done,
)
from widgets.confirm_word import ConfirmWord
from widgets.entry_view import SECRET_MASK, EntryView

EMAIL = "dana.r@example.com"
SECRETS_SESSION = "bd8ec9a1-f803-45ed-bd7c-9ec7081ab44d"


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_template(tmp_path_factory.mktemp("demo-privacy"))


async def _settled(pilot: Pilot[Any]) -> None:
    await workers_done(pilot.app)
    await pilot.pause(0.2)
    await workers_done(pilot.app)
    await pilot.pause()


async def _layout_settled(pilot: Pilot[Any], widget: Any) -> None:
    """Wait until ``widget`` (on a screen under a modal, which ``settled`` does not watch)
    keeps its size, content size and scroll position over several frames."""
    def state() -> tuple[Any, ...]:
        return (widget.size, widget.virtual_size, widget.scroll_offset)

    last, same = state(), 0
    for _ in range(100):
        await pilot.pause(0.05)
        now = state()
        same = same + 1 if now == last else 0
        last = now
        if same >= 5:
            return
    raise AssertionError(f"{widget} kept changing: {last}")


def _privacy_actions(screen: Any) -> int:
    """How many erasures and redactions the screen finished (its ``Loaded`` of those parts)."""
    return load_count(screen, "erasure") + load_count(screen, "redaction")


async def _preview(pilot: Pilot[Any], text: str) -> Any:
    app = pilot.app
    screen = app.screen
    await wait_until(pilot, lambda: load_count(screen) >= 1, what="privacy loaded")
    await pilot.press("slash")
    app.screen.query_one("#privacy-input", Input).value = text
    await pilot.press("enter")
    await wait_until(pilot, lambda: load_count(screen, "preview") >= 1, what="closure preview")
    await _settled(pilot)
    return screen


# -- snapshots ---------------------------------------------------------------------------------
def test_snapshot_privacy_preview(snap_compare: Any, demo_path: Path) -> None:
    """Privacy: the closure of the demo user's e-mail, by table with counts and records."""
    app = make_app(demo_path, now=FIXED_NOW, mode="privacy")

    async def run_before(pilot: Pilot[Any]) -> None:
        await _preview(pilot, EMAIL)

    assert snap_compare(watch(app), terminal_size=(120, 40), run_before=run_before)


def test_snapshot_privacy_confirmation(snap_compare: Any, demo_path: Path) -> None:
    """Privacy at 80x24: the erasure asks to type the word, saying what will be deleted."""
    app = make_app(demo_path, now=FIXED_NOW, mode="privacy")

    async def run_before(pilot: Pilot[Any]) -> None:
        await _preview(pilot, EMAIL)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmWord), what="modal")
        app.screen.query_one(Input).cursor_blink = False  # a blinking cursor is a coin toss
        await _settled(pilot)

    assert snap_compare(watch(app), terminal_size=(80, 24), run_before=run_before)


def test_snapshot_privacy_verification(snap_compare: Any, demo_path: Path) -> None:
    """Privacy: after typing the word, the verification report, probe by probe."""
    app = make_app(demo_path, now=FIXED_NOW, mode="privacy")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await _preview(pilot, EMAIL)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmWord), what="modal")
        await pilot.press(*"erase", "enter")
        await wait_until(pilot, lambda: load_count(screen, "erasure") >= 1, timeout=60,
                         what="erasure")
        await wait_until(pilot, lambda: len(screen.tombstones) == 1, what="tombstones")
        await _settled(pilot)

    assert snap_compare(watch(app), terminal_size=(120, 40), run_before=run_before)


# -- behaviour ---------------------------------------------------------------------------------
async def test_a_wrong_word_changes_nothing(demo_path: Path) -> None:
    app = make_app(demo_path, now=FIXED_NOW, mode="privacy")
    async with app.run_test(message_hook=load_log(app), size=(80, 24)) as pilot:
        screen = await _preview(pilot, EMAIL)
        tree = screen.query_one("#privacy-tree", Tree)
        assert "entry" in str(tree.root.children[0].label)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmWord), what="modal")
        await pilot.press(*"yes", "enter")
        await wait_until(pilot, lambda: app.screen is screen, what="modal closed")
        await _settled(pilot)
        assert _privacy_actions(screen) == 0 and app.store.tombstones() == []
        assert app.store.search(EMAIL, mode="fts")


async def test_erase_from_the_cli_with_the_app_open(demo_path: Path) -> None:
    """The app follows the store and holds no snapshot: an erasure by another process passes
    its raw-byte probe, and the app drops its vector copy and shows the change."""
    app = make_app(demo_path, now=FIXED_NOW, mode="transcript", refresh_seconds=0.2)
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        loads = load_count(screen, "entries")
        screen.open_session(SECRETS_SESSION)
        await wait_until(pilot, lambda: load_count(screen, "entries") > loads, what="the session")
        assert any(EMAIL in e.content for e in screen.entries)
        app.store.recall(EMAIL)  # the app's vector copy now exists
        assert app.store in pool._CACHES
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "lca_tui.cli", "erase", "--store", str(app.store.path),
            "--match", EMAIL, "--yes", "--json", stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=dict(os.environ))
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
        assert proc.returncode == 0, err.decode()
        doc = json.loads(out)
        assert set(doc) == {"closure", "exports", "verification", "tombstone_id"}
        probes = {p["name"]: p for p in doc["verification"]["probes"]}
        assert probes["raw-bytes"]["passed"], probes["raw-bytes"]
        assert doc["verification"]["passed"]
        await wait_until(pilot, lambda: not any(EMAIL in e.content for e in screen.entries),
                         what="the app shows the erasure")
        await wait_until(pilot, lambda: app.store not in pool._CACHES, what="cache dropped")
    raw = app.store.path.read_bytes()
    assert EMAIL.encode() not in raw.lower()


async def test_secret_entry_masked_on_the_transcript_until_revealed(demo_path: Path) -> None:
    app = make_app(demo_path, now=FIXED_NOW, mode="transcript")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        counts = app.store.mark("secret", match=EMAIL)
        assert counts["entry"] >= 1
        screen = app.screen
        await wait_until(pilot, lambda: load_count(screen, "entries") >= 1, what="entries")
        loads = load_count(screen, "entries")
        entry = next(e for e in app.store.entries(SECRETS_SESSION) if EMAIL in e.content)
        screen.open_session(SECRETS_SESSION, entry.seq)
        await wait_until(pilot, lambda: load_count(screen, "entries") > loads, what="the session")
        await _settled(pilot)
        view = screen.query_one(EntryView)
        assert view.content_text == SECRET_MASK
        table = screen.query_one("#entries")
        row = table.get_row(str(entry.id))
        assert "secret" in str(row[-1]) and EMAIL not in str(row[-1])
        await pilot.press("r")
        await _settled(pilot)
        assert EMAIL in view.content_text
        shown = str(table.get_row(str(entry.id))[-1])
        assert "secret" not in shown and shown.startswith(entry.content[:12])


def _bigger_closure(path: Path, export_to: Path | None = None) -> None:
    """The demo, plus a recall trace, a proposal and an export holding the address: a
    closure longer than an 80x24 dialog."""
    from store import Store

    with Store(path) as store:
        store.recall(f"what is {EMAIL}")
        store.propose({"op": "add", "type": "user", "content": f"Dana's e-mail is {EMAIL}.",
                       "metadata": {"name": "Dana's e-mail"}, "rationale": "said in a session",
                       "evidence": []}, auto_apply=False)
        store.export(export_to or Path("exported"))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_snapshot_privacy_confirmation_scrolls(snap_compare: Any, demo_path: Path,
                                               size: tuple[int, int],
                                               request: pytest.FixtureRequest) -> None:
    """The confirmation of a long closure: the list scrolls, the word's input is always on
    screen (at 80x24 too), scrolled to its end (the exports line and the tombstone note)."""
    # The export's absolute path is the tree's longest line, so it sets the width of the tree's
    # horizontal scrollbar thumb. Under pytest's temporary folder that length depends on how many
    # runs the machine kept (pytest-9 or pytest-60): a folder of a fixed length instead.
    export_to = Path(tempfile.mkdtemp(prefix="lca-snap-", dir="/tmp")) / "exported"
    request.addfinalizer(lambda: shutil.rmtree(export_to.parent, ignore_errors=True))
    _bigger_closure(demo_path, export_to)
    app = make_app(demo_path, now=FIXED_NOW, mode="privacy")

    async def run_before(pilot: Pilot[Any]) -> None:
        privacy = await _preview(pilot, EMAIL)
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmWord), what="modal")
        app.screen.query_one(Input).cursor_blink = False
        for _ in range(2):  # a page from where the last one ended: each scroll settles first
            await pilot.press("pagedown")
            await settled(pilot)
        await _layout_settled(pilot, privacy.query_one("#privacy-tree"))
        modal = app.screen
        box = modal.query_one("#confirm-input").region
        assert box.bottom <= size[1] and box.height == 3  # the input is on screen, whole

    assert snap_compare(watch(app), terminal_size=size, run_before=run_before)


# -- the scope select, the tree's excerpts, the verdict in the screen ---------------------------
async def test_the_tree_follows_the_scope_select(demo_path: Path) -> None:
    """After a preview, changing the select from match to entry (what ↓ on it did) no longer
    leaves the tree describing the old scope while e fails: the plan is dropped, the tree says
    why the new scope cannot be previewed, and e does nothing but say so; back to match, the
    tree previews it again."""
    from textual.widgets import Select

    app = make_app(demo_path, now=FIXED_NOW, mode="privacy")
    async with app.run_test(message_hook=load_log(app), size=(80, 24)) as pilot:
        screen = await _preview(pilot, EMAIL)
        tree = screen.query_one("#privacy-tree", Tree)
        assert "erasing match" in str(tree.root.label) and screen.closure is not None
        select = screen.query_one("#privacy-kind", Select)
        select.value = "entry"
        await _settled(pilot)
        assert screen.closure is None
        assert "numeric id" in str(tree.root.label) and not tree.root.children
        # the screen's words, not the CLI's flag (issue 22)
        assert "an entry scope takes a numeric id" in str(tree.root.label)
        assert "--entry" not in str(tree.root.label)
        await pilot.press("e")
        await _settled(pilot)
        assert not isinstance(app.screen, ConfirmWord) and _privacy_actions(screen) == 0
        assert "numeric id" in str(tree.root.label)
        loads = load_count(screen, "preview")
        select.value = "match"
        await wait_until(pilot, lambda: load_count(screen, "preview") > loads,
                         what="the preview again")
        await _settled(pilot)
        assert "erasing match" in str(tree.root.label) and screen.closure is not None
        assert app.store.search(EMAIL, mode="fts")  # nothing was erased


async def test_the_tree_quotes_what_goes(demo_path: Path) -> None:
    """The preview names each entry and memory with an excerpt of its text around the match
    (it named them by id only), and c puts the cursor in the tree from the input."""
    app = make_app(demo_path, now=FIXED_NOW, mode="privacy")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        screen = await _preview(pilot, EMAIL)
        tree = screen.query_one("#privacy-tree", Tree)
        entries = next(n for n in tree.root.children if str(n.label).startswith("entry "))
        quoted = [str(leaf.label) for leaf in entries.children]
        assert quoted and all(EMAIL in q and '"' in q for q in quoted), quoted
        screen.query_one("#privacy-input", Input).focus()
        await pilot.press("escape", "c")
        await pilot.pause()
        assert app.focused is tree


async def test_a_failed_verification_is_shown_in_the_screen(demo_path: Path,
                                                           tmp_path: Path) -> None:
    """A redaction whose proof fails (an export file still holds the text, kept) shows its
    verdict on the screen above the tabs, naming the failed probe — not only in the status
    line — and it stays when another tab is shown."""
    app = make_app(demo_path, now=FIXED_NOW, mode="privacy")
    async with app.run_test(message_hook=load_log(app), size=(80, 24)) as pilot:
        app.store.export(tmp_path / "out")
        screen = await _preview(pilot, EMAIL)
        assert screen.closure is not None and screen.closure.exports
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmWord), what="modal")
        await pilot.press(*"redact", "enter")
        await wait_until(pilot, lambda: load_count(screen, "redaction") >= 1, timeout=60,
                         what="redaction")
        await _settled(pilot)
        assert screen.result is not None and not screen.result.verification.passed
        verdict = screen.query_one("#privacy-verdict")
        assert verdict.display and verdict.region.height >= 1
        shown = str(verdict.render())
        assert "verification FAILED" in shown and "exports" in shown, shown
        await pilot.press("t")
        await pilot.pause()
        assert verdict.display and "FAILED" in str(verdict.render())
