"""Issue 12, second review: an erasure interrupted after its commit is finished by
``tombstones --verify``; ids of erased records are never given to new ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.privacy import apply
from tests.test_privacy import NEEDLE


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from lca_tui.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class Crash(BaseException):
    """Stands for kill -9: nothing after it runs (not even ``except Exception``)."""


def _crash_after_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    original = apply.erase

    def erase_then_die(*args: Any, **kwargs: Any) -> int:
        original(*args, **kwargs)  # the transaction committed: the tombstone is there
        raise Crash

    monkeypatch.setattr(apply, "erase", erase_then_die)


# -- A. interrupted after the commit ---------------------------------------------------------
def test_an_erasure_interrupted_after_its_commit_is_finished_by_verify(
        cc_store: Store, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    store = cc_store
    _crash_after_commit(monkeypatch)
    with pytest.raises(Crash):
        store.erase(match=NEEDLE)
    monkeypatch.undo()
    [tomb] = store.tombstones()
    assert tomb.verified is None
    assert store.unverified_tombstones() == [tomb.id]
    path = str(store.path)
    store.close()

    # running the same erase again: an empty closure, and one line saying what to do
    code, out, err = _cli(capsys, "erase", "--store", path, "--match", NEEDLE, "--yes",
                          "--json")
    assert code == 0 and json.loads(out)["tombstone_id"] is None
    assert f"tombstone {tomb.id}" in err and "lca-tui tombstones --verify" in err
    assert len(err.strip().splitlines()) == 1

    code, out, _ = _cli(capsys, "tombstones", "--store", path, "--verify", "--json")
    assert code == 0, out
    [done] = json.loads(out)["verified"]
    assert done["tombstone_id"] == tomb.id and done["passed"] is True
    names = [p["name"] for p in done["probes"]]
    assert names == ["rows", "index", "exports", "raw-bytes"]
    assert "WAL truncated" in done["probes"][-1]["detail"]

    from tests.conftest import make_store

    again = make_store(Path(path))
    try:
        [info] = again.tombstones(with_probes=True)
        assert info.verified is True
        assert [p[0] for p in info.probes] == names and all(p[1] for p in info.probes)
        assert again.unverified_tombstones() == []
        assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
        assert NEEDLE.encode() not in Path(path).read_bytes().lower()
    finally:
        again.close()
    code, out, err = _cli(capsys, "tombstones", "--store", path, "--verify")
    assert code == 0 and "nothing to do" in out


def test_verify_fails_when_an_erased_record_is_back(cc_store: Store,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The fingerprint probe can fail: an erased entry's row put back by hand is found."""
    from sqlalchemy import text

    store = cc_store
    with store.read() as conn:
        row = dict(conn.execute(text(
            "SELECT * FROM entry WHERE instr(lower(content), :n) ORDER BY id LIMIT 1"),
            {"n": NEEDLE.lower()}).mappings().one())
    _crash_after_commit(monkeypatch)
    with pytest.raises(Crash):
        store.erase(entry=int(row["id"]))
    monkeypatch.undo()
    with store.write() as conn:  # what a buggy importer would do: the same line again
        cols = ", ".join(row)
        conn.execute(text(f"INSERT INTO entry ({cols}) VALUES ("
                          + ", ".join(f":{c}" for c in row) + ")"), row)
    [(tid, v)] = store.verify_tombstones()
    rows = {p.name: p for p in v.probes}["rows"]
    assert not v.passed and not rows.passed and rows.detail.startswith("1 of ")
    assert store.tombstones()[0].verified is False
    assert store.unverified_tombstones() == []


def test_verify_of_an_unknown_tombstone_is_a_clear_error(
        store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(store.path)
    store.close()
    code, _out, err = _cli(capsys, "tombstones", "--store", path, "--verify", "7")
    assert code != 0 and "no tombstone 7" in err
