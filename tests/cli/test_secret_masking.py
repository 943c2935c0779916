"""Secret entries are masked in ``lca-tui entries`` and in older recall traces."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers_privacy import DANA_SESSION, EMAIL, _cli, _open


def test_secret_entries_are_masked_in_cli_entries_and_older_traces(
        demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _open(demo_path) as store:
        trace = store.recall("what is Dana's email address").trace
        assert any(EMAIL in (c.excerpt or "") for c in trace.candidates)
        trace_id = trace.id
    code, out, _ = _cli(capsys, "mark", "--match", EMAIL, "--as", "secret",
                        "--store", str(demo_path))
    assert code == 0
    for argv in (["entries", DANA_SESSION], ["entries", DANA_SESSION, "--json"],
                 ["trace", str(trace_id), "--json"], ["trace", str(trace_id)]):
        code, out, _ = _cli(capsys, *argv, "--store", str(demo_path))
        assert code == 0 and out and EMAIL not in out, argv
    code, out, _ = _cli(capsys, "entries", DANA_SESSION, "--json", "--store", str(demo_path))
    assert "[secret entry: text withheld]" in out
