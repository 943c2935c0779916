"""``lca-tui hook EVENT``: what lca-tui's Claude Code hooks run (Claude Code's hook JSON on
stdin). Through the daemon when one serves the store, in this process otherwise.

This command is dispatched by ``lca_tui.cli.main`` before the full parser is built, through
``fast_main``, and imports only the standard library and ``store.harness.{paths, client,
failures}`` until it knows it must work in-process: a hook the daemon answers costs little
more than starting Python. Whatever happens, it exits 0 and prints nothing but the hook's
output (a hook must never break the session); failures are recorded.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

EVENTS = ("UserPromptSubmit", "PreCompact", "SessionEnd", "Stop")
MAX_STDIN = 16 * 1024 * 1024
# seconds the daemon may take before the hook gives up (Claude Code's own limit is larger)
DAEMON_TIMEOUT = {"UserPromptSubmit": 20.0, "Stop": 20.0, "PreCompact": 280.0,
                  "SessionEnd": 280.0}


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


def _answer(event: str, store_arg: str | None, sets: list[str], raw: bytes) -> str:
    from store.harness import client, paths

    store = paths.resolve_store(store_arg)
    if not sets and not os.environ.get("LCA_NO_DAEMON"):
        try:
            sock = paths.socket_path(store)
            reply = client.request(sock, {"op": "hook", "event": event, "store": str(store),
                                          "stdin": raw.decode("utf-8", "replace")},
                                   timeout=DAEMON_TIMEOUT[event])
        except (client.NotRunning, paths.UnsafeDirectory):
            pass  # no daemon: work in this process
        except client.DaemonError as exc:
            from store.harness.failures import log_failure

            log_failure(event, store, f"the daemon failed to answer: {exc}", via="daemon")
            return ""
        else:
            if reply.get("ok"):
                return str(reply.get("stdout") or "")
            if reply.get("error") != "wrong store":
                return ""  # the daemon recorded the failure itself
    from store.harness.hook import handle

    settings = None
    if sets:
        from store.core.settings import Settings, parse_assignment

        settings = Settings.load(dict(parse_assignment(a) for a in sets))
    return handle(store, event, raw, settings)


def fast_main(argv: Sequence[str]) -> int:
    """Run ``hook EVENT``: print the hook's output (or nothing), always exit 0."""
    parsed = parse_fast(argv)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # nothing but the hook's own output may reach stdout
    out = ""
    try:
        if parsed is None:
            raise ValueError(f"cannot read the hook command {' '.join(argv)!r}")
        event, store_arg, sets = parsed
        raw = _read_stdin(MAX_STDIN)
        out = _answer(event, store_arg, sets, raw)
    except BaseException as exc:  # never break the session: record and print nothing
        try:
            from store.harness.failures import log_failure

            log_failure(parsed[0] if parsed else "?", parsed[1] if parsed else None,
                        f"{type(exc).__name__}: {exc}")
        except BaseException:  # noqa: S110 - nothing is left to record it with
            sys.stderr.write(f"lca-tui hook: {exc}\n")
        out = ""
    finally:
        sys.stdout = real_stdout
    if out:
        real_stdout.write(out + "\n")
        real_stdout.flush()
    return 0
