"""The status line's fast client: ``PYTHON -S …/lca_tui/status_client.py statusline [--store
PATH]``, the same as ``lca-tui statusline`` (which prints this command with ``--command``).

Claude Code runs its status-line command every few hundred milliseconds; with the daemon
running, starting Python with ``site`` (site-packages, the editable install's finder) would
cost more than the answer. This file runs with ``-S``, finds the daemon's socket as the hook
client, ``lca_tui/hook_fast.py``, does (it imports that file's functions), sends one
``statusline`` request and prints the line the daemon rendered. Everything else — no
daemon, ``--set``, an error of any kind — is handed to
``lca_tui.commands.statusline.fast_main`` in this process once ``site`` is set up, with the
stdin already read: the same line, only slower; never a failure (exit 0).
"""

# No ``from __future__`` and no typing: every import here costs the status line time.
import sys

MAX_STDIN = 1024 * 1024  # as lca_tui.commands.statusline.MAX_STDIN
TIMEOUT = 2.0  # as lca_tui.commands.statusline.DAEMON_TIMEOUT


class _Handover(Exception):
    pass


class _Context:
    """What ``_json.make_scanner`` needs (the C scanner: no ``json`` package, no ``re``)."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float
    memo = {}  # type: dict


def _load(text):
    import _json

    value, end = _json.make_scanner(_Context())(text, 0)
    return value


def _parse(argv):
    if argv == ["statusline"]:
        return None
    if len(argv) == 3 and argv[:2] == ["statusline", "--store"] and argv[2]:
        return argv[2]
    raise _Handover()


def _line(argv, raw):
    import os
    import time

    import _json
    import _socket

    try:
        import hook_fast  # this file's folder is sys.path[0]
    except ImportError:  # left off the path (PYTHONSAFEPATH): put it first
        sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
        import hook_fast

    explicit = _parse(argv)
    if os.environ.get("LCA_NO_DAEMON"):
        raise _Handover()
    text = raw.decode("utf-8", "replace").strip()
    payload = _load(text) if text else None
    session = payload.get("session_id") if isinstance(payload, dict) else None
    store = hook_fast._store_path(explicit, os)
    request = ('{"op": "statusline", "store": %s, "session_id": %s}\n' % (
        _json.encode_basestring_ascii(store),
        _json.encode_basestring_ascii(session) if isinstance(session, str) and session
        else "null")).encode("ascii")
    for sock_path in hook_fast._socket_candidates(store, os):
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.settimeout(0.2)
            try:
                conn.connect(sock_path)
            except OSError:
                continue
            conn.settimeout(TIMEOUT)
            conn.sendall(request)
            conn.shutdown(_socket.SHUT_WR)
            body = hook_fast._receive(conn, time.monotonic() + TIMEOUT, False, time)
        finally:
            conn.close()
        reply = _load(body.decode("utf-8"))
        if isinstance(reply, dict) and reply.get("ok") and isinstance(reply.get("line"), str):
            return reply["line"]
        raise _Handover()
    raise _Handover()


def _slow(argv, raw):
    import os
    import site

    here = os.path.dirname(os.path.realpath(__file__))
    if sys.path and sys.path[0] and os.path.realpath(sys.path[0]) == here:
        del sys.path[0]
    site.main()
    from lca_tui.commands import statusline

    return statusline.fast_main(argv, raw=raw)


def main():
    argv = sys.argv[1:]
    raw = b""
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN)
        line = _line(argv, raw)
    except BaseException:  # noqa: BLE001 - the full command answers (and never fails)
        return _slow(argv, raw)
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - Claude Code closed the pipe
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
