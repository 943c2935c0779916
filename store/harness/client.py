"""Talking to ``lca-tui serve``: one JSON request and one JSON reply per connection, each a
line, over the daemon's Unix socket. Standard library only (see ``paths``)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

MAX_REPLY = 64 * 1024 * 1024


class NotRunning(Exception):
    """No daemon listens on the socket: the caller works in-process instead."""


class DaemonError(Exception):
    """A daemon was reached but did not answer properly (timed out, failed, garbled)."""


def request(sock: Path, message: dict[str, Any], timeout: float = 10.0,
            connect_timeout: float = 0.5) -> dict[str, Any]:
    """Send ``message`` to the daemon on ``sock`` and return its reply.

    Raises ``NotRunning`` when nothing listens there (no socket file, or a stale one), and
    ``DaemonError`` when the daemon answered badly or not within ``timeout`` seconds.
    """
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(connect_timeout)
        try:
            conn.connect(str(sock))
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise NotRunning(str(sock)) from exc
        except TimeoutError as exc:
            raise DaemonError(f"the daemon on {sock} did not accept within "
                              f"{connect_timeout} s") from exc
        conn.settimeout(timeout)
        try:
            conn.sendall(json.dumps(message).encode("utf-8") + b"\n")
            conn.shutdown(socket.SHUT_WR)
            chunks: list[bytes] = []
            size = 0
            while True:
                block = conn.recv(1 << 16)
                if not block:
                    break
                chunks.append(block)
                size += len(block)
                if size > MAX_REPLY:
                    raise DaemonError("the daemon's reply is too large")
        except TimeoutError as exc:
            raise DaemonError(f"the daemon did not answer within {timeout} s") from exc
        except OSError as exc:
            raise DaemonError(f"the connection to the daemon failed: {exc}") from exc
    finally:
        conn.close()
    try:
        reply = json.loads(b"".join(chunks))
    except ValueError as exc:
        raise DaemonError("the daemon's reply is not JSON") from exc
    if not isinstance(reply, dict):
        raise DaemonError("the daemon's reply is not a JSON object")
    return reply


def running(sock: Path) -> dict[str, Any] | None:
    """The daemon's status if one answers on ``sock``, else None."""
    try:
        reply = request(sock, {"op": "status"}, timeout=5.0)
    except (NotRunning, DaemonError):
        return None
    return reply if reply.get("ok") else None
