"""Bad input without a traceback: JSON nested deeper than Python's parser recurses
(``propose -``, ``edit ID -``, a hook's stdin), integers of 2^63 and more wherever an id or a
count is read (command arguments, proposal targets and evidence), and non-finite or huge
integers in ``config.toml`` — each a clear error naming where and why, nothing else lost.
Hypothesis fuzzers, derandomised, no deadlines, bounded example counts."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lca_tui.cli import main
from store.core.settings import Settings, SettingsError
from tests.conftest import make_store

FUZZ = settings(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
BIG = st.integers(min_value=2**63, max_value=2**200) | st.integers(max_value=-(2**63) - 1,
                                                                  min_value=-(2**200))


def _run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str],
         stdin: str = "") -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses a value: exit status 2
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Error:" not in err.split(":", 1)[0], err
    return code, err


def _deep(depth: int, opener: str) -> str:
    closer = {"[": "]", "{": "}"}[opener]
    inner = '{"a":' if opener == "{" else "["
    return inner * depth + "1" + closer * depth if opener == "[" else inner * depth + "1" + (
        "}" * depth)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    make_store(tmp_path / "s.db").close()
    return tmp_path / "s.db"


@FUZZ
@given(depth=st.integers(min_value=2_000, max_value=60_000), opener=st.sampled_from("[{"),
       where=st.sampled_from(["whole", "metadata"]))
def test_deep_json_to_propose_is_a_clear_error(db: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch, depth: int,
                                               opener: str, where: str) -> None:
    deep = _deep(depth, opener)
    doc = deep if where == "whole" else (
        '{"op": "add", "type": "reference", "content": "x", "metadata": ' + deep + "}")
    code, err = _run(capsys, monkeypatch, ["--store", str(db), "propose", "-"], doc)
    assert code == 2 and "stdin" in err and "nested too deeply" in err


def test_deep_json_to_edit_is_a_clear_error(db: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    code, err = _run(capsys, monkeypatch, ["--store", str(db), "edit", "1", "-"],
                     _deep(10_000, "["))
    assert code == 2 and "nested too deeply" in err


@FUZZ
@given(value=BIG, argv=st.sampled_from([
    ["memory", "{}"], ["approve", "{}"], ["trace", "{}"], ["erase", "--entry", "{}", "--yes"],
    ["audit", "--limit", "{}"], ["proposal", "{}"], ["reject", "{}", "--reason", "r"]]))
def test_a_huge_integer_argument_is_a_clear_error(db: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch, value: int,
                                                  argv: list[str]) -> None:
    args = [a.format(value) if a == "{}" else a for a in argv]
    code, err = _run(capsys, monkeypatch, ["--store", str(db), *args])
    assert code == 2 and "out of range" in err


@FUZZ
@given(value=BIG, shape=st.sampled_from(["target", "targets", "evidence"]))
def test_a_huge_integer_in_a_proposal_is_a_clear_error(
        db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        value: int, shape: str) -> None:
    doc: dict[str, Any] = {"op": "add", "type": "reference", "content": "Backups run at two."}
    if shape == "target":
        doc = {"op": "reinforce", "target": value}
    elif shape == "targets":
        doc = {"op": "merge", "targets": [1, value], "content": "x", "type": "reference"}
    else:
        doc["evidence"] = [{"entry": value}]
    code, err = _run(capsys, monkeypatch, ["--store", str(db), "propose", "-"],
                     json.dumps(doc))
    assert code == 2 and "out of range" in err
    with make_store(db) as store:
        assert store.proposals() == []  # nothing stored


@FUZZ
@given(value=st.sampled_from(["inf", "-inf", "+inf", "nan", "1e400", "-1e400"])
       | BIG.map(str))
def test_a_non_finite_or_huge_toml_integer_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        value: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[embed]\nbatch_size = {value}\n")
    monkeypatch.setenv("LCA_CONFIG", str(path))
    with pytest.raises(SettingsError, match="embed.batch_size must be int"):
        Settings.load({})
    code, err = _run(capsys, monkeypatch, ["config"])
    assert code != 0 and "config.toml" in err and "batch_size" in err


def test_a_deeply_nested_hook_json_is_recorded_in_hook_run(
        db: Path, tmp_path: Path) -> None:
    from store.harness.hook import handle_with

    raw = ('{"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "hi", '
           '"x": ' + _deep(100_000, "[") + "}")
    with make_store(db) as store:
        assert handle_with(store, "UserPromptSubmit", raw, "process") == ""
        with store.read() as conn:
            rows = conn.exec_driver_sql("SELECT status, error FROM hook_run").all()
    assert len(rows) == 1 and rows[0][0] == "failed" and "too deeply" in rows[0][1]
    log = Path(os.environ["XDG_STATE_HOME"]) / "lca-tui" / "hook-failures.log"
    assert not log.exists() or "RecursionError" not in log.read_text()


def test_the_hook_command_never_logs_deep_json_to_the_failure_log(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lca_tui.commands.hook import _session_of

    raw = ('{"session_id": "s1", "x": ' + _deep(100_000, "[") + "}").encode()
    assert _session_of(raw) is None  # unreadable, not a RecursionError out of the hook
