"""``lca-tui expire [--dry-run]``: the retention pass from the command line — what is past
``memory.retention_days.<type>``, the expire proposals it files, nothing with --dry-run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import Store

from tests.helpers_recall import import_memories


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    from lca_tui.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, json.loads(out.out) if "--json" in argv and out.out else out.out, out.err


def test_expire_from_the_command_line(store: Store, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    ids = import_memories(store, tmp_path / "mem", [
        ("old", "The old staging cluster is called ferry.",
         {"name": "old", "type": "project", "created": "2020-01-01"}),
        ("new", "The new staging cluster is called barge.",
         {"name": "new", "type": "project", "created": "2999-01-01"})])
    args = ("--store", str(store.path), "--set", "memory.retention_days.project=30")
    code, out, _ = _cli(capsys, "expire", "--dry-run", *args)
    assert code == 0 and "1 memory past its retention" in out
    assert f"memory {ids['old']} (project)" in out and "retention 30" in out
    assert store.proposals() == []
    code, doc, _ = _cli(capsys, "expire", *args, "--json")
    assert code == 0 and doc["proposals_added"] == 1
    assert [d["memory_id"] for d in doc["due"]] == [ids["old"]]
    assert store.proposal(doc["proposal_ids"][0]).summary.op == "expire"


def test_expire_erases_transcript_entries_only_when_confirmed(
        store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    """Entries past ``transcript.retention_days.<kind>``: listed per kind and session by
    --dry-run (nothing changes), kept without --yes (exit 1, said on stderr), erased with it
    through the privacy erasure — one tombstone, verified."""
    from store.core.writes import NewEntry, NewSession

    store.append_entries(NewSession("s-old", "test"), [
        NewEntry("user", "show me the pelican report", "k", source_offset=0,
                 ts="2020-01-01T10:00:00Z"),
        NewEntry("tool_result", "pelican report: 7 failures in the flamingo suite", "k",
                 source_offset=1, ts="2020-01-01T10:00:05Z"),
        NewEntry("tool_result", "future log line", "k", source_offset=2,
                 ts="2999-01-01T10:00:00Z")])
    ids = [e.id for e in store.entries("s-old")]
    args = ("--store", str(store.path), "--set", "transcript.retention_days.tool_result=30")
    code, out, _ = _cli(capsys, "expire", "--dry-run", *args)
    assert code == 0 and "1 transcript entry past its retention" in out
    assert "s-old" in out and "tool_result" in out and "erase closure" in out
    assert len(store.entries("s-old")) == 3 and store.tombstones() == []
    code, doc, err = _cli(capsys, "expire", *args, "--json")
    assert code == 1 and "needs --yes" in err and doc["transcript"]["erased"] is None
    assert doc["transcript"]["by_session"] == {"s-old": {"tool_result": 1}}
    assert len(store.entries("s-old")) == 3 and store.tombstones() == []
    code, doc, _ = _cli(capsys, "expire", *args, "--yes", "--json")
    assert code == 0 and doc["transcript"]["erased"]["verification"]["passed"] is True
    assert [e.id for e in store.entries("s-old")] == [ids[0], ids[2]]
    (tomb,) = store.tombstones()
    assert tomb.id == doc["transcript"]["erased"]["tombstone_id"] and tomb.verified is True
    assert tomb.counts["entry"] == 1
    code, out, _ = _cli(capsys, "expire", *args)
    assert code == 0 and "1 transcript" not in out


@pytest.mark.parametrize("typed", ["erase", "no"])
def test_expire_asks_at_a_terminal(store: Store, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch, typed: str) -> None:
    """Without --yes at a terminal the closure is shown and only typing ``erase`` erases."""
    import io

    from store.core.writes import NewEntry, NewSession

    store.append_entries(NewSession("s-tty", "test"), [
        NewEntry("tool_result", "heron audit output", "k", source_offset=0,
                 ts="2020-01-01T10:00:00Z")])

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Tty(typed + "\n"))
    code, out, err = _cli(capsys, "expire", "--store", str(store.path), "--set",
                          "transcript.retention_days.tool_result=30")
    assert "erase closure" in out and "Type erase" in err
    if typed == "erase":
        # its only entry erased, the session goes with it (the erasure's closure)
        assert code == 0 and "s-tty" not in {x.id for x in store.sessions()}
        assert len(store.tombstones()) == 1
        assert "1 transcript entry erased" in out and "verification passed" in out
    else:
        assert code == 1 and "past their retention kept" in err
        assert len(store.entries("s-tty")) == 1 and store.tombstones() == []
