"""``lca-tui history MEMORY``, ``revert MEMORY --to VERSION`` and ``undo`` from the command
line: the versions with who and the diff, a revert that lands in the queue as a pending
proposal, bad input as one line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from store import Store
from store.governance import approve

from tests.helpers_gov_seed import _propose


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    from lca_tui.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, json.loads(out.out) if "--json" in argv and out.out else out.out, out.err


def test_history_revert_and_undo(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    mid = approve(store, _propose(store, {"op": "add", "type": "project",
                                          "content": "The build uses make."}).id,
                  actor="ana").memory_id
    approve(store, _propose(store, {"op": "revise", "target": mid,
                                    "content": "The build uses just."}).id, actor="ben")
    db = str(store.path)
    code, doc, _ = _cli(capsys, "history", str(mid), "--store", db, "--json")
    assert code == 0 and [v["text"] for v in doc["versions"]] == ["The build uses make.",
                                                                  "The build uses just."]
    code, out, _ = _cli(capsys, "history", str(mid), "--store", db)
    assert code == 0
    assert "version 2 (current) — revise of memory" in out and "by ben" in out
    assert "-The build uses make." in out and "+The build uses just." in out
    code, doc, _ = _cli(capsys, "revert", str(mid), "--to", "1", "--store", db, "--json")
    assert code == 0 and doc["status"] == "pending" and doc["content"] == "The build uses make."
    pending = doc["id"]
    code, doc, _ = _cli(capsys, "proposals", "--status", "pending", "--store", db, "--json")
    assert [p["op"] for p in doc["proposals"]] == ["supersede"]
    # the undo of the revise is that same supersede, already pending: one line names it
    code, out, err = _cli(capsys, "undo", "--store", db)
    assert code == 2 and f"proposal {pending} already files this" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    code, _, _ = _cli(capsys, "reject", str(pending), "--store", db, "--reason", "not yet")
    assert code == 0
    code, doc, _ = _cli(capsys, "undo", "--store", db, "--json")
    assert code == 0 and doc["content"] == "The build uses make."


def test_history_shows_an_expire_with_who_and_when(
        store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30 review: an applied expire is a version of the memory's history."""
    mid = approve(store, _propose(store, {"op": "add", "type": "project",
                                          "content": "The build uses make."}).id,
                  actor="ana").memory_id
    gone = approve(store, _propose(store, {"op": "expire", "target": mid}).id, actor="ben")
    code, out, _ = _cli(capsys, "history", str(mid), "--store", str(store.path))
    assert code == 0
    assert f"version 2 — expire of memory {mid}, proposal {gone.id}" in out
    assert "by ben" in out and "expired: no longer recalled, its text unchanged" in out


def test_bad_input_is_one_line(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(store.path)
    code, out, err = _cli(capsys, "history", "999", "--store", db)
    assert code == 2 and out == "" and err.startswith("lca-tui: no memory 999")
    code, out, err = _cli(capsys, "undo", "--store", db)
    assert code == 2 and "no approval to undo" in err and "Traceback" not in err
