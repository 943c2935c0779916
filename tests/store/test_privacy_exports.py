"""Exports holding erased text: named and deleted only when they hold it; an erasure's exports
deleted later, and re-importing them brings nothing back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import text

from store.privacy.api import preview, run, scope_from

from tests.conftest import store_target
from tests.helpers_privacy import DANA_SESSION, EMAIL, _cli, _entries_with, _open


def _grep(folder: Path, needle: str) -> set[str]:
    return {str(f) for f in folder.rglob("*") if f.is_file()
            and needle.lower() in f.read_text("utf-8", errors="replace").lower()}


def test_exports_named_and_deleted_are_only_those_holding_it(demo_path: Path,
                                                             tmp_path: Path) -> None:
    with _open(demo_path) as store:
        out = tmp_path / "exp"
        store.export(out)
        every = {str(f) for f in out.rglob("*") if f.is_file()}
        holding = _grep(out, EMAIL)
        assert 0 < len(holding) < len(every)
        c = preview(store, scope_from(match=EMAIL))
        assert set(c.export_files()) == holding
        by_entry = preview(store, scope_from(entry=next(iter(_entries_with(store, EMAIL)))))
        assert len(by_entry.export_files()) == 1  # the transcript that entry was written to
        result = run(store, scope_from(match=EMAIL), "erase")
        probe = {p.name: p for p in result.verification.probes}["exports"]
        assert not probe.passed and f"{len(holding)} export files" in probe.detail
        result = run(store, scope_from(match=EMAIL), "erase", delete_exports=True)
        assert set(result.exports_deleted) == holding
        left = {str(f) for f in out.rglob("*") if f.is_file()}
        assert left == every - holding and not _grep(out, EMAIL)
        assert {p.name: p for p in result.verification.probes}["exports"].passed


def test_exports_of_a_tombstone_are_deleted_later_and_reimport_brings_nothing(
        demo_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _open(demo_path) as store:
        out = tmp_path / "exp"
        store.export(out)
        every = {str(f) for f in out.rglob("*") if f.is_file()}
    code, stdout, err = _cli(capsys, "erase", "--session", DANA_SESSION, "--yes", "--json",
                             "--store", str(store_target(demo_path)))
    report = json.loads(stdout)
    assert code == 1 and len(report["exports"]) == 1  # its transcript, not the 6 others
    probe = {p["name"]: p for p in report["verification"]["probes"]}["exports"]
    tomb = report["tombstone_id"]
    assert f"--exports-of-tombstone {tomb}" in probe["detail"]
    shutil.copytree(out, tmp_path / "copy")  # the export as it was, transcript included
    code, stdout, err = _cli(capsys, "erase", "--exports-of-tombstone", str(tomb), "--json",
                             "--store", str(store_target(demo_path)))
    assert code == 0 and json.loads(stdout)["deleted"] == report["exports"]
    assert {str(f) for f in out.rglob("*") if f.is_file()} == every - set(report["exports"])
    # re-importing the export (its manifest and transcript): not even the session row
    with _open(demo_path) as store:
        result = store.ingest([tmp_path / "copy"])
        with store.read() as conn:
            n = conn.execute(text("SELECT count(*) FROM session WHERE id = :s"),
                             {"s": DANA_SESSION}).scalar_one()
        assert n == 0 and result.entries_added == 0 and result.erased_earlier > 0
