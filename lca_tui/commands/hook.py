"""``lca-tui hook EVENT``: what lca-tui's Claude Code hooks run (Claude Code's hook JSON on
stdin). Through the daemon when one serves the store, in this process otherwise.

This command is dispatched by ``lca_tui.cli.main`` before the full parser is built, through
``fast_main``, and imports only the standard library and ``store``'s daemon client (its
public names from ``store.harness.{paths, client, failures}``) until it knows it must work
in-process: a hook the daemon answers costs little more than starting Python. Whatever
happens, it exits 0 and prints nothing but the hook's output (a hook must never break the
session); failures are recorded.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from pathlib import Path

EVENTS = ("UserPromptSubmit", "PreCompact", "SessionEnd", "Stop")
MAX_STDIN = 16 * 1024 * 1024
# Seconds a hook may take in all, process start to exit: well below the timeout `hooks
# install` gives Claude Code for it (30 s, 300 s: settings_file.EVENTS), where Claude Code
# would kill it with no record. Past it the hook records why and exits 0 printing nothing;
# the transcript lines it did not store are stored by the next call. A UserPromptSubmit
# hook holds the user's prompt, so its budget is seconds: cold and in-process it takes
# ~2.2 s on an idle 2-core machine and 5-7 s at a load average of 9 (measured).
DEADLINE = {"UserPromptSubmit": 12.0, "Stop": 12.0, "PreCompact": 240.0,
            "SessionEnd": 240.0}
DEADLINE_ENV = "LCA_HOOK_DEADLINE"  # seconds, overriding DEADLINE for every event (tests)
# Seconds a daemon has to acknowledge a request before it is taken for hung and the hook
# works in this process instead (a warm daemon acknowledges in about a millisecond).
ACK_TIMEOUT = 2.0


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("hook", parents=parents,
                       help="run a Claude Code hook event (its hook JSON on stdin)",
                       description="What `lca-tui hooks install` wires into Claude Code. "
                       "UserPromptSubmit stores the session's new lines and prints the recall "
                       "to inject; PreCompact and SessionEnd also embed, consolidate and "
                       "record a checkpoint; Stop stores the new lines. Always exits 0; "
                       "failures are recorded (see `lca-tui hooks status`).")
    p.add_argument("event", choices=EVENTS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    argv = ["hook", args.event]
    if getattr(args, "store", None):
        argv += ["--store", args.store]
    for value in [*(getattr(args, "overrides_top", None) or []),
                  *(getattr(args, "overrides", None) or [])]:
        argv += ["--set", value]
    return fast_main(argv)


def parse_fast(argv: Sequence[str]) -> tuple[str, str | None, list[str]] | None:
    """(event, --store, --set values) from ``[opts] hook EVENT [opts]``, or None when the
    words are anything else (then the full parser handles them: help, errors)."""
    words = list(argv)
    store: str | None = None
    sets: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("--store", "--set") and i + 1 < len(words):
            if word == "--store":
                store = words[i + 1]
            else:
                sets.append(words[i + 1])
            i += 2
            continue
        if word.startswith("--store="):
            store = word.split("=", 1)[1]
        elif word.startswith("--set="):
            sets.append(word.split("=", 1)[1])
        elif word.startswith("-"):
            return None
        else:
            rest.append(word)
        i += 1
    if len(rest) != 2 or rest[0] != "hook" or rest[1] not in EVENTS:
        return None
    return rest[1], store, sets


def _read_stdin(limit: int) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return (sys.stdin.read(limit) if sys.stdin else "").encode("utf-8", "replace")
    return stream.read(limit)


def _session_of(raw: bytes) -> str | None:
    """The session id in the hook JSON, for the failure log (None when there is none)."""
    import json

    try:
        sid = json.loads(raw).get("session_id")
    except (ValueError, AttributeError, RecursionError):  # nesting too deep: no id to name
        return None
    return sid if isinstance(sid, str) else None


def deadline_for(event: str) -> float:
    """The hook's budget in seconds (``DEADLINE``, or ``$LCA_HOOK_DEADLINE``)."""
    try:
        given = float(os.environ.get(DEADLINE_ENV) or "nan")
    except ValueError:
        given = float("nan")
    return given if given > 0 else DEADLINE.get(event, DEADLINE["UserPromptSubmit"])


class Watchdog:
    """Ends the hook at its deadline whatever it is doing (a write lock held by another
    process, a stuck read): records why in the failure log, then exits 0 with nothing on
    stdout. A thread, so that it fires even while the main thread waits inside SQLite."""

    def __init__(self, event: str, store: str | os.PathLike[str] | None,
                 seconds: float, left: float | None = None) -> None:
        import threading

        self.event, self.store, self.seconds = event, store, seconds
        self.doing = "starting"
        self.session_id: str | None = None
        self.finishing = threading.Lock()  # held by whoever ends the process
        self.timer = threading.Timer(seconds if left is None else left, self._expire)
        self.timer.daemon = True

    def start(self) -> Watchdog:
        self.timer.start()
        return self

    def _expire(self) -> None:
        if not self.finishing.acquire(blocking=False):
            return  # the hook is printing its answer: let it
        try:
            self.record(self.doing)
        finally:
            sys.stderr.flush()
            os._exit(0)

    def record(self, doing: str) -> None:
        """Log that the hook gave up at its deadline while ``doing`` (never raises)."""
        try:
            from store import log_failure

            log_failure(self.event, os.fspath(self.store) if self.store else None,
                        f"the hook gave up at its deadline of "
                        f"{self.seconds:g} s while {doing} (below Claude Code's timeout "
                        "for it; the lines not stored yet are stored by the next call)",
                        self.session_id, via="deadline")
        except BaseException as exc:  # noqa: BLE001 - nothing is left to record it with
            sys.stderr.write(f"lca-tui hook: {exc}\n")

    def finish(self) -> bool:
        """Stop the watchdog before printing; False when it is ending the process now."""
        self.timer.cancel()
        return self.finishing.acquire(blocking=False)


def _answer(event: str, store_arg: str | None, sets: list[str], raw: bytes,
            deadline: float, watch: Watchdog | None = None,
            prior: dict[str, Any] | BaseException | None = None) -> str:
    """The hook's output: from the daemon when one serves the store and acknowledges the
    request, else worked out in this process; ``deadline`` is a ``time.monotonic`` time.
    ``prior``: the daemon was asked already (``lca_tui/hook_client.py``), and this is its
    reply or what ``daemon_request`` raised: it is not asked again."""
    import time

    from store import (
        DaemonError,
        DaemonNoAck,
        DaemonNotRunning,
        UnsafeDirectory,
        daemon_request,
        resolve_store,
        socket_path,
        store_name,
    )

    store = resolve_store(store_arg)
    sid = _session_of(raw)
    if watch is not None:
        watch.store, watch.session_id = store, sid
    if prior is not None or (not sets and not os.environ.get("LCA_NO_DAEMON")):
        try:
            if watch is not None:
                watch.doing = "waiting for the daemon"
            if isinstance(prior, BaseException):
                raise prior  # what asking the daemon gave hook_client.py: never asked again
            reply = prior if prior is not None else daemon_request(
                socket_path(store), {"op": "hook", "event": event,
                                     "store": store_name(store),
                                     "stdin": raw.decode("utf-8", "replace")},
                timeout=max(0.1, deadline - time.monotonic() - 0.5), ack_timeout=ACK_TIMEOUT)
        except (DaemonNotRunning, UnsafeDirectory, OSError):
            pass  # no daemon, or no usable socket folder: work in this process
        except DaemonNoAck as exc:  # it took nothing on: this process does the work
            from store import log_failure

            if exc.hung:
                pid = _daemon_pid(store)
                log_failure(event, store, f"the daemon{f' (pid {pid})' if pid else ''} did "
                            f"not answer: {exc}; this hook ran in-process instead (`lca-tui "
                            "serve --stop` ends a hung daemon)", sid, via="daemon")
        except DaemonError as exc:  # it took the run and failed or ran out of time
            from store import log_failure

            log_failure(event, store, f"the daemon failed to answer: {exc}", sid,
                        via="daemon")
            return ""
        else:
            if reply.get("ok"):
                return str(reply.get("stdout") or "")
            if reply.get("error") not in ("wrong store", "store gone"):
                return ""  # the daemon recorded the failure itself
    from store import handle_hook as handle

    settings = None
    if sets:
        from store import Settings, parse_assignment

        settings = Settings.load(dict(parse_assignment(a) for a in sets))
    if watch is not None:
        watch.doing = "working in-process"
    from lca_tui import collector

    return handle(store, event, raw, settings, deadline=deadline, opened=collector.settle)


def _daemon_pid(store: Path | str) -> int | None:
    """The pid of the daemon holding the lock for ``store``'s socket, if any."""
    from store import UnsafeDirectory, daemon_pid, socket_path

    try:
        return daemon_pid(socket_path(store))
    except (UnsafeDirectory, OSError):
        return None


def fast_main(argv: Sequence[str], raw: bytes | None = None, started: float | None = None,
              prior: dict[str, Any] | BaseException | None = None,
              own_process: bool = False) -> int:
    """Run ``hook EVENT``: print the hook's output (or nothing), always exit 0, within the
    event's deadline. ``lca_tui/hook_client.py`` hands over here with the stdin it read
    (``raw``), when it started (``time.monotonic``) and what the daemon did (``prior``).
    ``own_process``: the hook is this process's whole run (``lca-tui hook``, the hook
    client), so the garbage collector is paused until the store is open
    (``lca_tui/collector.py``)."""
    import time

    if own_process:
        from lca_tui import collector

        collector.pause()
        try:
            return fast_main(argv, raw, started, prior)
        finally:
            collector.settle()
    started = time.monotonic() if started is None else started
    parsed = parse_fast(argv)
    seconds = deadline_for(parsed[0] if parsed else "?")
    watch = Watchdog(parsed[0] if parsed else "?", parsed[1] if parsed else None,
                     seconds, max(0.0, started + seconds - time.monotonic())).start()
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # nothing but the hook's own output may reach stdout
    out = ""
    try:
        if parsed is None:
            raise ValueError(f"cannot read the hook command {' '.join(argv)!r}")
        event, store_arg, sets = parsed
        watch.doing = "reading stdin"
        if raw is None:
            raw = _read_stdin(MAX_STDIN)
        out = _answer(event, store_arg, sets, raw, started + seconds, watch, prior)
    except BaseException as exc:  # never break the session: record and print nothing
        _record(parsed, exc)
        out = ""
    finally:
        sys.stdout = real_stdout
    if not watch.finish():
        time.sleep(seconds)  # the watchdog is ending the process: wait for it
    try:
        if out:
            real_stdout.write(out + "\n")
            real_stdout.flush()
    except BaseException as exc:  # Claude Code closed the pipe: nothing to print to
        return printed_nothing(parsed, exc, real_stdout)
    return 0


def printed_nothing(parsed: tuple[str, str | None, list[str]] | None, exc: BaseException,
                    stdout: Any) -> int:
    """The hook's output could not be printed (Claude Code closed the pipe): record it, and
    point stdout at /dev/null so that Python's flush at exit fails no second time; 0."""
    _record(parsed, exc, "could not print the hook's output: ")
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (a test's capture): nothing is flushed to a pipe
    return 0


def _record(parsed: tuple[str, str | None, list[str]] | None, exc: BaseException,
            prefix: str = "") -> None:
    """Log a failure of the hook command itself (never raises)."""
    try:
        from store import log_failure, resolve_store

        store = resolve_store(parsed[1]) if parsed and parsed[1] else None
        log_failure(parsed[0] if parsed else "?", store, f"{prefix}{type(exc).__name__}: {exc}")
    except BaseException:  # noqa: S110 - nothing is left to record it with
        sys.stderr.write(f"lca-tui hook: {exc}\n")
