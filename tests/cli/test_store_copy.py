"""``lca-tui store copy --from --to``: the verified copy printed table by table,
its JSON, and the refusals (a missing source, the same store twice, a non-empty target) in one
line with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import open_store
from tests.helpers_ui import _fails, _run


def test_copy_prints_every_table_checked(demo_path: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "copy.db"
    code, out, _ = _run(["store", "copy", "--from", str(demo_path), "--to", str(target)],
                        capsys)
    assert code == 0, out
    lines = out.splitlines()
    assert any(line.split()[:2] == ["entry", "279"] for line in lines), out
    assert sum(1 for line in lines if line.rstrip().endswith("same")) >= 40
    assert "DIFFERS" not in out
    assert "verified: every table has the same rows and content on both sides" in \
        " ".join(out.split())
    with open_store(target) as copied, open_store(demo_path) as source:
        assert copied.stats().entries == source.stats().entries == 279
        assert [m.id for m in copied.memories()] == [m.id for m in source.memories()]


def test_copy_json(demo_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["store", "copy", "--from", str(demo_path), "--to",
                         str(tmp_path / "copy.db"), "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["ok"] is True
    entry = next(t for t in doc["tables"] if t["table"] == "entry")
    assert entry["source_rows"] == entry["target_rows"] == 279
    assert entry["source_digest"] == entry["target_digest"] and len(entry["source_digest"]) == 64


def test_refusals_are_one_line_and_write_nothing(demo_path: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.db"
    _fails(["store", "copy", "--from", str(missing), "--to", str(tmp_path / "t.db")], capsys,
           "no store at", "nope.db")
    assert not missing.exists() and not (tmp_path / "t.db").exists()
    _fails(["store", "copy", "--from", str(demo_path), "--to", str(demo_path)], capsys,
           "the same store")
    _fails(["store", "copy", "--from", str(demo_path), "--to", str(demo_path.resolve())],
           capsys, "the same store")
    full = tmp_path / "full.db"
    assert _run(["store", "copy", "--from", str(demo_path), "--to", str(full)], capsys)[0] == 0
    before = full.stat().st_size
    _fails(["store", "copy", "--from", str(demo_path), "--to", str(full)], capsys,
           "the target store is not empty", "nothing was written")
    assert full.stat().st_size == before
