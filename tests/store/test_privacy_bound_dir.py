"""Erasure closes every path: a memory's file in the bound memory directory is
deleted (erase) or rewritten (redact) with it, a copy coming back is "erased earlier", the
probes read the directory (and name the git commits that keep the bytes), proposals and their
checks lose the erased text, the raw-bytes probe always searches the erased texts' own
strings, and the traces probe counts only what the probes wrote."""

from __future__ import annotations

from store import NotFound

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.governance import approve
from tests.conftest import make_store
from tests.helpers_gov import _propose

SECRET = "The deploy key lives at /home/zed/keys/deploy.pem on the build box."


def _bound(tmp_path: Path) -> tuple[Store, Path]:
    folder = tmp_path / "mem"
    folder.mkdir()
    return make_store(tmp_path / "s.db", **{"memory.dir": str(folder)}), folder


def _add(store: Store, text: str = SECRET, **meta: Any) -> int:
    info = _propose(store, {"op": "add", "type": "reference", "content": text,
                            "metadata": meta})
    done = approve(store, info.id)
    assert done.status == "applied" and done.memory_id is not None
    return int(done.memory_id)


def _probes(result: Any) -> dict[str, Any]:
    return {p.name: p for p in result.verification.probes}


def _store_bytes(store: Store) -> bytes:
    return b"".join(p.read_bytes() for p in store.path.parent.glob(store.path.name + "*")
                    if p.is_file())


def _dir_holds(folder: Path, needle: str) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.is_file() and not p.is_symlink()
            and needle.encode() in p.read_bytes() and ".git" not in p.parts]


@pytest.mark.parametrize("scope", ["memory", "match"])
def test_erase_deletes_the_bound_file_and_a_copy_back_is_erased_earlier(
        tmp_path: Path, scope: str) -> None:
    store, folder = _bound(tmp_path)
    try:
        mid = _add(store)
        (path,) = list(folder.glob("*.md"))
        copy = path.read_bytes()
        result = store.erase(memory=mid) if scope == "memory" else store.erase(
            match="deploy.pem")
        assert result.verification.passed, [p.to_json() for p in result.verification.probes]
        assert not path.exists() and _dir_holds(folder, "deploy.pem") == []
        assert _probes(result)["memory-dir"].passed
        assert "1 deleted" in _probes(result)["memory-dir"].detail
        # the agent (or a sync) puts the file back: the import refuses it
        path.write_bytes(copy)
        report = store.ingest([folder])
        assert report.memories_added == 0 and report.erased_earlier == 1
        (folder / "copy.md").write_bytes(copy)  # a copy under another name too
        report = store.ingest([folder])
        assert report.memories_added == 0 and report.erased_earlier == 2
        path.unlink()
        (folder / "copy.md").unlink()
        store.close()
        assert b"deploy.pem" not in _store_bytes(store)
    finally:
        store.close()


def test_the_probe_fails_while_a_file_of_the_directory_still_holds_the_text(
        tmp_path: Path) -> None:
    store, folder = _bound(tmp_path)
    try:
        mid = _add(store)
        (folder / "notes.md").write_text(f"---\nname: notes\n---\n\n{SECRET}\n")
        result = store.erase(memory=mid)
        probe = _probes(result)["memory-dir"]
        assert not probe.passed and "notes.md" in probe.detail
        assert SECRET not in probe.detail  # details name files, never content
    finally:
        store.close()


def test_redact_rewrites_the_bound_file_and_the_next_import_proposes_nothing(
        tmp_path: Path) -> None:
    store, folder = _bound(tmp_path)
    try:
        mid = _add(store, name="Deploy key")
        (path,) = list(folder.glob("*.md"))
        result = store.redact(match="deploy.pem")
        assert result.verification.passed, [p.to_json() for p in result.verification.probes]
        text = path.read_text()
        assert "deploy.pem" not in text and "[REDACTED]" in text
        assert "deploy.pem" not in store.memory(mid).body
        before = len(store.proposals())
        report = store.ingest([folder])
        assert report.memories_added == 0 and len(store.proposals()) == before
    finally:
        store.close()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_git_repository_keeps_the_bytes_and_the_report_names_the_commits(
        tmp_path: Path) -> None:
    store, folder = _bound(tmp_path)
    try:
        mid = _add(store)
        git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.org"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "memories"], check=True)
        commit = subprocess.run([*git, "log", "--format=%h", "-1"], check=True,
                                capture_output=True, text=True).stdout.strip()
        result = store.erase(memory=mid)
        probe = _probes(result)["memory-dir"]
        assert not probe.passed and not result.verification.passed
        assert commit in probe.detail and "git repository" in probe.detail
        assert not list(folder.glob("*.md"))  # the work tree is clean; the history is not
    finally:
        store.close()


def test_proposals_checks_and_targets_lose_an_erased_memory(tmp_path: Path) -> None:
    store, folder = _bound(tmp_path)
    try:
        mid = _add(store)
        pending = _propose(store, {"op": "supersede", "target": mid, "type": "reference",
                                   "content": "The deploy key moved to the vault."})
        assert store.proposal(pending.id).status == "pending"
        result = store.erase(memory=mid)
        assert result.closure.get("proposal") == 2  # the add that made it, the supersede
        raw = _probes(result)["raw-bytes"]
        assert raw.passed and not raw.detail.startswith("0 strings"), raw.detail
        store.close()
        assert b"deploy.pem" not in _store_bytes(store)
    finally:
        store.close()


def test_erasing_a_session_takes_proposals_aimed_at_its_memory(cc_store: Store) -> None:
    from store.core import memories

    sid = cc_store.sessions()[0].id
    entry = cc_store.entries(sid)[0]
    body = "Session memory: the staging token is tok-7731-zebra for the demo box."
    with cc_store.write() as conn:
        written = memories.create(conn, cc_store, {
            "name": "staging token", "type": "reference", "body": body,
            "created": "2026-01-01T00:00:00Z", "authority": "approved"})
        memories.add_evidence(conn, cc_store, written.memory_id, entry_id=entry.id,
                              note="test")
    pending = _propose(cc_store, {"op": "supersede", "target": written.memory_id,
                                  "type": "reference", "content": "The token rotated."})
    result = cc_store.erase(session=sid)
    assert result.verification.passed, [p.to_json() for p in result.verification.probes]
    with pytest.raises(NotFound):
        cc_store.proposal(pending.id)
    cc_store.close()
    assert b"tok-7731-zebra" not in _store_bytes(cc_store)


def test_raw_bytes_with_nothing_to_search_is_no_pass(tmp_path: Path) -> None:
    store, folder = _bound(tmp_path)
    try:
        first = _add(store, name="one")
        with store.write() as conn:  # the same body kept by a memory outside the scope
            from store.core import memories

            memories.create(conn, store, {"name": "two", "type": "reference", "body": SECRET,
                                          "created": "2026-01-01T00:00:00Z"})
        result = store.erase(memory=first)
        raw = _probes(result)["raw-bytes"]
        assert not raw.passed and "nothing to search" in raw.detail
    finally:
        store.close()


def test_a_recall_answered_during_the_probes_does_not_fail_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, folder = _bound(tmp_path)
    try:
        mid = _add(store)
        import store.recall.run as run_mod

        real = run_mod.probe

        def busy(s: Store, query: str, **kw: Any) -> Any:
            s.recall("what does the build box run?")  # a hook's prompt meanwhile
            return real(s, query, **kw)

        monkeypatch.setattr(run_mod, "probe", busy)
        result = store.erase(memory=mid)
        traces = _probes(result)["traces"]
        assert traces.passed and "0 traces written by the probes" in traces.detail
    finally:
        store.close()


def test_redacting_a_memory_by_id_rewrites_its_proposals_and_file(tmp_path: Path) -> None:
    store, folder = _bound(tmp_path)
    try:
        mid = _add(store, name="Deploy key")
        _propose(store, {"op": "supersede", "target": mid, "type": "reference",
                         "content": "The deploy key moved to the vault."})
        result = store.redact(memory=mid)
        assert result.verification.passed, [p.to_json() for p in result.verification.probes]
        assert not _dir_holds(folder, "deploy.pem")
        store.close()
        assert b"deploy.pem" not in _store_bytes(store)
    finally:
        store.close()


def test_redact_renames_a_bound_file_whose_name_holds_the_text(tmp_path: Path) -> None:
    store, folder = _bound(tmp_path)
    try:
        mid = _add(store, "The Pangolin ledger is reconciled every Friday.",
                   name="Pangolin ledger")
        (path,) = list(folder.glob("*.md"))
        assert "pangolin" in path.name
        result = store.redact(match="Pangolin")
        assert result.verification.passed, [p.to_json() for p in result.verification.probes]
        assert not path.exists()
        assert "1 of them a rename" in _probes(result)["memory-dir"].detail
        (new,) = list(folder.glob("*.md"))
        assert "pangolin" not in new.name.lower() and "Pangolin" not in new.read_text()
        assert store.memory(mid).source_file == str(new)
        before = len(store.proposals())
        report = store.ingest([folder])  # the renamed file is the memory's own: nothing new
        assert report.memories_added == 0 and len(store.proposals()) == before
        (( _, again),) = store.verify_tombstones(result.tombstone_id)
        assert again.passed, [p.to_json() for p in again.probes]  # raw bytes: no old path
    finally:
        store.close()


def test_the_memory_dir_probe_fails_on_a_file_name_holding_the_text(tmp_path: Path) -> None:
    store, folder = _bound(tmp_path)
    try:
        _add(store, "Backups run nightly at two.", name="Backups")
        (folder / "notes_pangolin.md").write_text("---\nname: notes\n---\n\nNothing here.\n")
        result = store.redact(match="Pangolin")
        probe = _probes(result)["memory-dir"]
        assert not probe.passed and "1 named by it" in probe.detail, probe.detail
        assert "pangolin" not in probe.detail.lower()  # the name holds the text: never shown
    finally:
        store.close()


def test_tombstones_verify_never_calls_a_failed_tombstone_verified(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    store, folder = _bound(tmp_path)
    try:
        _add(store, "The Pangolin ledger is reconciled on Fridays.", name="Ledger")
        (folder / "notes.md").write_text("---\nname: notes\n---\n\nPangolin notes.\n")
        assert not store.redact(match="Pangolin").verification.passed  # notes.md holds it
    finally:
        store.close()
    capsys.readouterr()
    code = main(["tombstones", "--store", str(store.opened_as), "--verify"])
    out = capsys.readouterr().out
    assert code == 1 and "every tombstone is verified" not in out
    assert "1 FAILED it (1)" in " ".join(out.split()), out
