"""Who decides: the person recorded on decisions, audit events and tombstones (issue 22).

In order: the name given for this call (``--actor``, an API ``actor=``), the name a daemon
request carried (``given``: the person behind the command the daemon answers), ``LCA_ACTOR``,
the ``identity.name`` setting, else the OS account running the process (``pwd``, by uid:
``$USER`` is not read, cron and containers leave it unset or wrong). Never the program's name:
an account the OS cannot name is recorded as ``uid N``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

ENV = "LCA_ACTOR"
SETTING = "identity.name"
_GIVEN: ContextVar[str | None] = ContextVar("lca_actor", default=None)
_ACCOUNT: ContextVar[str | None] = ContextVar("lca_actor_account", default=None)
"""Set while a daemon answers a request: the OS account of the process that sent it (the
daemon's own environment and account are not the caller's)."""


def os_account() -> str:
    """The OS account of this process, by uid (``pwd``); ``uid N`` when it has no name."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name or f"uid {os.getuid()}"
    except (ImportError, KeyError, AttributeError, OSError):
        getuid = getattr(os, "getuid", None)
        return f"uid {getuid()}" if getuid is not None else "unknown account"


def clean(name: Any) -> str | None:
    """A usable name (stripped, one line, at most 120 characters) or None."""
    if not isinstance(name, str):
        return None
    flat = " ".join(name.split())[:120]
    return flat or None


def resolve(explicit: str | None = None, settings: Any = None) -> str:
    """The person to record (see the module docstring)."""
    remote = _ACCOUNT.get()
    env = None if remote else os.environ.get(ENV)  # a daemon's environment is not the caller's
    for candidate in (explicit, _GIVEN.get(), env):
        name = clean(candidate)
        if name:
            return name
    if settings is not None:
        try:
            name = clean(settings[SETTING])
        except (KeyError, TypeError):
            name = None
        if name:
            return name
    return remote or os_account()


def for_request() -> dict[str, str]:
    """What a client sends the daemon so that the daemon records the person behind the
    command: the name given (``--actor`` / ``LCA_ACTOR``) and this process's OS account."""
    out = {"account": os_account()}
    name = clean(_GIVEN.get()) or clean(os.environ.get(ENV))
    if name:
        out["actor"] = name
    return out


@contextmanager
def acting_as(name: str | None, account: str | None = None) -> Iterator[None]:
    """Within the block, ``resolve`` records ``name`` unless a call names its own actor; with
    ``account`` (a daemon answering a request) the caller's OS account is the fall-back and
    the daemon's own ``LCA_ACTOR`` is not read."""
    token = _GIVEN.set(clean(name))
    token2 = _ACCOUNT.set(clean(account))
    try:
        yield
    finally:
        _ACCOUNT.reset(token2)
        _GIVEN.reset(token)
