"""``lca-tui statusline``: one line for Claude Code's status line (``"statusLine": {"type":
"command", "command": "lca-tui statusline"}`` in settings.json).

It reads the JSON Claude Code passes on stdin (``session_id`` is what it uses) and prints the
session's context pressure against its checkpoint threshold, the proposals waiting for a
person, and the worst signal of the latest stored health scan, e.g. ``lca ctx 64% of
checkpoint · 2 pending · health warn evidence_orphans``. The warm daemon answers when it runs
(``statusline`` op); otherwise the store is read in this process. It never fails the status
line: any error prints ``lca ?`` (and why on stderr) and exits 0. Answered before the full
command parser is built (``lca_tui.cli.main``), as ``hook`` is. ``--command`` prints the
faster form to configure instead (``lca_tui/status_client.py`` with ``python -S``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

MARKER = "lca ?"
MAX_STDIN = 1024 * 1024
DAEMON_TIMEOUT = 2.0


def register(sub: Any, parents: list[Any]) -> None:
    p = sub.add_parser("statusline", parents=parents,
                       help="one line for Claude Code's status line: context pressure, "
                       "pending proposals, worst health signal (never fails)",
                       description="Reads Claude Code's status-line JSON on stdin and prints "
                       "one line; any error prints `lca ?` and exits 0.")
    p.set_defaults(func=lambda args: fast_main(sys.argv[1:]))


def _parse(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    store: str | None = None
    sets: list[str] = []
    wants_command = False
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("--store", "--set") and i + 1 < len(words):
            if word == "--store":
                store = words[i + 1]
            else:
                sets.append(words[i + 1])
            i += 2
        elif word.startswith("--store="):
            store, i = word.split("=", 1)[1], i + 1
        elif word.startswith("--set="):
            sets.append(word.split("=", 1)[1])
            i += 1
        elif word == "statusline":
            i += 1
        elif word == "--command":
            wants_command = True
            i += 1
        else:
            raise ValueError(f"statusline takes only --store, --set and --command, not "
                             f"{word!r}")
    if wants_command:
        raise _PrintCommand(store)
    return store, sets


class _PrintCommand(Exception):
    def __init__(self, store: str | None) -> None:
        super().__init__(store)
        self.store = store


def command(store: str | None = None) -> list[str]:
    """The fast command to put in Claude Code's ``statusLine``: this interpreter with ``-S``
    on ``lca_tui/status_client.py``."""
    from pathlib import Path

    client = Path(__file__).resolve().parent.parent / "status_client.py"  # not imported here
    words = [sys.executable, "-S", str(client), "statusline"]
    if store:
        words += ["--store", str(Path(store).expanduser().resolve())]
    return words


def _session(raw: bytes) -> str | None:
    import json

    if not raw.strip():
        return None
    data = json.loads(raw.decode("utf-8", "replace"))
    sid = data.get("session_id") if isinstance(data, dict) else None
    return sid if isinstance(sid, str) and sid else None


def summary_for(store_arg: str | None, sets: list[str], session: str | None
                ) -> tuple[dict[str, Any] | None, str]:
    """(the summary, "daemon" | "in-process"); None when there is no store at that path."""
    from store import (
        DaemonError,
        DaemonNotRunning,
        UnsafeDirectory,
        daemon_request,
        on_server,
        resolve_store,
        socket_path,
        store_name,
    )

    import os

    store_path = resolve_store(store_arg)
    if not sets and not os.environ.get("LCA_NO_DAEMON"):
        try:
            reply = daemon_request(socket_path(store_path),
                                   {"op": "statusline", "store": store_name(store_path),
                                    "session_id": session}, timeout=DAEMON_TIMEOUT,
                                   connect_timeout=0.2)
            if reply.get("ok"):
                return dict(reply["result"]), "daemon"
        except (DaemonNotRunning, DaemonError, UnsafeDirectory):
            pass
    from pathlib import Path

    if not on_server(store_path) and not Path(store_path).exists():
        return None, "in-process"  # no store is created by a status line
    from store import open_store
    from store import Settings, parse_assignment

    store = open_store(store_path, Settings.load(dict(parse_assignment(a) for a in sets)),
                       writer="lca-tui:statusline")
    try:
        return store.status_summary(session).as_json(), "in-process"
    finally:
        store.close()


def render(summary: dict[str, Any] | None) -> str:
    from store import statusline_render

    return statusline_render(summary)


def fast_main(argv: Sequence[str], raw: bytes | None = None) -> int:
    """Print the line; exit 0 whatever happens. ``raw``: the stdin already read (by
    ``lca_tui/status_client.py``, handing over)."""
    line = MARKER
    try:
        try:
            store_arg, sets = _parse(argv)
        except _PrintCommand as asked:
            import shlex

            sys.stdout.write(shlex.join(command(asked.store)) + "\n")
            return 0
        if raw is None:
            raw = sys.stdin.buffer.read(MAX_STDIN) if not sys.stdin.isatty() else b""
        summary, _ = summary_for(store_arg, sets, _session(raw))
        line = render(summary)
    except BaseException as exc:  # noqa: BLE001 - a status line never fails
        try:
            sys.stderr.write(f"lca-tui statusline: {type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''}\n")
        except BaseException:  # noqa: BLE001
            pass
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - Claude Code closed the pipe
        pass
    return 0
