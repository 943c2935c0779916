"""Claude Code import by DESIGN's rules, idempotency, incremental import, bad input."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from store import Store, open_store
from store.core.errors import StoreError
from store.core.settings import Settings
from tests.conftest import BIG_SESSION, CLAUDE_CODE, make_store, needs_shared_data


def count_expected(path: Path) -> Counter[str]:
    """DESIGN "Getting data in", counted straight from the files, independently of store/."""
    kinds: Counter[str] = Counter()
    block_kind = {"thinking": "reasoning", "tool_use": "tool_call", "tool_result": "tool_result"}
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["type"] in ("user", "assistant"):
            content = obj["message"]["content"]
            blocks = [content] if isinstance(content, str) else content
            for block in blocks:
                if obj.get("isCompactSummary"):
                    kinds["compaction"] += 1
                elif isinstance(block, str) or block["type"] == "text":
                    kinds["system" if obj.get("isMeta") else obj["type"]] += 1
                elif block["type"] == "thinking" and not block["thinking"].strip():
                    continue
                else:
                    kinds[block_kind[block["type"]]] += 1
        elif obj["type"] == "system" and obj.get("subtype") == "compact_boundary":
            kinds["compaction"] += 1
        elif obj["type"] == "system" and obj.get("subtype") == "local_command":
            kinds["system"] += 1
    return kinds


@needs_shared_data
def test_claude_code_import_counts(store: Store) -> None:
    files = sorted(CLAUDE_CODE.rglob("*.jsonl"))
    expected = sum((count_expected(f) for f in files), Counter())
    assert sum(expected.values()) == 723
    report = store.ingest([CLAUDE_CODE])
    assert report.errors == []
    assert report.sessions_added == 3
    assert report.entries_added == 723
    stats = store.stats()
    assert stats.entries_by_kind == dict(sorted(expected.items()))
    # every chunk is in FTS; long tool calls and results embed their head only
    assert stats.chunks == stats.fts_rows == stats.vectors + stats.chunks_lexical_only
    assert 0 < stats.chunks_lexical_only < stats.vectors
    big = store.session("ae4a77f8")
    assert big.agents == ("main", "aac57f5", "acompact-946d2b")
    assert big.entries == sum(count_expected(f).total() for f in files
                              if "ae4a77f8" in str(f))


@needs_shared_data
def test_second_import_adds_nothing(store: Store) -> None:
    store.ingest([CLAUDE_CODE])
    again = store.ingest([CLAUDE_CODE])
    assert (again.sessions_added, again.entries_added, again.chunks) == (0, 0, 0)
    assert again.errors == []
    assert store.stats().entries == 723


@needs_shared_data
def test_appended_lines_are_added_exactly(store: Store, tmp_path: Path) -> None:
    store.ingest([CLAUDE_CODE])
    lines = BIG_SESSION.read_text(encoding="utf-8").splitlines(keepends=True)
    copy = tmp_path / "copy.jsonl"
    copy.write_text("".join(lines[:1500]), encoding="utf-8")
    first = store.ingest([copy])
    assert first.entries_added == 0  # the same lines, already stored from the original
    extra = []
    for i, text in enumerate(["remember the build uses make release", "second appended"]):
        obj = next(json.loads(ln) for ln in lines if '"type":"user"' in ln)
        obj.update(type="user", uuid=f"appended-{i}", timestamp=f"2026-02-12T16:00:0{i}Z",
                   message={"role": "user", "content": text})
        extra.append(json.dumps(obj) + "\n")
    with copy.open("a", encoding="utf-8") as fh:
        fh.writelines(extra)
    second = store.ingest([copy])
    assert second.entries_added == 2
    assert store.stats().entries == 725
    texts = [e.content for e in store.entries("ae4a77f8")[-2:]]
    assert texts == ["remember the build uses make release", "second appended"]


@needs_shared_data
def test_growing_file_is_read_incrementally(store: Store, tmp_path: Path) -> None:
    lines = (CLAUDE_CODE / "short.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    live = tmp_path / "live.jsonl"
    live.write_text("".join(lines[:8]), encoding="utf-8")
    a = store.ingest([live]).entries_added
    live.write_text("".join(lines), encoding="utf-8")
    b = store.ingest([live]).entries_added
    assert a + b == 11 and a > 0 and b > 0
    with store.read() as conn:
        pos = conn.exec_driver_sql("SELECT byte_offset, line_count FROM import_position").one()
    assert pos == (live.stat().st_size, len(lines))


@needs_shared_data
def test_rewritten_file_is_detected(store: Store, tmp_path: Path) -> None:
    src = (CLAUDE_CODE / "short.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "s.jsonl"
    path.write_text(src, encoding="utf-8")
    store.ingest([path])
    path.write_text(src.replace("doesnt seem to start", "does not start"), encoding="utf-8")
    report = store.ingest([path])
    assert any("read again from the start" in n for n in report.notes)
    assert report.entries_added == 1  # the changed line, as a new entry; nothing else twice


@needs_shared_data
def test_partial_last_line_waits(store: Store, tmp_path: Path) -> None:
    lines = (CLAUDE_CODE / "short.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "p.jsonl"
    path.write_text("".join(lines[:5]) + lines[5][:40], encoding="utf-8")
    first = store.ingest([path])
    assert first.errors == []
    path.write_text("".join(lines), encoding="utf-8")
    store.ingest([path])
    assert store.stats().entries == 11


def _bad_dir(tmp_path: Path) -> Path:
    bad = tmp_path / "bad"
    bad.mkdir()
    lines = (CLAUDE_CODE / "short.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    mixed = lines[:3] + ["{not json at all\n", "\n", "[1, 2, 3]\n"] + lines[3:]
    (bad / "garbage.jsonl").write_text("".join(mixed), encoding="utf-8")
    (bad / "empty.jsonl").write_bytes(b"")
    tool = (CLAUDE_CODE / "tool_heavy.jsonl").read_bytes().splitlines(keepends=True)
    latin = tool[:2] + ['{"type": "user", "note": "caf\xe9"}\n'.encode("latin-1")] + tool[2:]
    (bad / "latin1.jsonl").write_bytes(b"".join(latin))
    os.symlink(tmp_path / "nowhere.jsonl", bad / "dangling.jsonl")
    os.mkfifo(bad / "fifo.jsonl")
    (bad / "feedback_broken.md").write_text(
        "---\nname: broken\ntype: feedback\ndescription: 'unclosed\ntags: [a\n---\nbody\n",
        encoding="utf-8")
    (bad / "feedback_release.md").write_text(
        "---\nname: release-process\ndescription: how we release\ntype: feedback\n"
        "metadata:\n  critical: true\ninvariant: >-\n  Deploy with make release; never docker "
        "push by hand.\n---\nUse make release.\n", encoding="utf-8")
    (bad / "feedback_ok.md").write_text(
        "---\nname: ok\ntype: feedback\ncritical: true\ninvariant: Always run pytest -x.\n---\n"
        "Run tests with pytest -x.\n", encoding="utf-8")
    return bad


@needs_shared_data
def test_bad_input_reported_good_lines_land(store: Store, tmp_path: Path) -> None:
    bad = _bad_dir(tmp_path)
    report = store.ingest([bad])
    by_file: dict[str, list[tuple[int | None, str]]] = {}
    for e in report.errors:
        by_file.setdefault(Path(e.path).name, []).append((e.line, e.reason))
    assert [ln for ln, _ in by_file["garbage.jsonl"]] == [4, 6]
    assert "invalid JSON" in by_file["garbage.jsonl"][0][1]
    assert by_file["empty.jsonl"] == [(None, "empty file: nothing to import")]
    assert by_file["latin1.jsonl"][0][0] == 3 and "UTF-8" in by_file["latin1.jsonl"][0][1]
    assert by_file["dangling.jsonl"] == [(None, "dangling symlink")]
    assert "not a regular file" in by_file["fifo.jsonl"][0][1]
    (line, reason), = by_file["feedback_broken.md"]
    assert line is not None and line >= 2 and "not valid YAML" in reason
    # every good line landed: short (11) + tool_heavy (24)
    assert report.entries_added == 35
    mems = {m.name: m for m in store.memories()}
    assert not mems["feedback_broken"].loadable
    release = mems["release-process"]
    assert not release.loadable and release.critical
    assert "'critical' is under 'metadata'" in (release.load_error or "")
    assert mems["ok"].loadable and mems["ok"].critical


@needs_shared_data
def test_crash_mid_write_leaves_store_consistent(store: Store, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import store.ingest.base as base

    path = tmp_path / "t.jsonl"
    shutil.copyfile(CLAUDE_CODE / "tool_heavy.jsonl", path)
    monkeypatch.setattr(base, "BATCH_LINES", 10)
    real = base.write_entries
    calls = {"n": 0}

    class PowerCut(BaseException):
        """Not an error a file can cause: nothing catches it, as nothing survives a crash."""

    def crashing(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            real(*args, **kwargs)
            raise PowerCut("power cut")
        return real(*args, **kwargs)

    monkeypatch.setattr(base, "write_entries", crashing)
    with pytest.raises(PowerCut):
        store.ingest([path])
    with store.read() as conn:
        entries = conn.exec_driver_sql("SELECT COUNT(*) FROM entry").scalar_one()
        chunks = conn.exec_driver_sql("SELECT COUNT(*) FROM chunk").scalar_one()
        vectors = conn.exec_driver_sql("SELECT COUNT(*) FROM chunk_vec").scalar_one()
    assert entries > 0 and chunks == vectors  # the first batch, whole; the second, not at all
    monkeypatch.setattr(base, "write_entries", real)
    store.ingest([path])
    assert store.stats().entries == 24


@pytest.mark.sqlite_only("the default store's file and folder modes, and a missing folder "
                         "for a file: a server's database has neither")
def test_store_file_is_owner_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default location is created on demand, owner-only; any other missing folder is an
    error, not a silently created store."""
    monkeypatch.delenv("LCA_STORE")
    s = open_store(None, Settings.load())
    s.close()
    folder = tmp_path / "xdg_data_home" / "lca-tui"
    assert (folder / "store.db").stat().st_mode & 0o777 == 0o600
    assert folder.stat().st_mode & 0o777 == 0o700
    with pytest.raises(StoreError, match="does not exist"):
        make_store(tmp_path / "deep" / "s.db")
    assert not (tmp_path / "deep").exists()


@pytest.mark.sqlite_only("a store file deleted and made again: a server's database is no file")
def test_a_store_deleted_is_made_again_at_its_path_in_the_same_process(tmp_path: Path) -> None:
    """Each opening creates a missing file: nothing remembers that a path once had one (a
    cached ``ensure_file`` once left the second opening with no file to connect to)."""
    path = tmp_path / "again.db"
    for _ in range(2):
        s = make_store(path)
        s.close()
        assert path.stat().st_mode & 0o777 == 0o600
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
