"""`lca-tui bench --cli`: each command-line row timed as a whole process, its CPU
(user + system, from wait4) and wall time apart, beside `python -c pass` in the same run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from lca_tui.cli import main
from store import bench_time_process, bench_time_rows
from tests.helpers_harness import runtime_dir  # noqa: F401


def test_a_process_s_cpu_and_wall_are_told_apart() -> None:
    env = dict(os.environ)
    busy = [sys.executable, "-c",
            "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"]
    wall, cpu, code = bench_time_process(busy, env)
    assert code == 0 and cpu >= 0.25 and wall >= cpu * 0.9
    idle = [sys.executable, "-c", "import time; time.sleep(0.4)"]
    wall, cpu, code = bench_time_process(idle, env)
    assert code == 0 and wall >= 0.4 and cpu < 0.3
    wall, cpu, code = bench_time_process([sys.executable, "-c", "raise SystemExit(3)"],
                                              env)
    assert code == 3


def test_rows_are_timed_beside_the_baseline() -> None:
    env = dict(os.environ)
    rows = [("sleep", [sys.executable, "-c", "import time; time.sleep(0.2)"])]
    out = bench_time_rows(rows, [sys.executable, "-c", "pass"], 2, env)
    assert [r["row"] for r in out] == ["sleep"] and out[0]["runs"] == 2
    assert out[0]["wall_ms"]["p50"] >= 200 and out[0]["baseline_wall_ms"]["p50"] > 0
    assert out[0]["exit_codes"] == [0]
    assert out[0]["baseline_cpu_ms"]["p50"] <= out[0]["wall_ms"]["p50"]


def test_bench_cli_prints_every_row_of_the_table(
        tmp_path: Path, runtime_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    from tests.conftest import CLAUDE_CODE, make_store

    s = make_store(tmp_path / "s.db", **{"embed.backend": "fallback"})
    try:
        s.ingest([CLAUDE_CODE / "short.jsonl"])
    finally:
        s.close()
    before = (tmp_path / "s.db").stat().st_mtime_ns
    capsys.readouterr()
    assert main(["bench", "--cli", "--cli-store", str(tmp_path / "s.db"), "--runs", "2",
                 "--embedder", "fallback", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    from lca_tui.commands.bench import CLI_TARGETS

    assert [r["row"] for r in doc["rows"]] == list(CLI_TARGETS)
    for r in doc["rows"]:
        assert r["runs"] == 2 and r["wall_ms"]["p50"] > 0, r["row"]
        assert set(r["exit_codes"]) <= ({0, 1} if r["row"].startswith("health") else {0}), r
        if r["cpu_ms"] is not None:
            assert 0 < r["cpu_ms"]["p50"] and r["baseline_wall_ms"]["p50"] > 0
    assert (tmp_path / "s.db").stat().st_mtime_ns == before  # timed on a copy
