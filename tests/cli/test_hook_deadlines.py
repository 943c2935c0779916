"""A hook never holds the user's prompt past its own deadline, and never waits on a daemon
that does not answer: a held write lock, a hung (stopped) daemon, an unusable runtime folder
— each ends in exit 0, nothing on stdout, and a record where ``hook_failures`` reads it."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from lca_tui.cli import main
from lca_tui.commands import hook as hook_command
from store.harness import client, paths
from store.harness.failures import hook_failures, logged_failures
from store.harness.models import HookRun
from tests.conftest import CLAUDE_CODE, make_store, needs_shared_data
from tests.helpers_harness import check_hook_output, run_hook, runtime_dir  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


def _session(tmp_path: Path) -> dict[str, str]:
    transcript = tmp_path / "tool_heavy.jsonl"
    transcript.write_bytes((CLAUDE_CODE / "tool_heavy.jsonl").read_bytes())
    sid = next(json.loads(line)["sessionId"] for line in transcript.read_text().splitlines()
               if '"sessionId"' in line)
    return {"session_id": sid, "transcript_path": str(transcript),
            "cwd": "/home/marco/projects/spotter", "hook_event_name": "UserPromptSubmit",
            "prompt": "what is spotter"}


def _seeded(store_path: Path) -> Path:
    """A store holding another session of the project, so the recall injects something."""
    from store.ingest import ingest

    store = make_store(store_path)
    try:
        ingest(store, [CLAUDE_CODE / "short.jsonl"], "claude-code")
    finally:
        store.close()
    return store_path


def _hook_process(stdin: dict[str, str], store: Path, **env: str
                  ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", "hook", "UserPromptSubmit",
                           "--store", str(store)], input=json.dumps(stdin).encode(),
                          capture_output=True, timeout=120, cwd=ROOT,
                          env={**os.environ, **env})


def _runs(store_path: Path) -> list[HookRun]:
    from sqlmodel import select

    from store.core.db import orm

    store = make_store(store_path)
    try:
        with store.read() as conn, orm(conn) as s:
            return list(s.exec(select(HookRun)).all())
    finally:
        store.close()


@needs_shared_data
def test_a_held_write_lock_ends_in_a_logged_failure_not_a_held_prompt(
        tmp_path: Path, runtime_dir: Path) -> None:
    store_path = _seeded(tmp_path / "live.db")
    payload = _session(tmp_path)
    holder = sqlite3.connect(store_path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock throughout
    try:
        done = _hook_process(payload, store_path, LCA_HOOK_DEADLINE="4")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (done.returncode, done.stdout) == (0, b""), done.stderr
    logged = logged_failures(store_path)
    assert len(logged) == 1, logged
    assert logged[0]["session_id"] == payload["session_id"]
    assert logged[0]["store"] == str(store_path.resolve())
    assert "busy" in logged[0]["error"] or "deadline" in logged[0]["error"]
    assert _runs(store_path) == []  # nothing could be written
    # the lines stay for the next call, once the lock is free
    again = _hook_process(payload, store_path)
    assert check_hook_output(again.stdout.decode()) is not None, (
        again.stderr, logged_failures(store_path), [(r.status, r.error) for r in _runs(store_path)])
    runs = _runs(store_path)
    assert [(r.status, r.via) for r in runs] == [("ok", "process")]
    assert runs[0].entries_added > 0


def test_the_watchdog_ends_the_process_at_the_deadline_and_logs_why(
        tmp_path: Path) -> None:
    code = textwrap.dedent(f"""
        import time
        from lca_tui.commands.hook import Watchdog
        w = Watchdog("PreCompact", {str(tmp_path / 's.db')!r}, 0.3).start()
        w.doing = "importing"
        time.sleep(60)
        print("not reached")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                          cwd=ROOT, env=os.environ.copy())
    assert (done.returncode, done.stdout) == (0, b"")
    (line,) = logged_failures(tmp_path / "s.db")
    assert line["event"] == "PreCompact" and line["via"] == "deadline"
    assert "deadline of 0.3 s while importing" in line["error"]


def test_deadlines_stay_below_the_installed_timeouts() -> None:
    from store.harness.settings_file import EVENTS

    for event, timeout in EVENTS.items():
        assert hook_command.DEADLINE[event] <= timeout * 0.8


FAKE_DAEMON = """
import fcntl, os, socket, sys, time
sock, lock = sys.argv[1], sys.argv[2]
fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.pwrite(fd, str(os.getpid()).encode(), 0)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sock)
s.listen(16)
print("ready", flush=True)
time.sleep(600)
"""


@pytest.fixture
def hung_daemon(tmp_path: Path, runtime_dir: Path) -> Iterator[tuple[Path, subprocess.Popen]]:
    """A daemon for a store that holds its lock and socket but is stopped (SIGSTOP): the
    kernel still accepts connections, nothing answers."""
    store_path = _seeded(tmp_path / "live.db")
    sock = paths.socket_path(store_path.resolve())
    proc = subprocess.Popen([sys.executable, "-c", FAKE_DAEMON, str(sock),
                             str(client.lock_path(sock))], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    os.kill(proc.pid, signal.SIGSTOP)
    yield store_path, proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)


@needs_shared_data
def test_a_hung_daemon_is_skipped_and_the_hook_works_in_process(
        hung_daemon: tuple[Path, subprocess.Popen], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    store_path, proc = hung_daemon
    monkeypatch.setattr(hook_command, "ACK_TIMEOUT", 0.5)
    out = run_hook("UserPromptSubmit", _session(tmp_path), store_path, monkeypatch, capsys)
    assert check_hook_output(out) is not None  # answered in this process
    assert [(r.status, r.via) for r in _runs(store_path)] == [("ok", "process")]
    (line,) = logged_failures(store_path)
    assert line["via"] == "daemon" and f"pid {proc.pid}" in line["error"]
    assert "ran in-process" in line["error"]
    assert hook_failures(None, store_path).status == "warn"


@needs_shared_data
def test_status_says_a_hung_daemon_is_not_answering_and_stop_ends_it(
        hung_daemon: tuple[Path, subprocess.Popen], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    store_path, proc = hung_daemon
    monkeypatch.setattr("lca_tui.commands.serve.STOP_GRACE", 1.0)
    assert main(["serve", "--status", "--store", str(store_path)]) == 0
    assert f"not answering (pid {proc.pid})" in capsys.readouterr().out
    assert main(["hooks", "status", "--store", str(store_path), "--project",
                 str(store_path.parent), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["daemon_state"], doc["daemon_pid"]) == ("not answering", proc.pid)
    assert main(["serve", "--store", str(store_path)]) == 2  # one clear line, no start
    assert f"not answering (pid {proc.pid})" in capsys.readouterr().err
    assert main(["serve", "--stop", "--store", str(store_path)]) == 0
    assert "stopped" in capsys.readouterr().out
    assert proc.wait(timeout=30) is not None
    assert client.probe(paths.socket_path(store_path.resolve()))["state"] == "not running"


@needs_shared_data
@pytest.mark.parametrize("kind", ["file", "stale"])
def test_an_unusable_runtime_folder_falls_back(tmp_path: Path, kind: str,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    if kind == "file":
        bad = tmp_path / "rt-file"
        bad.write_text("not a folder")
    else:  # a /run/user/UID left from another login: not ours, or not creatable
        locked = tmp_path / "run"
        bad = locked / "user" / "1000"
        if os.getuid() == 0:  # root may create anything: folders another user owns, both
            # the runtime one and the fallback one, so neither can be used whatever its length
            for name in ("lca-tui", f"lca-tui-{os.getuid()}"):
                (bad / name).mkdir(parents=True)
                os.chown(bad / name, 65534, 65534)
        else:
            locked.mkdir(mode=0o500)
    # Only the folders decide here, not the length of the machine's temp path (the limit has
    # its own test below): without this, a long tmp_path made the fallback "unusable" too.
    monkeypatch.setattr(paths, "SOCKET_PATH_MAX", 100_000)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(bad))
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    sock = paths.socket_path(tmp_path / "s.db")
    assert sock.parent == tmp_path / f"lca-tui-{os.getuid()}"
    # neither usable: one clear error for the daemon commands, in-process for the hook
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(bad))
    with pytest.raises(paths.UnsafeDirectory, match="no folder for the daemon's socket"):
        paths.socket_path(tmp_path / "s.db")
    out = run_hook("UserPromptSubmit", _session(tmp_path), _seeded(tmp_path / "s.db"),
                   monkeypatch, capsys)
    assert check_hook_output(out) is not None
    assert [(r.status, r.via) for r in _runs(tmp_path / "s.db")] == [("ok", "process")]
    assert main(["serve", "--status", "--store", str(tmp_path / "s.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no folder for the daemon's socket" in err
    locked_parent = tmp_path / "run"
    if locked_parent.exists():
        locked_parent.chmod(0o700)


def test_a_runtime_folder_too_long_for_a_socket_falls_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    long_dir = tmp_path / ("x" * 100)
    long_dir.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(long_dir))
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    assert paths.socket_path(tmp_path / "s.db").parent == tmp_path / f"lca-tui-{os.getuid()}"
    assert main(["hooks", "status", "--store", str(tmp_path / "s.db"), "--project",
                 str(tmp_path)]) == 0
    assert "daemon: not running" in capsys.readouterr().out


@needs_shared_data
def test_a_closed_stdout_is_not_a_failure_of_the_session(tmp_path: Path,
                                                         runtime_dir: Path) -> None:
    payload = json.dumps(_session(tmp_path)).encode()
    proc = subprocess.Popen([sys.executable, "-m", "lca_tui.cli", "hook", "UserPromptSubmit",
                             "--store", str(_seeded(tmp_path / "s.db"))], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env=os.environ.copy())
    assert proc.stdout is not None
    proc.stdout.close()  # Claude Code went away before reading the answer
    _, err = proc.communicate(payload, timeout=120)
    assert proc.returncode == 0, err
    assert b"Traceback" not in err
    (line,) = logged_failures(tmp_path / "s.db")
    assert "could not print the hook's output" in line["error"]


def test_the_probe_tells_loading_from_hung(tmp_path: Path, runtime_dir: Path) -> None:
    sock = paths.socket_path(tmp_path / "s.db")
    assert client.probe(sock)["state"] == "not running"
    import fcntl

    fd = os.open(client.lock_path(sock), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    try:
        assert client.probe(sock) == {"state": "starting", "pid": os.getpid(),
                                      "status": None, "error": None}
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(sock))
        listener.listen(4)
        try:
            found = client.probe(sock, timeout=0.3)
            assert (found["state"], found["pid"]) == ("not answering", os.getpid())
            assert client.describe(found) == f"not answering (pid {os.getpid()})"
        finally:
            listener.close()
    finally:
        os.close(fd)


@needs_shared_data
def test_the_overview_says_a_hung_daemon_is_not_answering(
        hung_daemon: tuple[Path, subprocess.Popen], monkeypatch: pytest.MonkeyPatch) -> None:
    from screens import overview

    store_path, proc = hung_daemon
    monkeypatch.setattr(overview, "PROBE_S", 0.3)
    found = overview.daemon_status(store_path)
    assert found is not None and found["state"] == "not answering"
    assert overview.describe_daemon(found) == f"no answer (pid {proc.pid})"
    assert overview.describe_daemon(None) == "not running"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert overview.describe_daemon(overview.daemon_status(store_path)) == "not running"
