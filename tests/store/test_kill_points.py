"""Kill tests: an approval with a bound memory directory, an erasure and a redaction
of a memory with a file there, and a consolidation pass that applies a change read from the
directory are each killed — ``os._exit`` in a forked child, as ``kill -9`` does — at their
named fault points (``store.core.faults``: every writing statement, every commit, every file
step), in a fixed seeded order. After each kill the next writer settles what was left
(``lca-tui verify``) and the store and the directory agree exactly — no orphan file, no doubled
memory, no stale ``superseded``, no ``.tmp``, no journal — and running the operation again
finishes it, ending where an uninterrupted run ends."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.core import faults, filejournal
from store.core.models import Memory
from store.governance import approve
from store.governance.files import read_back
from tests.conftest import make_store
from tests.helpers_gov import _propose

POINTS = 20  # kill points per operation (a seeded sample when it has more)
SEED = 23
ON = {faults.SWITCH_ENV: "1"}  # the test-only switch: fault points are live only with it
SECRET = "The deploy key lives at /home/zed/keys/deploy.pem on the build box."

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


@dataclass
class Scenario:
    db: Path
    folder: Path
    settings: dict[str, Any]
    op: Callable[[Store], Any]
    again: Callable[[Store], Any]
    snapshot: dict[str, bytes]
    db_bytes: bytes
    outside: dict[str, bytes] | None = None

    def open(self) -> Store:
        return make_store(self.db, **self.settings)

    def restore(self) -> None:
        for p in self.db.parent.glob(self.db.name + "*"):
            p.unlink()
        self.db.write_bytes(self.db_bytes)
        os.chmod(self.db, 0o600)
        shutil.rmtree(self.folder)
        self.folder.mkdir()
        for name, data in self.snapshot.items():
            (self.folder / name).write_bytes(data)


def _freeze(db: Path, folder: Path, settings: dict[str, Any], op: Callable[[Store], Any],
            again: Callable[[Store], Any] | None = None) -> Scenario:
    store = make_store(db, **settings)
    with store.write() as conn:  # everything in the main file: the snapshot is one file
        conn.exec_driver_sql("SELECT 1")
    store.close()
    from store.core.db import checkpoint_truncate, make_engine

    engine = make_engine(db)
    checkpoint_truncate(engine)
    engine.dispose()
    for p in db.parent.glob(db.name + "-*"):
        p.unlink()
    snap = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    return Scenario(db, folder, settings, op, again or op, snap, db.read_bytes())


def _in_child(s: Scenario, env: dict[str, str]) -> int:
    """Run the operation in a forked child with ``env``; its exit status."""
    pid = os.fork()
    if pid == 0:  # the child: a fresh store (its engine sees the fault variables)
        code = 0
        try:
            os.environ.update(env)
            faults.reset()
            store = s.open()
            s.op(store)
            store.close()
        except BaseException:  # noqa: BLE001 - the child reports by its status only
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _points(s: Scenario, tmp: Path) -> list[str]:
    log = tmp / "points.log"
    log.unlink(missing_ok=True)
    s.restore()
    assert _in_child(s, {faults.LOG_ENV: str(log), **ON}) == 0
    return [line.split("\t", 1)[1] for line in log.read_text().splitlines()]


def _state(s: Scenario) -> tuple[dict[str, str], list[tuple[Any, ...]]]:
    """The directory (name → status and body; times differ between runs) and the memories
    (status, body, file name)."""
    files = {}
    for p in sorted(s.folder.iterdir()):
        fm, body = read_back(p)
        files[p.name] = f"{fm.get('status')}|{body.strip()}"
    with s.open() as store, store.read() as conn:
        rows = conn.execute(Memory.__table__.select()).mappings().all()
        mems = sorted((str(r["status"]), str(r["body"]), Path(r["source_file"]).name
                       if r["source_file"] else "") for r in rows)
    return files, mems


def _agree(s: Scenario, outside: dict[str, bytes] | None = None) -> None:
    """The store and the directory say the same thing, and nothing is left half done.
    ``outside``: files the agent changed outside the gate before the operation (name →
    bytes), which may still wait for the gate while they hold exactly those bytes."""
    names = sorted(os.listdir(s.folder))
    assert not [n for n in names if n.endswith(".tmp")], names
    assert not list(s.db.parent.glob(f"{s.db.name}{filejournal.UNDO_INFIX}*"))
    store = s.open()
    try:
        assert not filejournal.has_pending(store)
        with store.read() as conn:
            mems = [Memory(**dict(r)) for r in
                    conn.execute(Memory.__table__.select()).mappings().all()]
        owned = {Path(m.source_file).name: m for m in mems
                 if m.source_file and Path(m.source_file).parent == s.folder.resolve()}
        orphans = [n for n in names if n.endswith(".md") and n not in owned]
        assert not orphans, f"files no memory owns: {orphans}"
        for name, m in owned.items():
            assert (s.folder / name).is_file(), f"memory {m.id} has no file {name}"
            if outside and (s.folder / name).read_bytes() == outside.get(name):
                continue
            fm, body = read_back(s.folder / name)
            assert (fm.get("name"), fm.get("status"), body.strip()) == (
                m.name, m.status, m.body.strip()), f"{name} disagrees with memory {m.id}"
        bodies = [m.body for m in mems if m.status == "active"]
        assert len(bodies) == len(set(bodies)), "a memory is doubled"
    finally:
        store.close()


FILE_STEPS = ("placed ", "removed ")


def _windows(points: list[str]) -> list[int]:
    """The points (numbered from 1) where the directory and the store part ways, always killed
    besides the seeded sample: from the first file step (``placed …``, ``removed …``) to the
    first ``commit`` after the last one, and the ``commit`` right before the first file step
    (an erasure's, whose files go after it)."""
    steps = [i for i, p in enumerate(points, start=1) if p.startswith(FILE_STEPS)]
    if not steps:
        return []
    start, end = steps[0], steps[-1]
    if start > 1 and points[start - 2] == "commit":
        start -= 1
    end = next((i for i in range(end, len(points) + 1) if points[i - 1] == "commit"), end)
    return list(range(start, end + 1))


def _kill_suite(s: Scenario, tmp: Path) -> dict[str, Any]:
    points = _points(s, tmp)
    assert len(points) >= 20, points
    s.restore()
    assert _in_child(s, {}) == 0
    _agree(s)
    final = _state(s)
    chosen = sorted(set(random.Random(SEED).sample(range(1, len(points) + 1),
                                                   min(POINTS, len(points))))
                    | set(_windows(points)))
    outcomes: dict[str, Any] = {"killed": 0, "points": chosen, "labels": points}
    for n in chosen:
        s.restore()
        status = _in_child(s, {faults.KILL_ENV: str(n), **ON})
        assert status == faults.KILL_STATUS, f"point {n} ({points[n - 1]}) did not kill"
        outcomes["killed"] += 1
        with s.open() as store:  # the next writer settles what the kill left
            store.finish_interrupted()
            store.verify_tombstones()
        _agree(s, s.outside)
        with s.open() as store:  # and the operation run again finishes the work
            s.again(store)
        _agree(s)
        assert _state(s) == final, f"after a kill at point {n} ({points[n - 1]})"
    return outcomes


def _bound(tmp_path: Path, **extra: Any) -> tuple[Path, Path, dict[str, Any]]:
    folder = tmp_path / "mem"
    folder.mkdir()
    return tmp_path / "s.db", folder, {"memory.dir": str(folder), **extra}


def _add(store: Store, text: str, **meta: Any) -> int:
    info = _propose(store, {"op": "add", "type": "reference", "content": text,
                            "metadata": meta})
    done = approve(store, info.id)
    assert done.status == "applied" and done.verified
    return int(done.memory_id or 0)


def test_approve_with_a_bound_directory_survives_a_kill_anywhere(tmp_path: Path) -> None:
    db, folder, settings = _bound(tmp_path)
    with make_store(db, **settings) as store:
        old = _add(store, "Tax reminders go out on the first of the month.", name="Tax")
        pid = _propose(store, {"op": "supersede", "target": old, "type": "reference",
                               "content": "Tax reminders go out on the fifth of the month."}).id

    def again(store: Store) -> None:
        info = store.proposal(pid)
        if info.status == "pending":
            store.approve(pid)
        assert store.proposal(pid).status == "applied" and store.proposal(pid).verified

    s = _freeze(db, folder, settings, lambda st: st.approve(pid), again)
    done = _kill_suite(s, tmp_path)
    assert done["killed"] >= 20
    labels = done["labels"]  # every point between the files placed and the commit was killed
    first = next(i for i, p in enumerate(labels, start=1) if p.startswith("placed "))
    commit = next(i for i in range(first, len(labels) + 1) if labels[i - 1] == "commit")
    assert set(range(first, commit + 1)) <= set(done["points"]), (first, commit)


def test_erase_of_a_memory_with_a_file_survives_a_kill_anywhere(tmp_path: Path) -> None:
    db, folder, settings = _bound(tmp_path)
    with make_store(db, **settings) as store:
        mid = _add(store, SECRET, name="Deploy key")
        _add(store, "Backups run nightly at two.", name="Backups")
        _propose(store, {"op": "supersede", "target": mid, "type": "reference",
                         "content": "The deploy key moved to the vault."})

    def again(store: Store) -> None:
        if any(m.id == mid for m in store.memories()):
            store.erase(memory=mid)
        assert not any(m.id == mid for m in store.memories())
        assert not any("deploy.pem" in p.read_text() for p in folder.iterdir())

    s = _freeze(db, folder, settings, lambda st: st.erase(memory=mid), again)
    done = _kill_suite(s, tmp_path)
    assert done["killed"] >= 20
    labels = done["labels"]  # the erasure's commit and its file removal were both killed
    removed = [i for i, p in enumerate(labels, start=1) if p.startswith("removed ")]
    assert removed and labels[removed[0] - 2] == "commit", labels
    assert {removed[0] - 1, *removed} <= set(done["points"]), removed


def test_redact_of_a_memory_with_a_file_survives_a_kill_anywhere(tmp_path: Path) -> None:
    db, folder, settings = _bound(tmp_path)
    with make_store(db, **settings) as store:
        _add(store, SECRET, name="Deploy key")
        _add(store, "Backups run nightly at two.", name="Backups")

    def again(store: Store) -> None:
        if any("deploy.pem" in m.body for m in store.memories()):
            store.redact(match="deploy.pem")
        assert not any("deploy.pem" in p.read_text() for p in folder.iterdir())

    s = _freeze(db, folder, settings, lambda st: st.redact(match="deploy.pem"), again)
    assert _kill_suite(s, tmp_path)["killed"] >= 20


def test_a_consolidation_pass_survives_a_kill_anywhere(tmp_path: Path) -> None:
    db, folder, settings = _bound(tmp_path, **{"governance.auto_apply": "reinforce,noop,revise"})
    with make_store(db, **settings) as store:
        _add(store, "Tax reminders go out on the first of the month.", name="Tax")
        _add(store, "Backups run nightly at two.", name="Backups")
    (path,) = [p for p in folder.iterdir() if "tax" in p.name]
    path.write_text(path.read_text().replace("first", "tenth"))  # the agent edits a file

    def again(store: Store) -> None:
        store.consolidate(use_proposer=False)
        assert any("tenth" in m.body and m.status == "active" for m in store.memories())

    s = _freeze(db, folder, settings, lambda st: st.consolidate(use_proposer=False), again)
    s.outside = {path.name: path.read_bytes()}
    assert _kill_suite(s, tmp_path)["killed"] >= 20


def _approve_scenario(tmp_path: Path) -> tuple[Scenario, int]:
    db, folder, settings = _bound(tmp_path)
    with make_store(db, **settings) as store:
        old = _add(store, "Tax reminders go out on the first of the month.", name="Tax")
        pid = _propose(store, {"op": "supersede", "target": old, "type": "reference",
                               "content": "Tax reminders go out on the fifth of the month."}).id
    return _freeze(db, folder, settings, lambda st: st.approve(pid)), pid


def test_a_kill_before_the_verification_is_finished_by_approve(tmp_path: Path) -> None:
    s, pid = _approve_scenario(tmp_path)
    points = _points(s, tmp_path)
    s.restore()  # the last commit is the verification's: killed there, the apply stands
    assert _in_child(s, {faults.KILL_ENV: str(len(points)), **ON}) == faults.KILL_STATUS
    with s.open() as store:
        info = store.proposal(pid)
        assert info.status == "applied" and info.verified is None
        again = store.approve(pid)  # no longer "already applied": it verifies
        assert again.verified is True
    _agree(s)


def test_a_kill_after_placing_files_then_reject_leaves_no_file_behind(tmp_path: Path) -> None:
    s, pid = _approve_scenario(tmp_path)
    points = _points(s, tmp_path)
    placed = max(i for i, p in enumerate(points, start=1) if p.startswith("placed "))
    s.restore()
    assert _in_child(s, {faults.KILL_ENV: str(placed), **ON}) == faults.KILL_STATUS
    assert len(list(s.folder.glob("*.md"))) == 2  # the directory ran ahead of the store
    with s.open() as store:
        store.reject(pid, "not now")
        assert store.proposal(pid).status == "rejected"
        store.ingest([s.folder])  # nothing comes back as a file add
        assert [p.status for p in store.proposals()] == ["rejected", "applied"]
    assert len(list(s.folder.glob("*.md"))) == 1
    _agree(s)


def test_a_stale_tmp_file_is_cleaned_on_the_next_write_and_never_imported(
        tmp_path: Path) -> None:
    s, pid = _approve_scenario(tmp_path)
    s.restore()
    stale = s.folder / ".reference_tax.md.k3j9x_q.tmp"
    stale.write_text("---\nname: half\n---\n\nhalf written\n")
    with s.open() as store:
        store.ingest([s.folder])
        assert not any(m.name == "half" for m in store.memories())
        store.approve(pid)
    assert not stale.exists()
    _agree(s)


def test_the_fault_variables_alone_never_kill_nor_log(tmp_path: Path) -> None:
    s, pid = _approve_scenario(tmp_path)
    log = tmp_path / "points.log"
    s.restore()  # a stray LCA_TUI_KILL_AT / LCA_TUI_POINTS_LOG without the switch: no effect
    assert _in_child(s, {faults.KILL_ENV: "1", faults.LOG_ENV: str(log)}) == 0
    assert not log.exists()
    with s.open() as store:
        assert store.proposal(pid).status == "applied"
    s.restore()  # with the switch the same variables kill at the first point
    assert _in_child(s, {faults.KILL_ENV: "1", **ON}) == faults.KILL_STATUS
