"""``lca-tui consolidate --sweep``: the near-duplicate sweep alone from the command line — one
merge proposal a group, its JSON document, a second run adds nothing, a session refused."""

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


def _two_copies(store: Store, tmp_path: Path) -> dict[str, int]:
    return import_memories(store, tmp_path / "mem", [
        ("a", "Run the test suite with pytest -x.", {"name": "a", "type": "feedback"}),
        ("b", "run the test suite with PYTEST -x", {"name": "b", "type": "feedback"}),
        ("c", "The staging database listens on port 5432.", {"name": "c", "type": "project"}),
        ("d", "The staging database listens on port 5433.", {"name": "d", "type": "project"}),
    ])


def test_sweep_from_the_command_line(store: Store, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    ids = _two_copies(store, tmp_path)
    code, doc, err = _cli(capsys, "consolidate", "--sweep", "--store", str(store.path),
                          "--json")
    assert (code, err) == (0, "")
    assert (doc["groups"], doc["proposals_added"], doc["skipped"]) == (1, 1, 0)
    merge = store.proposal(doc["proposal_ids"][0])
    assert merge.summary.op == "merge" and set(merge.summary.targets) == {ids["a"], ids["b"]}
    code, out, _ = _cli(capsys, "consolidate", "--sweep", "--store", str(store.path))
    assert code == 0
    assert "1 group of near-duplicate memories: 0 merge proposals added, 1 proposed before" in out


def test_sweep_takes_no_session(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(capsys, "consolidate", "abc", "--sweep", "--store", str(store.path))
    assert code == 2 and out == ""
    assert err.strip() == ("lca-tui consolidate: --sweep goes over every active memory: it "
                           "takes no session")
