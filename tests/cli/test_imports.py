"""``lca-tui imports --json`` lists the problems it counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import Store

from tests.helpers_ingest import GOOD, _write


def test_imports_json_lists_the_problems_it_counts(store: Store, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    store.ingest([_write(tmp_path / "a.jsonl", GOOD, "not json", "[1]")])
    store.ingest([_write(tmp_path / "b.jsonl", GOOD)])
    assert main(["--store", str(store.path), "imports", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [(r["problems"], len(r["issues"])) for r in runs] == [(0, 0), (2, 2)]
    assert [i["line"] for i in runs[1]["issues"]] == [2, 3]
