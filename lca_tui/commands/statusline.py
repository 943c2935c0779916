"""``lca-tui statusline``: one line for Claude Code's status line (``"statusLine": {"type":
"command", "command": "lca-tui statusline"}`` in settings.json).

It reads the JSON Claude Code passes on stdin (``session_id`` is what it uses) and prints the
session's context pressure against its checkpoint threshold, the proposals waiting for a
person, and the worst signal of the latest stored health scan, e.g. ``lca ctx 64% of
checkpoint · 2 pending · health warn evidence_orphans``. The warm daemon answers when it runs
(``statusline`` op); otherwise the store is read in this process. It never fails the status
line: any error prints ``lca ?`` (and why on stderr) and exits 0. Answered before the full
command parser is built (``lca_tui.cli.main``), as ``hook`` is.
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
        else:
            raise ValueError(f"statusline takes only --store and --set, not {word!r}")
    return store, sets


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
    from store.harness import client, paths

    import os

    store_path = paths.resolve_store(store_arg)
    if not sets and not os.environ.get("LCA_NO_DAEMON"):
        try:
            reply = client.request(paths.socket_path(store_path),
                                   {"op": "statusline", "store": str(store_path),
                                    "session_id": session}, timeout=DAEMON_TIMEOUT,
                                   connect_timeout=0.2)
            if reply.get("ok"):
                return dict(reply["result"]), "daemon"
        except (client.NotRunning, client.DaemonError, paths.UnsafeDirectory):
            pass
    if not store_path.exists():
        return None, "in-process"  # no store is created by a status line
    from store import open_store
    from store.core.settings import Settings, parse_assignment

    store = open_store(store_path, Settings.load(dict(parse_assignment(a) for a in sets)),
                       writer="lca-tui:statusline")
    try:
        return store.status_summary(session), "in-process"
    finally:
        store.close()


def render(summary: dict[str, Any] | None) -> str:
    if summary is None:
        return "lca no store"
    parts = []
    p = summary.get("pressure")
    if p is None:
        parts.append("ctx -")
    elif p.get("percent_of_checkpoint") is not None:
        mark = "!" if p["state"] != "below" else ""
        parts.append(f"ctx {p['percent_of_checkpoint']:.0f}%{mark} of checkpoint")
    else:
        parts.append(f"ctx {p['used_tokens']:,} tokens")
    pending = int(summary.get("pending") or 0)
    parts.append(f"{pending} pending")
    worst = summary.get("worst")
    if worst:
        parts.append(f"health {worst['status']} {worst['name']}")
    elif summary.get("signals"):
        parts.append("health ok")
    else:
        parts.append("health -")
    return "lca " + " · ".join(parts)


def fast_main(argv: Sequence[str]) -> int:
    """Print the line; exit 0 whatever happens."""
    line = MARKER
    try:
        store_arg, sets = _parse(argv)
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
