"""Talking to ``lca-tui serve``: one JSON request and one JSON reply per connection, each a
line, over the daemon's Unix socket; and what state a store's daemon is in (``probe``).
Standard library only (see ``paths``)."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

MAX_REPLY = 64 * 1024 * 1024
ACK = b'{"ack": true}\n'  # what the daemon sends first when asked to ("ack": true)


class NotRunning(Exception):
    """No daemon listens on the socket: the caller works in-process instead."""


class DaemonError(Exception):
    """A daemon was reached but did not answer properly (timed out, failed, garbled)."""


class NoAck(DaemonError):
    """The daemon did not take the request on: no acknowledgement in time (it is hung:
    stopped, or stuck) or the connection failed before one (it was stopping). Nothing was
    started by this request, so the caller may do the work itself. ``hung``: it timed out
    (rather than the daemon closing the connection as it stops)."""

    def __init__(self, message: str, hung: bool = False) -> None:
        super().__init__(message)
        self.hung = hung


def lock_path(sock: Path) -> Path:
    """The daemon's lock file (it holds the daemon's pid) next to its socket."""
    return sock.with_suffix(".lock")


def running_pid(sock: Path) -> int | None:
    """The pid recorded by the daemon holding the lock for ``sock``, if one holds it (a
    daemon that is loading, serving or hung; None once it has exited, however)."""
    try:
        fd = os.open(lock_path(sock), os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _receive(conn: socket.socket, until: float, stop_at_line: bool) -> bytes:
    """Bytes from ``conn`` until the end of the reply (or of its first line) or ``until``
    (a ``time.monotonic`` deadline: ``TimeoutError``)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        left = until - time.monotonic()
        if left <= 0:
            raise TimeoutError
        conn.settimeout(left)
        block = conn.recv(len(ACK) if stop_at_line else 1 << 16)
        if not block:
            break
        chunks.append(block)
        size += len(block)
        if size > MAX_REPLY:
            raise DaemonError("the daemon's reply is too large")
        if stop_at_line and b"\n" in block:
            break
    return b"".join(chunks)


def request(sock: Path, message: dict[str, Any], timeout: float = 10.0,
            connect_timeout: float = 0.5, ack_timeout: float | None = None) -> dict[str, Any]:
    """Send ``message`` to the daemon on ``sock`` and return its reply.

    Raises ``NotRunning`` when nothing listens there (no socket file, or a stale one), and
    ``DaemonError`` when the daemon answered badly or not within ``timeout`` seconds. With
    ``ack_timeout`` the daemon is asked to acknowledge the request as soon as it reads it:
    a hung daemon (whose socket the kernel still accepts connections on) is then told apart
    within ``ack_timeout`` seconds (``NoAck``) instead of ``timeout``.
    """
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(connect_timeout)
        try:
            conn.connect(str(sock))
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise NotRunning(str(sock)) from exc
        except TimeoutError as exc:
            raise NoAck(f"the daemon on {sock} did not accept within "
                        f"{connect_timeout} s", hung=True) from exc
        except OSError as exc:  # a socket path we may not use: as good as none
            raise NotRunning(f"{sock}: {exc}") from exc
        from store.core.actor import for_request

        message = {**for_request(), **message}  # the person behind the command (issue 22)
        asked = dict(message, ack=True) if ack_timeout is not None else message
        started = time.monotonic()
        body = b""
        try:
            conn.settimeout(timeout)
            conn.sendall(json.dumps(asked).encode("utf-8") + b"\n")
            conn.shutdown(socket.SHUT_WR)
            if ack_timeout is not None:
                first = _receive(conn, started + ack_timeout, stop_at_line=True)
                if not first.startswith(ACK):
                    raise NoAck("the daemon did not acknowledge the request")
                body = first[len(ACK):]
        except TimeoutError as exc:
            if ack_timeout is None:
                raise DaemonError(f"the daemon did not answer within {timeout:g} s") from exc
            raise NoAck(f"the daemon did not acknowledge the request within "
                        f"{ack_timeout:g} s (hung?)", hung=True) from exc
        except OSError as exc:  # before an acknowledgement: the daemon took nothing on
            if ack_timeout is None:
                raise DaemonError(f"the connection to the daemon failed: {exc}") from exc
            raise NoAck(f"the connection to the daemon failed before it took the request: "
                        f"{exc}") from exc
        try:
            body += _receive(conn, started + timeout, False)
        except TimeoutError as exc:
            raise DaemonError(f"the daemon did not answer within {timeout:g} s") from exc
        except OSError as exc:
            raise DaemonError(f"the connection to the daemon failed: {exc}") from exc
    finally:
        conn.close()
    try:
        reply = json.loads(body)
    except ValueError as exc:
        raise DaemonError("the daemon's reply is not JSON") from exc
    if not isinstance(reply, dict):
        raise DaemonError("the daemon's reply is not a JSON object")
    return reply


def probe(sock: Path, timeout: float = 3.0) -> dict[str, Any]:
    """What state the daemon for ``sock`` is in: ``{"state", "pid", "status", "error"}``.

    ``running`` (it answered; ``status`` is its reply), ``not answering`` (its lock is held,
    it accepts connections, but no reply within ``timeout``: stopped or stuck), ``starting``
    (its lock is held but it listens on no socket yet: loading the model and the vectors),
    ``not running``.
    """
    pid = running_pid(sock)
    try:
        reply = request(sock, {"op": "status"}, timeout=timeout)
    except NotRunning:
        state = "starting" if pid is not None else "not running"
        return {"state": state, "pid": pid, "status": None, "error": None}
    except DaemonError as exc:
        if pid is None:  # it exited while we asked
            return {"state": "not running", "pid": None, "status": None, "error": str(exc)}
        return {"state": "not answering", "pid": pid, "status": None, "error": str(exc)}
    if not reply.get("ok"):
        return {"state": "not answering", "pid": pid, "status": None,
                "error": str(reply.get("error") or "the daemon refused the status request")}
    return {"state": "running", "pid": reply.get("pid", pid), "status": reply, "error": None}


def describe(found: dict[str, Any]) -> str:
    """``probe``'s answer in a few words: ``running (pid N)``, ``not answering (pid N)``."""
    pid = found.get("pid")
    return found["state"] + (f" (pid {pid})" if pid else "")


def running(sock: Path) -> dict[str, Any] | None:
    """The daemon's status if one answers on ``sock``, else None."""
    found = probe(sock)
    return found["status"] if found["state"] == "running" else None
