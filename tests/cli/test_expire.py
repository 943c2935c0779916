"""``lca-tui expire [--dry-run]``: the retention pass from the command line — what is past
``memory.retention_days.<type>``, the expire proposals it files, nothing with --dry-run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import Store

from tests.helpers_recall import import_memories


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    from lca_tui.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, json.loads(out.out) if "--json" in argv and out.out else out.out, out.err


def test_expire_from_the_command_line(store: Store, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    ids = import_memories(store, tmp_path / "mem", [
        ("old", "The old staging cluster is called ferry.",
         {"name": "old", "type": "project", "created": "2020-01-01"}),
        ("new", "The new staging cluster is called barge.",
         {"name": "new", "type": "project", "created": "2999-01-01"})])
    args = ("--store", str(store.path), "--set", "memory.retention_days.project=30")
    code, out, _ = _cli(capsys, "expire", "--dry-run", *args)
    assert code == 0 and "1 memory past its retention" in out
    assert f"memory {ids['old']} (project)" in out and "retention 30" in out
    assert store.proposals() == []
    code, doc, _ = _cli(capsys, "expire", *args, "--json")
    assert code == 0 and doc["proposals_added"] == 1
    assert [d["memory_id"] for d in doc["due"]] == [ids["old"]]
    assert store.proposal(doc["proposal_ids"][0]).summary.op == "expire"
