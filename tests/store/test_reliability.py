"""Reliability: one bad file never stops a batch; problems are stored with the import; the store
under faults (a newer store, a read-only folder, a half-written export, huge entries)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lca_tui.cli import main
from store import Store
from store.core.errors import StoreError, StoreTooNew
from tests.conftest import make_store

GOOD = {"type": "user", "sessionId": "good", "uuid": "g1", "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "a line that must land"}}


class PowerCut(BaseException):
    """What no file can cause: a crash (nothing catches it)."""


def _write(path: Path, *lines: str | dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n"
                            for ln in lines))
    return path


def _by_field(report) -> dict[str | None, str]:  # type: ignore[no-untyped-def]
    return {e.field: e.reason for e in report.errors}


@pytest.mark.parametrize("number", ["1e400", "Infinity", "-Infinity", "NaN", "1e40"])
def test_non_finite_or_huge_token_figures_are_a_line_problem_not_a_crash(
        store: Store, tmp_path: Path, number: str) -> None:
    line = ('{"type":"assistant","sessionId":"s","uuid":"u","message":{"id":"m","content":'
            '[{"type":"text","text":"x"}],"usage":{"input_tokens":%s,"output_tokens":3}}}'
            % number)
    _write(tmp_path / "in" / "a.jsonl", line)
    _write(tmp_path / "in" / "b.jsonl", GOOD)
    report = store.ingest([tmp_path / "in"])
    problem = _by_field(report)["message.usage.input_tokens"]
    assert "finite" in problem or "out of range" in problem
    assert {e.path for e in report.errors} == {str(tmp_path / "in" / "a.jsonl")}
    assert {s.id for s in store.sessions()} == {"s", "good"}  # the text landed, and file b
    with store.read() as conn:
        meta = conn.exec_driver_sql("SELECT meta FROM entry WHERE session_id = 's'").scalar()
    assert "Infinity" not in meta and "NaN" not in meta


def test_pre_tokens_out_of_range_is_reported_with_its_field(store: Store, tmp_path: Path) -> None:
    line = ('{"type":"system","subtype":"compact_boundary","sessionId":"s","uuid":"b",'
            '"content":"Conversation compacted","compactMetadata":{"trigger":"auto",'
            '"preTokens":1e400}}')
    report = store.ingest([_write(tmp_path / "a.jsonl", line)])
    assert "compactMetadata.preTokens" in _by_field(report)
    assert store.stats().entries == 1


@pytest.mark.parametrize("cwd", ["{}", "[]", "1e40", "[1, {\"a\": 2}]"])
def test_a_bad_cwd_on_a_first_line_does_not_abort_the_batch(store: Store, tmp_path: Path,
                                                            cwd: str) -> None:
    line = '{"type":"user","sessionId":"s2","uuid":"u2","cwd":%s,"message":{"content":"hi"}}' % cwd
    _write(tmp_path / "in" / "a.jsonl", line)
    _write(tmp_path / "in" / "b.jsonl", GOOD)
    report = store.ingest([tmp_path / "in"])
    assert "not a string" in _by_field(report)["cwd"]
    assert {s.id: s.project for s in store.sessions()} == {"s2": None, "good": None}


def test_a_file_name_that_is_not_utf8_is_imported_and_named(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    raw = os.path.join(os.fsencode(folder), b"bad-\xff\xfe-name.jsonl")
    with open(raw, "w") as fh:
        fh.write(json.dumps(dict(GOOD, sessionId="odd", uuid="o1")) + "\n")
        fh.write("not json\n")
    _write(folder / "z.jsonl", GOOD)
    report = store.ingest([folder])
    assert {s.id for s in store.sessions()} == {"odd", "good"}
    [problem] = report.errors
    assert problem.path.endswith("bad-\\xff\\xfe-name.jsonl") and problem.line == 2
    assert store.import_run().issues[0].path == problem.path  # and it could be stored
    assert store.ingest([folder]).entries_added == 0  # its position was saved


def test_a_fifo_named_md_is_never_opened(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "memories"
    folder.mkdir()
    fifo = folder / "aaa_trap.md"  # first in name order: detection would open it first
    os.mkfifo(fifo)
    (folder / "feedback_real.md").write_text("---\nname: real\ntype: feedback\n---\nBody.\n")
    lonely = tmp_path / "other"
    lonely.mkdir()
    os.mkfifo(lonely / "notes.md")  # a folder holding only a FIFO: not even detected
    _write(tmp_path / "t" / "b.jsonl", GOOD)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(store.ingest([tmp_path])), daemon=True)
    worker.start()
    worker.join(timeout=120)
    if worker.is_alive():  # release the reader stuck in open() before failing
        for f in (fifo, lonely / "notes.md"):
            try:
                os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        worker.join(timeout=10)
        pytest.fail("ingest hung on a FIFO named *.md")
    [report] = done
    assert {s.id for s in store.sessions()} == {"good"}
    assert [m.name for m in store.memories()] == ["real"]
    assert any(e.path == str(fifo) and "not a regular file" in e.reason
               for e in report.errors)  # type: ignore[attr-defined]


def test_an_aborted_batch_keeps_its_problem_report(store: Store, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import store.ingest.claude_code as cc

    _write(tmp_path / "in" / "a.jsonl", GOOD, "{broken json")
    _write(tmp_path / "in" / "b.jsonl", dict(GOOD, sessionId="crash", uuid="c1"))
    real = cc.ClaudeCodeImporter.convert

    def crash(self, ctx, path, line_no, offset, obj):  # type: ignore[no-untyped-def]
        if obj.get("sessionId") == "crash":
            raise PowerCut("killed mid-batch")
        return real(self, ctx, path, line_no, offset, obj)

    monkeypatch.setattr(cc.ClaudeCodeImporter, "convert", crash)
    with pytest.raises(PowerCut):
        store.ingest([tmp_path / "in"])
    monkeypatch.setattr(cc.ClaudeCodeImporter, "convert", real)
    run = store.import_run()
    assert run.status == "aborted" and "killed mid-batch" in (run.error or "")
    assert [(i.path, i.line) for i in run.issues] == [(str(tmp_path / "in" / "a.jsonl"), 2)]
    again = store.ingest([tmp_path / "in"])  # a.jsonl is at its end: nothing new to report
    assert again.errors == [] and again.entries_added == 1
    assert main(["--store", str(store.path), "imports"]) == 0
    listing = capsys.readouterr().out
    assert "aborted" in listing and "done" in listing
    assert main(["--store", str(store.path), "ingest", "--problems", str(run.id)]) == 0
    shown = capsys.readouterr().out
    assert "aborted" in shown and "invalid JSON" in shown and "killed mid-batch" in shown


def test_a_killed_import_is_listed_as_aborted(store: Store, tmp_path: Path) -> None:
    from store.ingest.runs import start_run

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    run_id = start_run(store, ["x"], None)
    with store.write() as conn:
        conn.exec_driver_sql("UPDATE import_run SET pid = ? WHERE id = ?", (dead.pid, run_id))
    assert store.import_run(run_id).status == "aborted"


def test_problems_are_stored_and_shown_again(store: Store, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path / "a.jsonl", GOOD, '{"type":"user","sessionId":"s","uuid":"x","cwd":[],'
           '"message":{"content":"hi"}}')
    store.ingest([tmp_path / "a.jsonl"])
    assert main(["--store", str(store.path), "ingest", "--problems", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "done"
    assert [(i["line"], i["field"]) for i in shown["issues"]] == [(2, "cwd")]


def test_a_half_written_export_is_failed_and_its_tmp_files_reported(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import store.export.writer as writer

    for n in range(3):
        store.ingest([_write(tmp_path / "in" / f"{n}.jsonl",
                             dict(GOOD, sessionId=f"s{n}", uuid=f"u{n}"))])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    monkeypatch.setattr(writer.os, "getpid", lambda: dead.pid)  # the exporting process dies
    real, calls = writer._write_file, []

    def killed(out_dir, rel, chunks, written):  # type: ignore[no-untyped-def]
        calls.append(rel)
        if len(calls) == 2:  # the second transcript: half written, then the process is gone
            (out_dir / (rel + ".tmp")).write_bytes(b"".join(chunks)[:10])
            raise PowerCut("kill -9")
        return real(out_dir, rel, chunks, written)

    monkeypatch.setattr(writer, "_write_file", killed)
    with pytest.raises(PowerCut):
        store.export(tmp_path / "out")
    monkeypatch.undo()
    [listed] = writer.exports(store)
    assert listed.status == "failed" and "interrupted" in str(listed.reason)
    fresh = make_store(tmp_path / "fresh.db")
    report = fresh.ingest([tmp_path / "out"])
    [tmp] = [e for e in report.errors if e.path.endswith(".tmp")]
    assert "temporary file left by an interrupted write" in tmp.reason
    assert len(fresh.sessions()) == 1  # the one finished transcript; the partial one is not read
    fresh.close()


def test_a_newer_store_in_rollback_journal_mode_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    make_store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("INSERT INTO schema_migration VALUES (9999, 'future', 't', 'c')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreTooNew, match="not changed"):
        make_store(path)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists()


def test_a_new_store_in_a_read_only_folder_is_one_clear_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import store.core.db as db

    def refuse(path, flags, mode=0o777):  # type: ignore[no-untyped-def]
        raise PermissionError(13, "Permission denied", str(path))

    (tmp_path / "ro").mkdir()  # the folder exists (only lca-tui's own is made on demand)
    monkeypatch.setattr(db.os, "open", refuse)  # as a non-root user meets a 0555 folder
    with pytest.raises(StoreError, match="permission denied"):
        make_store(tmp_path / "ro" / "new.db")
    assert main(["--store", str(tmp_path / "ro" / "new.db"), "stats"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "read-only folder" in err and "Traceback" not in err


def test_text_without_spaces_gives_bounded_chunks_with_true_counts() -> None:
    from store.core.chunker import WINDOW_CHARS, count_tokens, model_view, split

    text = "Qm9va3M" * 30_000  # 210 KB of base64-ish text, no space anywhere
    spans = split(text, 256)
    assert spans[0].start == 0 and spans[-1].end == len(text)
    assert all(a.end == b.start for a, b in zip(spans, spans[1:], strict=False))
    assert len(spans) > 100 and max(s.end - s.start for s in spans) <= WINDOW_CHARS
    for s in spans[:: max(1, len(spans) // 15)]:
        seen = count_tokens(model_view(text[s.start:s.end]))
        assert seen <= 260 and abs(seen - s.tokens) <= 3  # what the embedder is given
    assert sum(s.tokens for s in spans) > len(text) // 20  # not 3 tokens for the lot


def _peak_mb(code: str) -> int:
    """How much ``code`` raised the peak memory of a process that has imported the store."""
    head = ("import resource, store.facade, store.ingest, store.core.chunker; "
            "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; ")
    done = subprocess.run([sys.executable, "-c", head + code + "; print((resource.getrusage("
                           "resource.RUSAGE_SELF).ru_maxrss - base) // 1024)"],
                          capture_output=True, text=True, timeout=900, check=False,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.strip().splitlines()[-1])


def test_a_huge_text_is_chunked_in_bounded_memory() -> None:
    """Chunking a 3 MB text: the chunker reads windows of 16 K characters, so its peak is the
    interpreter's and the text's (tokenizing a 10 MB text whole peaked at over a gigabyte)."""
    code = ("from store.core.chunker import split; "
            "text = ' '.join(f'w{i % 977}' for i in range(600_000))[:3_000_000]; "
            "spans = split(text, 256); assert spans[-1].end == len(text)")
    assert _peak_mb(code) < 150


def test_a_huge_line_is_imported_in_bounded_memory(tmp_path: Path) -> None:
    """The whole import path with a 1 MB line (a 10 MB one peaked at 348 MB, measured)."""
    words = " ".join(f"w{i % 977}" for i in range(200_000))[:1_000_000]
    _write(tmp_path / "big.jsonl", dict(GOOD, message={"role": "user", "content": words}))
    code = ("from store import open_store; from store.core.settings import Settings; "
            f"s = open_store({str(tmp_path / 's.db')!r}, Settings.load()); "
            f"r = s.ingest([{str(tmp_path / 'big.jsonl')!r}]); "
            "assert r.entries_added == 1 and not r.errors, r.to_json()")
    assert _peak_mb(code) < 250


def test_a_yaml_alias_bomb_is_one_files_problem(tmp_path: Path) -> None:
    """Front matter whose aliases expand to billions of values is refused, not expanded; the
    other memory file of the folder lands."""
    folder = tmp_path / "memory"
    folder.mkdir()
    lines = ["---", "name: bomb", "type: feedback", "tags: &a [" + ", ".join(["lol"] * 9) + "]"]
    prev = "a"
    for c in "bcdefghi":
        lines.append(f"{c}: &{c} [" + ", ".join([f"*{prev}"] * 9) + "]")
        prev = c
    (folder / "feedback_bomb.md").write_text("\n".join([*lines, "---", "boom", ""]))
    (folder / "feedback_good.md").write_text("---\nname: good\ntype: feedback\n---\nFine.\n")
    s = make_store(tmp_path / "bomb.db")
    try:
        report = s.ingest([folder])
        assert any("alias bomb" in e.reason and e.path.endswith("feedback_bomb.md")
                   for e in report.errors)
        names = {m.name: m for m in s.memories()}
        assert names["good"].loadable and not names["feedback_bomb"].loadable
    finally:
        s.close()
