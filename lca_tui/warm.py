"""Hand-run commands answered by the warm daemon (``lca-tui serve``), as hooks are.

``ask(args, message)`` sends the command's request to the daemon serving the store the command
names, with what the caller — never the daemon — decides: the person (``--actor`` /
``LCA_ACTOR``, then the caller's ``identity.name``, and the OS account, added by
``daemon_request``), the ``--set`` overrides of this run, every setting as the caller's own
config file and environment give it (the daemon answers only when it can apply those that
differ from its own per request, else the command runs here), and ``--read-only`` when the
command line or the caller's ``store.read_only`` says so. It returns the reply, or None when no
daemon serves the store, it did not take the request on, or it answered with an error — the
command then runs in this process, with the same result (a bad query gets its own clear error
there). Importing this module imports neither the store nor SQLAlchemy.
"""

from __future__ import annotations

import argparse
from typing import Any


def overrides(args: argparse.Namespace) -> list[str]:
    """This run's ``--set NAME=VALUE`` (before and after the command), in order."""
    return [*(getattr(args, "overrides_top", None) or []),
            *(getattr(args, "overrides", None) or [])]


def ask(args: argparse.Namespace, message: dict[str, Any], timeout: float = 60.0,
        replayable: bool = True) -> dict[str, Any] | None:
    """The daemon's reply to ``message`` for the store ``args`` names, or None (work here).

    ``replayable=False`` (a write such as ``approve``): once the daemon acknowledged the
    request, a lost answer is an error (``StoreError``), never a second try in this process —
    the write may have been done."""
    from store import (
        DaemonError,
        DaemonNoAck,
        DaemonNotRunning,
        Settings,
        SettingsError,
        UnsafeDirectory,
        actor_for_request,
        daemon_request,
        parse_assignment,
        resolve_store,
        socket_path,
        store_name,
    )

    try:  # the caller's settings (its config file, $LCA_EMBEDDER, --set), never the daemon's
        mine = Settings.load(dict(parse_assignment(a) for a in overrides(args)))
    except (SettingsError, ValueError):
        return None  # in this process, the same clear error
    asked: dict[str, Any] = {
        **message, "set": overrides(args), "settings": mine.as_dict(),
        "read_only": bool(getattr(args, "read_only", False) or mine["store.read_only"])}
    if "actor" not in actor_for_request() and mine["identity.name"]:
        asked["actor"] = mine["identity.name"]  # --actor, $LCA_ACTOR, then identity.name
    try:
        store = resolve_store(getattr(args, "store", None))
        reply = daemon_request(socket_path(store), {
            **asked, "store": store_name(store)}, timeout=timeout, ack_timeout=2.0)
    except (DaemonNotRunning, DaemonNoAck, UnsafeDirectory):
        return None
    except DaemonError as exc:
        if replayable:
            return None
        from store import StoreError

        raise StoreError(f"the daemon took the request on but its answer was lost ({exc}): "
                         "see `lca-tui proposal ID` for what it did") from exc
    return reply if reply.get("ok") else None
