"""A hook never breaks the session: garbage on stdin, a store it cannot open, a failure in
the middle — exit 0, nothing on stdout, and the failure recorded where ``hook_failures``
reads it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from store import Store
from store.harness.failures import hook_failures, logged_failures
from store.harness.paths import failure_log
from tests.conftest import CLAUDE_CODE, make_store, needs_shared_data
from tests.helpers_harness import run_hook, runtime_dir  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


def _hook_process(event: str, stdin: bytes, store: Path) -> subprocess.CompletedProcess[bytes]:
    """The hook as Claude Code runs it: a process of its own."""
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", "hook", event, "--store",
                           str(store)], input=stdin, capture_output=True, timeout=120,
                          cwd=ROOT, env=os.environ.copy())


def test_garbage_on_stdin(tmp_path: Path, runtime_dir: Path) -> None:
    store_path = tmp_path / "s.db"
    for garbage in (b"this is not json", b"\xff\xfe\x00", b"[1, 2]", b"",
                    json.dumps({"hook_event_name": "UserPromptSubmit"}).encode()):
        done = _hook_process("UserPromptSubmit", garbage, store_path)
        assert (done.returncode, done.stdout) == (0, b""), done.stderr
    store = make_store(store_path)
    signal = hook_failures(store)
    assert signal.status == "warn" and signal.value == 5
    assert {r["where"] for r in signal.rows} == {"hook_run"}
    assert "stdin" in signal.explanation
    store.close()
    health = _health(store_path)
    assert health["status"] == "warn" and health["value"] == 5
    assert {r["kind"] for r in health["offending"]} == {"hook_run"}


def _health(store_path: Path) -> dict[str, object]:
    """``lca-tui health --json``'s hook_failures signal (a process, as a user runs it)."""
    done = subprocess.run([sys.executable, "-m", "lca_tui.cli", "health", "--json", "--no-save",
                           "--store", str(store_path)], capture_output=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode in (0, 1), done.stderr
    signals = {s["name"]: s for s in json.loads(done.stdout)["signals"]}
    return signals["hook_failures"]


def test_health_shows_what_failed_while_the_store_could_not_be_opened(
        tmp_path: Path, runtime_dir: Path) -> None:
    """The store path led nowhere when the hook ran (its folder was missing); once it opens,
    the health scan counts the failure the log kept."""
    target = tmp_path / "later" / "store.db"
    link = tmp_path / "store.db"
    link.symlink_to(target)
    done = _hook_process("Stop", json.dumps({"session_id": "s", "hook_event_name": "Stop"})
                         .encode(), link)
    assert (done.returncode, done.stdout) == (0, b"")
    target.parent.mkdir()
    # health reads an existing store: it refuses the path, saying what the log kept for it
    done = subprocess.run([sys.executable, "-m", "lca_tui.cli", "health", "--no-save",
                           "--store", str(link)], capture_output=True, timeout=300, cwd=ROOT)
    assert done.returncode == 2 and done.stdout == b"" and not target.exists()
    said = done.stderr.decode()
    assert "no store at" in said and "the hook failure log holds 1 failure" in said
    assert "could not be opened" in said
    make_store(link).close()  # the store is made (the next hook run would make it)
    health = _health(link)
    assert health["status"] == "warn" and health["value"] == 1
    assert [r["kind"] for r in health["offending"]] == ["hook-failures.log"]
    assert "could not be opened" in str(health["explanation"])


@pytest.mark.parametrize("kind", ["directory", "not a database", "dangling symlink"])
def test_a_store_that_cannot_be_opened(tmp_path: Path, runtime_dir: Path, kind: str) -> None:
    bad = tmp_path / "bad.db"
    if kind == "directory":
        bad.mkdir()
    elif kind == "not a database":
        bad.write_bytes(b"this is not an SQLite file at all" * 100)
    else:
        bad.symlink_to(tmp_path / "gone" / "nowhere" / "x.db")
        (tmp_path / "gone").write_text("a file where a folder should be")
    payload = {"session_id": "s", "transcript_path": str(tmp_path / "t.jsonl"),
               "cwd": str(tmp_path), "hook_event_name": "PreCompact", "trigger": "auto"}
    done = _hook_process("PreCompact", json.dumps(payload).encode(), bad)
    assert (done.returncode, done.stdout) == (0, b""), done.stderr
    logged = logged_failures(bad)
    assert len(logged) == 1 and logged[0]["event"] == "PreCompact"
    assert "could not be opened" in logged[0]["error"]
    assert failure_log().stat().st_mode & 0o777 == 0o600
    signal = hook_failures(None, bad)
    assert signal.status == "warn" and signal.value == 1 and signal.rows[0]["where"] == "log"


@pytest.mark.parametrize("kind", ["directory", "not a database"])
def test_health_and_hooks_status_show_the_logged_failures_of_a_store_that_cannot_open(
        tmp_path: Path, runtime_dir: Path, kind: str) -> None:
    bad = tmp_path / "bad.db"
    if kind == "directory":
        bad.mkdir()
    else:
        bad.write_bytes(b"this is not an SQLite file at all" * 100)
    payload = {"session_id": "s", "hook_event_name": "Stop"}
    assert _hook_process("Stop", json.dumps(payload).encode(), bad).returncode == 0

    def cli(*words: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "lca_tui.cli", *words, "--store",
                               str(bad), "--json"], capture_output=True, timeout=300,
                              cwd=ROOT)

    health = cli("health", "--no-save")
    assert health.returncode == 2 and health.stderr.decode().count("\n") == 1
    assert "hook_failures: 1 hook run failed" in health.stderr.decode()
    doc = json.loads(health.stdout)
    assert doc["status"] == "error" and doc["error"]
    (signal,) = doc["signals"]
    assert (signal["name"], signal["value"], signal["status"]) == ("hook_failures", 1, "warn")
    status = cli("hooks", "status", "--project", str(tmp_path))
    assert status.returncode == 1, status.stderr
    doc = json.loads(status.stdout)
    assert "cannot be opened" in doc["store_error"]
    assert doc["hook_failures"]["value"] == 1 and doc["daemon_state"] == "not running"
    assert doc["settings"]["installed"] is False
    assert bad.is_dir() if kind == "directory" else bad.read_bytes().startswith(b"this is")


def test_hooks_status_does_not_create_a_missing_store(tmp_path: Path, runtime_dir: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    from lca_tui.cli import main

    missing = tmp_path / "nothing-yet.db"
    assert main(["hooks", "status", "--store", str(missing), "--project", str(tmp_path)]) == 0
    assert "no store at" in capsys.readouterr().out
    assert not missing.exists()


def test_log_lines_count_for_their_store_once_it_opens(tmp_path: Path, store: Store) -> None:
    from store.harness.failures import log_failure

    log_failure("Stop", store.path, "the store was locked")
    log_failure("Stop", tmp_path / "another.db", "not this store")
    signal = hook_failures(store)
    assert signal.value == 1 and signal.rows[0]["error"] == "the store was locked"


@needs_shared_data
def test_a_failure_mid_run_prints_nothing_and_is_recorded(
        tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import store.recall.run as run

    def broken(*args: object, **kwargs: object) -> None:
        print("noise a library printed")  # must not reach Claude Code
        raise RuntimeError("the recall broke")

    monkeypatch.setattr(run, "recall", broken)
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes((CLAUDE_CODE / "short.jsonl").read_bytes())
    sid = json.loads(transcript.read_text().splitlines()[0]).get("sessionId") or "x"
    store_path = tmp_path / "s.db"
    out = run_hook("UserPromptSubmit", {"session_id": sid, "transcript_path": str(transcript),
                                        "hook_event_name": "UserPromptSubmit",
                                        "prompt": "what changed"},
                   store_path, monkeypatch, capsys)
    assert out == ""
    s = make_store(store_path)
    signal = hook_failures(s)
    assert signal.value == 1 and "the recall broke" in (signal.rows[0]["error"] or "")
    assert s.stats().entries > 0  # the import before the failure landed
    s.close()


@pytest.mark.parametrize("words", [["NotAnEvent"], ["Stop", "--bogus"], []])
def test_a_malformed_hook_command_still_exits_zero(tmp_path: Path, runtime_dir: Path,
                                                    words: list[str]) -> None:
    """Exit 2 would block the user's prompt (Claude Code's blocking code): never."""
    done = subprocess.run([sys.executable, "-m", "lca_tui.cli", "--store",
                           str(tmp_path / "s.db"), "hook", *words], input=b"{}",
                          capture_output=True, timeout=120, cwd=ROOT)
    assert (done.returncode, done.stdout) == (0, b"")
    assert "cannot read the hook command" in logged_failures(tmp_path / "s.db")[0]["error"]


@needs_shared_data
def test_a_clean_run_is_recorded_ok(tmp_path: Path, runtime_dir: Path,
                                    monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes((CLAUDE_CODE / "tool_heavy.jsonl").read_bytes())
    sid = next(json.loads(line)["sessionId"] for line in transcript.read_text().splitlines()
               if "sessionId" in line)
    store_path = tmp_path / "s.db"
    out = run_hook("Stop", {"session_id": sid, "transcript_path": str(transcript),
                            "hook_event_name": "Stop"}, store_path, monkeypatch, capsys)
    assert out == ""
    s = make_store(store_path)
    assert hook_failures(s).status == "ok" and s.waiting() > 0
    with s.read() as conn:
        row = conn.exec_driver_sql("SELECT event, status, via, entries_added FROM hook_run"
                                   ).one()
    assert tuple(row[:3]) == ("Stop", "ok", "process") and row[3] > 0
    s.close()


def test_each_logged_failure_is_explained_by_its_cause(tmp_path: Path) -> None:
    from store.harness.failures import log_failure

    where = tmp_path / "s.db"
    log_failure("UserPromptSubmit", where, "the daemon (pid 7) did not answer: the daemon "
                "did not acknowledge the request within 2 s (hung?)", via="daemon")
    log_failure("UserPromptSubmit", where, "the hook gave up at its deadline of 12 s while "
                "working in-process", via="deadline")
    log_failure("Stop", where, "the store could not be opened: StoreError: not a database")
    log_failure("Stop", where, "the run failed and could not be recorded: StoreLocked: busy")
    explanation = hook_failures(None, where).explanation
    assert "1 the daemon did not answer" in explanation
    assert "1 gave up at the hook's deadline" in explanation
    assert "1 the store could not be opened" in explanation
    assert "1 the run could not be recorded in the store" in explanation
    assert explanation.count("could not be opened") == 1


@needs_shared_data
@pytest.mark.parametrize("kind", ["directory", "not jsonl"])
def test_a_transcript_path_that_is_no_transcript_is_refused_and_recorded(
        tmp_path: Path, runtime_dir: Path, kind: str) -> None:
    if kind == "directory":
        given = tmp_path / "projects"  # a folder of sessions, named like one
        given.mkdir()
        for name in ("short.jsonl", "tool_heavy.jsonl"):
            (given / name).write_bytes((CLAUDE_CODE / name).read_bytes())
        given = given.rename(tmp_path / "folder.jsonl")
    else:
        given = tmp_path / "notes.txt"
        given.write_bytes((CLAUDE_CODE / "short.jsonl").read_bytes())
    store_path = tmp_path / "s.db"
    done = _hook_process("Stop", json.dumps({"session_id": "s", "hook_event_name": "Stop",
                                             "transcript_path": str(given)}).encode(),
                         store_path)
    assert (done.returncode, done.stdout) == (0, b""), done.stderr
    store = make_store(store_path)
    signal = hook_failures(store)
    assert signal.value == 1 and "transcript_path" in str(signal.rows[0]["error"])
    assert store.stats().entries == 0  # nothing imported
    store.close()


def test_the_failure_log_names_the_store_by_its_absolute_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from store.harness.failures import log_failure

    monkeypatch.chdir(tmp_path)
    log_failure("Stop", "relative.db", "whatever")
    (line,) = logged_failures()
    assert line["store"] == str(tmp_path / "relative.db")
    assert logged_failures(tmp_path / "relative.db") == [line]


def test_log_lines_naming_no_store_do_not_make_a_store_warn(tmp_path: Path,
                                                             runtime_dir: Path) -> None:
    """Issue 22: another setup's broken hook command (its line names no store) is said, as
    information, but a healthy store does not warn for it; this store's own line does."""
    from store.harness.failures import log_failure

    store_path = tmp_path / "s.db"
    make_store(store_path).close()
    log_failure("Stop", None, "the hook command itself failed: no such option")
    log_failure("Stop", tmp_path / "other.db", "the store could not be opened")
    store = make_store(store_path)
    signal = hook_failures(store)
    assert (signal.status, signal.value, signal.unattributed) == ("ok", 0, 1)
    assert "1 more line names no store" in signal.explanation
    log_failure("Stop", store_path, "the store could not be opened")
    signal = hook_failures(store)
    assert (signal.status, signal.value, signal.unattributed) == ("warn", 1, 1)
    store.close()
    health = _health(store_path)
    assert health["status"] == "warn" and health["value"] == 1
    assert health["detail"]["unattributed_in_log"] == 1
