"""``lca-tui bench --app``: the app driven headless (``lca_tui.app_bench``) and timed — first
paint, data on screen, screen switch, cursor move, ``/`` filter keystroke — and its bad
input. The figures themselves are never asserted against a time (the machine's speed is not
the test's): only that each one was measured on what it names."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from lca_tui.cli import main
from screens.registry import SCREENS


def test_the_drive_times_every_screen_and_key_on_the_demo_store(demo_path: Path) -> None:
    from lca_tui.app_bench import FILTER_TEXT, MOVE_KEYS, _drive

    t0 = time.time()
    r = asyncio.run(_drive(str(demo_path), t0, (120, 40), cycles=1))
    assert 0 < r["first_paint_ms"] <= r["data_ms"] <= (time.time() - t0) * 1000
    assert 0 < r["first_paint_cpu_ms"] <= r["data_cpu_ms"]
    others = {spec.mode for spec in SCREENS} - {"overview"}
    assert set(r["switch_first_visit_ms"]) == others == set(r["switch_first_data_ms"])
    assert all(v > 0 for v in r["switch_first_visit_ms"].values())
    # one cycle of revisits, 1 to 8 (the first visits ended on 8, the cycle ends there)
    assert len(r["switch_revisit_ms"]) == len(SCREENS)
    table = r["table"]
    assert table["screen"] == "TranscriptScreen" and table["rows"] > 1
    assert len(r["move_ms"]) == min(MOVE_KEYS, table["rows"] - 1)
    assert len(r["filter_ms"]) == len(FILTER_TEXT)
    # the filtered result is timed apart from the echo: one figure, from the last key
    assert len(r["filter_result_ms"]) == 1 and r["filter_result_ms"][0] >= 0
    # the keystrokes reached the filter: no demo session's row holds both words
    assert r["filter_rows_left"] < table["rows"]
    assert set(r["cpu_ms"]) == {"switch_first", "switch", "move", "filter_open", "filter"}
    assert len(r["cpu_ms"]["move"]) == len(r["move_ms"])


@pytest.mark.parametrize(("argv", "says"), [
    (["--app-size", "big"], "--app-size 'big': give the terminal size as WxH"),
    (["--app-opens", "0"], "--app-opens must be at least 1"),
])
def test_bad_app_options_are_one_clear_line(argv: list[str], says: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    keep = tmp_path / "bench"
    assert main(["bench", "--app", "--keep", str(keep), *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not keep.exists()  # nothing built before the options were checked
