"""``lca-tui context``: an unknown or ambiguous agent is one clear error line; ``context
record``: a line that is not a record says what it is instead, the others still recorded."""

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


def test_context_record_names_what_a_bad_line_is(store: Store) -> None:
    from lca_tui.commands.context import _record_all

    raw = '"str"\n[1]\n{"type": "prune", "session_id": "s1"}\n{"session_id": "s1", ' \
          '"used_tokens": 5}\n{"a\n'
    recorded, errors, _ = _record_all(store, raw)
    assert [r["line"] for r in recorded] == [4]
    assert [(e["line"], e["reason"]) for e in errors] == [
        (1, "not a JSON object: a string"), (2, "not a JSON object: an array"),
        (3, "a prune record needs tokens_before, tokens_after"),
        (5, "invalid JSON: Unterminated string starting at at column 2")]
