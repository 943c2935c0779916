"""``lca-tui serve [--stop] [--status] [--foreground]``: the warm daemon that hooks and
``lca-tui recall`` use when it runs (``store.harness.daemon``)."""

from __future__ import annotations

import argparse
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
                       "waiting entries in the background and answers `lca-tui hook` and "
                       "`lca-tui recall`. Started in the background unless --foreground.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--stop", action="store_true", help="stop the daemon")
    what.add_argument("--status", action="store_true", help="is it running, what is it doing")
    what.add_argument("--foreground", action="store_true",
                      help="run in this process (for a service manager; logs on stderr)")
    add_json_flag(p)
    p.set_defaults(func=run)


def _sock(args: argparse.Namespace) -> Any:
    from store.harness import paths

    store = paths.resolve_store(getattr(args, "store", None))
    return store, paths.socket_path(store)


def _progress(args: argparse.Namespace) -> Any:
    def show(label: str, done: int, total: int) -> None:
        if not args.json:
            err_console.print(f"{label}…" if not total or done < total else f"{label}: done",
                              markup=False)
    return show


def _print_status(status: dict[str, Any] | None, store: Any) -> None:
    out = console()
    if status is None:
        out.print(f"not running for {store}", markup=False)
        return
    c = status.get("counts", {})
    out.print(f"running for {status['store']} (pid {status['pid']}, up "
              f"{status['uptime_s']:.0f} s, model {status['model']}"
              f"{' DEGRADED' if status.get('degraded') else ''})", markup=False)
    out.print(f"socket {status['socket']}; {status['waiting']:,} entries wait for embedding; "
              f"answered {c.get('hooks', 0):,} hooks and {c.get('recalls', 0):,} recalls; "
              f"embedded {c.get('embedded_entries', 0):,} entries in the background",
              markup=False)
    if status.get("last_error"):
        out.print(f"last error: {status['last_error']}", markup=False)


def run(args: argparse.Namespace) -> int:
    from lca_tui.output import settings_from
    from store.harness import client
    from store.harness.daemon import running_pid, serve

    store, sock = _sock(args)
    if args.status:
        status = client.running(sock)
        if args.json:
            print_json({"running": status is not None, "store": str(store), **(status or {})})
        else:
            _print_status(status, store)
        return 0
    if args.stop:
        return _stop(args, store, sock, running_pid)
    if args.foreground:
        settings = settings_from(args)

        def ready(daemon: Any) -> None:
            err_console.print(f"serving {store} on {sock} (pid {os.getpid()})", markup=False)

        serve(store, settings, _progress(args), ready)
        return 0
    status = client.running(sock)
    if status is None:
        status = _start(args, store, sock)
    elif not args.json:
        console().print("already running", markup=False)
    if args.json:
        print_json({"running": True, **status})
    else:
        _print_status(status, store)
    return 0


def _start(args: argparse.Namespace, store: Any, sock: Any) -> dict[str, Any]:
    """Start a detached daemon and wait until it answers."""
    from store.harness import client, paths

    command = [sys.executable, "-m", "lca_tui.cli", "serve", "--foreground",
               "--store", str(store)]
    for value in [*(getattr(args, "overrides_top", None) or []),
                  *(getattr(args, "overrides", None) or [])]:
        command += ["--set", value]
    logfile = paths.daemon_log(store)
    with open(logfile, "ab") as log:
        os.chmod(logfile, 0o600)
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 start_new_session=True, close_fds=True)
    if not args.json:
        err_console.print(f"starting the daemon (pid {child.pid}; log {logfile}): loading "
                          "the model and the vectors…", markup=False)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        status = client.running(sock)
        if status is not None:
            return status
        if child.poll() is not None:
            tail = logfile.read_text(encoding="utf-8", errors="replace").strip()
            last = tail.splitlines()[-1] if tail else "no output"
            raise ValueError(f"the daemon exited (code {child.returncode}): {last} "
                             f"(log: {logfile})")
        time.sleep(0.1)
    raise ValueError(f"the daemon did not answer within {START_TIMEOUT:.0f} s (log: {logfile})")


def _stop(args: argparse.Namespace, store: Any, sock: Any, running_pid: Any) -> int:
    from store.harness import client

    pid = running_pid(sock)
    try:
        client.request(sock, {"op": "stop"}, timeout=10.0)
    except client.NotRunning:
        if pid is None:
            if args.json:
                print_json({"running": False, "stopped": False, "store": str(store)})
            else:
                console().print(f"not running for {store}", markup=False)
            return 0
    except client.DaemonError:
        pass  # it is there but not answering: the signal below
    deadline = time.monotonic() + 15.0
    while time.monotonic() < deadline and running_pid(sock) is not None:
        time.sleep(0.1)
    if running_pid(sock) is not None and pid is not None:
        os.kill(pid, signal.SIGTERM)  # the pid the daemon itself recorded under its lock
        time.sleep(1.0)
    stopped = running_pid(sock) is None
    if args.json:
        print_json({"running": not stopped, "stopped": stopped, "store": str(store)})
    else:
        console().print("stopped" if stopped else f"still running (pid {pid})", markup=False)
    return 0 if stopped else 1
