"""Symlinks and sizes: a link out of the bound memory directory is reported and
not followed; a hook's ``transcript_path`` linking to a non-transcript is refused before it
is read; a transcript's unfinished last line is read in bounded memory, and a line past the
size limit is reported and skipped; ``export --out DIR --force`` never writes through a
``transcripts`` symlink inside DIR."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest

import store.ingest.lines as lines_mod
from store.export.writer import ExportError
from store.harness.hook import HookInputError, transcript_files
from store.ingest.lines import LineReader, Position
from tests.conftest import CLAUDE_CODE, make_store, needs_shared_data


def test_a_link_out_of_the_bound_directory_is_reported_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    folder.mkdir()
    secret = tmp_path / "outside.md"
    secret.write_text("---\nname: outside\n---\n\nroot:x:0:0:root:/root:/bin/bash\n")
    (folder / "p.md").symlink_to(secret)
    (folder / "ok.md").write_text("---\nname: ok\ntype: feedback\n---\n\nRun pytest -x.\n")
    with make_store(tmp_path / "s.db", **{"memory.dir": str(folder)}) as store:
        report = store.ingest([folder])
        assert [m.name for m in store.memories()] == ["ok"]
        assert any(e.path.endswith("p.md") and "link out" in e.reason for e in report.errors)


def test_a_transcript_path_linking_to_a_non_transcript_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "passwd"
    target.write_text("root:x:0:0:root:/root:/bin/bash\n")
    link = tmp_path / "session.jsonl"
    link.symlink_to(target)
    with pytest.raises(HookInputError, match="link to a file that is not"):
        transcript_files({"session_id": "s1", "transcript_path": str(link)})
    real = tmp_path / "real.jsonl"
    real.write_text("")
    ok = tmp_path / "ok.jsonl"
    ok.symlink_to(real)  # a link to a transcript is fine
    assert transcript_files({"session_id": "s1", "transcript_path": str(ok)})[0] == ok


def test_an_unfinished_huge_last_line_is_read_in_bounded_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines_mod, "MAX_LINE_BYTES", 1 << 20)
    path = tmp_path / "t.jsonl"
    with path.open("wb") as fh:
        fh.write(b'{"a": 1}\n')
        fh.write(b'{"b": "' + b"x" * (24 << 20))  # 24 MiB, no newline: still being written
    tracemalloc.start()
    reader = LineReader(path, Position())
    got = [line.number for line in reader]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert got == [1] and reader.pending_tail and reader.position.offset == 9
    assert peak < 8 << 20, f"peak {peak} bytes for a 24 MiB unfinished line"


@needs_shared_data
def test_a_line_past_the_limit_is_reported_and_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import store.ingest.base as base_mod

    monkeypatch.setattr(lines_mod, "MAX_LINE_BYTES", 1 << 16)
    monkeypatch.setattr(base_mod, "MAX_LINE_BYTES", 1 << 16)
    src = (CLAUDE_CODE / "short.jsonl").read_bytes().splitlines(keepends=True)
    big = json.dumps({"type": "user", "filler": "y" * (1 << 17)}).encode() + b"\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(src[0] + big + b"".join(src[1:]))
    with make_store(tmp_path / "s.db") as store:
        report = store.ingest([path])
        assert any(e.line == 2 and "line skipped" in e.reason for e in report.errors)
        plain = tmp_path / "p.jsonl"
        plain.write_bytes(b"".join(src))
    with make_store(tmp_path / "p.db") as other:
        assert other.ingest([plain]).entries_added == report.entries_added > 0


@needs_shared_data
def test_export_force_does_not_write_through_a_transcripts_link(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "manifest.json").write_text("{}")
    (out / "transcripts").symlink_to(elsewhere)
    with make_store(tmp_path / "s.db") as store:
        store.ingest([CLAUDE_CODE / "short.jsonl"])
        with pytest.raises(ExportError, match="symlink"):
            store.export(out, force=True)
    assert os.listdir(elsewhere) == []


@pytest.mark.parametrize("bound", [True, False])
def test_a_symlinked_sub_folder_out_of_a_memory_directory_is_reported_not_followed(
        tmp_path: Path, bound: bool) -> None:
    folder = tmp_path / "mem"
    folder.mkdir()
    (folder / "ok.md").write_text("---\nname: ok\ntype: feedback\n---\n\nRun pytest -x.\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "MEMORY.md").write_text("- [o](o.md)\n")
    (outside / "o.md").write_text("---\nname: o\ntype: feedback\n---\n\nroot:x:0:0:root\n")
    (folder / "sub").symlink_to(outside)
    inner = folder / "inner"  # a real sub-folder inside stays imported
    inner.mkdir()
    (inner / "MEMORY.md").write_text("- [i](i.md)\n")
    (inner / "i.md").write_text("---\nname: i\ntype: feedback\n---\n\nUse uv.\n")
    settings = {"memory.dir": str(folder)} if bound else {}
    with make_store(tmp_path / "s.db", **settings) as store:
        report = store.ingest([folder], fmt=None if bound else "memory-dir")
        assert sorted(m.name for m in store.memories()) == ["i", "ok"]
        assert any(e.path.endswith("sub") and "link out" in e.reason for e in report.errors)
