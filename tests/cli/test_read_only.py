"""``lca-tui --read-only``: each writing command refused with one line naming what it would do
(exit 2, no traceback); reading commands (recall, health) still answer; the store file's bytes
are the same after the whole session."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from lca_tui.cli import main

REFUSED = [
    (["approve", "{pending}"], "approving a proposal"),
    (["reject", "{pending}", "--reason", "no"], "rejecting a proposal"),
    (["edit", "{pending}", "{edit_file}"], "editing a proposal"),
    (["erase", "--session", "{session}", "--yes"], "erasing"),
    (["redact", "--entry", "1", "--yes"], "redacting"),
    (["mark", "--as", "secret", "--entry", "1"], "marking sensitivity"),
    (["health", "--fix", "compact-duplicates"], "applying a health fix"),
    (["consolidate"], "consolidating"),
    (["compact-duplicates"], "compacting duplicates"),
    (["expire"], "expiring memories past their retention (--dry-run only lists them)"),
    (["revert", "1", "--to", "1"], "reverting a memory"),
    (["undo"], "undoing an approval"),
]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_each_writing_command_is_refused_and_the_file_is_unchanged(
        demo_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(demo_path)
    _, out, _ = _run(capsys, "--store", store, "proposals", "--json")
    pending = next(p["id"] for p in json.loads(out)["proposals"] if p["status"] == "pending")
    _, out, _ = _run(capsys, "--store", store, "sessions", "--json")
    session = json.loads(out)[0]["id"]
    edit_file = tmp_path / "edit.json"
    edit_file.write_text('{"content": "An edited text long enough to pass the checks."}')
    values = {"pending": str(pending), "session": session, "edit_file": str(edit_file)}
    before = _sha(tmp_path / demo_path)
    for argv, action in REFUSED:
        words = [w.format(**values) for w in argv]
        code, out, err = _run(capsys, "--read-only", "--store", store, *words)
        assert code == 2, (words, out, err)
        lines = err.strip().splitlines()
        assert lines == [f"lca-tui: read-only: {action} is refused (the store was opened with "
                         "--read-only; open it without to change it)"], (words, err)
    # the option after the command works too; reads still answer, and keep nothing
    code, out, _ = _run(capsys, "recall", "--read-only", "--store", store, "tests", "--json")
    assert code == 0 and json.loads(out)["trace_id"] is None
    code, out, _ = _run(capsys, "--read-only", "--store", store, "health", "--json")
    assert code in (0, 1) and json.loads(out)["scan_id"] is None
    code, out, _ = _run(capsys, "--read-only", "--store", store, "expire", "--dry-run", "--json")
    assert code == 0 and json.loads(out)["dry_run"] is True
    assert _sha(tmp_path / demo_path) == before
    _, out, _ = _run(capsys, "--store", store, "proposals", "--json")
    assert next(p for p in json.loads(out)["proposals"] if p["id"] == pending)["status"] == \
        "pending"


def test_a_missing_store_is_not_created(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "--read-only", "--store", str(tmp_path / "none.db"), "stats")
    assert code == 2 and "--read-only opens an existing store only" in err
    assert not (tmp_path / "none.db").exists()
