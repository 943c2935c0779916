"""Deferred embedding: entries stored without chunks are searchable at once and embedded
later; long tool calls and results embed their head and keep every window in FTS."""

from __future__ import annotations

from pathlib import Path

from store import Store
from store.core.writes import NewEntry, NewSession
from store.recall.pool import LiveWindow, live_window
from store.recall.run import recall
from tests.conftest import BIG_SESSION, make_store, needs_shared_data

SESSION = NewSession("s1", "api", project="/work/demo")


def _entries(*texts: str, kind: str = "user") -> list[NewEntry]:
    return [NewEntry(kind, t, "api:s1", source_offset=i) for i, t in enumerate(texts)]


def _chunk_rows(store: Store) -> list[tuple]:
    with store.read() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(
            "SELECT e.idem_key, c.span_start, c.span_end, c.text, c.status, c.lexical_only "
            "FROM chunk c JOIN entry e ON c.source_type = 'entry' AND e.id = c.source_id "
            "ORDER BY e.idem_key, c.span_start").all()]


def test_deferred_entries_are_found_by_fts_then_embedded(store: Store) -> None:
    ids = store.append_entries(SESSION, _entries(
        "the flamingo deployment failed on friday", "   ",
        "we rolled back the canary release"), defer=True)
    assert len(ids) == 3
    assert store.waiting() == 2  # the blank entry is nothing to index
    assert store.stats().chunks == 0
    hits = store.search("flamingo", 5, "fts")
    assert [h.chunk_id for h in hits] == [None] and hits[0].source_id == ids[0]
    result = recall(store, "flamingo deployment", probe=True)
    waiting = [c for c in result.trace.candidates if c.chunk_id is None]
    assert [c.source_id for c in waiting] == [ids[0]] and waiting[0].cos is None
    report = store.embed_waiting()
    assert (report.entries, report.left) == (2, 0) and report.chunks == 2
    assert store.waiting() == 0
    assert store.search("flamingo", 5, "fts")[0].chunk_id is not None
    result = recall(store, "flamingo deployment", probe=True)
    assert all(c.chunk_id is not None for c in result.trace.candidates)


@needs_shared_data
def test_deferred_then_embedded_equals_embedded_at_once(tmp_path: Path) -> None:
    at_once = make_store(tmp_path / "a.db")
    later = make_store(tmp_path / "b.db")
    at_once.ingest([BIG_SESSION])
    report = later.ingest([BIG_SESSION], defer=True)
    assert report.entries_waiting > 0 and later.stats().chunks == 0
    later.embed_waiting()
    assert _chunk_rows(later) == _chunk_rows(at_once)
    a, b = at_once.stats(), later.stats()
    assert (a.chunks, a.vectors, a.fts_rows, a.chunks_lexical_only) == \
        (b.chunks, b.vectors, b.fts_rows, b.chunks_lexical_only)
    at_once.close()
    later.close()


def test_erased_or_redacted_waiting_entry_leaves_the_index(store: Store) -> None:
    ids = store.append_entries(SESSION, _entries("the password is hunter2zz",
                                                 "keep this kiwifruit note"), defer=True)
    with store.write() as conn:
        conn.exec_driver_sql("UPDATE entry SET content = 'redacted remark' WHERE id = ?",
                             (ids[0],))
        conn.exec_driver_sql("DELETE FROM entry WHERE id = ?", (ids[1],))
    assert store.search("hunter2zz", 5, "fts") == []
    assert store.search("kiwifruit", 5, "fts") == []
    assert [h.source_id for h in store.search("redacted", 5, "fts")] == [ids[0]]
    assert store.waiting() == 1
    store.embed_waiting()
    rows = _chunk_rows(store)
    assert [r[3] for r in rows] == ["redacted remark"]


def test_long_tool_result_embeds_its_head_and_keeps_all_in_fts(store: Store) -> None:
    lines = "\n".join(f"line {i}: the value of setting number {i} is {i * 7}" for i in range(300))
    lines += "\nthe closing marker is xylophonequartz"
    store.append_entries(SESSION, _entries(lines, kind="tool_result")
                         + [NewEntry("assistant", "As you see:\n" + lines, "api:s1",
                                     source_offset=9)])
    with store.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT e.kind, c.lexical_only, c.status, "
            "EXISTS (SELECT 1 FROM chunk_vec v WHERE v.rowid = c.id), c.tokens, c.span_start, "
            "c.span_end, LENGTH(e.content) FROM chunk c "
            "JOIN entry e ON e.id = c.source_id ORDER BY e.id, c.span_start").all()
    tool = [r for r in rows if r[0] == "tool_result"]
    prose = [r for r in rows if r[0] == "assistant"]
    assert len(tool) > 3 and len(prose) > 3
    assert [(r[1], bool(r[3])) for r in tool] == [(0, True)] + [(1, False)] * (len(tool) - 1)
    assert tool[0][4] <= 128 < max(r[4] for r in tool)  # a head of 128 tokens; then windows
    assert tool[0][5] == 0 and tool[-1][6] == tool[0][7]  # the windows tile the whole text
    assert all(a[6] == b[5] for a, b in zip(tool, tool[1:]))
    assert all(r[2] == "ok" for r in rows) and all(r[3] and not r[1] for r in prose)
    hits = store.search("xylophonequartz", 5, "fts")
    assert {h.kind for h in hits} == {"tool_result", "assistant"}


def test_every_window_embedded_when_the_head_setting_is_zero(tmp_path: Path) -> None:
    s = make_store(tmp_path / "all.db", **{"embed.tool_head_tokens": 0})
    text = " ".join(f"word{i}" for i in range(2000))
    s.append_entries(SESSION, _entries(text, kind="tool_result"))
    stats = s.stats()
    assert stats.chunks > 1 and stats.chunks_lexical_only == 0 and stats.vectors == stats.chunks
    s.close()


def test_live_window_is_left_out_of_recall(store: Store) -> None:
    other = NewSession("s0", "api", project="/work/demo")
    store.append_entries(other, [NewEntry("user", "the marmalade recipe uses seville oranges",
                                          "api:s0", source_offset=0)])
    store.append_entries(SESSION, [
        NewEntry("user", "marmalade before the compaction", "api:s1", source_offset=0),
        NewEntry("compaction", "summary of earlier work", "api:s1", source_offset=1),
        NewEntry("user", "marmalade in the live window", "api:s1", source_offset=2)])
    with store.read() as conn:
        live = live_window(conn, "s1")
    assert live == LiveWindow("s1", 1)
    got = recall(store, "marmalade", probe=True, live=live)
    texts = {c.excerpt for c in got.trace.candidates}
    assert "marmalade in the live window" not in texts
    assert {"marmalade before the compaction",
            "the marmalade recipe uses seville oranges"} <= texts


def test_recall_without_the_vector_copy_agrees(cc_store: Store, tmp_path: Path) -> None:
    cold = make_store(cc_store.path, **{"recall.vector_cache": False})
    for query in ("phoenix server websocket", "how are the tests run"):
        warm = recall(cc_store, query, probe=True)
        one_shot = recall(cold, query, probe=True)
        # vec0's distances and the in-memory product may order near-ties at the pool's edge
        # differently; what is injected and the head of the ranking agree
        assert [(i.source_type, i.source_id) for i in warm.items] == \
            [(i.source_type, i.source_id) for i in one_shot.items]
        # identical texts tie exactly and rank by chunk id on both paths
        assert [(c.source_id, c.decision) for c in warm.trace.candidates[:10]] == \
            [(c.source_id, c.decision) for c in one_shot.trace.candidates[:10]]
    cold.close()


def test_neighbours_from_the_vector_copy_match_the_index(cc_store: Store) -> None:
    """The daemon finds new chunks' nearest neighbours in its in-memory vectors; the result
    is what the index itself gives."""
    import numpy as np

    from store.harness.daemon import cache_finder

    vectors = cc_store.embedder.embed(["phoenix websocket server", "mix test failures",
                                       "mix test failures"])
    plain, warm = cc_store.indexer(), cc_store.indexer()
    warm.finder = cache_finder(cc_store)
    with cc_store.read() as conn:
        a, b = plain._neighbours(conn, vectors), warm._neighbours(conn, vectors)
    # the same similarity (an identical chunk stored twice may tie: either id is right)
    assert np.allclose([s for _, s in a], [s for _, s in b], atol=1e-5)
    assert all(r is not None for r, _ in b)
    assert b[2][0] == -2 and b[2][1] == 1.0  # the twin earlier in the same batch


def test_erasure_and_redaction_reach_entries_waiting_for_embedding(store: Store) -> None:
    """What a hook stored and the daemon has not embedded yet is erased and redacted like
    the rest: its words leave the waiting index too."""
    from store.core import vec

    store.append_entries(SESSION, _entries("the launch code is quokka7731 for friday",
                                           "an unrelated wombat note"), defer=True)
    other = NewSession("s2", "api")
    store.append_entries(other, [NewEntry("user", "the badger password is ferret5519",
                                          "api:s2", source_offset=0)], defer=True)
    store.redact(match="quokka7731", reason="test")
    store.erase(session="s2", reason="test")
    with store.read() as conn:
        assert vec.waiting_search(conn, "quokka7731", 10) == []
        assert vec.waiting_search(conn, "ferret5519 badger", 10) == []
        assert [e for e, _ in vec.waiting_search(conn, "wombat", 10)]
    assert store.search("quokka7731", 5, "fts") == []
    assert store.search("ferret5519", 5, "fts") == []
    store.embed_waiting()
    assert store.waiting() == 0 and store.search("quokka7731", 5, "fts") == []


def test_index_lag_shows_entries_queued_by_a_hook_apart(store: Store) -> None:
    """Entries a hook stored for the daemon wait by design: not lag while queued younger
    than health.index_queue_hours (a prompt's hook does not turn Health red), lag after."""
    from store.health.scan import scan
    from tests.conftest import make_store

    store.append_entries(SESSION, _entries("waiting one", "waiting two"), defer=True)
    lag = scan(store, save="never").signal("index_lag")
    assert lag.status == "ok" and lag.detail["queued_young"] == 2
    assert lag.detail["queued"] == 0 and lag.offending == []
    assert "2 entries a hook stored wait to be embedded" in lag.explanation
    late = make_store(store.path, **{"health.index_queue_hours": 0})  # queued too long
    try:
        lag = scan(late, save="never").signal("index_lag")
    finally:
        late.close()
    assert lag.status == "fail" and lag.detail["queued"] == 2  # 2 of 2: over 1 %
    assert "queued by a hook over 0 h ago" in lag.explanation
    assert {r.note.split(" more")[0] for r in lag.offending} == {"queued by a hook"}
    store.embed_waiting()
    assert scan(store, save="never").signal("index_lag").status == "ok"


def test_the_vector_copy_multiplies_once_per_query_and_forgets_on_change(store: Store,
                                                                         monkeypatch) -> None:
    """A recall asks the in-memory copy for the same query vector more than once (allowed and
    held-back searches, deeper reads): one matrix product serves them; a chunk added since
    is in the next answer for the same vector (the product is not reused across a change)."""
    import numpy as np

    from store.recall.pool import cache_for

    store.append_entries(SESSION, _entries("the phoenix websocket server restarts nightly",
                                           "mix test failures in the billing module"))
    cache = cache_for(store)
    calls = []
    real = np.einsum
    monkeypatch.setattr(np, "einsum", lambda *a, **k: calls.append(1) or real(*a, **k))
    q = store.embedder.embed(["phoenix websocket server"])[0]
    with store.read() as conn:
        cache.sync(conn, store.embedder.name)
    allowed = cache.knn(q, 10, ("secret",))
    held = cache.knn(q, 10, ("secret",), denied=True)
    again = cache.knn(q, 10)
    assert len(calls) == 1
    assert held == [] and [c for c, _ in again] == [c for c, _ in allowed]
    before = {c for c, _ in again}
    new = NewSession("s2", "api", project="/work/demo")
    store.append_entries(new, [NewEntry("user", "phoenix websocket server", "api:s2",
                                        source_offset=0)])
    with store.read() as conn:
        cache.sync(conn, store.embedder.name)
    after = cache.knn(q, 10)
    assert len(calls) == 2
    added = {c for c, _ in after} - before
    assert len(added) == 1 and after[0][0] in added  # the exact text, nearest
