"""Retention of transcript entries: ``transcript.retention_days.<kind>`` lists the
entries of that kind past it, and erasing them goes through the privacy erasure — one
``entries`` scope, its closure, verified by the probes of ``erase``, one tombstone — leaving
every other entry as it was."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from store import PlanStale, Store
from store.core.writes import NewEntry, NewSession
from store.privacy.scope import Scope, ScopeError

from tests.conftest import make_store

NOW = datetime(2026, 6, 1, tzinfo=UTC)
OLD, MID, NEW = "2026-01-05T10:00:00Z", "2026-04-01T10:00:00Z", "2026-05-25T10:00:00Z"


@pytest.fixture
def kept(tmp_path: Path) -> Iterator[Store]:
    s = make_store(tmp_path / "kept.db", **{"transcript.retention_days.tool_result": 30})
    yield s
    s.close()


def _seed(store: Store) -> dict[str, int]:
    """Two sessions; entries of two kinds at three ages. The tool results older than 30 days
    hold words found nowhere else (``quokka``, ``zanzibar``), so the probes have something to
    miss."""
    rows = {
        "s1": [("user", "run the quokka migration on staging", OLD, "u-old"),
               ("tool_result", "quokka migration output: 41 tables moved", OLD, "t-old"),
               ("tool_result", "zanzibar ledger dump, 12 rows", MID, "t-mid"),
               ("tool_result", "fresh build log, all green", NEW, "t-new"),
               ("assistant", "the migration finished without errors", OLD, "a-old")],
        "s2": [("user", "what does the nightly job print", OLD, "u2-old"),
               ("tool_result", "zanzibar nightly summary: 3 warnings", MID, "t2-mid")],
    }
    for sid, entries in rows.items():
        store.append_entries(NewSession(sid, "test"), [
            NewEntry(kind, body, f"{sid}:k", source_offset=i, ts=ts)
            for i, (kind, body, ts, _) in enumerate(entries)])
    names = [name for entries in rows.values() for *_, name in entries]
    ids = [e.id for sid in rows for e in store.entries(sid)]
    return dict(zip(names, ids, strict=True))


def _entry_ids(store: Store) -> set[int]:
    with store.read() as conn:
        return {int(r[0]) for r in conn.execute(text("SELECT id FROM entry")).all()}


def test_due_lists_exactly_the_entries_past_their_kind_retention(kept: Store) -> None:
    ids = _seed(kept)
    due = kept.transcript_due(now=NOW)
    assert [e.entry_id for e in due.entries] == [ids["t-old"], ids["t-mid"], ids["t2-mid"]]
    assert due.limits == {"tool_result": 30}
    assert due.by_kind() == {"tool_result": 3}
    assert due.by_session() == {"s1": {"tool_result": 2}, "s2": {"tool_result": 1}}
    assert round(due.entries[1].age_days) == 61
    # no retention for a kind (the default 0): nothing of it is ever due
    with make_store(Path(str(kept.path)).with_name("all.db")) as plain:
        _seed(plain)
        assert plain.transcript_due(now=NOW).entries == []


def test_the_closure_is_a_preview_and_changes_nothing(kept: Store) -> None:
    _seed(kept)
    before = _entry_ids(kept)
    due = kept.transcript_due(now=NOW)
    closure = kept.transcript_closure(due)
    assert closure.counts()["entry"] == 3 and closure.counts()["chunk"] >= 3
    assert _entry_ids(kept) == before and kept.tombstones() == []


def test_erasing_them_goes_through_the_privacy_erasure(kept: Store) -> None:
    ids = _seed(kept)
    gone = {ids["t-old"], ids["t-mid"], ids["t2-mid"]}
    due = kept.transcript_due(now=NOW)
    result = kept.erase_transcript(due, confirmed=kept.transcript_closure(due))
    assert result.verification.passed, [(p.name, p.detail) for p in
                                         result.verification.probes if not p.passed]
    assert _entry_ids(kept) == set(ids.values()) - gone
    tombs = kept.tombstones(with_probes=True)
    assert len(tombs) == 1 and tombs[0].id == result.tombstone_id
    t = tombs[0]
    assert t.action == "erase" and t.scope_kind == "entry" and t.verified is True
    assert t.counts["entry"] == 3
    assert t.reason == "retention: transcript.retention_days.tool_result=30"
    names = {name for name, _, _ in t.probes}
    assert {"rows", "fts", "substring", "raw-bytes"} <= names
    assert all(ok for _, ok, _ in t.probes)
    # the erased text is gone from the index; what was kept is still found
    assert kept.search("zanzibar", mode="fts") == []
    quokka = kept.search("quokka", mode="fts")
    assert [h.text for h in quokka] == ["run the quokka migration on staging"]
    assert {e.kind for e in kept.entries("s1")} == {"user", "tool_result", "assistant"}
    # nothing is due any more
    assert kept.transcript_due(now=NOW).entries == []


def test_a_stale_confirmation_changes_nothing(kept: Store) -> None:
    _seed(kept)
    due = kept.transcript_due(now=NOW)
    seen = kept.transcript_closure(due)
    kept.append_entries(NewSession("s1", "test"), [
        NewEntry("tool_result", "zanzibar late addition", "s1:k", source_offset=99, ts=NEW)])
    before = _entry_ids(kept)
    with pytest.raises(PlanStale):
        kept.erase_transcript(due, confirmed=seen)
    assert _entry_ids(kept) == before and kept.tombstones() == []


def test_the_entries_scope() -> None:
    assert Scope.of_entries([5, 3, 5]).value == "3,5"
    assert Scope.of_entries([3, 5]).ids == [3, 5]
    assert Scope.of_entries([3, 5]).record_kind == "entry"
    assert Scope.of_entries([3, 5]).label() == "2 entries"
    with pytest.raises(ScopeError, match="entry ids joined by commas"):
        Scope("entries", "3,x")


def test_the_entries_scope_names_existing_entries_and_is_never_redacted(kept: Store) -> None:
    from store.core.errors import NotFound

    ids = _seed(kept)
    with pytest.raises(NotFound, match="no entry with id 999999"):
        kept.privacy_closure(Scope.of_entries([ids["t-old"], 999999]), "erase")
    with pytest.raises(ValueError, match="erased, not redacted"):
        kept.privacy_closure(Scope.of_entries([ids["t-old"]]), "redact")
