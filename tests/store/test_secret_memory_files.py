"""Secret means secret: a secret memory's default name carries none of its text
(its type and id) — in the store, the proposal, the approval's verification and the bound
file's name — and bound memory files follow the store file's permissions (owner-only by
default), whatever the umask."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from store.governance import approve
from tests.conftest import make_store
from tests.helpers_gov import _propose

TOKEN = "hvs-9f3kq0vault7root"
TEXT = f"The vault root token is {TOKEN} for the staging cluster."


def test_a_secret_memory_is_named_by_its_type_and_id(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    folder.mkdir()
    store = make_store(tmp_path / "s.db", **{"memory.dir": str(folder)})
    try:
        info = _propose(store, {"op": "add", "type": "reference", "content": TEXT,
                                "metadata": {"sensitivity": "secret"}})
        done = approve(store, info.id)
        assert done.status == "applied"
        m = store.memory(int(done.memory_id or 0))
        assert m.name == f"secret reference {done.memory_id}"
        assert "vault" not in json.dumps(done.verification)
        with store.read() as conn:
            name = conn.exec_driver_sql("SELECT name FROM proposal WHERE id = ?",
                                        (info.id,)).scalar_one()
        assert "vault" not in str(name) and TOKEN not in str(name)
        (path,) = list(folder.glob("*.md"))
        assert "vault" not in path.name and "token" not in path.name
        successor = _propose(store, {"op": "supersede", "target": m.id, "type": "reference",
                                     "content": "The vault root token rotated to hvs-new."})
        after = approve(store, successor.id)
        assert store.memory(int(after.memory_id or 0)).name.startswith("secret reference")
    finally:
        store.close()


def test_bound_files_follow_the_store_permissions_whatever_the_umask(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    folder.mkdir()
    old = os.umask(0)
    try:
        store = make_store(tmp_path / "s.db", **{"memory.dir": str(folder)})
        os.chmod(store.path, 0o600)
        try:
            for text, level in (("Backups run nightly at two.", "public"), (TEXT, "secret")):
                info = _propose(store, {"op": "add", "type": "reference", "content": text,
                                        "metadata": {"sensitivity": level}})
                assert approve(store, info.id).status == "applied"
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.glob("*.md")}
            assert len(modes) == 2 and set(modes.values()) == {0o600}, modes
        finally:
            store.close()
    finally:
        os.umask(old)
