"""``lca-tui serve [--stop] [--status] [--foreground]``: the warm daemon that hooks and
``lca-tui recall`` use when it runs (``store.harness.daemon``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from typing import Any

from lca_tui.output import add_json_flag, console, err_console, print_json

START_TIMEOUT = 120.0  # seconds: a cold model load on a busy machine


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", parents=parents,
                       help="start (or stop, or query) the warm daemon for the store",
                       description="A local daemon on a Unix socket in $XDG_RUNTIME_DIR that "
                       "keeps the store, its vectors and the embedding model open, embeds "
                       "waiting entries in the background and answers `lca-tui hook`, "
                       "`lca-tui recall`, `lca-tui search` and `lca-tui approve` (as the "
                       "person who runs them, with their --set where it applies per request; "
                       "see docs/commands.md). Started in the background unless --foreground.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--stop", action="store_true", help="stop the daemon")
    what.add_argument("--status", action="store_true", help="is it running, what is it doing")
    what.add_argument("--foreground", action="store_true",
                      help="run in this process (for a service manager; logs on stderr)")
    add_json_flag(p)
    p.set_defaults(func=run)


STOP_GRACE = 5.0  # seconds between SIGTERM and SIGKILL for a daemon that does not answer


def _sock(args: argparse.Namespace) -> Any:
    from store import UnsafeDirectory, resolve_store, socket_path

    store = resolve_store(getattr(args, "store", None))
    try:
        return store, socket_path(store)
    except UnsafeDirectory as exc:
        raise ValueError(f"{exc} (hooks and recall work in-process meanwhile)") from exc


def _name(store: Any) -> str:
    """The store as it is shown: its file, or its URL with the password masked."""
    from store import store_name

    return store_name(store)


def _progress(args: argparse.Namespace) -> Any:
    def show(label: str, done: int, total: int) -> None:
        if not args.json:
            err_console.print(f"{label}…" if not total or done < total else f"{label}: done",
                              markup=False)
    return show


def _print_status(status: dict[str, Any] | None, store: Any,
                  found: dict[str, Any] | None = None) -> None:
    from store import describe_daemon

    out = console()
    if status is None:
        state = describe_daemon(found) if found else "not running"
        hint = {"not answering": ": stopped or stuck; `lca-tui serve --stop` ends it (hooks "
                "work in-process meanwhile)",
                "starting": ": loading the model and the vectors"}.get(
                    found["state"] if found else "", "")
        out.print(f"{state} for {_name(store)}{hint}", markup=False)
        return
    c = status.get("counts", {})
    out.print(f"running for {status['store']} (pid {status['pid']}, up "
              f"{status['uptime_s']:.0f} s, model {status['model']}"
              f"{' DEGRADED' if status.get('degraded') else ''})", markup=False)
    from store import plural

    out.print(f"socket {status['socket']}; {plural(status['waiting'], 'entry', 'entries')} "
              f"waiting for embedding; answered {plural(c.get('hooks', 0), 'hook')} and "
              f"{plural(c.get('recalls', 0), 'recall')}; embedded "
              f"{plural(c.get('embedded_entries', 0), 'entry', 'entries')} in the background; "
              f"stored {plural(c.get('caught_up_entries', 0), 'entry', 'entries')} written "
              "after a hook (catch-up)", markup=False)
    if status.get("last_error"):
        out.print(f"last error: {status['last_error']}", markup=False)


def _status_json(found: dict[str, Any], store: Any) -> dict[str, Any]:
    return {"running": found["state"] == "running", "state": found["state"],
            "store": _name(store), "pid": found["pid"], "error": found["error"],
            **(found["status"] or {})}


def run(args: argparse.Namespace) -> int:
    from lca_tui.output import settings_from
    from store import daemon_probe
    from store import AlreadyRunning, serve_daemon as serve

    store, sock = _sock(args)
    if args.status:
        found = daemon_probe(sock)
        if args.json:
            print_json(_status_json(found, store))
        else:
            _print_status(found["status"], store, found)
        return 0
    if args.stop:
        return _stop(args, store, sock)
    if args.foreground:
        settings = settings_from(args)

        def ready(daemon: Any) -> None:
            err_console.print(f"serving {_name(store)} on {sock} (pid {os.getpid()})", markup=False)

        try:
            serve(store, settings, _progress(args), ready)
        except AlreadyRunning as exc:
            raise ValueError(str(exc)) from exc
        return 0
    found = daemon_probe(sock)
    if found["state"] == "not answering":
        raise ValueError(f"a daemon for {_name(store)} is not answering (pid {found['pid']}): "
                         "stopped or stuck; `lca-tui serve --stop` ends it")
    if found["state"] == "starting":
        if not args.json:
            err_console.print(f"already starting (pid {found['pid']}): waiting for it to "
                              "load the model and the vectors…", markup=False)
        status = _wait(sock, None, None)
    elif found["state"] == "not running":
        status = _start(args, store, sock)
    else:
        status = found["status"]
        if not args.json:
            console().print("already running", markup=False)
    if args.json:
        print_json({"running": True, "state": "running", **status})
    else:
        _print_status(status, store)
    return 0


def _start(args: argparse.Namespace, store: Any, sock: Any) -> dict[str, Any]:
    """Start a detached daemon and wait until it (or one started meanwhile) answers."""
    from store import daemon_log, on_server

    # A server's URL goes in the environment, never on the command line (where `ps` shows
    # any user the password it may hold).
    env = dict(os.environ, LCA_STORE=str(store)) if on_server(store) else None
    command = [sys.executable, "-m", "lca_tui.cli", "serve", "--foreground",
               *([] if env else ["--store", str(store)])]
    for value in [*(getattr(args, "overrides_top", None) or []),
                  *(getattr(args, "overrides", None) or [])]:
        command += ["--set", value]
    logfile = daemon_log(store)
    with open(logfile, "ab") as log:
        os.chmod(logfile, 0o600)
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 start_new_session=True, close_fds=True, env=env)
    if not args.json:
        err_console.print(f"starting the daemon (pid {child.pid}; log {logfile}): loading "
                          "the model and the vectors…", markup=False)
    return _wait(sock, child, logfile)


def _wait(sock: Any, child: Any, logfile: Any) -> dict[str, Any]:
    """The status of the daemon for ``sock`` once it answers. ``child``: the daemon this
    command started; when it exits because another one took the store first (two `serve`
    at once), that one is waited for instead."""
    from store import daemon_probe

    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        found = daemon_probe(sock)
        if found["state"] == "running":
            return dict(found["status"])
        if found["state"] == "not answering":
            raise ValueError(f"the daemon (pid {found['pid']}) is not answering: stopped or "
                             "stuck; `lca-tui serve --stop` ends it")
        if child is not None and child.poll() is not None:
            if found["state"] == "starting" and found["pid"] != child.pid:
                child = None  # another serve's daemon holds the store: wait for that one
                continue
            tail = logfile.read_text(encoding="utf-8", errors="replace").strip()
            last = tail.splitlines()[-1] if tail else "no output"
            raise ValueError(f"the daemon exited (code {child.returncode}): {last} "
                             f"(log: {logfile})")
        if child is None and found["state"] == "not running":
            raise ValueError("the daemon being started exited before it answered (see "
                             "`lca-tui serve --status`)")
        time.sleep(0.1)
    raise ValueError(f"the daemon did not answer within {START_TIMEOUT:.0f} s"
                     + (f" (log: {logfile})" if logfile else ""))


def _gone(sock: Any, pid: int, seconds: float) -> bool:
    """Whether the daemon ``pid`` has released the store's lock within ``seconds``."""
    from store import daemon_pid

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if daemon_pid(sock) != pid:
            return True
        time.sleep(0.1)
    return daemon_pid(sock) != pid


def _signal(sock: Any, pid: int, sig: int) -> None:
    """Send ``sig`` to ``pid`` while it still holds the store's lock (so never to a pid
    reused by another process)."""
    from store import daemon_pid

    if daemon_pid(sock) == pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _stop(args: argparse.Namespace, store: Any, sock: Any) -> int:
    """Ask the daemon to stop; one that does not answer (stopped, stuck) or is still
    loading gets SIGTERM, and SIGKILL after ``STOP_GRACE`` seconds."""
    from store import DaemonError, DaemonNotRunning, daemon_pid, daemon_probe, daemon_request

    found = daemon_probe(sock)
    pid = found["pid"]
    if found["state"] == "not running" or pid is None:
        if args.json:
            print_json({"running": False, "stopped": False, "store": _name(store)})
        else:
            console().print(f"not running for {_name(store)}", markup=False)
        return 0
    how = "asked"
    stopped = False
    if found["state"] == "running":
        with contextlib.suppress(DaemonNotRunning, DaemonError):
            daemon_request(sock, {"op": "stop"}, timeout=10.0)
        stopped = _gone(sock, pid, 15.0)
    if not stopped:
        how = "SIGTERM"
        _signal(sock, pid, signal.SIGTERM)
        _signal(sock, pid, signal.SIGCONT)  # a stopped process handles SIGTERM once resumed
        stopped = _gone(sock, pid, STOP_GRACE)
    if not stopped:
        how = "SIGKILL"
        _signal(sock, pid, signal.SIGKILL)
        stopped = _gone(sock, pid, 5.0)
    if stopped and daemon_pid(sock) is None:
        sock.unlink(missing_ok=True)  # a killed daemon leaves its socket behind
    if args.json:
        print_json({"running": not stopped, "stopped": stopped, "pid": pid, "how": how,
                    "store": _name(store)})
    else:
        console().print(f"stopped (pid {pid}{', ' + how if how != 'asked' else ''})"
                        if stopped else f"still running (pid {pid})", markup=False)
    return 0 if stopped else 1
