"""`lca-tui export` and importing an export (MindStone NDJSON + manifest)."""

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
from store.export.writer import MANIFEST, export
from store.export.wire_format import WIRE_KEYS, file_name_for
from tests.conftest import make_store

DATA = Path(__file__).resolve().parents[1] / "data"
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
        big = conn.execute(text("SELECT id FROM entry WHERE session_id LIKE :p ORDER BY seq "
                                "DESC LIMIT 1"), {"p": "ae4a77f8%"}).one()
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
    assert report.counts == {"sessions": 7, "entries": 751, "memories": 7, "evidence": 10,
                             "checkpoints": 0, "recall_traces": 0}
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
    assert two.counts == {"sessions": 1, "entries": 1, "memories": 1, "evidence": 2,
                          "checkpoints": 0, "recall_traces": 0}
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
    from store.export.writer import ExportError

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
    size = main.stat().st_size
    listed = next(f["bytes"] for f in json.loads((out / MANIFEST).read_text())["files"]
                  if f["path"].endswith(main.name))
    assert reasons == [f"{size} bytes where manifest.json lists {listed}"] + [
        f"evidence of memory {ref} points at entry {seq} of session "
        f"{SHORT_SESSION}, which is not in the store" for seq in (0, 2)] + [
        "invalid JSON", "listed in manifest.json but missing",
        "text differs from the exported content hash"]
    assert report.entries_added == 751 - 11  # all but the missing short session's 11
    with fresh.read() as conn:
        kept = conn.execute(text("SELECT COUNT(*) FROM evidence WHERE entry_id IS NULL AND "
                                 "note LIKE :p"), {"p": "%entry not in store%"}).scalar_one()
    assert kept == 2  # kept without the link, not lost
    assert report.memories_added == 7
    fresh.close()


def _ref(out: Path, name: str) -> int:
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))
    return next(m["ref"] for m in manifest["memories"] if m["name"] == name)


def test_cli_export_json_and_refusal(source: Store, tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "lca_tui.cli"]
    run = subprocess.run([*cmd, "export", "--store", str(source.opened_as), "--out",
                          str(tmp_path / "out"), "--session", SHORT_SESSION, "--json"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["counts"]["entries"] == 11
    again = subprocess.run([*cmd, "export", "--store", str(source.opened_as), "--out",
                            str(tmp_path / "out")], capture_output=True, text=True, check=False)
    assert again.returncode == 2 and "not empty" in again.stderr and again.stdout == ""
    listed = subprocess.run([*cmd, "exports", "--store", str(source.opened_as), "--json"],
                            capture_output=True, text=True, check=False)
    assert [e["scope"] for e in json.loads(listed.stdout)] == [
        {"sessions": [SHORT_SESSION], "memories": []}]


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "lca_tui.cli", *args], capture_output=True,
                          text=True, check=False, env={**os.environ, **env})


def test_unwritable_out_is_one_clear_message(source: Store, tmp_path: Path) -> None:
    (tmp_path / "regular").write_text("a file", "utf-8")
    run = _cli("--store", str(source.opened_as), "export", "--out",
               str(tmp_path / "regular" / "sub"), COLUMNS="1000")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("lca-tui: cannot write an export to ")
    assert "Traceback" not in run.stderr and "Not a directory" in run.stderr
    assert _exports_recorded(source) == 0


def _exports_recorded(store: Store) -> int:
    with store.read() as conn:
        return int(conn.exec_driver_sql("SELECT COUNT(*) FROM export").scalar_one())


def test_failed_write_removes_what_it_wrote_and_records_nothing(source: Store,
                                                               tmp_path: Path) -> None:
    from store.export.writer import ExportError

    out = tmp_path / "out"
    export(source, out)
    blocker = out / "transcripts" / file_name_for("agent:default:main")
    blocker.unlink()
    blocker.mkdir()  # the next export cannot put its file there
    with pytest.raises(ExportError, match="cannot write the export"):
        export(source, out, force=True)
    left = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert left == []  # no transcripts, no .tmp, no manifest
    assert _exports_recorded(source) == 1  # only the first, successful one
    run = _cli("--store", str(source.opened_as), "export", "--out", str(out), "--force",
               COLUMNS="1000")
    assert run.returncode == 2 and run.stderr.startswith("lca-tui: cannot write the export")
    assert "Traceback" not in run.stderr


def test_files_that_cannot_be_removed_are_recorded_as_a_failed_export(
        source: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import store.export.writer as module

    out = tmp_path / "out"
    out.mkdir()
    stuck = file_name_for(SHORT_SESSION)
    (out / "transcripts").mkdir()
    (out / "transcripts" / file_name_for("agent:default:main")).mkdir()
    real = module._remove

    def remove(path: Path) -> None:
        if path.name == stuck:
            raise PermissionError(1, "Operation not permitted", str(path))
        real(path)

    monkeypatch.setattr(module, "_remove", remove)
    with pytest.raises(module.ExportError):
        export(source, out, force=True)
    on_disk = sorted(p.name for p in out.rglob("*") if p.is_file())
    assert on_disk == [stuck]
    with source.read() as conn:
        files, counts = conn.exec_driver_sql("SELECT files, counts FROM export").one()
        held = conn.exec_driver_sql("SELECT DISTINCT file FROM export_item").all()
    assert json.loads(files) == [f"transcripts/{stuck}"]
    assert json.loads(counts)["failed"] == 1 and json.loads(counts)["left"] == 1
    assert {h[0] for h in held} <= {f"transcripts/{stuck}", None}


def test_too_long_session_id_gets_a_hashed_file_name(store: Store, tmp_path: Path) -> None:
    from store.export.wire_format import session_key_from_name

    key = "agent:default:" + "x" * 300
    name = file_name_for(key)
    assert name == f"sha256_{hashlib.sha256(key.encode()).hexdigest()}.jsonl"
    assert session_key_from_name(Path(name)) is None
    line = {"id": "l1", "timestamp": "2026-11-28T10:00:00.000Z", "sessionKey": key,
            "agentId": "default", "role": "user", "text": "hello",
            "metadata": {"event": "user_message"}}
    (tmp_path / "in.jsonl").write_text(json.dumps(line) + "\n", "utf-8")
    assert store.ingest([tmp_path / "in.jsonl"]).entries_added == 1
    report = export(store, tmp_path / "out")
    assert [f["path"] for f in report.files] == [MANIFEST, f"transcripts/{name}"]
    fresh = make_store(tmp_path / "fresh.db")
    back = fresh.ingest([tmp_path / "out"])
    assert (back.errors, back.entries_added) == ([], 1)
    assert [s.id for s in fresh.sessions()] == [key]
    fresh.close()


def test_checkpoints_and_lca_tui_traces_travel_and_derived_records_do_not(
        source: Store, tmp_path: Path) -> None:
    from store.context.api import record_checkpoint
    from store.recall.run import recall
    from store.governance.feedback import feedback

    record_checkpoint(source, SHORT_SESSION, trigger="pre-compact", ts="2026-02-01T10:00:00Z",
                      entries_added=4, memories_written=1, archive_verified=True)
    record_checkpoint(source, None, trigger="nightly", ts="2026-02-02T03:00:00Z")
    with source.write() as conn:  # a secret memory: its candidates carry no text anywhere
        conn.exec_driver_sql("UPDATE memory SET sensitivity = 'secret' WHERE name = "
                             "'Preferences'")
    first = recall(source, "preferences for commits and deploys", channel="public")
    second = recall(source, "billing migration on Friday", rerun_of=first.trace.id)
    injected = [c for c in second.trace.candidates if c.decision == "injected"]
    feedback(source, int(second.trace.id or 0), str(injected[0].rank), "used")
    before = _history(source)
    assert len(before["checkpoints"]) == 2 and len(before["traces"]) == 2
    assert any(c[5] for t in before["traces"] for c in t[-1])  # a masked candidate
    assert before["derived"] > 0  # MindStone-event traces, derived from entries
    assert any(c[-1] == "used" for c in before["traces"][1][-1])
    report = export(source, tmp_path / "out")
    assert (report.counts["checkpoints"], report.counts["recall_traces"]) == (2, 2)
    manifest = json.loads((tmp_path / "out" / MANIFEST).read_text("utf-8"))
    assert {t["origin"] for t in manifest["recall_traces"]} == {"lca-tui"}
    masked = [c for t in manifest["recall_traces"] for c in t["candidates"] if c["masked"]]
    assert masked and all(c["excerpt"] is None and c["label"] is None for c in masked)
    assert "id" not in manifest["checkpoints"][0]
    fresh = make_store(tmp_path / "fresh.db")
    assert fresh.ingest([tmp_path / "out"]).errors == []
    after = _history(fresh)
    assert after == before  # derived traces came back by derivation, not twice
    fresh.ingest([tmp_path / "out"])
    assert _history(fresh) == before  # a second import adds nothing
    source.ingest([tmp_path / "out"])
    assert _history(source) == before
    fresh.close()


def _history(store: Store) -> dict[str, Any]:
    """Checkpoints and lca-tui's traces as what they say (ids mapped to content)."""
    with store.read() as conn:
        checkpoints = conn.exec_driver_sql(
            "SELECT session_id, ts, trigger, status, entries_added, memories_written, "
            "chunks_embedded, chunks_failed, archive_verified, index_verified, duration_ms, "
            "source, idem_key FROM checkpoint ORDER BY ts").all()
        traces = []
        for row in conn.exec_driver_sql(
                "SELECT t.id, t.ts, t.query, t.channel, t.settings, t.considered, t.injected, "
                "r.query FROM recall_trace t LEFT JOIN recall_trace r ON r.id = t.rerun_of "
                "WHERE t.origin = 'lca-tui' ORDER BY t.ts").all():
            rows = conn.execute(text(
                "SELECT c.id, c.rank, c.source_type, COALESCE(m.name, e.content), c.decision, "
                "c.excerpt, c.masked, c.score FROM recall_candidate c LEFT JOIN memory m ON "
                "c.source_type = 'memory' AND m.id = c.source_id LEFT JOIN entry e ON "
                "c.source_type = 'entry' AND e.id = c.source_id WHERE c.trace_id = :t ORDER BY "
                "c.rank"), {"t": row[0]}).all()
            # each candidate's feedback kinds, sorted and comma-joined (None: none), as
            # group_concat gave them on SQLite alone (and in no set order)
            kinds: dict[int, list[str]] = {}
            for cid, kind in conn.execute(text(
                    "SELECT f.candidate_id, f.kind FROM recall_feedback f JOIN "
                    "recall_candidate c ON c.id = f.candidate_id WHERE c.trace_id = :t"),
                    {"t": row[0]}).all():
                kinds.setdefault(int(cid), []).append(str(kind))
            cands = [(*r[1:], ",".join(sorted(kinds.get(int(r[0]), []))) or None)
                     for r in rows]
            traces.append((*row[1:], cands))
        derived = conn.exec_driver_sql("SELECT COUNT(*) FROM recall_trace WHERE origin = "
                                       "'mindstone-event'").scalar_one()
    return {"checkpoints": checkpoints, "traces": traces, "derived": derived}


RUN_ID = r"run_[0-9a-z]+_[0-9a-f]{8}"


def test_other_harness_lines_are_mindstone_shaped(source: Store, tmp_path: Path) -> None:
    import re

    export(source, tmp_path / "a")
    export(source, tmp_path / "b")
    name = file_name_for("ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    data = (tmp_path / "a" / "transcripts" / name).read_bytes()
    assert data == (tmp_path / "b" / "transcripts" / name).read_bytes()  # deterministic
    seen: dict[str, set[tuple[Any, ...]]] = {}
    for raw in data.decode("utf-8").splitlines():
        line = json.loads(raw)
        meta, kind = line["metadata"], line["metadata"]["lca"]["kind"]
        assert re.fullmatch(RUN_ID, line["runId"])
        shape = (line["role"], meta.get("event"), meta.get("kind"), "toolName" in meta)
        seen.setdefault(kind, set()).add(shape)
        if kind == "compaction" and meta["lca"].get("meta", {}).get("preTokens"):
            assert meta["preTokens"] == meta["lca"]["meta"]["preTokens"]
    assert seen["user"] == {("user", "user_message", None, False)}
    assert seen["assistant"] == {("assistant", "assistant_response", None, False)}
    assert seen["tool_call"] == {("assistant", "assistant_response", "tool_call", True)}
    assert {s[0] for s in seen["tool_result"]} == {"tool"}
    assert all(s[1] == "assistant_response" and s[2] == "reasoning"
               for s in seen.get("reasoning", set()))


ODD_LINES = [
    {"id": "o1", "timestamp": 1764324000000, "sessionKey": "agent:default:odd",
     "agentId": "default", "role": "user", "content": "content, no text"},
    {"id": "o2", "timestamp": "2026-11-28T10:00:01.000Z", "sessionKey": "agent:default:odd",
     "role": "assistant", "text": "no metadata at all", "parentId": None},
    {"sessionKey": "agent:default:odd", "id": "o3", "role": "tool", "text": "ok",
     "timestamp": "2026-11-28T10:00:02.000Z", "extra": {"kept": True},
     "metadata": {"toolName": "bash"}},
    {"id": "o4", "timestamp": "2026-11-28T10:00:03.000Z", "sessionKey": "agent:default:odd",
     "role": "assistant", "text": "plain", "content": [{"type": "text", "text": "plain"}],
     "metadata": {}},
]


def test_mindstone_lines_are_re_exported_exactly(store: Store, tmp_path: Path) -> None:
    from store.export.wire_format import without_lca

    path = tmp_path / "in" / file_name_for("agent:default:odd")
    path.parent.mkdir()
    path.write_text("".join(json.dumps(x) + "\n" for x in ODD_LINES), "utf-8")
    assert store.ingest([path]).entries_added == 4
    export(store, tmp_path / "out")
    written = (tmp_path / "out" / "transcripts" / path.name).read_text("utf-8").splitlines()
    for raw, original in zip(written, ODD_LINES, strict=True):
        assert json.dumps(without_lca(json.loads(raw))) == json.dumps(original)
    export(store, tmp_path / "again")
    assert (tmp_path / "again" / "transcripts" / path.name).read_text("utf-8") == "\n".join(
        written) + "\n"
    fresh = make_store(tmp_path / "fresh.db")
    assert fresh.ingest([tmp_path / "out"]).entries_added == 4
    assert snapshot(fresh)["entries"] == snapshot(store)["entries"]
    export(fresh, tmp_path / "third")
    assert (tmp_path / "third" / "transcripts" / path.name).read_text("utf-8") == "\n".join(
        written) + "\n"
    fresh.close()


def test_exports_list_shows_stored_text_as_text(source: Store, tmp_path: Path) -> None:
    out = tmp_path / "[red]x[/red]out"
    export(source, out, sessions=[SHORT_SESSION])
    run = _cli("--store", str(source.opened_as), "exports", COLUMNS="400")
    assert run.returncode == 0, run.stderr
    assert "[red]x[/red]out" in run.stdout


def test_unknown_memory_and_uniform_json_file_items(source: Store, tmp_path: Path) -> None:
    run = _cli("--store", str(source.opened_as), "export", "--out", str(tmp_path / "x"),
               "--memory", "99999", COLUMNS="1000")
    assert run.returncode == 2 and "no memory with id 99999" in run.stderr
    assert "lca-tui search" in run.stderr and "lca-tui memories" not in run.stderr
    run = _cli("--store", str(source.opened_as), "export", "--out", str(tmp_path / "y"),
               "--session", SHORT_SESSION, "--json")
    files = json.loads(run.stdout)["files"]
    assert [f["path"] for f in files] == [MANIFEST, f"transcripts/{file_name_for(SHORT_SESSION)}"]
    for item in files:
        assert set(item) == {"path", "bytes", "sha256", "lines"}
        data = (tmp_path / "y" / item["path"]).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest(), len(data.splitlines())) == (
            item["bytes"], item["sha256"], item["lines"])
