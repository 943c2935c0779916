"""What the feature tests of the CLI and the app share: running a command and reading its
output, a store with a worker, the demo store they drive (built once per module, copied for each
test), the app made on it, and waiting for a screen to load."""

from __future__ import annotations

from screens.base import StoreScreen
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lca_tui.app import LcaApp, make_app
from store import Store
from store.core.writes import NewEntry, NewSession
from widgets.table import FilterTable

from tests.helpers_shell import FIXED_NOW, build_demo_template, copy_demo, wait_until, workers_done
from tests.helpers_shell import app_settings, cli
from tests.helpers_shell import load_count


WORKER = "a7c3e51f"


SESSIONS = [f"{n:08x}-0e70-4378-a129-7842bc337b8d" for n in (0x5CCEC58F, 0x4CA67353,
                                                               0xE4039782)]


def _store_with_worker(store: Store) -> Store:
    """Three sessions with long ids; the first has a worker whose entries fall between the
    main agent's by time but were written after them (higher seq)."""
    for i, sid in enumerate(SESSIONS):
        store.append_entries(
            NewSession(sid, "claude-code", project="/home/dana/projects/ledgerline",
                       started_at=f"2026-03-0{i + 1}T10:00:00Z",
                       ended_at=f"2026-03-0{i + 1}T10:05:00Z"),
            [NewEntry("user", f"question {i}", f"s{i}", ts=f"2026-03-0{i + 1}T10:00:00Z"),
             NewEntry("assistant", f"answer {i}", f"s{i}", ts=f"2026-03-0{i + 1}T10:04:00Z",
                      source_offset=1)])
    store.append_entries(
        NewSession(SESSIONS[0], "claude-code"),
        [NewEntry("user", "worker task", "w", agent=WORKER, ts="2026-03-01T10:01:00Z"),
         NewEntry("assistant", "worker result", "w", agent=WORKER, ts="2026-03-01T10:02:00Z",
                  source_offset=1)])
    return store


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_error_line(code: int, out: str, err: str, *fragments: str) -> None:
    assert code != 0, "a silent no-op must fail"
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("lca-tui: "), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo at a long absolute path (as a user's is), so its paths are wide; the tests
    only read it."""
    from store.core.settings import Settings
    from store.demo import build_demo

    folder = tmp_path_factory.mktemp("a-folder-whose-name-makes-every-path-wide")
    build_demo(folder / "demo.db", now=FIXED_NOW,
               settings=Settings.load({"embed.backend": "fallback"}))
    yield folder / "demo.db"


def _output(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = cli(args)
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def _entry(**changes: object) -> object:
    from dataclasses import replace

    from store.core.records import EntryInfo

    base = EntryInfo(id=1, session_id="s", agent="main", seq=12, ts="2026-11-30T17:46:03Z",
                     kind="assistant", content="x", tokens=3, tool_name=None,
                     message_id=None, source_path=None, source_line=None, meta={})
    return replace(base, **changes)


def _fails(args: list[str], capsys: pytest.CaptureFixture[str], *fragments: str) -> None:
    code = cli(args)
    out = capsys.readouterr()
    assert code != 0 and out.out == "", (code, out.out)
    assert out.err.count("\n") == 1 and out.err.startswith("lca-tui: "), out.err
    for fragment in fragments:
        assert fragment in out.err, (fragment, out.err)


WORKER_SESSION = "e4039782"


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_template(tmp_path_factory.mktemp("demo-newcomer"))


@pytest.fixture
def demo_path(demo_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return copy_demo(demo_template, tmp_path)


def _app(path: Path, mode: str) -> LcaApp:
    return make_app(path, app_settings(), now=FIXED_NOW, mode=mode, refresh_seconds=3600)


async def _loaded(pilot: Pilot[Any], loads: int = 1) -> None:
    await wait_until(pilot, lambda: load_count(pilot.app.screen) >= loads,
                     what="the screen's load")
    await workers_done(pilot.app)
    await pilot.pause()


def _rows(table: FilterTable, column: str) -> list[str]:
    index = [k.value for k in table.columns].index(column)
    return [table.get_row_at(r)[index].plain for r in range(table.row_count)]


SMALL = (80, 24)


def screen_lines(app: LcaApp) -> list[str]:
    """The text of every row of the screen on top, as the terminal shows it."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def _settled(pilot: Pilot[Any]) -> None:
    await wait_until(pilot, lambda: not isinstance(pilot.app.screen, StoreScreen)
                     or load_count(pilot.app.screen) >= 1, what="the screen's load")
    await workers_done(pilot.app)
    await pilot.pause()
