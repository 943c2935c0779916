"""``lca_tui/hook_client.py``, the command ``hooks install`` writes: through a daemon it
answers with the standard library's own modules alone, and in every other case it hands over
to ``lca-tui hook`` in the same process (no daemon, a hung one, ``--set``, garbage, a store it
cannot open, a deadline) with the same outcome — exit 0, valid output or none, a record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lca_tui import hook_client, hook_fast
from lca_tui.cli import main
from lca_tui.commands import hook as hook_command
from lca_tui.commands.hooks import runner
from store.harness import settings_file as sf
from store.harness.daemon import Daemon
from store.harness.failures import hook_failures, logged_failures
from tests.helpers_harness import check_hook_output, runtime_dir, serving  # noqa: F401
from tests.cli.test_hook_deadlines import _runs, _seeded, _session, hung_daemon  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
CLIENT = [sys.executable, "-S", str(Path(hook_client.__file__).resolve())]
# What the fast path may load besides what `python -S` loads at start: the client itself
# (`hook_fast`, from the folder of the script `hook_client.py`), `os` and the standard
# library's own C modules. Not `site` (site-packages, the editable finder), nor `socket`,
# `json`, `pathlib`, `re`, `threading`, nor anything else of lca-tui's.
FAST_IMPORTS = {"hook_fast", "os", "stat", "_stat", "posixpath", "genericpath",
                "_collections_abc", "_sha256", "_json", "_socket", "_signal"}


def _client(store: Path, stdin: bytes, *words: str, event: str = "UserPromptSubmit",
            env: dict[str, str] | None = None, timeout: float = 120
            ) -> subprocess.CompletedProcess[bytes]:
    options = [w for w in words if w.startswith("-X") or w == "importtime"]
    rest = [w for w in words if w not in options]
    return subprocess.run([*CLIENT[:2], *options, CLIENT[2], "hook", event, "--store",
                           str(store), *rest],
                          input=stdin, capture_output=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def seeded_daemon(tmp_path: Path, runtime_dir: Path) -> Iterator[Daemon]:
    with serving(_seeded(tmp_path / "live.db")) as d:
        yield d


def _runs_after(store: Path, n: int) -> list:  # type: ignore[type-arg]
    """The store's hook runs once there are ``n``: the daemon writes a run's row after it
    sent the answer, so it may land a moment after the client exits."""
    deadline = time.monotonic() + 30
    runs = _runs(store)
    while len(runs) < n and time.monotonic() < deadline:
        time.sleep(0.05)
        runs = _runs(store)
    return runs


def _imported(stderr: bytes) -> set[str]:
    """Module names from ``-X importtime`` lines."""
    names = set()
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    return names


def test_hooks_install_writes_the_fast_client_and_knows_it_as_ours(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    assert main(["hooks", "install", "--project", str(project), "--store",
                 str(tmp_path / "s.db")]) == 0
    data = json.loads((project / ".claude" / "settings.json").read_text())
    command = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command.split()[:3] == [sys.executable, "-S",
                                   str(Path(hook_client.__file__).resolve())]
    assert runner() == CLIENT
    assert sf.is_ours(command) and sf.is_ours("python3 -S /x/lca_tui/hook_client.py hook Stop")
    assert not sf.is_ours("python3 -S /x/other/hook_client.py hook Stop")
    status = sf.status(project / ".claude" / "settings.json")
    assert status["installed"]
    assert main(["hooks", "uninstall", "--project", str(project)]) == 0
    assert not (project / ".claude" / "settings.json").exists()


def test_an_install_from_before_is_updated_to_the_fast_client(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    sf.apply(sf.plan_install(path, tmp_path / "s.db", ["/old/bin/lca-tui"]))
    plan = sf.plan_install(path, tmp_path / "s.db", CLIENT)
    assert len(plan.changes) == len(sf.EVENTS)
    assert all("updated '/old/bin/lca-tui hook" in c for c in plan.changes)
    sf.apply(plan)
    hooks = json.loads(path.read_text())["hooks"]
    assert all(len(groups) == 1 and "hook_client.py" in groups[0]["hooks"][0]["command"]
               for groups in hooks.values())


def test_through_the_daemon_it_answers_with_the_standard_librarys_own_modules(
        seeded_daemon: Daemon, tmp_path: Path) -> None:
    payload = json.dumps(_session(tmp_path)).encode()
    done = _client(seeded_daemon.store_path, payload, "-X", "importtime")
    assert done.returncode == 0, done.stderr[-2000:]
    doc = check_hook_output(done.stdout.decode())
    assert doc is not None  # the recall injected something, and the output is exact
    assert seeded_daemon.counts["hooks"] == 1
    assert [(r.status, r.via) for r in _runs_after(seeded_daemon.store_path, 1)] == [
        ("ok", "daemon")]
    # what `python -S -c pass` loads at start, and what the fast path added to it
    start = _imported(subprocess.run([sys.executable, "-S", "-X", "importtime", "-c", "pass"],
                                     capture_output=True, check=True).stderr)
    extra = _imported(done.stderr) - start
    assert extra <= FAST_IMPORTS, sorted(extra - FAST_IMPORTS)
    assert "_socket" in extra  # it did talk to the daemon itself


def test_the_fast_and_the_full_command_give_the_same_answer(seeded_daemon: Daemon,
                                                             tmp_path: Path) -> None:
    payload = _session(tmp_path)
    fast = _client(seeded_daemon.store_path, json.dumps(payload).encode())
    full = subprocess.run([sys.executable, "-m", "lca_tui.cli", "hook", "UserPromptSubmit",
                           "--store", str(seeded_daemon.store_path)],
                          input=json.dumps(payload).encode(), capture_output=True,
                          timeout=120, cwd=ROOT)
    assert fast.returncode == full.returncode == 0
    a, b = (check_hook_output(p.stdout.decode()) for p in (fast, full))
    assert a is not None and b is not None
    # the same items; only the trace number differs (each run records its own)
    strip = lambda d: d["hookSpecificOutput"]["additionalContext"].split("\n", 1)[1]  # noqa
    assert strip(a) == strip(b)
    assert seeded_daemon.counts["hooks"] == 2


def test_with_pythonsafepath_the_client_still_finds_itself(seeded_daemon: Daemon,
                                                          tmp_path: Path) -> None:
    """``PYTHONSAFEPATH`` leaves the script's folder off ``sys.path``: ``hook_client.py``
    puts it back to import the client, and the daemon answers as without it."""
    done = _client(seeded_daemon.store_path, json.dumps(_session(tmp_path)).encode(),
                   env={"PYTHONSAFEPATH": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert check_hook_output(done.stdout.decode()) is not None
    assert [(r.status, r.via) for r in _runs_after(seeded_daemon.store_path, 1)] == [
        ("ok", "daemon")]


def test_garbage_through_the_daemon_exits_zero_prints_nothing_and_is_recorded(
        seeded_daemon: Daemon) -> None:
    done = _client(seeded_daemon.store_path, b"\xff not json {")
    assert (done.returncode, done.stdout) == (0, b"")
    assert [(r.status, r.via) for r in _runs_after(seeded_daemon.store_path, 1)] == [
        ("failed", "daemon")]
    assert seeded_daemon.store is not None
    assert hook_failures(seeded_daemon.store).status == "warn"


def test_without_a_daemon_it_hands_over_and_works_in_process(tmp_path: Path,
                                                              runtime_dir: Path) -> None:
    store = _seeded(tmp_path / "live.db")
    done = _client(store, json.dumps(_session(tmp_path)).encode())
    assert done.returncode == 0, done.stderr[-2000:]
    assert check_hook_output(done.stdout.decode()) is not None
    assert [(r.status, r.via) for r in _runs(store)] == [("ok", "process")]
    again = _client(store, json.dumps(_session(tmp_path)).encode(), "--set",
                    "recall.pool=20")  # --set: always the full command
    assert again.returncode == 0 and check_hook_output(again.stdout.decode()) is not None
    assert len(_runs(store)) == 2


def test_garbage_or_a_store_it_cannot_open_exits_zero_and_is_logged(
        tmp_path: Path, runtime_dir: Path) -> None:
    store = _seeded(tmp_path / "live.db")
    done = _client(store, b"garbage")
    assert (done.returncode, done.stdout) == (0, b"")
    assert [r.status for r in _runs(store)] == ["failed"]
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"this is not a database" * 100)
    done = _client(broken, json.dumps(_session(tmp_path)).encode())
    assert (done.returncode, done.stdout) == (0, b"")
    (line,) = logged_failures(broken)
    assert "could not be opened" in line["error"]
    assert hook_failures(None, broken).status == "warn"


def test_a_hung_daemon_is_asked_once_then_the_hook_works_in_process(
        hung_daemon: tuple[Path, subprocess.Popen], tmp_path: Path) -> None:
    store_path, proc = hung_daemon
    started = time.monotonic()
    done = _client(store_path, json.dumps(_session(tmp_path)).encode())
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-2000:]
    assert check_hook_output(done.stdout.decode()) is not None  # answered in-process
    assert [(r.status, r.via) for r in _runs(store_path)] == [("ok", "process")]
    (line,) = logged_failures(store_path)  # one wait for the acknowledgement, not two
    assert line["via"] == "daemon" and f"pid {proc.pid}" in line["error"]
    assert "ran in-process" in line["error"]
    assert took < 2 * hook_fast.ACK_TIMEOUT + 60


def test_stdin_never_closed_ends_at_the_deadline_with_a_record(tmp_path: Path,
                                                                runtime_dir: Path) -> None:
    store = _seeded(tmp_path / "live.db")
    proc = subprocess.Popen([*CLIENT, "hook", "UserPromptSubmit", "--store", str(store)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "LCA_HOOK_DEADLINE": "1.5"})
    try:
        code = proc.wait(timeout=60)  # stdin stays open: no input, and no end of it
    finally:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.close()
        out = proc.stdout.read()
        proc.stdout.close()
        proc.stderr.close()
    assert (code, out) == (0, b"")
    (line,) = logged_failures(store)
    assert line["via"] == "deadline" and "while reading stdin" in line["error"]


def test_a_not_ok_reply_or_an_error_handed_over_is_not_asked_again(
        tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``fast_main`` with ``prior`` (what the daemon did) never asks a daemon itself."""
    import io

    import store as store_package
    from store.harness import client

    store = _seeded(tmp_path / "live.db")
    asked: list[object] = []
    # where ``hook.py`` looks it up (``from store import daemon_request`` at call time)
    monkeypatch.setattr(store_package, "daemon_request", lambda *a, **k: asked.append(a) or {})
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    raw = json.dumps(_session(tmp_path)).encode()
    argv = ["hook", "UserPromptSubmit", "--store", str(store)]
    capsys.readouterr()
    # "wrong store": the daemon serves another store, so this process does the work
    assert hook_command.fast_main(argv, raw, prior={"ok": False, "error": "wrong store"}) == 0
    assert check_hook_output(capsys.readouterr().out) is not None
    # the daemon took the run and failed it (it recorded why): nothing more here
    assert hook_command.fast_main(argv, raw, prior={"ok": False, "error": "boom"}) == 0
    assert capsys.readouterr().out == ""
    # it answered
    assert hook_command.fast_main(argv, raw, prior={"ok": True, "stdout": "X"}) == 0
    assert capsys.readouterr().out == "X\n"
    # it failed after acknowledging: logged, nothing printed, not run again in-process
    assert hook_command.fast_main(argv, raw, prior=client.DaemonError("gone")) == 0
    assert capsys.readouterr().out == ""
    assert asked == []
    assert [r.via for r in _runs(store)] == ["process"]
    assert any("failed to answer: gone" in f["error"] for f in logged_failures(store))


def test_the_installed_command_never_blocks_a_prompt_even_when_its_file_is_gone(
        tmp_path: Path, runtime_dir: Path) -> None:
    """Run as Claude Code runs it, through a shell: exit 0 with the hook's output; and with
    the client file gone (an uninstalled or moved lca-tui), 1 — a hook error Claude Code
    shows and goes on from — never Python's 2 for a missing script, which blocks the prompt."""
    store = _seeded(tmp_path / "live.db")
    payload = json.dumps(_session(tmp_path)).encode()
    command = sf.hook_command("UserPromptSubmit", store, CLIENT)
    done = subprocess.run(["sh", "-c", command], input=payload, capture_output=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0 and check_hook_output(done.stdout.decode()) is not None
    gone = sf.hook_command("UserPromptSubmit", store,
                           [sys.executable, "-S", str(tmp_path / "lca_tui" / "hook_client.py")])
    done = subprocess.run(["sh", "-c", gone], input=payload, capture_output=True, timeout=60)
    assert done.returncode == 1 and done.stdout == b""
    (tmp_path / "lca_tui").mkdir()  # the script there, the client it imports gone: 1 too
    (tmp_path / "lca_tui" / "hook_client.py").write_bytes(
        Path(hook_client.__file__).read_bytes())
    done = subprocess.run(["sh", "-c", gone], input=payload, capture_output=True, timeout=60)
    assert done.returncode == 1 and done.stdout == b"" and b"hook_fast" in done.stderr
    missing = sf.hook_command("UserPromptSubmit", store, [str(tmp_path / "no-python")])
    assert subprocess.run(["sh", "-c", missing], input=payload, capture_output=True,
                          timeout=60).returncode == 1


def test_a_deadline_on_the_fast_path_records_the_store_and_the_session(
        hung_daemon: tuple[Path, subprocess.Popen], tmp_path: Path) -> None:
    store_path, _proc = hung_daemon
    payload = _session(tmp_path)
    done = subprocess.run([*CLIENT, "hook", "UserPromptSubmit"],  # the store from $LCA_STORE
                          input=json.dumps(payload).encode(), capture_output=True,
                          timeout=60, cwd=ROOT,
                          env={**os.environ, "LCA_STORE": str(store_path),
                               "LCA_HOOK_DEADLINE": "1"})
    assert (done.returncode, done.stdout) == (0, b"")
    (line,) = logged_failures(store_path)
    assert line["via"] == "deadline" and "waiting for the daemon" in line["error"]
    assert line["store"] == str(store_path.resolve())
    assert line["session_id"] == payload["session_id"]


def test_a_prior_answer_is_kept_even_when_no_socket_folder_can_be_named(
        tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The daemon took the run (and failed it, or failed to answer): ``fast_main`` never
    runs it again in-process, whatever ``paths.socket_path`` says now."""
    import store as store_package
    from store.harness import client, paths

    def unusable(_store: Path) -> Path:
        raise paths.UnsafeDirectory("no folder")

    store = _seeded(tmp_path / "live.db")
    # where ``hook.py`` looks it up (``from store import socket_path`` at call time)
    monkeypatch.setattr(store_package, "socket_path", unusable)
    raw = json.dumps(_session(tmp_path)).encode()
    argv = ["hook", "UserPromptSubmit", "--store", str(store)]
    capsys.readouterr()
    assert hook_command.fast_main(argv, raw, prior={"ok": False, "error": "boom"}) == 0
    assert hook_command.fast_main(argv, raw, prior=client.DaemonError("x")) == 0
    assert capsys.readouterr().out == ""
    assert _runs(store) == []


def test_the_client_reads_the_answer_to_its_length_and_an_older_daemons_to_the_end() -> None:
    """``ok LENGTH`` counts bytes: a multi-byte answer comes whole, and the client returns
    without waiting for the daemon to close (it writes the run's row after); a daemon of an
    earlier lca-tui answers ``ok``, the output, then closes."""
    import socket as socket_module

    body = ("Grüße — café ✓ " * 3000).encode("utf-8")
    ours, theirs = socket_module.socketpair()
    try:
        theirs.sendall(b"ok %d\n" % len(body) + body[:1000])
        threading.Timer(0.2, lambda: theirs.sendall(body[1000:])).start()
        got = hook_fast._reply(ours, b"", time.monotonic() + 10, time)
        assert got == b"ok %d\n" % len(body) + body  # and the connection is still open
    finally:
        ours.close()
        theirs.close()
    ours, theirs = socket_module.socketpair()
    try:
        theirs.sendall(b"ok\n" + body)
        theirs.shutdown(socket_module.SHUT_WR)
        got = hook_fast._reply(ours, b"", time.monotonic() + 10, time)
        assert got.partition(b"\n")[2] == body
    finally:
        ours.close()
        theirs.close()


def test_a_non_ascii_answer_through_the_daemon_is_whole(seeded_daemon: Daemon,
                                                         tmp_path: Path) -> None:
    from store.ingest import ingest

    assert seeded_daemon.store is not None
    talk = tmp_path / "umlaut.jsonl"
    talk.write_text("".join(json.dumps({
        "type": "user", "sessionId": "umlaut-session", "uuid": f"u{i}", "cwd": str(tmp_path),
        "timestamp": f"2026-01-0{i + 1}T10:00:00.000Z",
        "message": {"role": "user", "content": "Grüße aus der Straße: das Café öffnet um "
                                               f"acht, café crème für {i} ✓ — naïve résumé"}})
        + "\n" for i in range(3)), encoding="utf-8")
    ingest(seeded_daemon.store, [talk], "claude-code")
    payload = {**_session(tmp_path), "prompt": "Grüße Straße Café öffnet crème"}
    fast = _client(seeded_daemon.store_path, json.dumps(payload).encode())
    doc = check_hook_output(fast.stdout.decode("utf-8"))
    assert doc is not None and "Grüße aus der Straße" in \
        doc["hookSpecificOutput"]["additionalContext"]


def test_an_answered_hooks_row_is_written_even_when_the_daemon_stops_at_once(
        tmp_path: Path, runtime_dir: Path) -> None:
    """The daemon writes a hook's row after the answer left: when it is told to stop right
    then (here while another process holds the write lock), it still writes the row before
    it closes the store."""
    import sqlean

    payload = json.dumps({**_session(tmp_path), "hook_event_name": "Stop"}).encode()
    with serving(_seeded(tmp_path / "live.db")) as d:  # stops the daemon as the block ends
        assert _client(d.store_path, payload, event="Stop").returncode == 0  # imports
        assert len(_runs_after(d.store_path, 1)) == 1
        other = sqlean.connect(str(d.store_path), isolation_level=None,
                               check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
        threading.Timer(1.5, lambda: other.execute("ROLLBACK")).start()
        done = _client(d.store_path, payload, event="Stop")  # nothing new: only its row
        assert (done.returncode, done.stdout) == (0, b"")
    assert [r.event for r in _runs(d.store_path)] == ["Stop", "Stop"]


def test_a_prompt_does_not_wait_for_another_sessions_import(seeded_daemon: Daemon,
                                                             tmp_path: Path) -> None:
    """One import lock a session: a long catch-up of session B (its lock held here) leaves
    session A's prompt alone."""
    with seeded_daemon.import_lock("another-session"):
        started = time.monotonic()
        done = _client(seeded_daemon.store_path, json.dumps(_session(tmp_path)).encode())
        took = time.monotonic() - started
    assert done.returncode == 0 and check_hook_output(done.stdout.decode()) is not None
    assert took < 10  # B's lock never released during it: A did not wait for it
    assert [(r.status, r.via) for r in _runs_after(seeded_daemon.store_path, 1)] == [
        ("ok", "daemon")]


def test_a_cold_hooks_trace_does_not_count_the_models_load(
        tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import store.core.base as base
    from store.core.embed import HashEmbedder
    from store.harness.hook import handle_with

    def slow(*_a: object, **_k: object) -> HashEmbedder:
        time.sleep(1.0)  # the ONNX model's load on a cold run
        return HashEmbedder("forced by the embed.backend setting")

    store = _seeded(tmp_path / "live.db")
    monkeypatch.setattr(base, "load_embedder", slow)  # no loader can be injected: only a loaded
    from store import Settings, open_store            # embedder (StoreBase(embedder=...))

    s = open_store(store, Settings.load())  # no embedder given: the store loads its own (slow)
    assert not s.embedder_loaded
    try:
        out = handle_with(s, "UserPromptSubmit", json.dumps(_session(tmp_path)), "process")
        assert check_hook_output(out) is not None
        with s.read() as conn:
            latency = conn.exec_driver_sql(
                "SELECT latency_ms FROM recall_trace ORDER BY id DESC LIMIT 1").scalar()
    finally:
        s.close()
    assert s.embedder_loaded  # the slow load happened, during the hook
    assert 0 <= latency < 500


def test_the_clients_copies_of_the_hooks_constants_agree_with_theirs() -> None:
    """The client runs without ``site`` and cannot import the modules it copies these from:
    the copies must not drift."""
    from store.harness import client, paths

    assert hook_fast.DEADLINE == hook_command.DEADLINE
    assert hook_fast.MAX_STDIN == hook_command.MAX_STDIN
    assert hook_fast.ACK_TIMEOUT == hook_command.ACK_TIMEOUT
    assert hook_fast.ACK == client.ACK
    assert hook_fast.SOCKET_PATH_MAX == paths.SOCKET_PATH_MAX
    assert hook_fast.CONNECT_TIMEOUT == client.request.__defaults__[1]  # connect_timeout
