"""Counted nouns in the CLI's output agree with their numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import Store

from tests.conftest import CLAUDE_CODE, needs_shared_data
from tests.helpers_ui import _run


@needs_shared_data
def test_plurals(store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = tmp_path / "in"
    one.mkdir()
    (one / "short.jsonl").write_bytes((CLAUDE_CODE / "short.jsonl").read_bytes())
    (one / "empty.jsonl").write_text("")
    code, out, _ = _run(["ingest", str(one), "--store", str(store.path)], capsys)
    assert code == 0
    assert "added 1 session," in out and "2 files read" in out and "1 problem" in out
    assert "(s)" not in out and "1 problems" not in out
