"""Issue 17, the reviewer's remaining defects: partial exports, export status, reindex
interleaving, coerced fields reported, deep JSON, CLI output of problems and errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from store import Store
from tests.conftest import make_store

GOOD = {"type": "user", "sessionId": "good", "uuid": "g1", "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "a line that must land"}}


def _write(path: Path, *lines: str | dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n"
                            for ln in lines))
    return path


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
    assert listed["status"] == "written", listed
    # its folder losing a file makes it failed (never finished); a finished one incomplete
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    (tmp_path / "out" / manifest["files"][0]["path"]).unlink()
    [listed] = writer.exports(store)
    assert listed["status"] == "failed" and "missing" in listed["reason"]
    finished = store.export(tmp_path / "out2")
    (tmp_path / "out2" / finished.files[1]["path"]).unlink()
    assert writer.exports(store)[0]["status"] == "incomplete"


def test_a_first_line_nested_too_deeply_is_reported_and_the_rest_imported(
        store: Store, tmp_path: Path) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    path = _write(tmp_path / "a.jsonl", deep, GOOD)
    report = store.ingest([path])
    [problem] = report.errors
    assert problem.line == 1 and "nested too deeply" in problem.reason
    assert [s.id for s in store.sessions()] == ["good"]


def test_invisible_characters_are_escaped() -> None:
    from store.core.textsafe import visible

    for char in ("\u3164", "\u115f", "\u00ad", "\U000e0000", "\U000e0041", "\U000e007f",
                 "\ufe00", "\ufe0f"):
        shown = visible(f"a{char}b")
        assert char not in shown and shown.startswith("a\\") and shown.endswith("b"), shown
    assert visible("\U000e0041") == "\\U000e0041"
    assert visible("café ✓ 日本") == "café ✓ 日本"  # what is visible stays as it is


def test_imports_json_lists_the_problems_it_counts(store: Store, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    store.ingest([_write(tmp_path / "a.jsonl", GOOD, "not json", "[1]")])
    store.ingest([_write(tmp_path / "b.jsonl", GOOD)])
    assert main(["--store", str(store.path), "imports", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [(r["problems"], len(r["issues"])) for r in runs] == [(0, 0), (2, 2)]
    assert [i["line"] for i in runs[1]["issues"]] == [2, 3]


@pytest.mark.parametrize("as_json", [True, False])
def test_stress_exits_non_zero_when_it_surfaced_errors(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str],
                                                       as_json: bool) -> None:
    import lca_tui.stress as stress
    from lca_tui.cli import main

    def result(errors: list[str]) -> stress.StressResult:
        return stress.StressResult(1.0, 10, 10.0, 1.0, 2.0, 5, 1, 1, None, errors=errors)

    flag = ["--json"] if as_json else []
    for errors, code in (([], 0), (["harness: StoreLocked: the store is busy [/]"], 1)):
        monkeypatch.setattr(stress, "run_stress", lambda *a, e=errors, **k: result(e))
        assert main(["stress", "--seconds", "1", *flag]) == code
        capsys.readouterr()


@pytest.mark.parametrize("how", ["store", "deeper", "demo", "default-folder"])
def test_a_store_under_a_file_is_one_clear_line(tmp_path: Path, how: str,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    args = {"store": ["--store", str(blocker / "x.db"), "stats"],
            "deeper": ["--store", str(blocker / "a" / "b.db"), "stats"],
            "demo": ["demo", "--no-open", "--store", str(blocker / "x.db")],
            "default-folder": ["stats"]}[how]
    if how == "default-folder":
        monkeypatch.delenv("LCA_STORE", raising=False)
        monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    assert main(args) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "File exists" not in err
    assert f"{blocker} is a file, not a folder" in err


@pytest.mark.parametrize("stamp", ["garbage", "0001-01-01T00:00:00Z", "12"])
def test_an_invalid_timestamp_lands_and_is_reported(store: Store, tmp_path: Path,
                                                    stamp: str) -> None:
    path = _write(tmp_path / "a.jsonl", dict(GOOD, timestamp=stamp))
    report = store.ingest([path])
    [problem] = report.errors
    assert (problem.path, problem.line, problem.field) == (str(path), 1, "timestamp")
    [entry] = store.entries("good")
    assert entry.content == GOOD["message"]["content"] and entry.ts is None
    with store.read() as conn:
        meta = json.loads(conn.exec_driver_sql("SELECT meta FROM entry").scalar_one())
    assert meta["invalid"] == {"timestamp": stamp}  # kept: nothing lost


@pytest.mark.parametrize("key,value", [("name", 7), ("name", ["Bash"]), ("id", {"x": 1}),
                                       ("id", True)])
def test_a_tool_call_name_or_id_of_another_type_is_reported(store: Store, tmp_path: Path,
                                                           key: str, value: object) -> None:
    block = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    block[key] = value
    line = {"type": "assistant", "sessionId": "s", "uuid": "u", "message": {
        "id": "m", "role": "assistant", "content": [{"type": "text", "text": "x"}, block]}}
    path = _write(tmp_path / "a.jsonl", line)
    report = store.ingest([path])
    [problem] = report.errors
    assert (problem.path, problem.line, problem.field) == (str(path), 1,
                                                          f"message.content[1].{key}")
    assert len(store.entries("s")) == 2  # the text and the tool call both landed


def test_an_empty_content_list_is_reported(store: Store, tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", dict(GOOD, uuid="e", message={"role": "user",
                                                                      "content": []}), GOOD)
    report = store.ingest([path])
    [problem] = report.errors
    assert (problem.line, problem.field) == (1, "message.content")
    assert store.stats().entries == 1


@pytest.mark.parametrize("key,value", [("hits", "'many'"), ("hits", "[1, 2]"),
                                       ("prevented", "2.5"), ("prevented", "true"),
                                       ("created", "not a date"), ("created", "0001-01-01"),
                                       ("last_applied", "{a: 1}"), ("name", "[a, b]"),
                                       ("name", "42")])
def test_a_memory_field_of_the_wrong_type_lands_and_is_reported(
        store: Store, tmp_path: Path, key: str, value: str) -> None:
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("- [Lesson](feedback_lesson.md)\n")
    path = folder / "feedback_lesson.md"
    path.write_text(f"---\ndescription: a lesson\ntype: feedback\n{key}: {value}\n---\n"
                    "Always run the tests.\n")
    report = store.ingest([folder])
    [problem] = [e for e in report.errors if e.path == str(path)]
    assert (problem.line, problem.field) == (4, key), problem  # line 4 of the file
    with store.read() as conn:  # stored, its front matter whole: the value is not lost
        [(front,)] = conn.exec_driver_sql("SELECT front_matter FROM memory WHERE body = "
                                          "'Always run the tests.'").all()
    assert key in front


def test_entry_tokens_count_a_huge_entry_whole_within_the_documented_bound(
        store: Store) -> None:
    """No cap: a multi-megabyte entry's ``tokens`` is the estimate of all of it, and the
    model's tokenizer gives between the estimate and about twice it (the documented bound)."""
    import math

    from store.core.writes import NewEntry, NewSession

    for text in ("x" * 1_000_000, "a word of prose, " * 60_000):
        store.append_entries(NewSession(id=f"big{len(text)}", format="harness"), [
            NewEntry(kind="assistant", content=text, source_key="t", line_id="1")])
        [entry] = store.entries(f"big{len(text)}")
        assert entry.tokens == math.ceil(len(text) / 4) + 4
        with store.read() as conn:  # the model's own count, on the entry's chunks
            model = conn.exec_driver_sql(
                "SELECT SUM(tokens) - 2 * COUNT(*) FROM chunk WHERE source_type = 'entry' "
                "AND source_id = ?", (entry.id,)).scalar_one()
        assert 0.6 * entry.tokens <= model <= 2.1 * entry.tokens, (entry.tokens, model)
