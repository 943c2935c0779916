"""``lca-tui context``: an unknown or ambiguous agent is one clear error line."""

from __future__ import annotations

import json

import pytest

from store import Store

from tests.helpers_ui import SESSIONS, WORKER, _one_error_line, _run, _store_with_worker


def test_context_unknown_and_ambiguous_agent(store: Store,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from store.context.api import record_snapshot

    _store_with_worker(store)
    for agent in ("main", WORKER, "a7c3e999"):
        record_snapshot(store, SESSIONS[0], 1000, agent=agent, ts="2026-03-01T10:03:00Z")
    _one_error_line(*_run(["context", "--agent", "nobody", "--store", str(store.path)], capsys),
                    "no agent 'nobody'", "main", WORKER)
    _one_error_line(*_run(["context", "--agent", "a7c3e", "--store", str(store.path)], capsys),
                    "names 2 agents", WORKER, "a7c3e999")
    code, out, _ = _run(["context", "--agent", "a7c3e5", "--json", "--store", str(store.path)],
                        capsys)
    assert code == 0 and [s["agent"] for s in json.loads(out)["sessions"]] == [WORKER]
