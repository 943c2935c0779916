"""Importing an export checks what its manifest lists: a truncated, missing or changed
transcript is reported and the rest imported, a folder without its manifest is a partial export,
and an export killed after its manifest is listed as written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from store import Store

from tests.conftest import make_store
from tests.helpers_ingest import GOOD, _write


def _three_sessions(store: Store, tmp_path: Path) -> None:
    for n in range(3):
        store.ingest([_write(tmp_path / "in" / f"{n}.jsonl",
                             dict(GOOD, sessionId=f"s{n}", uuid=f"u{n}"),
                             dict(GOOD, sessionId=f"s{n}", uuid=f"v{n}",
                                  message={"role": "user", "content": "second line"}))])


def test_a_truncated_transcript_of_an_export_is_reported_and_the_rest_imported(
        store: Store, tmp_path: Path) -> None:
    _three_sessions(store, tmp_path)
    report = store.export(tmp_path / "out")
    victim = tmp_path / "out" / report.files[2]["path"]
    victim.write_bytes(victim.read_bytes().splitlines(keepends=True)[0])  # whole lines only
    fresh = make_store(tmp_path / "fresh.db")
    got = fresh.ingest([tmp_path / "out"])
    [problem] = got.errors
    assert problem.path == str(victim) and problem.field == "files"
    assert "incomplete" in problem.reason and "complete lines are imported" in problem.reason
    assert len(fresh.sessions()) == 3  # the manifest's sessions all land
    assert fresh.stats().entries == 5  # two whole transcripts and the truncated one's line
    fresh.close()


def test_a_missing_or_changed_transcript_of_an_export_is_reported(store: Store,
                                                                 tmp_path: Path) -> None:
    _three_sessions(store, tmp_path)
    report = store.export(tmp_path / "out")
    gone = tmp_path / "out" / report.files[1]["path"]
    gone.unlink()
    changed = tmp_path / "out" / report.files[3]["path"]
    changed.write_bytes(changed.read_bytes().replace(b"second line", b"SECOND LINE"))
    fresh = make_store(tmp_path / "fresh.db")
    got = fresh.ingest([tmp_path / "out"])
    why = {(e.path, e.field): e.reason for e in got.errors}
    assert "missing" in why[(str(gone), "files")]
    assert "sha256" in why[(str(changed), "files")]
    assert fresh.stats().entries == 4  # the changed file's lines, each checked on its own
    fresh.close()


def test_an_export_without_its_manifest_is_reported_as_partial(store: Store,
                                                              tmp_path: Path) -> None:
    """Killed between two files: no ``.tmp`` marker, no manifest, one finished transcript."""
    _three_sessions(store, tmp_path)
    report = store.export(tmp_path / "out")
    for item in report.files[2:]:
        (tmp_path / "out" / item["path"]).unlink()
    (tmp_path / "out" / "manifest.json").unlink()
    fresh = make_store(tmp_path / "fresh.db")
    got = fresh.ingest([tmp_path / "out"])
    [problem] = got.errors
    assert problem.path == str(tmp_path / "out")
    assert "manifest.json is missing" in problem.reason and "incomplete" in problem.reason
    assert len(fresh.sessions()) == 1  # what is complete lands
    fresh.close()


def test_an_export_killed_after_its_manifest_is_listed_as_written(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files and manifest are all there; only the record's last update was lost."""
    import store.export.writer as writer

    _three_sessions(store, tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    monkeypatch.setattr(writer.os, "getpid", lambda: dead.pid)
    real = writer._write_file

    def then_killed(out_dir, rel, chunks, written):  # type: ignore[no-untyped-def]
        done = real(out_dir, rel, chunks, written)
        if rel == writer.MANIFEST:
            raise KeyboardInterrupt("kill -9 after the manifest")
        return done

    monkeypatch.setattr(writer, "_write_file", then_killed)
    with pytest.raises(KeyboardInterrupt):
        store.export(tmp_path / "out")
    monkeypatch.undo()
    [listed] = writer.exports(store)
    assert listed.status == "written", listed
    # its folder losing a file makes it failed (never finished); a finished one incomplete
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    (tmp_path / "out" / manifest["files"][0]["path"]).unlink()
    [listed] = writer.exports(store)
    assert listed.status == "failed" and "missing" in str(listed.reason)
    finished = store.export(tmp_path / "out2")
    (tmp_path / "out2" / finished.files[1]["path"]).unlink()
    assert writer.exports(store)[0].status == "incomplete"
