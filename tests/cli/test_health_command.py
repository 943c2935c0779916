"""``lca-tui health --fail-on warn``'s exit code, as cron or CI sees it:
1 on the demo store, whose planted problems warn; 0 on a store of the real transcripts
imported with the real embedder (nothing there is wrong)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CLAUDE_CODE, make_store, needs_shared_data

ROOT = Path(__file__).resolve().parents[2]


def _health(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", "health", "--no-save", *args,
                           "--store", str(store)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def test_health_fail_on_warn_exits_1_on_the_demo_store(demo_path: Path) -> None:
    demo_path = demo_path.resolve()  # the subprocess runs from the repository
    done = _health(demo_path, "--json", "--fail-on", "warn")
    assert done.returncode == 1, done.stderr
    warned = {s["name"] for s in json.loads(done.stdout)["signals"]
              if s["status"] in ("warn", "fail", "unknown")}
    assert warned  # the exit code is the signals' verdict, not a constant
    at_fail = _health(demo_path, "--json")
    failed = {s["name"] for s in json.loads(at_fail.stdout)["signals"] if s["status"] == "fail"}
    assert at_fail.returncode == (1 if failed else 0), at_fail.stderr


@pytest.mark.model
@needs_shared_data
def test_health_fail_on_warn_exits_0_on_the_real_transcripts(tmp_path: Path) -> None:
    path = tmp_path / "real.db"
    store = make_store(path, **{"embed.backend": "model"})
    try:
        store.ingest([CLAUDE_CODE])
    finally:
        store.close()
    done = _health(path, "--json", "--fail-on", "warn", "--set", "embed.backend=model")
    warned = {s["name"]: s["explanation"] for s in json.loads(done.stdout)["signals"]
              if s["status"] in ("warn", "fail", "unknown")}
    assert done.returncode == 0 and not warned, (warned, done.stderr)
