"""Times in the app are local: an entry's header, a recall trace's times with the year."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers_shell import FIXED_NOW
from tests.helpers_ui import _entry
from tests.helpers_ui import demo  # noqa: F401 (a pytest fixture, named as a parameter)


@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time nine hours from UTC, so a UTC time shown as local is caught."""
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


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
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RecallScreen)
                         and app.screen.trace is not None, what="a trace")
        await pilot.pause()
        newest = list_traces(app.store, 1)[0]
        shown = when(newest.ts, with_seconds=True)
        assert shown[:4] == newest.ts[:4] and "T" not in shown
        traces = app.screen.query_one("#recall-traces")
        assert traces.get_row_at(0)[0].plain == shown  # type: ignore[attr-defined]
        assert "(UTC)" not in RecallScreen.HELP
