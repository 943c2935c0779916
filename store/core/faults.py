"""Named fault points, for the kill-test suite (off unless its environment variables are set,
together with the test-only switch ``LCA_TUI_FAULTS=1``).

A fault point is a named place in a write: every SQL statement a write transaction runs
(``sql <verb> <table>``), every commit (``commit``), and every step of a file journal's play
(``store.core.filejournal``: ``tmp-written <file>``, ``placed <file>``, ``removed <file>``).
With ``LCA_TUI_POINTS_LOG=FILE`` each point reached is appended to FILE, one a line, so a test
learns the sequence an operation goes through; with ``LCA_TUI_KILL_AT=N`` the process ends with
``os._exit(KILL_STATUS)`` — no cleanup, no flush, as ``kill -9`` does — on reaching the Nth
point. The sequence of a given operation on a given store is the same on every run, so a kill
point is named by its number and its name, and every run is the same.

Neither variable does anything alone: fault points are live only while ``LCA_TUI_FAULTS=1``
is set too, which only the kill tests set, so a stray ``LCA_TUI_KILL_AT`` in a production
environment can never end a write half done.
"""

from __future__ import annotations

import os
import re

from sqlalchemy import Engine, event

KILL_ENV = "LCA_TUI_KILL_AT"
LOG_ENV = "LCA_TUI_POINTS_LOG"
SWITCH_ENV = "LCA_TUI_FAULTS"
KILL_STATUS = 86
_VERB = re.compile(r"^\s*(INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)"
                   r"\s+[\"`]?(\w+)", re.IGNORECASE)
_count = 0


def enabled() -> bool:
    """Fault points are live: the test-only switch is on and a kill point or a log is set."""
    return os.environ.get(SWITCH_ENV) == "1" and bool(
        os.environ.get(KILL_ENV) or os.environ.get(LOG_ENV))


def point(name: str) -> None:
    """Reach the named point: log it, and end the process if it is the one to kill at."""
    if not enabled():
        return
    global _count
    _count += 1
    log = os.environ.get(LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{_count}\t{name}\n")
    kill = os.environ.get(KILL_ENV, "")
    if kill.isdigit() and int(kill) == _count:
        os._exit(KILL_STATUS)


def install(engine: Engine) -> None:
    """Make every writing statement and every commit of ``engine`` a fault point."""
    if not enabled():
        return

    @event.listens_for(engine, "before_cursor_execute")
    def _before(_conn, _cursor, statement, _params, _context, _many):  # type: ignore[no-untyped-def]
        m = _VERB.match(statement)
        if m:
            point(f"sql {m.group(1).split()[0].lower()} {m.group(2).lower()}")

    @event.listens_for(engine, "commit")
    def _commit(_conn):  # type: ignore[no-untyped-def]
        point("commit")


def reset() -> None:
    """Count points from the start again (a forked child counts its own)."""
    global _count
    _count = 0
