"""Issue 16, second pass: what a reviewer still found. CLI tables at 80 and 60 columns keep
ids, paths and times whole and name every column they leave out; one local time format."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from lca_tui.cli import main
from tests.helpers_shell import FIXED_NOW, load_count, load_log

ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
LOCAL = re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\b")


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


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(args)
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def _dropped(out: str) -> list[str]:
    found = re.search(r"not shown at \d+ columns: (.*?) \(a wider terminal or --json shows",
                      " ".join(out.split()))
    return found.group(1).split(", ") if found else []


def _header(out: str, first: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.split()[:1] == [first])
    return line.split()


@pytest.mark.parametrize("width", [80, 60])
def test_audit_keeps_times_whole_in_local_time(demo: Path, width: int,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    out = _run(["audit", "--limit", "5", "--store", str(demo)], capsys)
    assert not ISO.search(out), out
    rows = [line for line in out.splitlines() if re.match(r"\s*\d+\s+\d{4}-", line)]
    assert len(rows) == 5 and all(LOCAL.search(r) for r in rows), out
    shown = _header(out, "id")
    assert set(shown) | set(_dropped(out)) >= {"id", "time", "actor", "action", "target",
                                               "counts"}, out


@pytest.mark.parametrize("width", [80, 60])
def test_imports_keep_paths_whole_and_name_every_dropped_column(
        demo: Path, width: int, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    out = _run(["imports", "--store", str(demo)], capsys)
    data = f"{demo}.demo-data"
    assert f"{data}/memory" in out and f"{data}/claude-code" in out, out
    shown, dropped = _header(out, "run"), _dropped(out)
    assert set(shown) | set(dropped) == {"run", "started", "status", "paths", "sessions",
                                         "entries", "memories", "problems"}, out
    assert "problems" in shown  # the count of problems is never the one left out
    for line in out.splitlines():
        assert not re.search(r"\d{4}-\d\d-\d\d\s*$", line), "a time split from its clock"


@pytest.mark.parametrize("width", [80, 60])
def test_ingest_problems_keep_paths_whole_and_reasons_readable(
        demo: Path, width: int, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    out = _run(["ingest", "--problems", "--store", str(demo)], capsys)
    data = f"{demo}.demo-data/memory"
    assert f"{data}/feedback_commit-style.md" in out
    assert f"{data}/feedback_release-process.md" in out
    # the reason column is wide enough for phrases, not squeezed to a few letters a line
    assert "front matter is not valid" in out, out
    for word in ("top-level", "'critical'", "'metadata':"):
        assert re.search(rf"(^|\s){re.escape(word)}(\s|$)", out, re.M), (word, out)
    assert "sessions added 0, entries added 0, memories added 7, files 24" in out


@pytest.mark.parametrize("width", [80, 60])
def test_config_keeps_the_store_path_whole(tmp_path: Path, width: int,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    path = tmp_path / "a-folder-with-a-rather-long-name" / "and-another-one-below-it" / "s.db"
    out = _run(["config", "--store", str(path)], capsys)
    assert f"store: {path}\n" in out, out
    assert "embed.backend" in out and "recall.floor" in out


def test_a_table_wider_than_the_console_is_not_cut(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """When the whole columns alone are wider than the console, the table is drawn wider
    (the terminal wraps it) rather than cropping or squeezing an id; the note is one line."""
    from lca_tui.output import Listing, col, console

    monkeypatch.setenv("COLUMNS", "40")
    ident = "5ccec58f-0e70-4378-a129-7842bc337b8d"
    t = Listing(col("session", whole=True), col("started", whole=True),
                col("title", drop=1), col("text", min_width=20))
    t.add_row(ident, "2026-11-30 16:27", "dropped first", "some words of free text here")
    t.print(console())
    out = capsys.readouterr().out
    assert ident in out and "2026-11-30 16:27" in out
    assert "not shown at 40 columns: title (a wider terminal or --json shows them)" in " ".join(
        out.split())
    assert "some words of free" in out  # the free text kept its min width (20)


# -- one time format in the app, in local time -----------------------------------------------------
@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time nine hours from UTC, so a UTC time shown as local is caught."""
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _entry(**changes: object) -> object:
    from dataclasses import replace

    from store.core.records import EntryInfo

    base = EntryInfo(id=1, session_id="s", agent="main", seq=12, ts="2026-11-30T17:46:03Z",
                     kind="assistant", content="x", tokens=3, tool_name=None,
                     message_id=None, source_path=None, source_line=None, meta={})
    return replace(base, **changes)


def test_entry_header_time_is_local(tokyo: None) -> None:
    from widgets.entry_view import entry_header

    plain = entry_header(_entry()).plain  # type: ignore[arg-type]
    assert "2026-12-01 02:46:03" in plain and "UTC" not in plain, plain


async def test_recall_trace_times_are_local_with_the_year(demo: Path, tokyo: None) -> None:
    from lca_tui.app import make_app
    from screens.recall import RecallScreen
    from store.recall.traces import list_traces
    from tests.helpers_shell import wait_until
    from widgets.fmt import when

    app = make_app(demo, now=FIXED_NOW, mode="recall", refresh_seconds=3600)
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RecallScreen)
                         and app.screen.trace is not None, what="a trace")
        await pilot.pause()
        newest = list_traces(app.store, 1)[0]
        shown = when(newest.ts, with_seconds=True)
        assert shown[:4] == newest.ts[:4] and "T" not in shown
        traces = app.screen.query_one("#recall-traces")
        assert traces.get_row_at(0)[0].plain == shown  # type: ignore[attr-defined]
        assert "(UTC)" not in RecallScreen.HELP


# -- wrapping at words whatever the characters; the source path shortened, never cut ---------------
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
    async with app.run_test(message_hook=load_log(app), size=(50, 12)) as pilot:
        view = app.query_one(EntryView)
        view.show_entry(_entry(source_path=path, source_line=7))  # type: ignore[arg-type]
        await pilot.pause()
        line = str(view.query_one("#entry-source").render())
        assert line.startswith("source …/") and line.endswith("e4039782-67e5.jsonl:7"), line
        assert len(line) <= 48


# -- the filter subtitle shows what was typed, literally -------------------------------------------
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


# -- silent no-ops: each one clear line and a non-zero exit ---------------------------------------
def _fails(args: list[str], capsys: pytest.CaptureFixture[str], *fragments: str) -> None:
    code = main(args)
    out = capsys.readouterr()
    assert code != 0 and out.out == "", (code, out.out)
    assert out.err.count("\n") == 1 and out.err.startswith("lca-tui: "), out.err
    for fragment in fragments:
        assert fragment in out.err, (fragment, out.err)


def test_empty_store_argument_is_an_error(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _fails(["stats", "--store", ""], capsys, "--store is empty")
    _fails(["--store", "", "sessions"], capsys, "--store is empty")


@pytest.mark.parametrize("limit", ["0", "-3"])
def test_entries_limit_below_one_is_an_error(demo: Path, limit: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _fails(["entries", "e4039782", "--limit", limit, "--store", str(demo)], capsys,
           "--limit must be 1 or more", limit)


def test_entries_empty_agent_is_an_error(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fails(["entries", "e4039782", "--agent", "", "--store", str(demo)], capsys,
           "no agent ''", "main")


def test_search_with_no_hits_says_so(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(["search", "zzqqxxnothing", "--mode", "fts", "--store", str(demo)], capsys)
    assert out == "no hits for 'zzqqxxnothing' (fts search)\n", out


def test_demo_prints_what_the_store_holds(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from store import open_store

    path = tmp_path / "d.db"
    out = _run(["demo", "--no-open", "--store", str(path)], capsys)
    store = open_store(str(path))
    try:
        st = store.stats(with_embedder=False)
    finally:
        store.close()
    assert (f"the store holds {st.sessions} sessions, {st.entries} entries, {st.memories} "
            f"memories, {st.checkpoints} checkpoints, {st.chunks:,} chunks") in out, out
