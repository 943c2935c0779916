"""Progress on stderr: a heartbeat while a step blocks (and none after it), reports
rate-limited, a bar label that fits the terminal."""

from __future__ import annotations

import threading
import time

import pytest

from lca_tui import output
from lca_tui.output import bar_label, progress_on_stderr


def _lines_when(capsys: pytest.CaptureFixture[str], enough: int) -> list[str]:
    """The stderr lines once there are ``enough`` of them (a generous deadline only guards
    against a hang; no duration is asserted)."""
    seen: list[str] = []
    deadline = time.monotonic() + 30
    while len(seen) < enough and time.monotonic() < deadline:
        seen += capsys.readouterr().err.splitlines()
        time.sleep(0.01)
    return seen


def test_a_step_that_blocks_gets_heartbeat_lines(capsys: pytest.CaptureFixture[str]) -> None:
    """A fake slow step reports once and then blocks: the timer writes the step again, with
    the time it has taken, without another report."""
    release = threading.Event()
    with progress_on_stderr("ingest", interval=0.05) as progress:
        progress("loading the embedding model", 0, 0)
        lines = _lines_when(capsys, 3)
        release.set()
    assert lines[0] == "lca-tui: ingest: loading the embedding model…"
    beats = lines[1:]
    assert len(beats) >= 2, lines
    for line in beats:
        assert line.startswith("lca-tui: ingest: loading the embedding model… (still working, ")
        assert line.endswith(" s)")


def test_heartbeat_before_the_first_report_and_none_after(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A step that has not reported yet is not silent either; once the work is over the timer
    stops (nothing more is written)."""
    with progress_on_stderr("reindex", interval=0.05):
        lines = _lines_when(capsys, 1)
    assert lines[0].startswith("lca-tui: reindex: starting… (still working, ")
    capsys.readouterr()
    time.sleep(0.2)
    assert capsys.readouterr().err == ""


def test_reports_are_rate_limited(capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Many reports within the interval give one line, not a flood."""
    monkeypatch.setattr(output, "PROGRESS_SECONDS", 3600.0)
    with progress_on_stderr("ingest") as progress:
        for i in range(1, 101):
            progress("a.jsonl", i, 100)
    assert capsys.readouterr().err == "lca-tui: ingest: a.jsonl 1 of 100 (1 %)\n"


@pytest.mark.parametrize("width", [80, 120])
def test_bar_label_fits_the_terminal(width: int) -> None:
    label = bar_label("demo", "4ca67353-d824-444b-81c1-56cf264ca243.jsonl: embedding chunks",
                      width - output.BAR_COLUMNS)
    assert len(label) <= max(12, width - output.BAR_COLUMNS)
    assert label.startswith("demo: 4ca67353….jsonl:")
    assert bar_label("demo", "loading the embedding model", 60) == (
        "demo: loading the embedding model")
