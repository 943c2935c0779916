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


def test_counted_nouns_in_proofs_and_checks(store: Store, tmp_path: Path) -> None:
    """An apply's verification and an erasure's probes said "1 chunks", "1 vectors removed",
    "1 rows deleted"; each noun agrees with its number now."""
    from store.governance import approve

    from tests.helpers_gov_seed import _propose, _seed

    ids = _seed(store, tmp_path)
    done = approve(store, _propose(store, {"op": "add", "type": "reference", "content":
                                           "The staging box is called gull."}).id)
    import json

    indexed = json.dumps(done.verification)
    assert "1 chunk, 1 with a vector" in indexed and "1 chunks" not in indexed
    result = store.erase(memory=ids["Tax reminders"])
    text = " ".join(p.detail for p in result.verification.probes)
    assert "1 vector removed" in text and "1 vectors" not in text
    assert "1 rows" not in text and "1 vectors" not in text and "1 candidates" not in text


def test_a_signal_list_detail_is_words_not_python() -> None:
    """A signal's detail holding a list printed Python's `[]` / `['codex']`."""
    from screens.health import _figures

    plain = " ".join(t.plain for t in _figures({"not_judged": 2, "formats": [],
                                                "agents": ["codex", "gemini"]}))
    assert "[" not in plain and "formats none" in plain and "agents codex, gemini" in plain
