"""MindStone-Agent transcript NDJSON import (NOTES.md wire format)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from sqlalchemy import text

from store import Store
from store.ingest import detect_file
from store.export.wire_format import file_name_for, session_key_from_name
from store.export.wire_format import ROLE_KINDS
from store.ingest.mindstone import KNOWN_EVENTS

DATA = Path(__file__).resolve().parents[1] / "data"
MINDSTONE = DATA / "mindstone"
MAIN = MINDSTONE / "YWdlbnQ6ZGVmYXVsdDptYWlu.jsonl"
BAD = DATA / "mindstone-bad" / "YWdlbnQ6ZGVmYXVsdDptYWluLWJhZA.jsonl"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _entries(store: Store, session_id: str) -> list[tuple]:
    with store.read() as conn:
        return conn.execute(text(
            "SELECT seq, agent, kind, content, ts, meta, uuid FROM entry WHERE session_id = :s "
            "ORDER BY seq"), {"s": session_id}).all()


def test_file_name_is_base64url_of_the_session_key() -> None:
    """NOTES.md's example, both ways; a name that is not base64url decodes to nothing."""
    assert file_name_for("agent:default:main") == "YWdlbnQ6ZGVmYXVsdDptYWlu.jsonl"
    assert session_key_from_name(MAIN) == "agent:default:main"
    assert session_key_from_name(Path("not base64!.jsonl")) is None


def test_every_line_is_an_entry_with_its_role_mapped(store: Store) -> None:
    report = store.ingest([MAIN])
    assert report.errors == []
    raw = _lines(MAIN)
    rows = _entries(store, "agent:default:main")
    assert report.entries_added == len(raw) == len(rows) == 18
    assert [r[2] for r in rows] == [ROLE_KINDS[o["role"]] for o in raw]
    assert [r[3] for r in rows] == [o["text"] for o in raw]
    assert [r[6] for r in rows] == [o["id"] for o in raw]
    assert Counter(r[2] for r in rows) == Counter(
        {"event": 9, "assistant": 4, "user": 3, "tool_result": 1, "system": 1})


def test_event_entries_carry_the_fixed_meta_shape(store: Store) -> None:
    """Derivers read kind 'event' + meta.event; the meta keys are fixed (COMMON.md)."""
    store.ingest([MAIN])
    raw = {o["id"]: o for o in _lines(MAIN)}
    with store.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT uuid, meta FROM entry WHERE kind = 'event' AND "
            "json_extract(meta, '$.event') = 'context_window_pruned'").all()
    assert len(rows) == 1
    line = raw[rows[0][0]]
    meta = json.loads(rows[0][1])
    assert {"event", "metadata", "role", "runId", "source", "id", "sessionKey"} <= set(meta)
    assert meta["metadata"] == line["metadata"]
    assert meta["metadata"]["tokensBefore"] == 183402
    assert (meta["role"], meta["runId"], meta["id"], meta["sessionKey"]) == (
        "event", line["runId"], line["id"], "agent:default:main")
    assert meta["source"]["chatType"] == "internal"
    with store.read() as conn:
        metas = conn.exec_driver_sql("SELECT meta FROM entry WHERE kind = 'event'").all()
    events = {json.loads(m)["event"] for (m,) in metas}
    assert events == KNOWN_EVENTS - {"user_message", "assistant_response"}


def test_worker_lines_and_session_owner(store: Store) -> None:
    """agentId equal to the key's owner is 'main'; another agentId is that worker."""
    store.ingest([MAIN])
    rows = _entries(store, "agent:default:main")
    workers = [r for r in rows if r[1] != "main"]
    assert [(r[1], r[2]) for r in workers] == [("reviewer", "assistant")]
    session = store.session("agent:default:main")
    assert (session.agent, session.format, session.agents) == ("default", "mindstone",
                                                               ("main", "reviewer"))


def test_session_key_from_file_name_and_epoch_timestamps(store: Store) -> None:
    path = MINDSTONE / "YWdlbnQ6ZGVmYXVsdDpjcm9uOm5pZ2h0bHktZGlnZXN0.jsonl"
    assert all("sessionKey" not in o for o in _lines(path))
    report = store.ingest([path])
    assert report.errors == [] and report.sessions_added == 1
    rows = _entries(store, "agent:default:cron:nightly-digest")
    assert [r[2] for r in rows] == ["system", "user", "assistant"]
    assert rows[0][4] == "2026-11-29T11:00:00.000Z"


def test_detected_in_a_folder_and_idempotent(store: Store, tmp_path: Path) -> None:
    """Importing the same MindStone files twice adds nothing; nor does a copy of a file
    elsewhere (the source of the idempotency key is the session key, not the path)."""
    assert detect_file(MAIN) == "mindstone"
    first = store.ingest([MINDSTONE])
    assert (first.sessions_added, first.entries_added) == (2, 21)
    again = store.ingest([MINDSTONE])
    assert (again.sessions_added, again.entries_added, again.errors) == (0, 0, [])
    copy = tmp_path / "copy" / MAIN.name
    copy.parent.mkdir()
    shutil.copyfile(MAIN, copy)
    assert store.ingest([copy]).entries_added == 0
    assert store.stats(with_embedder=False).entries == 21


def test_growing_file_adds_only_new_lines(store: Store, tmp_path: Path) -> None:
    path = tmp_path / MAIN.name
    lines = MAIN.read_text("utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:10]), "utf-8")
    assert store.ingest([path]).entries_added == 10
    path.write_text("".join(lines), "utf-8")
    assert store.ingest([path]).entries_added == 8
    assert [r[0] for r in _entries(store, "agent:default:main")] == list(range(18))


def test_garbage_and_unknown_events_are_reported_and_the_rest_lands(store: Store) -> None:
    report = store.ingest([BAD])
    by_line = {e.line: e.reason for e in report.errors}
    assert sorted(by_line) == [2, 3, 4, 5, 6, 8]
    assert "invalid JSON" in by_line[2] and "invalid JSON" in by_line[3]
    assert "not an object" in by_line[4]
    assert "unknown MindStone event type 'memory_consolidation_scheduled'" in by_line[5]
    assert "role 'narrator'" in by_line[6]
    assert [e.field for e in report.errors if e.line == 8] == ["metadata"]
    assert "not an object" in by_line[8]
    assert all(e.path == str(BAD) for e in report.errors)
    rows = _entries(store, "agent:default:main-bad")
    assert [(r[2], r[6]) for r in rows] == [("user", "b1"), ("event", "b3"),
                                            ("assistant", "b5"), ("event", "b7")]
    unknown = json.loads(rows[1][5])
    assert unknown["event"] == "memory_consolidation_scheduled"
    assert unknown["metadata"]["at"] == "2026-12-01T03:00:00Z"
    again = store.ingest([BAD])
    assert again.entries_added == 0


def test_fixing_a_garbage_line_adds_only_that_line(store: Store, tmp_path: Path) -> None:
    """Entries are keyed by the line's id, not its byte offset: fixing a broken line (of
    another length) and re-importing adds that line alone, not every line after it."""
    path = tmp_path / MAIN.name
    lines = MAIN.read_text("utf-8").splitlines(keepends=True)
    path.write_text("".join([lines[0], "{ garbage\n", *lines[1:6]]), "utf-8")
    first = store.ingest([path])
    assert first.entries_added == 6 and [e.line for e in first.errors] == [2]
    fixed = dict(json.loads(lines[1]), id="fixed-line-1", text="the line, repaired at last")
    path.write_text("".join([lines[0], json.dumps(fixed) + "\n", *lines[1:6]]), "utf-8")
    again = store.ingest([path])
    assert (again.entries_added, again.errors) == (1, [])
    rows = _entries(store, "agent:default:main")
    assert len(rows) == 7 and rows[-1][6] == "fixed-line-1"
    with store.read() as conn:
        keys = conn.exec_driver_sql("SELECT COUNT(DISTINCT idem_key) FROM entry").scalar_one()
    assert keys == 7
