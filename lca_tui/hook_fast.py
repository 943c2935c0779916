"""The hook client: what ``lca-tui hooks install`` writes into Claude Code's
``settings.json`` runs it (``PYTHON -S …/lca_tui/hook_client.py hook EVENT --store PATH ||
exit 1``; that file only imports this one, so that its bytecode is cached), the same command
as ``lca-tui hook EVENT`` with a fast path for the one case that must be fast. (``|| exit 1``:
should this file or the interpreter be gone, Python's exit 2 — "file not found" — would
block the user's prompt; 1 is a hook error Claude Code shows and goes on.)

A prompt waits for its ``UserPromptSubmit`` hook, so a hook the daemon answers should cost
little more than starting Python. The console script cannot: ``site`` alone (site-packages
and the editable install's import finder) takes ~20 ms, ``socket`` and ``json`` ~20 ms more.
This file runs with ``-S`` and imports only ``os`` and the standard library's own C modules
(``_socket``, ``_json``, ``_sha256``, ``_signal``) until it knows the daemon answered: it reads
the hook JSON,
finds the store's socket as ``store.harness.paths.socket_path`` does, and passes the request
on (``client.request``'s protocol, with the hook's output sent back raw rather than as JSON).

Everything else is handed to ``lca_tui.commands.hook.fast_main`` in this same process once
``site`` is set up, with the stdin already read and what the daemon did (if anything): no
daemon, a hung one, a failure, ``--set``, a store whose socket is found elsewhere, any error
here. The result is the same as ``lca-tui hook``'s, only slower; this file never records a
failure itself, except when its deadline passes or the output cannot be printed (then as
``fast_main`` would). ``tests/cli/test_hook_client.py`` checks both paths, and which modules the
fast one loads.
"""

# No ``from __future__`` and no typing: every import here costs the prompt time.
import sys

MAX_STDIN = 16 * 1024 * 1024  # as lca_tui.commands.hook.MAX_STDIN
ACK = b'{"ack": true}\n'  # as store.harness.client.ACK
ACK_TIMEOUT = 2.0  # as lca_tui.commands.hook.ACK_TIMEOUT
CONNECT_TIMEOUT = 0.5  # as client.request's connect_timeout
DEADLINE = {"UserPromptSubmit": 12.0, "Stop": 12.0, "PreCompact": 240.0,
            "SessionEnd": 240.0}  # as lca_tui.commands.hook.DEADLINE
SOCKET_PATH_MAX = 107  # as store.harness.paths.SOCKET_PATH_MAX
URL_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")  # as store.core.location


class _Handover(Exception):
    """The fast path stops here: ``fast_main`` takes over with ``prior`` (what the daemon
    did: ``None`` when it was not asked, else a tuple ``_prior`` turns into the reply or the
    exception ``client.request`` would have given)."""

    def __init__(self, prior=None):
        super().__init__(prior)
        self.prior = prior


def _parse(argv):
    """(event, store or None) for exactly ``hook EVENT [--store PATH]``; else a handover
    (``--set``, help, anything the full parser should see)."""
    if len(argv) not in (2, 4) or argv[0] != "hook" or argv[1] not in DEADLINE:
        raise _Handover()
    if len(argv) == 2:
        return argv[1], None
    if argv[2] != "--store" or not argv[3]:
        raise _Handover()
    return argv[1], argv[3]


def _store_path(explicit, os):
    """``store.harness.paths.resolve_store``: --store, else $LCA_STORE, else
    ``$XDG_DATA_HOME/lca-tui/store.db``, made absolute with symlinks resolved; a server's
    URL without its password (``_server_identity``). The ``store.url`` setting is not read
    here (it would cost the settings file's parsing): a hook without ``--store`` or
    ``$LCA_STORE`` that the setting sends to a server misses this fast path, and
    ``fast_main`` finds the daemon. A path
    spelled so that this differs from ``Path.resolve`` only misses the daemon (its socket is
    named after the resolved path): ``fast_main`` then finds it."""
    path = explicit or os.environ.get("LCA_STORE")
    if path and path.strip().lower().startswith(URL_SCHEMES):
        return _server_identity(path)
    if not path:
        base = os.environ.get("XDG_DATA_HOME") or os.path.join(
            os.path.expanduser("~"), ".local", "share")
        path = os.path.join(base, "lca-tui", "store.db")
    return os.path.realpath(os.path.expanduser(path))


def _server_identity(url):
    """``store.harness.paths.server_identity``: a server store's URL without its password,
    which names its daemon (``tests/cli/test_hook_client.py`` holds the two equal)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "postgresql://?"
    netloc = parts.netloc
    if "@" in netloc:
        creds, host = netloc.rsplit("@", 1)
        netloc = creds.split(":", 1)[0] + "@" + host
    query = "&".join(q for q in parts.query.split("&")
                     if q and not q.lower().startswith("password="))
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _socket_candidates(store, os):
    """Where the daemon's socket may be, in ``paths.socket_path``'s order: only folders
    that exist, belong to this user and no one else can enter."""
    import _sha256

    name = _sha256.sha256(store.encode("utf-8", "surrogatepass")).hexdigest()[:16] + ".sock"
    folders = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        folders.append(os.path.join(runtime, "lca-tui"))
    for var in ("TMPDIR", "TEMP", "TMP"):  # tempfile.gettempdir's first choices
        if os.environ.get(var):
            folders.append(os.path.join(os.environ[var], f"lca-tui-{os.getuid()}"))
            break
    folders.append(f"/tmp/lca-tui-{os.getuid()}")
    for folder in folders:
        try:
            info = os.lstat(folder)
        except OSError:
            continue
        if (info.st_mode & 0o170000) != 0o040000 or info.st_uid != os.getuid() \
                or info.st_mode & 0o077:
            continue  # not a folder, or not private: paths.socket_path decides (fast_main)
        path = os.path.join(folder, name)
        if len(os.fsencode(path)) <= SOCKET_PATH_MAX:
            yield path


def _ask(sock_path, event, store, raw, deadline, time):
    """The daemon's answer (bytes to print) or a handover saying what happened; ``None``
    when no daemon listens on ``sock_path``."""
    import _json
    import _socket

    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_TIMEOUT)
        try:
            conn.connect(sock_path)
        except (FileNotFoundError, ConnectionRefusedError):
            return None
        except TimeoutError:
            why = f"the daemon on {sock_path} did not accept within {CONNECT_TIMEOUT} s"
            raise _Handover(("noack", why, True)) from None
        except OSError:
            return None
        text = raw.decode("utf-8", "replace")
        request = ('{"op": "hook", "event": "%s", "store": %s, "stdin": %s, "ack": true, '
                   '"reply": "raw"}\n' % (event, _json.encode_basestring_ascii(store),
                                          _json.encode_basestring_ascii(text)))
        started = time.monotonic()
        try:
            conn.settimeout(max(0.1, deadline - started - 0.5))
            conn.sendall(request.encode("ascii"))
            conn.shutdown(_socket.SHUT_WR)
            first = _receive(conn, started + ACK_TIMEOUT, True, time)
        except TimeoutError:
            why = f"the daemon did not acknowledge the request within {ACK_TIMEOUT:g} s (hung?)"
            raise _Handover(("noack", why, True)) from None
        except OSError as exc:
            why = f"the connection to the daemon failed before it took the request: {exc}"
            raise _Handover(("noack", why, False)) from None
        if not first.startswith(ACK):
            raise _Handover(("noack", "the daemon did not acknowledge the request", False))
        try:  # the daemon took the run on: whatever happens now, it is not run again here
            body = _reply(conn, first[len(ACK):], deadline - 0.5, time)
        except TimeoutError:
            why = f"the daemon did not answer within {max(0.1, deadline - started - 0.5):g} s"
            raise _Handover(("error", why)) from None
        except Exception as exc:  # noqa: BLE001
            raise _Handover(("error", f"the connection to the daemon failed: {exc}")) from None
    finally:
        conn.close()
    if body.startswith(b"ok "):
        return body.partition(b"\n")[2]
    raise _Handover(("reply", body))  # a JSON reply: not ok (fast_main reads why)


def _reply(conn, got, until, time):
    """The daemon's reply after its acknowledgement: ``ok LENGTH``, a newline and that many
    bytes (read no further: the daemon records the run after sending them), or JSON up to
    the end of the connection."""
    while b"\n" not in got and not got.startswith(b"{"):
        more = _receive(conn, until, True, time)
        if not more:
            return got
        got += more
    head, _, rest = got.partition(b"\n")
    if head == b"ok":  # a daemon started by an earlier lca-tui: the output runs to the end
        return b"ok *\n" + rest + _receive(conn, until, False, time)
    if not head.startswith(b"ok "):
        return got + _receive(conn, until, False, time)
    length = int(head[3:])
    while len(rest) < length:
        left = until - time.monotonic()
        if left <= 0:
            raise TimeoutError
        conn.settimeout(left)
        block = conn.recv(max(1 << 16, length - len(rest)))
        if not block:
            raise OSError("the daemon closed the connection before the whole answer")
        rest += block
    return head + b"\n" + rest[:length]


def _receive(conn, until, first_line, time):
    """Bytes until the end of the reply (or of its first line) or ``until``."""
    chunks = []
    size = 0
    while True:
        left = until - time.monotonic()
        if left <= 0:
            raise TimeoutError
        conn.settimeout(left)
        block = conn.recv(len(ACK) if first_line else 1 << 16)
        if not block:
            return b"".join(chunks)
        chunks.append(block)
        size += len(block)
        if size > 64 * 1024 * 1024:
            raise OSError("the daemon's reply is too large")
        if first_line and b"\n" in block:
            return b"".join(chunks)


def _fast(argv, started, seconds, got, doing):
    """The daemon's answer to this hook, or a handover. ``got`` receives the stdin read."""
    import os
    import time

    event, explicit = _parse(argv)
    got.append(sys.stdin.buffer.read(MAX_STDIN))
    if os.environ.get("LCA_NO_DAEMON"):
        raise _Handover()
    doing[0] = "waiting for the daemon"
    deadline = started + seconds
    store = _store_path(explicit, os)
    for sock_path in _socket_candidates(store, os):
        out = _ask(sock_path, event, store, got[0], deadline, time)
        if out is not None:
            return out
    raise _Handover()  # no daemon found here: fast_main looks again, then works in-process


def _prior(prior):
    """What ``store.daemon_request`` would have returned or raised, from ``_Handover.prior``
    (called after ``site.main()``, from ``_slow``)."""
    from store import DaemonError, DaemonNoAck

    kind = prior[0]
    if kind == "noack":
        return DaemonNoAck(prior[1], hung=prior[2])
    if kind == "error":
        return DaemonError(prior[1])
    import json

    try:
        reply = json.loads(prior[1])
    except ValueError:
        return DaemonError("the daemon's reply is not JSON")
    return reply if isinstance(reply, dict) else DaemonError(
        "the daemon's reply is not a JSON object")


def _slow(argv, started, got, prior):
    """``lca-tui hook`` in this process, with what was read and what the daemon did."""
    hook = _full_command()
    return hook.fast_main(argv, raw=got[0] if got else None, started=started,
                          prior=_prior(prior) if prior else None, own_process=True)


def _full_command():
    """``site`` set up as a normal start would have, and ``lca_tui.commands.hook``."""
    import os
    import site

    here = os.path.dirname(os.path.realpath(__file__))
    if sys.path and sys.path[0] and os.path.realpath(sys.path[0]) == here:
        del sys.path[0]  # this file's folder (lca_tui/) is not a place to import from
    site.main()
    from lca_tui.commands import hook

    return hook


def _expired(argv, seconds, doing, got):
    """At the deadline (SIGALRM): what ``fast_main``'s watchdog does — record why, with the
    store and the session as it would, and exit 0 printing nothing."""
    import os

    try:
        hook = _full_command()
        from store import resolve_store

        parsed = hook.parse_fast(argv)
        watch = hook.Watchdog(parsed[0] if parsed else "?",
                              resolve_store(parsed[1]) if parsed else None, seconds)
        watch.session_id = hook._session_of(got[0]) if got else None
        watch.record(doing[0])
    finally:
        os._exit(0)


def main():
    import _signal
    import time

    started = time.monotonic()
    argv = sys.argv[1:]
    got = []
    doing = ["reading stdin"]
    from os import environ

    try:  # as lca_tui.commands.hook.deadline_for
        seconds = float(environ.get("LCA_HOOK_DEADLINE") or "nan")
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < 1e6:
        seconds = DEADLINE.get(argv[1] if len(argv) > 1 else "", DEADLINE["UserPromptSubmit"])
    _signal.signal(_signal.SIGALRM, lambda *_: _expired(argv, seconds, doing, got))
    _signal.setitimer(_signal.ITIMER_REAL, seconds)
    try:
        out = _fast(argv, started, seconds, got, doing)
    except _Handover as stop:
        _signal.setitimer(_signal.ITIMER_REAL, 0)  # fast_main keeps the same deadline
        return _slow(argv, started, got, stop.prior)
    except Exception:  # noqa: BLE001 - anything odd: the full command decides and records
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        return _slow(argv, started, got, None)
    _signal.setitimer(_signal.ITIMER_REAL, 0)
    try:
        if out:
            sys.stdout.buffer.write(out + b"\n")
            sys.stdout.buffer.flush()
    except Exception as exc:  # noqa: BLE001 - Claude Code closed the pipe: record it
        hook = _full_command()
        return hook.printed_nothing(hook.parse_fast(argv), exc, sys.stdout)
    import os

    os._exit(0)  # all is said and flushed: the interpreter's tear-down costs ~3 ms more


if __name__ == "__main__":
    sys.exit(main())
