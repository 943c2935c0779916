"""``lca-tui serve``: the warm daemon answers hooks and recalls over an owner-only Unix
socket, embeds waiting entries in the background, and stops cleanly."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lca_tui.cli import main
from store.harness import client
from store.harness.daemon import AlreadyRunning, Daemon, running_pid
from tests.conftest import CLAUDE_CODE, make_store, needs_shared_data
from tests.helpers_harness import (  # noqa: F401
    hook_payload,
    check_hook_output,
    run_hook,
    runtime_dir,
    serving,
)

ROOT = Path(__file__).resolve().parents[2]


def _wait(predicate, timeout: float = 60.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def daemon(tmp_path: Path, runtime_dir: Path) -> Iterator[Daemon]:
    with serving(tmp_path / "store.db") as d:
        yield d


def _session(tmp_path: Path, name: str = "tool_heavy.jsonl") -> dict[str, str]:
    return hook_payload(tmp_path, name)


def test_the_socket_is_owner_only(daemon: Daemon, runtime_dir: Path) -> None:
    assert stat.S_IMODE(daemon.sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(daemon.sock.parent.stat().st_mode) == 0o700
    assert daemon.sock.parent.parent == runtime_dir
    assert running_pid(daemon.sock) == os.getpid()


def test_a_second_daemon_for_the_same_store_is_refused(daemon: Daemon) -> None:
    with pytest.raises(AlreadyRunning, match=str(os.getpid())):
        Daemon(daemon.store_path).open()
    assert client.running(daemon.sock) is not None  # the first one still answers


@needs_shared_data
def test_hooks_go_through_the_daemon_which_embeds_in_the_background(
        daemon: Daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    base = _session(tmp_path)
    out = run_hook("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit",
                                        "prompt": "which files did we edit"},
                   daemon.store_path, monkeypatch, capsys)
    check_hook_output(out)
    assert daemon.store is not None
    # the background round's count is added after its commit empties the queue: wait for
    # both (under load the status can come between the two)
    assert _wait(lambda: bool((st := client.running(daemon.sock))
                              and st["counts"]["embedded_entries"] > 0 and st["waiting"] == 0))
    status = client.running(daemon.sock)
    assert status and status["counts"]["hooks"] == 1
    assert status["counts"]["embedded_entries"] > 0 and status["waiting"] == 0
    assert run_hook("UserPromptSubmit", "not json", daemon.store_path, monkeypatch,
                    capsys) == ""
    assert run_hook("SessionEnd", {**base, "hook_event_name": "SessionEnd",
                                   "reason": "exit"}, daemon.store_path, monkeypatch,
                    capsys) == ""
    with daemon.store.read() as conn:
        runs = conn.exec_driver_sql("SELECT event, status, via FROM hook_run ORDER BY id"
                                    ).all()
        checkpoint = conn.exec_driver_sql(
            "SELECT trigger, status, index_verified FROM checkpoint WHERE trigger LIKE "
            "'SessionEnd%'").one()
    assert [tuple(r) for r in runs] == [("UserPromptSubmit", "ok", "daemon"),
                                        ("UserPromptSubmit", "failed", "daemon"),
                                        ("SessionEnd", "ok", "daemon")]
    assert tuple(checkpoint) == ("SessionEnd:exit", "ok", 1)


@needs_shared_data
def test_recall_uses_the_daemon_and_agrees_with_in_process(
        daemon: Daemon, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert daemon.store is not None
    daemon.store.ingest([CLAUDE_CODE / "short.jsonl"])
    capsys.readouterr()
    assert main(["recall", "what did we change", "--store", str(daemon.store_path),
                 "--json"]) == 0
    warm = json.loads(capsys.readouterr().out)
    assert daemon.counts["recalls"] == 1
    assert main(["recall", "what did we change", "--store", str(daemon.store_path),
                 "--set", "embed.batch_size=8", "--json"]) == 0  # not per request: here
    cold = json.loads(capsys.readouterr().out)
    assert daemon.counts["recalls"] == 1
    assert [(c["source_id"], c["decision"]) for c in warm["candidates"]] == \
        [(c["source_id"], c["decision"]) for c in cold["candidates"]]
    assert main(["recall", "what did we change", "--store", str(daemon.store_path)]) == 0
    assert f"trace {warm['trace_id'] + 2}" in capsys.readouterr().out


@needs_shared_data
def test_serve_start_status_stop_as_processes(tmp_path: Path, runtime_dir: Path) -> None:
    store = tmp_path / "store.db"
    env = dict(os.environ)

    def cli(*words: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "lca_tui.cli", "--store", str(store),
                               *words], input=stdin, capture_output=True, timeout=180,
                              cwd=ROOT, env=env)

    started = cli("serve", "--json")
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    assert info["running"] and info["pid"] != os.getpid()
    try:
        status = json.loads(cli("serve", "--status", "--json").stdout)
        assert status["running"] and status["pid"] == info["pid"]
        base = _session(tmp_path, "short.jsonl")
        done = cli("hook", "Stop", stdin=json.dumps({**base, "hook_event_name": "Stop"})
                   .encode())
        assert (done.returncode, done.stdout) == (0, b"")
        again = cli("serve", "--json")
        assert json.loads(again.stdout)["pid"] == info["pid"]  # already running: reused
    finally:
        stopped = cli("serve", "--stop", "--json")
    assert json.loads(stopped.stdout) == {"running": False, "stopped": True,
                                          "pid": info["pid"], "how": "asked",
                                          "store": str(store.resolve())}
    assert json.loads(cli("serve", "--status", "--json").stdout)["running"] is False
    s = make_store(store)
    with s.read() as conn:
        assert conn.exec_driver_sql("SELECT via FROM hook_run").scalar() == "daemon"
    s.close()


def test_a_second_foreground_daemon_says_so_in_one_line(
        daemon: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--foreground", "--store", str(daemon.store_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"already serves {daemon.store_path}" in err
    assert "Traceback" not in err


def test_serve_while_another_loads_waits_for_it(tmp_path: Path, runtime_dir: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import fcntl

    from store.harness import paths

    store = (tmp_path / "store.db").resolve()
    sock = paths.socket_path(store)
    fd = os.open(client.lock_path(sock), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a daemon that took the store and is loading the model
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    monkeypatch.setattr("lca_tui.commands.serve.START_TIMEOUT", 0.5)
    try:
        assert main(["serve", "--store", str(store)]) == 2
    finally:
        os.close(fd)
    err = capsys.readouterr().err
    assert f"already starting (pid {os.getpid()})" in err
    assert "did not answer within" in err and "AlreadyRunning" not in err


def test_two_serves_at_once_share_one_daemon(tmp_path: Path, runtime_dir: Path) -> None:
    store = tmp_path / "store.db"
    command = [sys.executable, "-m", "lca_tui.cli", "--store", str(store), "serve", "--json"]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd=ROOT, env=dict(os.environ)) for _ in range(2)]
    try:
        results = [p.communicate(timeout=180) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], [r[1] for r in results]
        pids = {json.loads(out)["pid"] for out, _ in results}
        assert len(pids) == 1
    finally:
        subprocess.run([*command[:-2], "serve", "--stop"], timeout=60, cwd=ROOT,
                       capture_output=True)


@needs_shared_data
@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_daemon_whose_store_vanishes_stops_and_creates_nothing(
        tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], how: str) -> None:
    d = Daemon(tmp_path / "store.db")
    d.open()
    thread = threading.Thread(target=d.serve_forever, daemon=True)
    thread.start()
    try:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{d.store_path}{suffix}").unlink(missing_ok=True)
        if how == "replaced":
            d.store_path.write_bytes(b"somebody else's file")
        # a hook meanwhile works in this process: on a store at that path, never the old one
        base = _session(tmp_path, "short.jsonl")
        if how == "deleted":
            out = run_hook("Stop", {**base, "hook_event_name": "Stop"}, d.store_path,
                           monkeypatch, capsys)
            assert out == ""
            from store.harness.failures import logged_failures
            assert logged_failures(d.store_path) == []
        thread.join(timeout=30)
        assert not thread.is_alive()  # the daemon noticed and stopped
        assert d.last_error and ("was deleted" in d.last_error or "replaced" in d.last_error)
    finally:
        d.stop()
        thread.join(timeout=30)
    assert client.probe(d.sock)["state"] == "not running"
    if how == "replaced":
        assert d.store_path.read_bytes() == b"somebody else's file"
    else:  # the hook's own in-process run made a real, migrated store
        s = make_store(d.store_path)
        with s.read() as conn:
            assert conn.exec_driver_sql("SELECT via FROM hook_run").scalars().all() == [
                "process"]
        s.close()


def test_kept_connections_are_reused_and_a_read_after_a_write_takes_no_write_lock(
        tmp_path: Path) -> None:
    """``store.keep_connections`` (the daemon keeps 4): a connection back from a write
    transaction is handed out again, and a read on it begins deferred — it neither waits for
    nor takes the write lock another process holds."""
    import sqlean

    s = make_store(tmp_path / "kept.db", **{"store.keep_connections": 1})
    try:
        with s.write() as conn:
            first = conn.connection.dbapi_connection
            conn.exec_driver_sql("CREATE TABLE kept_probe (x INTEGER)")
        other = sqlean.connect(str(tmp_path / "kept.db"), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            started = time.monotonic()
            with s.read() as conn:
                assert conn.connection.dbapi_connection is first  # kept, not reopened
                assert conn.exec_driver_sql("SELECT COUNT(*) FROM kept_probe").scalar() == 0
            assert time.monotonic() - started < 1.0
        finally:
            other.execute("ROLLBACK")
            other.close()
        with s.write() as conn:  # and it still writes
            conn.exec_driver_sql("INSERT INTO kept_probe VALUES (1)")
        with s.read() as conn:
            assert conn.exec_driver_sql("SELECT COUNT(*) FROM kept_probe").scalar() == 1
    finally:
        s.close()


def test_the_overview_says_the_daemon_runs(daemon: Daemon) -> None:
    from screens import overview

    found = overview.daemon_status(daemon.store_path)
    assert overview.describe_daemon(found) == f"running (pid {os.getpid()})"


@needs_shared_data
def test_the_daemon_stores_what_a_session_wrote_after_its_hook_before_the_next_prompt(
        daemon: Daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Claude Code writes lines after the Stop hook (its summary, the turn's duration, file
    snapshots, and here an answer): the daemon reads the transcript again once quiet, so the
    next prompt's hook has nothing left to import; a session that ended is not followed."""
    from store.harness import daemon as daemon_module

    monkeypatch.setattr(daemon_module, "CATCH_UP_S", 0.05)
    lines = (CLAUDE_CODE / "short.jsonl").read_text().splitlines(keepends=True)
    transcript = tmp_path / "grow.jsonl"
    transcript.write_text("".join(lines[:6]))
    sid = next(json.loads(x)["sessionId"] for x in lines if '"sessionId"' in x)
    base = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    assert run_hook("Stop", {**base, "hook_event_name": "Stop"}, daemon.store_path,
                    monkeypatch, capsys) == ""
    with transcript.open("a") as fh:
        fh.write("".join(lines[6:]))
    assert _wait(lambda: daemon.counts["caught_up_entries"] > 0, 30)
    run_hook("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit",
                                  "prompt": "what did we change"}, daemon.store_path,
             monkeypatch, capsys)
    assert daemon.store is not None
    with daemon.store.read() as conn:
        runs = conn.exec_driver_sql("SELECT event, entries_added FROM hook_run ORDER BY id"
                                    ).all()
        stored = conn.exec_driver_sql("SELECT COUNT(*) FROM entry").scalar()
    assert [tuple(r) for r in runs][1] == ("UserPromptSubmit", 0)
    one_shot = make_store(tmp_path / "one-shot.db")
    try:
        assert stored == one_shot.ingest([transcript]).entries_added  # nothing lost or twice
    finally:
        one_shot.close()
    run_hook("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "exit"},
             daemon.store_path, monkeypatch, capsys)
    assert sid not in daemon.followed


@needs_shared_data
def test_a_prompt_never_waits_for_another_sessions_checkpoint(
        tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Session B's SessionEnd runs a slow consolidation (an external proposer taking 4 s);
    session A's prompt meanwhile is answered through the daemon at once."""
    with serving(tmp_path / "store.db", **{"governance.proposer_command": "sleep 4"}) as d:
        a = _session(tmp_path, "tool_heavy.jsonl")
        b = _session(tmp_path, "short.jsonl")
        ended: list[dict[str, object]] = []
        slow = threading.Thread(target=lambda: ended.append(client.request(
            d.sock, {"op": "hook", "event": "SessionEnd", "store": str(d.store_path),
                     "stdin": json.dumps({**b, "hook_event_name": "SessionEnd",
                                          "reason": "exit"})}, timeout=60)))
        slow.start()
        assert _wait(lambda: d._active > 0, 10)  # B's checkpoint is under way
        time.sleep(0.3)
        started = time.monotonic()
        run_hook("UserPromptSubmit", {**a, "hook_event_name": "UserPromptSubmit",
                                      "prompt": "which files did we edit"}, d.store_path,
                 monkeypatch, capsys)
        took = time.monotonic() - started
        slow.join(timeout=60)
        assert ended and ended[0]["ok"]
        assert took < 3.0, f"the prompt waited {took:.1f} s for the other session"
        assert d.store is not None
        with d.store.read() as conn:
            runs = conn.exec_driver_sql("SELECT event, status, via FROM hook_run ORDER BY id"
                                        ).all()
            slow_ms = conn.exec_driver_sql("SELECT duration_ms FROM hook_run WHERE event = "
                                           "'SessionEnd'").scalar()
        assert [tuple(r) for r in runs] == [("UserPromptSubmit", "ok", "daemon"),
                                            ("SessionEnd", "ok", "daemon")]
        assert slow_ms >= 3500  # the proposer did hold B's checkpoint


@needs_shared_data
def test_catch_up_logs_lines_it_cannot_store_and_drops_a_refused_transcript(
        daemon: Daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from store.harness import daemon as daemon_module
    from store.harness.failures import hook_failures, logged_failures

    monkeypatch.setattr(daemon_module, "CATCH_UP_S", 0.05)
    base = _session(tmp_path, "short.jsonl")
    run_hook("Stop", {**base, "hook_event_name": "Stop"}, daemon.store_path, monkeypatch,
             capsys)
    with Path(base["transcript_path"]).open("a") as fh:
        fh.write('{"type": "user", "sessionId": broken\n')
    assert _wait(lambda: bool(logged_failures(daemon.store_path)), 30)
    (line,) = logged_failures(daemon.store_path)
    assert line["event"] == "catch-up" and "invalid JSON" in line["error"]
    assert line["session_id"] == base["session_id"]
    assert daemon.store is not None and hook_failures(daemon.store).status == "warn"
    # a transcript that was not written yet, later a folder holding another session: the
    # hook refuses it, and the catch-up never reads it
    other = {"session_id": "e" * 8, "transcript_path": str(tmp_path / "e.jsonl"),
             "cwd": str(tmp_path)}
    run_hook("Stop", {**other, "hook_event_name": "Stop"}, daemon.store_path, monkeypatch,
             capsys)
    assert "e" * 8 in daemon.followed
    folder = tmp_path / "e.jsonl" / "inside"
    folder.mkdir(parents=True)
    (folder / "f.jsonl").write_bytes((CLAUDE_CODE / "tool_heavy.jsonl").read_bytes())
    run_hook("Stop", {**other, "hook_event_name": "Stop"}, daemon.store_path, monkeypatch,
             capsys)
    assert "e" * 8 not in daemon.followed
    with daemon.store.read() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM entry WHERE source_path LIKE ?",
                                    (f"{tmp_path / 'e.jsonl'}%",)).scalar() == 0


def test_a_hook_whose_path_cannot_be_checked_is_still_answered(
        daemon: Daemon, tmp_path: Path) -> None:
    payload = {"session_id": "long-name", "hook_event_name": "Stop",
               "transcript_path": str(tmp_path / ("x" * 300 + ".jsonl")), "cwd": str(tmp_path)}
    reply = client.request(daemon.sock, {"op": "hook", "event": "Stop",
                                         "store": str(daemon.store_path),
                                         "stdin": json.dumps(payload)})
    assert reply["ok"] and reply["stdout"] == ""
    assert daemon.counts["errors"] == 0
