"""Issue 4: `lca-tui export` and importing an export (MindStone NDJSON + manifest)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from store import Store
from store.export import MANIFEST, export
from store.ingest.mindstone import WIRE_KEYS, file_name_for
from tests.conftest import make_store

DATA = Path(__file__).parent / "data"
NAVIGATOR = DATA / "acp" / "navigator"
MINDSTONE = DATA / "mindstone"
SHORT_SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"


def _link(store: Store) -> dict[str, Any]:
    """Evidence from two memories to Claude Code entries, and a supersession link, as an
    applied proposal would leave them."""
    with store.write() as conn:
        mem = {n: i for i, n in conn.exec_driver_sql("SELECT id, name FROM memory").all()}
        entries = conn.execute(text("SELECT id FROM entry WHERE session_id = :s ORDER BY seq "
                                    "LIMIT 3"), {"s": SHORT_SESSION}).all()
        big = conn.exec_driver_sql("SELECT id FROM entry WHERE session_id LIKE 'ae4a77f8%' "
                                   "ORDER BY seq DESC LIMIT 1").one()
        for memory, entry in ((mem["Lessons learned"], entries[0][0]),
                              (mem["Lessons learned"], entries[2][0]),
                              (mem["Preferences"], big[0])):
            conn.execute(text(
                "INSERT INTO evidence (memory_id, entry_id, span_start, span_end, note, writer, "
                "writer_version, created_at) VALUES (:m, :e, 0, 12, 'applied proposal', 't', "
                "'0', '2026-01-01T00:00:00.000Z')"), {"m": memory, "e": entry})
        conn.execute(text("UPDATE memory SET supersedes_id = :o, supersedes_ref = 'Preferences' "
                          "WHERE id = :n"), {"o": mem["Preferences"], "n": mem["Lessons learned"]})
        conn.execute(text("UPDATE memory SET superseded_by_id = :n, status = 'superseded' "
                          "WHERE id = :o"), {"o": mem["Preferences"], "n": mem["Lessons learned"]})
    return mem


@pytest.fixture
def source(cc_store: Store) -> Iterator[Store]:
    """Claude Code sessions + an ACP directory + MindStone transcripts, with evidence."""
    report = cc_store.ingest([NAVIGATOR, MINDSTONE])
    assert report.errors == []
    _link(cc_store)
    yield cc_store


def snapshot(store: Store) -> dict[str, Any]:
    """What must survive an export and import: sessions, entries in order per session and
    agent, memories, evidence (by the entry's content and place), lineage."""
    with store.read() as conn:
        sessions = conn.exec_driver_sql(
            "SELECT id, agent, surface, project, title, started_at, ended_at, format, meta "
            "FROM session ORDER BY id").all()
        entries = conn.exec_driver_sql(
            "SELECT session_id, agent, kind, content, ts, tool_name, message_id, meta FROM entry "
            "ORDER BY session_id, agent, seq").all()
        memories = conn.exec_driver_sql(
            "SELECT m.name, m.type, m.body, m.critical, m.evergreen, m.status, m.loadable, "
            "m.tags, m.sensitivity, m.source_file, o.name FROM memory m LEFT JOIN memory o ON "
            "o.id = m.supersedes_id ORDER BY m.source_file").all()
        evidence = conn.exec_driver_sql(
            "SELECT m.source_file, e.session_id, e.kind, e.content, v.span_start, v.span_end, "
            "v.file_path, v.note FROM evidence v JOIN memory m ON m.id = v.memory_id LEFT JOIN "
            "entry e ON e.id = v.entry_id ORDER BY 1, 2, 4, 7").all()
    return {"sessions": sessions, "entries": entries, "memories": memories,
            "evidence": evidence}


def test_round_trip_restores_sessions_entries_memories_evidence(source: Store,
                                                                tmp_path: Path) -> None:
    before = snapshot(source)
    assert len(before["sessions"]) == 7 and len(before["entries"]) == 723 + 7 + 21
    assert len(before["memories"]) == 7 and len(before["evidence"]) == 10
    report = export(source, tmp_path / "out")
    assert report.counts == {"sessions": 7, "entries": 751, "memories": 7, "evidence": 10}
    fresh = make_store(tmp_path / "fresh.db")
    imported = fresh.ingest([tmp_path / "out"])
    assert imported.errors == []
    assert (imported.sessions_added, imported.entries_added, imported.memories_added) == (
        7, 751, 7)
    after = snapshot(fresh)
    for key in before:
        assert after[key] == before[key], key
    again = fresh.ingest([tmp_path / "out"])
    assert (again.sessions_added, again.entries_added, again.memories_added,
            again.memories_updated, again.errors) == (0, 0, 0, 0, [])
    back = source.ingest([tmp_path / "out"])  # into the store it came from: nothing new
    assert (back.entries_added, back.memories_added, back.memories_updated) == (0, 0, 0)
    assert snapshot(source) == before
    fresh.close()


def test_export_is_mindstone_wire_format(source: Store, tmp_path: Path) -> None:
    export(source, tmp_path / "out")
    main = tmp_path / "out" / "transcripts" / file_name_for("agent:default:main")
    original = [json.loads(x) for x in (MINDSTONE / main.name).read_text("utf-8").splitlines()]
    written = [json.loads(x) for x in main.read_text("utf-8").splitlines()]
    for line in written:
        assert list(line) == [k for k in WIRE_KEYS if k in line]
        lca = line["metadata"].pop("lca")
        assert lca["v"] == 1 and "meta" not in lca  # a native line needs no copy of its meta
    assert written == original  # what MindStone wrote, it reads back unchanged
    short = tmp_path / "out" / "transcripts" / file_name_for(SHORT_SESSION)
    first = json.loads(short.read_text("utf-8").splitlines()[0])
    assert (first["role"], first["sessionKey"], first["metadata"]["event"]) == (
        "user", SHORT_SESSION, "user_message")
    assert first["metadata"]["lca"]["session"]["format"] == "claude-code"


def test_export_is_recorded_with_what_it_holds(source: Store, tmp_path: Path) -> None:
    report = export(source, tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / MANIFEST).read_text("utf-8"))
    assert manifest["format"] == "lca-export" and manifest["counts"] == report.counts
    for item in manifest["files"]:
        data = (tmp_path / "out" / item["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == item["sha256"]
        assert len(data.splitlines()) == item["lines"]
    assert {(x["memory"], x["supersedes"]) for x in manifest["lineage"]} == {
        (m["ref"], m["supersedes"]) for m in manifest["memories"] if m["supersedes"]}
    assert oct((tmp_path / "out" / MANIFEST).stat().st_mode & 0o777) == "0o600"
    with source.read() as conn:
        row = conn.exec_driver_sql("SELECT scope, path, files, counts FROM export").one()
        held = dict(conn.exec_driver_sql(
            "SELECT item_type, COUNT(*) FROM export_item GROUP BY item_type").all())
        audit = conn.exec_driver_sql(
            "SELECT target_ids, counts FROM audit_event WHERE action = 'export'").one()
    assert json.loads(row[0]) == {"all": True} and row[1] == str((tmp_path / "out").resolve())
    assert len(json.loads(row[2])) == 8 and json.loads(row[3]) == report.counts
    assert held == {"session": 7, "entry": 751, "memory": 7, "evidence": 10}
    assert json.loads(audit[0]) == [report.export_id]
    assert "Lessons" not in audit[1]  # ids and counts, never content


def test_session_and_memory_scopes(source: Store, tmp_path: Path) -> None:
    one = export(source, tmp_path / "one", sessions=[SHORT_SESSION[:8]])
    assert one.scope == {"sessions": [SHORT_SESSION], "memories": []}
    manifest = json.loads((tmp_path / "one" / MANIFEST).read_text("utf-8"))
    assert [s["id"] for s in manifest["sessions"]] == [SHORT_SESSION]
    assert [m["name"] for m in manifest["memories"]] == ["Lessons learned"]
    mems = {m.name: m.id for m in source.memories()}
    two = export(source, tmp_path / "two", memories=[mems["Preferences"]])
    assert two.counts == {"sessions": 1, "entries": 1, "memories": 1, "evidence": 2}
    fresh = make_store(tmp_path / "fresh.db")
    report = fresh.ingest([tmp_path / "two"])
    assert report.errors == []
    evidence = snapshot(fresh)["evidence"]
    assert sorted(e[2] or "file" for e in evidence) == ["assistant", "file"]
    fresh.close()


def test_non_empty_directory_needs_force(source: Store, tmp_path: Path) -> None:
    out = tmp_path / "out"
    export(source, out, sessions=[SHORT_SESSION])
    stray = out / "notes.txt"
    stray.write_text("mine", "utf-8")
    from store.export import ExportError

    with pytest.raises(ExportError, match="not empty"):
        export(source, out, sessions=[SHORT_SESSION])
    export(source, out, sessions=["acp:navigatorclaw-001:2026-02-01"], force=True)
    names = sorted(p.name for p in (out / "transcripts").iterdir())
    assert names == [file_name_for("acp:navigatorclaw-001:2026-02-01")]
    assert stray.read_text("utf-8") == "mine"  # only an earlier export's files are replaced


def test_bad_export_input_is_reported_and_the_rest_lands(source: Store,
                                                         tmp_path: Path) -> None:
    out = tmp_path / "out"
    export(source, out)
    main = out / "transcripts" / file_name_for("agent:default:main")
    lines = main.read_text("utf-8").splitlines(keepends=True)
    tampered = json.loads(lines[2])
    tampered["text"] = "edited after export"
    lines[2] = json.dumps(tampered) + "\n"
    main.write_text("".join(lines[:1] + ["{ not json\n"] + lines[1:]), "utf-8")
    (out / "transcripts" / file_name_for(SHORT_SESSION)).unlink()
    fresh = make_store(tmp_path / "fresh.db")
    report = fresh.ingest([out])
    reasons = sorted(e.reason.split(":")[0] for e in report.errors)
    ref = _ref(out, "Lessons learned")
    assert reasons == [f"evidence of memory {ref} points at entry {seq} of session "
                       f"{SHORT_SESSION}, which is not in the store" for seq in (0, 2)] + [
        "invalid JSON", "no such file or directory",
        "text differs from the exported content hash"]
    assert report.entries_added == 751 - 11  # all but the missing short session's 11
    with fresh.read() as conn:
        kept = conn.exec_driver_sql("SELECT COUNT(*) FROM evidence WHERE entry_id IS NULL AND "
                                    "note LIKE '%entry not in store%'").scalar_one()
    assert kept == 2  # kept without the link, not lost
    assert report.memories_added == 7
    fresh.close()


def _ref(out: Path, name: str) -> int:
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    return next(m["ref"] for m in manifest["memories"] if m["name"] == name)


def test_cli_export_json_and_refusal(source: Store, tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "lca_tui.cli"]
    run = subprocess.run([*cmd, "export", "--store", str(source.path), "--out",
                          str(tmp_path / "out"), "--session", SHORT_SESSION, "--json"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["counts"]["entries"] == 11
    again = subprocess.run([*cmd, "export", "--store", str(source.path), "--out",
                            str(tmp_path / "out")], capture_output=True, text=True, check=False)
    assert again.returncode == 2 and "not empty" in again.stderr and again.stdout == ""
    listed = subprocess.run([*cmd, "exports", "--store", str(source.path), "--json"],
                            capture_output=True, text=True, check=False)
    assert [e["scope"] for e in json.loads(listed.stdout)] == [
        {"sessions": [SHORT_SESSION], "memories": []}]
