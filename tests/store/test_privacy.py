"""Privacy: redact and erase with a preview of the closure and proof that nothing is left."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from store import Store
from store.core import vec
from store.core.errors import NotFound
from store.core.index import Source, sha256_text
from store.privacy import apply
from store.privacy.api import run, scope_from
from store.privacy.scope import Scope, ScopeError
from store.privacy.tables import q, relational_tables
from tests.conftest import CLAUDE_CODE, needs_shared_data

NEEDLE = "session_hook_controller"
BIG = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
SHORT = "55604662-cf2a-4331-851a-ec234028f8ca"
WHO = {"w": "test", "wv": "0", "c": "2026-01-01T00:00:00.000Z"}


# -- helpers -----------------------------------------------------------------------------------
def _holding(store: Store, needle: str) -> dict[str, int]:
    """table → rows with a text column holding ``needle`` (any case), every relational table."""
    low = needle.lower()
    out: dict[str, int] = {}
    with store.read() as conn:
        for name, info in relational_tables(conn).items():
            for row in conn.exec_driver_sql(
                    f"SELECT {', '.join(q(c) for c in info.text_columns) or 'NULL'} "
                    f"FROM {q(name)}").all():
                if any(isinstance(v, str) and low in v.lower() for v in row):
                    out[name] = out.get(name, 0) + 1
    return out


def _remaining_words(store: Store) -> set[str]:
    words: set[str] = set()
    with store.read() as conn:
        for name, info in relational_tables(conn).items():
            for row in conn.exec_driver_sql(
                    f"SELECT {', '.join(q(c) for c in info.text_columns) or 'NULL'} "
                    f"FROM {q(name)}").all():
                for v in row:
                    if isinstance(v, str):
                        words.update(w.lower() for w in re.findall(r"\w+", v))
    return words


def _raw(store: Store) -> bytes:
    """The raw bytes of the SQLite file and its WAL (on a server there is no file to read
    here: the erasure's own raw-bytes probe reads the server's table files)."""
    if "://" in str(store.path):
        pytest.skip("the raw bytes of a SQLite file and its WAL: this store is on a server")
    data = b""
    for p in (store.path, Path(f"{store.path}-wal")):
        if p.exists():
            data += p.read_bytes()
    return data.lower()


def _holds(value: object, needle: str) -> bool:
    return isinstance(value, str) and needle.lower() in value.lower()


def _entry_ids_holding(store: Store, needle: str) -> list[int]:
    """Entries whose content or metadata holds ``needle`` (any case), matched here, in
    Python, so the same test reads the same rows on either backend."""
    with store.read() as conn:
        rows = conn.exec_driver_sql("SELECT id, content, meta FROM entry ORDER BY id").all()
    return [int(r[0]) for r in rows if _holds(r[1], needle) or _holds(r[2], needle)]


def _add_memory(store: Store, name: str, body: str, entry_ids: list[int]) -> int:
    """A memory derived from entries (evidence pointing at them), indexed."""
    with store.write() as conn:
        memory_id = int(conn.execute(text(
            "INSERT INTO memory (name, body, content_hash, updated_at, writer, writer_version, "
            "created_at) VALUES (:n, :b, :h, :c, :w, :wv, :c) RETURNING id"),
            dict(WHO, n=name, b=body, h=sha256_text(body))).scalar_one())
        for entry_id in entry_ids:
            conn.execute(text(
                "INSERT INTO evidence (memory_id, entry_id, note, writer, writer_version, "
                "created_at) VALUES (:m, :e, 'consolidated', :w, :wv, :c)"),
                dict(WHO, m=memory_id, e=entry_id))
        store.indexer().index(conn, [Source("memory", memory_id, f"{name}\n\n{body}",
                                            sha256_text(body))])
    return memory_id


def _add_proposal_tables(store: Store, memory_id: int, before: str, after: str) -> None:
    """Tables a later capability might add (a proposal and its edit history): the closure
    must find them without being told."""
    with store.write() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE ext_proposal (id INTEGER PRIMARY KEY, memory_id INTEGER REFERENCES "
            "memory(id), title TEXT NOT NULL)")
        conn.exec_driver_sql(
            "CREATE TABLE ext_proposal_edit (id INTEGER PRIMARY KEY, proposal_id INTEGER NOT "
            "NULL REFERENCES ext_proposal(id) ON DELETE CASCADE, before TEXT, after TEXT)")
        conn.execute(text("INSERT INTO ext_proposal (id, memory_id, title) VALUES "
                          "(1, :m, 'tidy the hooks memory')"), {"m": memory_id})
        conn.execute(text("INSERT INTO ext_proposal_edit (proposal_id, before, after) VALUES "
                          "(1, :b, :a)"), {"b": before, "a": after})


def _probes(result: Any) -> dict[str, Any]:
    return {p.name: p for p in result.verification.probes}


# -- erase by match on the real transcripts ---------------------------------------------------
@needs_shared_data
def test_erase_by_match_on_real_transcripts(cc_store: Store, tmp_path: Path) -> None:
    """The string in entries, a derived memory, a proposal's edit history and a trace's query:
    erased everywhere, every probe passes (raw bytes included), recall, export and re-import
    bring none of it back."""
    store = cc_store
    holders = _entry_ids_holding(store, NEEDLE)
    assert len(holders) >= 5
    with store.read() as conn:
        other = next(int(r[0]) for r in conn.execute(text(
            "SELECT id, content FROM entry WHERE session_id = :s ORDER BY seq"), {"s": BIG})
            if isinstance(r[1], str) and not _holds(r[1], NEEDLE))
    derived = _add_memory(store, "Hook controller", f"The {NEEDLE} answers the hook posts.",
                          [holders[0]])
    quiet = _add_memory(store, "Derived only", "Hooks post to the Phoenix endpoint.",
                        [holders[1]])
    mixed = _add_memory(store, "Mixed evidence", "Hook endpoints live under /api.",
                        [holders[2], other])
    proposal = store.propose({
        "op": "add", "type": "project", "content": f"Hook posts land in {NEEDLE}.ex.",
        "metadata": {"name": "Where hook posts land"}, "rationale": "seen in the session",
        "evidence": [{"entry": holders[3]}, {"entry": other}]}, auto_apply=False)
    pid = proposal.summary.id
    store.edit_proposal(pid, {"content": "Hook posts land in the hook controller."},
                        reason="no file names")
    store.recall(f"where is the {NEEDLE} defined")
    before = _holding(store, NEEDLE)
    assert {"entry", "memory", "chunk", "recall_trace", "proposal_edit"} <= set(before)
    assert "proposal" not in before  # only its edit history still says it

    preview = store.privacy_preview("erase", match=NEEDLE.upper())  # any case
    counts = preview.counts()
    assert counts["entry"] == len(holders)
    assert counts["memory"] == 2  # holds it, and all its evidence goes
    assert counts["proposal_edit"] == 1 and "proposal" not in counts
    assert counts["recall_trace"] >= 1 and counts["chunk_vec"] >= 1
    assert counts["import_position"] >= 1  # the file's position holds a plain sha256 of it
    assert mixed in preview.review and _holding(store, NEEDLE) == before  # nothing changed

    result = store.erase(match=NEEDLE.upper())
    probes = _probes(result)
    assert result.verification.passed, [p.to_json() for p in result.verification.probes]
    assert set(probes) == {"rows", "fts", "substring", "semantic", "traces", "exports",
                           "raw-bytes"}
    assert result.closure == counts and result.tombstone_id is not None
    assert _holding(store, NEEDLE) == {}
    # the raw bytes of the database and its WAL: the string and every word found nowhere else
    raw = _raw(store)
    assert NEEDLE.encode() not in raw
    remaining = _remaining_words(store)
    lonely = [w for w in re.findall(r"\w+", NEEDLE.lower()) if w not in remaining]
    assert lonely and all(w.encode() not in raw for w in lonely)
    with store.read() as conn:
        ids = {int(r[0]) for r in conn.exec_driver_sql("SELECT id FROM memory")}
        review = conn.execute(text("SELECT review_reason FROM memory WHERE id = :m"),
                              {"m": mixed}).scalar_one()
        kept = conn.execute(text("SELECT content FROM proposal WHERE id = :p"),
                            {"p": pid}).scalar_one()
    assert kept == "Hook posts land in the hook controller."
    assert derived not in ids and quiet not in ids and mixed in ids and "1 of its 2" in review
    # a recall for it returns nothing derived from it, and writes its trace without it
    again = store.recall(f"where is the {NEEDLE} defined")
    erased = set(holders)
    for cand in again.trace.candidates:
        assert not (cand.source_type == "entry" and cand.source_id in erased)
        assert NEEDLE not in (cand.excerpt or "").lower()
    store.erase(match=NEEDLE)  # that trace's query holds it: erase it too
    # a new export holds none of it
    out = store.export(tmp_path / "after")
    for f in (tmp_path / "after").rglob("*"):
        if f.is_file():
            assert NEEDLE not in f.read_text("utf-8").lower(), f
    assert out.counts["entries"] > 0
    # re-importing the same files, and copies of them elsewhere, brings nothing back
    report = store.ingest([CLAUDE_CODE])
    assert report.entries_added == 0 and report.erased_earlier >= len(holders)
    assert any("erased earlier" in n for n in report.notes)
    copy = tmp_path / "copies" / "cc"
    shutil.copytree(CLAUDE_CODE, copy)
    report = store.ingest([copy])
    assert report.entries_added == 0 and report.erased_earlier >= len(holders)
    assert _holding(store, NEEDLE) == {}
    assert NEEDLE.encode() not in _raw(store)


def test_tables_a_later_capability_adds_are_covered(cc_store: Store) -> None:
    """A table the closure was never told about is scanned and its foreign keys followed:
    an edit row holding the text goes; a row pointing at an erased memory follows its FK."""
    holders = _entry_ids_holding(cc_store, NEEDLE)
    memory = _add_memory(cc_store, "Hook controller", f"The {NEEDLE} answers.", holders[:1])
    _add_proposal_tables(cc_store, memory, before=f"see {NEEDLE}.ex", after="see it")
    with cc_store.write() as conn:
        conn.execute(text("INSERT INTO ext_proposal (id, memory_id, title) VALUES "
                          "(2, NULL, 'unrelated')"))
    counts = cc_store.privacy_preview("erase", match=NEEDLE).counts()
    assert counts["ext_proposal_edit"] == 1
    result = cc_store.erase(match=NEEDLE)
    assert result.verification.passed
    with cc_store.read() as conn:
        left = conn.exec_driver_sql("SELECT id, memory_id FROM ext_proposal ORDER BY id").all()
    assert [tuple(r) for r in left] == [(1, None), (2, None)]  # nullable pointer cleared


def test_tombstone_and_audit_hold_no_content(cc_store: Store) -> None:
    """A tombstone keeps kind, counts, time and actor; the audit event ids and counts."""
    result = cc_store.erase(match=NEEDLE, reason="user request")
    with cc_store.read() as conn:
        tomb = conn.execute(text("SELECT * FROM tombstone WHERE id = :i"),
                            {"i": result.tombstone_id}).mappings().one()
        audit = conn.exec_driver_sql("SELECT action, target_ids, counts FROM audit_event "
                                     "WHERE action = 'erase'").one()
        probes = conn.exec_driver_sql("SELECT detail FROM erasure_probe").all()
        prints = conn.exec_driver_sql("SELECT fingerprint FROM erasure_fingerprint").all()
    assert tomb["scope_kind"] == "match" and tomb["verified"] == 1
    assert json.loads(tomb["counts"])["entry"] == result.closure["entry"]
    assert json.loads(audit[1]) == [result.tombstone_id]
    blob = json.dumps([dict(tomb), list(audit), [p[0] for p in probes]]).lower()
    assert NEEDLE not in blob
    plain = hashlib.sha256(NEEDLE.encode()).hexdigest()
    assert plain not in blob and all(len(p[0]) == 64 for p in prints)
    rows = cc_store.tombstones(with_probes=True)
    assert rows[0].to_json().keys() == {"id", "ts", "scope_kind", "counts", "actor"}
    assert [p[0] for p in rows[0].probes][0] == "rows"


# -- redaction ----------------------------------------------------------------------------------
@needs_shared_data
def test_redaction_keeps_entries_in_order_and_recall_works(cc_store: Store) -> None:
    """Matched spans become [REDACTED] in place: same entries, same seq, new keys and hashes,
    rebuilt chunks; recall still answers from the rest; a re-import restores nothing."""
    store = cc_store

    def listing() -> list[tuple[int, str, int]]:
        with store.read() as conn:
            return [(int(r[0]), r[1], int(r[2])) for r in conn.exec_driver_sql(
                "SELECT id, session_id, seq FROM entry ORDER BY session_id, seq").all()]

    holders = _entry_ids_holding(store, NEEDLE)
    with store.read() as conn:
        old_keys = dict(conn.execute(text(
            "SELECT id, idem_key FROM entry WHERE id IN (SELECT value FROM json_each(:i))"),
            {"i": json.dumps(holders)}).all())
    before = listing()
    result = store.redact(match=NEEDLE)
    assert result.verification.passed, [p.to_json() for p in result.verification.probes]
    assert listing() == before
    with store.read() as conn:
        rows = conn.execute(text(
            "SELECT id, content, content_hash, idem_key, tokens FROM entry WHERE id IN "
            "(SELECT value FROM json_each(:i))"), {"i": json.dumps(holders)}).all()
        chunks = conn.execute(text(
            "SELECT COUNT(*) FROM chunk WHERE source_type = 'entry' AND source_id IN "
            "(SELECT value FROM json_each(:i))"), {"i": json.dumps(holders)}).scalar_one()
    assert chunks >= len(holders)
    for entry_id, content, content_hash, key, tokens in rows:
        assert "[REDACTED]" in content and NEEDLE not in content.lower()
        assert content_hash == sha256_text(content)
        assert key.startswith("redacted:") and key != old_keys[entry_id]
        assert tokens == -(-len(content) // 4) + 4
    assert _holding(store, NEEDLE) == {}
    assert NEEDLE.encode() not in _raw(store)
    # recall still works on the rest of those entries, and on everything else
    hits = store.search("[REDACTED]", mode="fts", limit=50)
    assert {h.source_id for h in hits if h.source_type == "entry"} & set(holders)
    answer = store.recall("heatmap calculator for sessions")
    assert answer.items
    report = store.ingest([CLAUDE_CODE])
    assert report.entries_added == 0 and report.erased_earlier >= len(holders)
    assert listing() == before and _holding(store, NEEDLE) == {}


def test_redact_a_memory_and_its_file_is_not_imported_again(store: Store,
                                                             tmp_path: Path) -> None:
    """A memory redacted by id: its text replaced, its chunks rebuilt; importing its file
    again (or a copy of it) is refused as erased earlier."""
    folder = tmp_path / "mem"
    folder.mkdir()
    (folder / "user_contact.md").write_text(
        "---\nname: Contact\ndescription: how to reach the user\ntype: user\n---\n"
        "Write to pat.quinn@example.org for anything urgent.\n", "utf-8")
    store.ingest([folder])
    memory = store.memories()[0]
    result = store.redact(memory=memory.id)
    assert result.verification.passed, [p.to_json() for p in result.verification.probes]
    after = store.memory(memory.id)
    assert after.body == "[REDACTED]" and "pat.quinn" not in (after.description or "")
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    for path in (folder, copy):
        report = store.ingest([path])
        assert report.erased_earlier == 1 and report.memories_added == 0
    assert store.memory(memory.id).body == "[REDACTED]"
    assert b"pat.quinn" not in _raw(store)


# -- erasing a session --------------------------------------------------------------------------
QUERIES = ("add a new column to the sessions table", "tool heavy run with several bash commands",
           "commit the changes with a message", "hooks install script", "read the README")


def _results(store: Store) -> list[list[tuple[str, int]]]:
    from datetime import UTC, datetime

    from store.recall.run import probe

    now = datetime(2026, 3, 1, tzinfo=UTC)
    out = []
    for query in QUERIES:
        items = probe(store, query, now=now).items
        out.append([(i.source_type, i.source_id) for i in items])
    return out


@needs_shared_data
def test_erasing_a_session_leaves_other_recalls_unchanged(cc_store: Store) -> None:
    """A fixed set of recalls over the other sessions returns the same items after one
    session is erased (and the erasure passes its verification)."""
    store = cc_store
    with store.read() as conn:
        gone = {int(r[0]) for r in conn.execute(
            text("SELECT id FROM entry WHERE session_id = :s"), {"s": SHORT}).all()}
    before = _results(store)
    usable = [i for i, r in enumerate(before)
              if r and not any(t == "entry" and x in gone for t, x in r)]
    assert len(usable) >= 3, before
    result = store.erase(session=SHORT[:8])
    assert result.verification.passed, [p.to_json() for p in result.verification.probes]
    assert result.closure["session"] == 1 and result.closure["entry"] == len(gone)
    after = _results(store)
    for i in usable:
        assert after[i] == before[i], QUERIES[i]
    assert all(s.id != SHORT for s in store.sessions())
    report = store.ingest([CLAUDE_CODE])
    assert report.entries_added == 0 and report.sessions_added == 0
    assert all(s.id != SHORT for s in store.sessions())


# -- a failure mid-erase ------------------------------------------------------------------------
def _dump(store: Store) -> str:
    digest = hashlib.sha256()
    with store.read() as conn:
        for name in sorted(relational_tables(conn)):
            for row in conn.exec_driver_sql(f"SELECT * FROM {q(name)} ORDER BY rowid").all():
                digest.update(repr(tuple(row)).encode())
        # the vector and text indexes, through the one module that knows the backend: which
        # chunks have a vector, which a text row (and any left without their chunk), which
        # match the needle as a phrase
        chunks = [int(r[0]) for r in conn.exec_driver_sql("SELECT id FROM chunk").all()]
        vectors, texts = vec.indexed(conn, chunks)
        for part in (sorted(int(i) for i in vec.all_vectors(conn)[0]), sorted(vectors),
                     sorted(texts), vec.index_orphans(conn),
                     sorted(vec.fts_phrase(conn, NEEDLE.split("_"), limit=10**6))):
            digest.update(repr(part).encode())
    return digest.hexdigest()


@pytest.mark.parametrize("at", ["index", "delete entry", "tombstone"])
def test_failure_mid_erase_leaves_the_store_as_it_was(cc_store: Store, at: str) -> None:
    """An error injected part way through the transaction rolls every change back."""
    before = _dump(cc_store)

    def step(name: str) -> None:
        if name == at:
            raise RuntimeError(f"injected failure at {name}")

    with pytest.raises(RuntimeError, match="injected"):
        run(cc_store, Scope("match", NEEDLE), "erase", step=step)
    assert _dump(cc_store) == before
    assert cc_store.tombstones() == []
    result = cc_store.erase(match=NEEDLE)
    assert result.verification.passed


# -- honesty of the verification ----------------------------------------------------------------
@pytest.mark.sqlite_only("a reader holding SQLite's WAL open")
def test_a_reader_holding_the_wal_fails_the_raw_byte_probe(cc_store: Store) -> None:
    """When the WAL cannot be truncated (a reader holds a snapshot), the erasure says so and
    its verification fails; once the reader lets go, the next erasure passes."""
    import sqlean

    from tests.conftest import make_store

    path = cc_store.path
    cc_store.close()
    store = make_store(path, **{"store.busy_timeout_ms": 200})
    with store.write() as conn:  # leave frames in the WAL for the reader to pin
        conn.exec_driver_sql("UPDATE session SET title = title")
    reader = sqlean.connect(str(path))
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM entry").fetchone()
    try:
        result = run(store, Scope("match", NEEDLE), "erase")
    finally:
        reader.rollback()
        reader.close()
    raw = _probes(result)["raw-bytes"]
    assert not raw.passed and "could not be truncated" in raw.detail
    assert not result.verification.passed
    assert store.tombstones()[0].verified is False
    again = store.erase(match="SessionHookController")
    assert again.verification.passed
    store.close()


@pytest.mark.sqlite_only("SQLite's free pages, secure_delete and VACUUM")
def test_stale_bytes_in_free_space_are_vacuumed(store: Store) -> None:
    """Bytes an earlier delete left in free pages (written without secure_delete) are found
    by the raw-byte probe and removed by VACUUM."""
    import sqlean

    marker = "zebracorn-7731-leftover"
    raw = sqlean.connect(str(store.path), isolation_level=None)
    raw.execute("PRAGMA secure_delete = OFF")
    raw.execute("CREATE TABLE scratch (body TEXT)")
    raw.execute("INSERT INTO scratch VALUES (?)", (marker * 200,))
    raw.execute("DROP TABLE scratch")
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    assert marker.encode() in store.path.read_bytes()
    result = store.erase(match=marker)
    assert result.tombstone_id is None and result.closure == {}
    probe = _probes(result)["raw-bytes"]
    assert probe.passed and "vacuumed" in probe.detail
    assert marker.encode() not in store.path.read_bytes()


def test_exports_holding_it_are_named_and_deleted_only_when_asked(cc_store: Store,
                                                                   tmp_path: Path) -> None:
    store = cc_store
    store.export(tmp_path / "old")
    result = store.erase(match=NEEDLE)
    exports = _probes(result)["exports"]
    assert result.exports and not exports.passed and "--delete-exports" in exports.detail
    assert all(Path(f).is_file() for f in result.exports)
    again = store.erase(match=NEEDLE, delete_exports=True)
    assert _probes(again)["exports"].passed
    assert again.exports_deleted and not any(Path(f).exists() for f in again.exports_deleted)


# -- scopes and sensitivity ---------------------------------------------------------------------
def test_scope_errors_are_clear() -> None:
    with pytest.raises(ScopeError, match="exactly one"):
        scope_from(match="a", regex="b")
    with pytest.raises(ScopeError, match="not a valid regular expression"):
        Scope("regex", "(")
    with pytest.raises(ScopeError, match="empty string"):
        Scope("regex", "x*")
    with pytest.raises(ScopeError, match="numeric id"):
        Scope("entry", "abc")


def test_regex_and_entry_scopes(cc_store: Store) -> None:
    regex = cc_store.privacy_preview("erase", regex=r"Session(Hook|Registry)Controller")
    assert regex.counts()["entry"] >= 1
    entry_id = _entry_ids_holding(cc_store, NEEDLE)[0]
    result = cc_store.erase(entry=entry_id)
    assert result.closure["entry"] == 1 and result.verification.passed
    with pytest.raises(NotFound, match="no entry"):
        cc_store.erase(entry=entry_id)


def test_private_entry_never_injected_into_a_public_recall(store: Store) -> None:
    """Entries follow the channel rule exactly as memories do; a session's default applies to
    entries written later."""
    from store.core.writes import NewEntry, NewSession

    session = NewSession("s-private", "test")
    text_ = "the staging vault token lives at vault/ledger/staging (rotate monthly)"
    store.append_entries(session, [NewEntry("user", text_, "t:1", source_offset=0)])
    counts = store.mark("private", match="vault/ledger/staging")
    assert counts["entry"] == 1
    public = store.recall("where does the staging vault token live", channel="public")
    private = store.recall("where does the staging vault token live", channel="private")
    pub = [c for c in public.trace.candidates if c.source_type == "entry"]
    assert pub and all(c.decision == "policy_filtered" and c.excerpt is None for c in pub)
    assert not [i for i in public.items if i.source_type == "entry"]
    assert any(i.source_type == "entry" for i in private.items)
    store.mark("secret", session="s-private")
    store.append_entries(session, [NewEntry("user", "and the backup key is in vault too",
                                            "t:1", source_offset=99)])
    assert {e.sensitivity for e in store.entries("s-private")} == {"secret"}
    secret = store.recall("staging vault token", channel="private")
    assert not [i for i in secret.items if i.source_type == "entry"]
    assert all(c.excerpt is None for c in secret.trace.candidates if c.source_type == "entry")
    hits = store.search("vault token")
    assert hits and all(h.masked and "vault/" not in h.text for h in hits
                        if h.source_type == "entry")


def test_a_stale_closure_fails_cleanly_and_changes_nothing(cc_store: Store) -> None:
    """Evidence written after the preview points at an entry the closure deletes: the foreign
    key stops the transaction, the erasure says so, and nothing changes."""
    c = cc_store.privacy_preview("erase", match=NEEDLE)
    victim = sorted(c.delete["entry"])[0]
    _add_memory(cc_store, "Late", "a memory consolidated after the preview", [victim])
    before = _dump(cc_store)
    with pytest.raises(apply.ErasureFailed, match="nothing was changed"):
        apply.erase(cc_store, c)
    assert _dump(cc_store) == before
    assert cc_store.erase(match=NEEDLE).verification.passed  # a fresh closure covers it


def test_a_proposal_derived_only_from_erased_entries_goes(cc_store: Store) -> None:
    """A proposal's JSON evidence is followed like a memory's evidence rows."""
    with cc_store.read() as conn:
        ids = [int(r[0]) for r in conn.execute(text(
            "SELECT id FROM entry WHERE session_id = :s ORDER BY seq LIMIT 2"),
            {"s": SHORT}).all()]
        elsewhere = int(conn.execute(text("SELECT id FROM entry WHERE session_id = :s LIMIT 1"),
                                     {"s": BIG}).scalar_one())
    only = cc_store.propose({"op": "add", "type": "project", "content": "short session note",
                             "evidence": [{"entry": i} for i in ids]}, auto_apply=False)
    both = cc_store.propose({"op": "add", "type": "project", "content": "a broader note",
                             "evidence": [{"entry": ids[0]}, {"entry": elsewhere}]},
                            auto_apply=False)
    result = cc_store.erase(session=SHORT)
    assert result.verification.passed and result.closure["proposal"] == 1
    left = {p.id for p in cc_store.proposals()}
    assert only.summary.id not in left and both.summary.id in left


@needs_shared_data
def test_import_position_of_a_file_imported_by_a_relative_path(store: Store,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    """The position (kept resolved) of a file imported by a relative path is in the closure
    whatever the directory the erasure runs from."""
    monkeypatch.chdir(CLAUDE_CODE.parent)
    store.ingest([Path("claude-code/short.jsonl")])
    monkeypatch.chdir(tmp_path)
    with store.read() as conn:
        content = conn.exec_driver_sql("SELECT content FROM entry WHERE kind = 'user' "
                                       "ORDER BY seq LIMIT 1").scalar_one()
    counts = store.privacy_preview("erase", match=content[:40]).counts()
    assert counts["import_position"] == 1


def test_cli_json_shapes(cc_store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON scripts rely on: dry run, erase, tombstones, mark; refusals are one line."""
    from lca_tui.cli import main

    path = str(cc_store.opened_as)  # the file, or the server's URL
    cc_store.close()
    assert main(["erase", "--store", path, "--match", NEEDLE, "--dry-run", "--json"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert set(dry) == {"closure", "exports"} and dry["closure"]["entry"] >= 5
    assert main(["erase", "--store", path, "--match", NEEDLE, "--json"]) == 2
    err = capsys.readouterr().err
    assert "--yes" in err and err.count("\n") == 1
    assert main(["erase", "--store", path, "--match", NEEDLE, "--yes", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"closure", "exports", "verification", "tombstone_id"}
    assert doc["closure"] == dry["closure"] and doc["verification"]["passed"]
    assert all(set(p) == {"name", "passed", "detail"} for p in doc["verification"]["probes"])
    assert main(["tombstones", "--store", path, "--json"]) == 0
    tombs = json.loads(capsys.readouterr().out)["tombstones"]
    assert [set(t) for t in tombs] == [{"id", "ts", "scope_kind", "counts", "actor"}]
    assert tombs[0]["id"] == doc["tombstone_id"] and tombs[0]["scope_kind"] == "match"
    assert main(["mark", "--store", path, "--match", "SessionRegistry", "--as", "secret",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["entry"] >= 1
    assert main(["redact", "--store", path, "--regex", "(", "--yes"]) == 2
    assert "not a valid regular expression" in capsys.readouterr().err
