"""Fields checked where they are read: a first line nested too deeply, an invalid timestamp, a
tool call's name or id of another type, an empty content list, a memory field of the wrong type;
each reported with its place, the rest stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import Store

from tests.helpers_ingest import GOOD, _write


def test_a_first_line_nested_too_deeply_is_reported_and_the_rest_imported(
        store: Store, tmp_path: Path) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    path = _write(tmp_path / "a.jsonl", deep, GOOD)
    report = store.ingest([path])
    [problem] = report.errors
    assert problem.line == 1 and "nested too deeply" in problem.reason
    assert [s.id for s in store.sessions()] == ["good"]


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
