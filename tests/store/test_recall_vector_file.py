"""The vector copy's file beside the store (``store/recall/vecfile.py``): the next process maps
it instead of reading every vector, recall's results are those of the exact path, a stale
file is never used, and an erased chunk's vector never comes back from it."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from store import Store
from store.recall import vecfile
from store.recall.pool import VectorCache, cache_for
from store.recall.run import recall
from tests.conftest import CLAUDE_CODE, make_store, needs_shared_data
from tests.helpers_recall import NOW, add_entries, import_memories

TOPICS = {
    "deploy": "helm chart canary rollout staging production release pipeline",
    "tests": "pytest fixture snapshot flaky assertion coverage regression suite",
    "db": "sqlite migration schema index vacuum journal transaction column",
    "ui": "textual screen widget keyboard focus palette layout render",
}
# The vector file and the faster FTS5 search are the SQLite backend's own: on a server, recall
# asks pgvector's HNSW index and ranks with ts_rank_cd, holding no vectors in the process
# (store/core/vec.py: chunks_of_levels is [] there), so these tests have nothing to test on it.
pytestmark = pytest.mark.sqlite_only(
    "the process's vector file and FTS5's faster channel-rule search exist on SQLite only; a "
    "server store's recall asks the server's index (tests/store/test_postgres_backend.py)")

QUERIES = ("how do we deploy the helm canary to production",
           "which pytest fixture makes the snapshot flaky",
           "the sqlite migration that rebuilt the schema index",
           "keyboard focus on the textual screen")


def _seed(store: Store, tmp_path: Path, n: int = 160) -> list[int]:
    """Transcript entries over four topics (a few identical texts: exact ties), memories,
    and one secret memory; returns the entry ids."""
    rng = random.Random(11)
    texts = []
    for i in range(n):
        topic = list(TOPICS)[i % len(TOPICS)]
        words = TOPICS[topic].split()
        body = " ".join(rng.choice(words) for _ in range(14)) + f" (note {i % 37})"
        texts.append(("user" if i % 3 else "assistant", body))
    texts += [texts[5], texts[5]]
    ids = add_entries(store, "s1", texts[: n // 2], project="/work/lca")
    ids += add_entries(store, "s2", texts[n // 2:], project="/work/other")
    import_memories(store, tmp_path / "mem", [
        ("deploy-guide", "Deploy with the helm chart: canary in staging, then production.",
         {"name": "deploy guide", "hits": 4}),
        ("flaky", "A flaky snapshot: pin the terminal size in the pytest fixture.",
         {"name": "flaky snapshots", "authority": "approved"}),
        ("secret", "The staging helm token is kept in the vault.",
         {"name": "helm token", "sensitivity": "secret"}),
    ])
    return ids


def _ranking(result: Any) -> list[tuple[Any, ...]]:
    return [(c.source_type, c.source_id, c.decision) for c in result.trace.candidates]


def _terms(result: Any) -> dict[tuple[str, int | None], dict[str, float | None]]:
    return {(c.source_type, c.source_id): {**c.terms, "score": c.score, "cos": c.cos}
            for c in result.trace.candidates}


def _close(a: dict[str, float | None], b: dict[str, float | None], tol: float) -> bool:
    return all((a[k] is None) == (b[k] is None) and
               (a[k] is None or abs(float(a[k] or 0) - float(b[k] or 0)) <= tol) for k in a)


def test_mapped_file_gives_the_exact_paths_results(tmp_path: Path) -> None:
    """The same recalls three ways on a seeded store: vectors read from sqlite-vec into
    memory (the file then written), the file mapped by a fresh process, and the exact cold
    path (``recall.vector_cache = false``: sqlite-vec's own KNN scan)."""
    path = tmp_path / "store.db"
    first = make_store(path)
    _seed(first, tmp_path)
    loaded = [recall(first, q, now=NOW, probe=True) for q in QUERIES]
    cache = cache_for(first)
    assert cache.reloads == 1 and cache.maps == 0
    assert vecfile.path_for(path).is_file()
    first.close()

    mapped_store = make_store(path)
    mapped = [recall(mapped_store, q, now=NOW, probe=True) for q in QUERIES]
    warm = cache_for(mapped_store)
    assert warm.maps == 1 and warm.reloads == 0  # nothing read from chunk_vec but a sample
    exact_store = make_store(path, **{"recall.vector_cache": False})
    exact = [recall(exact_store, q, now=NOW, probe=True) for q in QUERIES]
    for a, b, c in zip(loaded, mapped, exact, strict=True):
        # mapped or loaded: the same bytes, so the same trace to the last digit
        assert _ranking(a) == _ranking(b) and _terms(a) == _terms(b)
        assert [(i.source_type, i.source_id) for i in a.items] == \
            [(i.source_type, i.source_id) for i in c.items]
        # the exact path: top 10 identical, every shared candidate's terms within float
        # tolerance (vec0 sums a cosine in another order than the matrix product, so
        # near-ties at the pool's edge may fall either side of it: a few of 50 differ)
        assert _ranking(b)[:10] == _ranking(c)[:10]
        tb, tc = _terms(b), _terms(c)
        shared = set(tb) & set(tc)
        assert len(shared) >= 0.9 * len(tb)
        assert all(_close(tb[k], tc[k], 1e-5) for k in shared)
        assert a.items, "the seeded store must inject something"
    mapped_store.close()
    exact_store.close()


def test_chunks_added_after_the_file_are_read_and_found(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    s = make_store(path)
    _seed(s, tmp_path, n=40)
    recall(s, QUERIES[0], probe=True)
    s.close()
    written = vecfile.read(vecfile.path_for(path))
    assert written is not None
    other = make_store(path)  # another process adds a chunk; it never recalls
    new_id = add_entries(other, "s3", [("user", "the zeppelin hangar door jams in winter")])[0]
    other.close()
    s = make_store(path)
    result = recall(s, "the zeppelin hangar door jams in winter", probe=True)
    cache = cache_for(s)
    assert cache.maps == 1 and cache.reloads == 0
    assert len(cache.ids) == len(written.ids) + 1
    top = result.trace.candidates[0]
    assert (top.source_type, top.source_id) == ("entry", new_id)
    assert top.cos is not None and top.cos > 0.99
    s.close()


def test_a_file_of_another_store_with_the_same_counts_is_not_used(tmp_path: Path) -> None:
    """Two stores built the same way from different texts have the same stamp (counts,
    highest id, audit event); one's file beside the other is refused by its content hashes."""
    def build(name: str, word: str) -> Path:
        path = tmp_path / name / "store.db"
        path.parent.mkdir()
        s = make_store(path)
        add_entries(s, "s1", [("user", f"{word} number {i} of the rollout") for i in range(30)])
        recall(s, f"{word} rollout", probe=True)
        s.close()
        return path

    a, b = build("a", "helm"), build("b", "pytest")
    ma, mb = vecfile.read(vecfile.path_for(a)), vecfile.read(vecfile.path_for(b))
    assert ma is not None and mb is not None and ma.stamp == mb.stamp
    own = np.array(ma.matrix)  # a copy: the file is overwritten in place below
    shutil.copyfile(vecfile.path_for(b), vecfile.path_for(a))
    s = make_store(a)
    recall(s, "helm rollout", probe=True)
    cache = cache_for(s)
    assert cache.maps == 0 and cache.reloads == 1
    assert np.array_equal(cache.matrix, own)
    s.close()


def test_an_erased_chunks_vector_never_comes_back_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    s = make_store(path)
    ids = _seed(s, tmp_path, n=40)
    recall(s, QUERIES[0], probe=True)
    file = vecfile.path_for(path)
    stale = tmp_path / "stale-copy"
    shutil.copyfile(file, stale)  # the file as a racing process could have written it
    victim = ids[0]
    with s.read() as conn:
        chunk_ids = {int(r[0]) for r in conn.exec_driver_sql(
            "SELECT id FROM chunk WHERE source_type = 'entry' AND source_id = ?", (victim,))}
    before = vecfile.read(stale)
    assert before is not None and chunk_ids <= set(before.ids.tolist())

    result = s.erase(entry=victim)
    # the erasure deleted the file; its own probe recall may have written it again, from
    # the store after the erasure: then it holds none of the erased chunks
    after = vecfile.read(file)
    assert after is None or not chunk_ids & set(after.ids.tolist())
    raw = next(p for p in result.verification.probes if p.name == "raw-bytes")
    assert raw.passed and "vector" not in raw.detail  # named only when one holds them
    s.close()

    shutil.copyfile(stale, file)  # a stale file is put back: it must never be used
    s = make_store(path)
    got = recall(s, "anything at all about helm canary pytest sqlite", probe=True)
    cache = cache_for(s)
    assert cache.maps == 0 and cache.reloads == 1  # stale: loaded from chunk_vec instead
    assert not chunk_ids & set(cache.ids.tolist())
    assert all(c.chunk_id not in chunk_ids for c in got.trace.candidates)
    rewritten = vecfile.read(file)  # and the file written again, without them
    assert rewritten is not None and not chunk_ids & set(rewritten.ids.tolist())
    s.close()


def test_the_raw_bytes_probe_fails_on_a_file_holding_erased_vectors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's seeded failure: an erasure whose file deletion is skipped (and no process
    writes the file again) leaves the erased vectors in it; the raw-bytes probe says so and
    fails."""
    from store.recall import pool

    path = tmp_path / "store.db"
    s = make_store(path)
    ids = _seed(s, tmp_path, n=40)
    recall(s, QUERIES[0], probe=True)

    def forget_memory_only(store: Store) -> bool:
        with pool._GUARD:
            return pool._CACHES.pop(store, None) is not None

    monkeypatch.setattr(pool, "drop_cache", forget_memory_only)
    monkeypatch.setattr(vecfile, "write", lambda *a, **k: False)  # nor written again
    result = s.erase(entry=ids[1])
    raw = next(p for p in result.verification.probes if p.name == "raw-bytes")
    assert not raw.passed
    assert f"found in {vecfile.path_for(path).name}" in raw.detail
    assert not result.verification.passed
    s.close()


def test_reverifying_with_a_vector_file_present_does_not_pass_it_unsearched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from store.recall import pool

    path = tmp_path / "store.db"
    s = make_store(path)
    ids = _seed(s, tmp_path, n=40)
    recall(s, QUERIES[0], probe=True)
    tid = s.erase(entry=ids[2]).tombstone_id
    assert tid is not None
    recall(s, QUERIES[1], probe=True)  # the file written again, after the erasure
    assert vecfile.path_for(path).exists()
    monkeypatch.setattr(pool, "drop_cache", lambda store: False)  # its deletion skipped
    [(_, v)] = s.verify_tombstones(tid)
    raw = next(p for p in v.probes if p.name == "raw-bytes")
    assert not raw.passed and "not searched" in raw.detail
    monkeypatch.undo()
    [(_, v)] = s.verify_tombstones(tid)
    raw = next(p for p in v.probes if p.name == "raw-bytes")
    assert raw.passed and "no vector file beside the store (deleted)" in raw.detail
    s.close()


def test_read_only_and_switched_off_stores_write_no_file(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    s = make_store(path, **{"recall.vector_file": False})
    _seed(s, tmp_path, n=20)
    recall(s, QUERIES[0], probe=True)
    assert not vecfile.files_beside(path)
    s.close()
    ro = make_store(path, **{"store.read_only": True})
    recall(ro, QUERIES[0])
    assert not vecfile.files_beside(path)
    ro.close()


def test_an_unknown_or_cut_file_is_ignored(tmp_path: Path) -> None:
    file = tmp_path / "x.db-vectors"
    file.write_bytes(b"not ours")
    assert vecfile.read(file) is None
    file.write_bytes(vecfile.MAGIC + b"{}".ljust(vecfile.HEADER, b"\0"))
    assert vecfile.read(file) is None
    c = VectorCache()
    assert c.file is None


def _seed_sensitive(store: Store, tmp_path: Path) -> None:
    """The seeded store with some entries marked secret or private (ties included)."""
    ids = _seed(store, tmp_path)
    for i, entry_id in enumerate(ids[:60]):
        if i % 4 == 0:
            store.privacy_mark(store.scope(entry=entry_id), "secret")
        elif i % 4 == 1:
            store.privacy_mark(store.scope(entry=entry_id), "private")


@pytest.mark.parametrize("deny", [("secret",), ("secret", "private")])
def test_fts_with_the_channel_rule_returns_what_the_join_does(tmp_path: Path,
                                                             deny: tuple[str, ...]) -> None:
    """The faster FTS search (the plain BM25 ranking looked up, the held-back rows ranked
    among the denied chunks) against the join over every match, on a store with secret and
    private entries and identical texts: the same rows, in the same order, same scores."""
    from store.core import vec

    s = make_store(tmp_path / "store.db")
    _seed_sensitive(s, tmp_path)
    with s.read() as conn:
        denied_ids = vec.chunks_of_levels(conn, deny)
        assert denied_ids  # the test means something only with denied chunks
        for q in (*QUERIES, "helm", "pytest fixture", "note 5", "nothing matches zyxw"):
            for n in (1, 5, 50, 400):
                for held in (False, True):
                    fast = vec.fts_search(conn, q, n, deny, held, denied_ids=denied_ids)
                    joined = vec.fts_search_joined(conn, q, n, deny, held)
                    assert fast == joined, (q, n, held)
    s.close()


@pytest.mark.parametrize("channel", ["private", "shared", "public"])
def test_recall_with_the_faster_fts_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 channel: str) -> None:
    """Whole recalls, the faster FTS against the joined one (no set of denied chunks known):
    the same trace, candidate by candidate, term by term."""
    s = make_store(tmp_path / "store.db")
    _seed_sensitive(s, tmp_path)
    fast = [recall(s, q, now=NOW, probe=True, channel=channel) for q in QUERIES]
    monkeypatch.setattr(VectorCache, "denied_chunks", lambda *a, **k: None)
    joined = [recall(s, q, now=NOW, probe=True, channel=channel) for q in QUERIES]
    for a, b in zip(fast, joined, strict=True):
        assert _ranking(a) == _ranking(b) and _terms(a) == _terms(b)
        assert any(c.decision == "policy_filtered" for c in a.trace.candidates)
    s.close()


def _file_written(path: Path, tmp_path: Path) -> list[int]:
    s = make_store(path)
    ids = _seed(s, tmp_path, n=40)
    recall(s, QUERIES[0], probe=True)
    s.close()
    assert vecfile.read(vecfile.path_for(path)) is not None
    return ids


def _first_recall(path: Path) -> tuple[int, int]:
    """(maps, reloads) of a fresh process's first recall."""
    s = make_store(path)
    try:
        recall(s, QUERIES[1], probe=True)
        cache = cache_for(s)
        return cache.maps, cache.reloads
    finally:
        s.close()


@needs_shared_data
def test_after_an_ingest_or_a_proposal_the_next_first_recall_maps_the_file(
        tmp_path: Path) -> None:
    """The ordinary writes between two recalls (an `lca-tui ingest`, a proposal submitted and
    rejected) add chunks or none and touch no vector: the file still serves, its additions
    read on top."""
    from tests.helpers_gov import _propose

    path = tmp_path / "store.db"
    _file_written(path, tmp_path)
    other = make_store(path)
    other.ingest([CLAUDE_CODE / "short.jsonl"])
    info = _propose(other, {"op": "add", "type": "feedback", "content": "Keep the changelog.",
                            "metadata": {"name": "changelog"}})
    other.reject(int(info.id), "not now")
    other.close()
    assert _first_recall(path) == (1, 0)


def test_a_sensitivity_mark_reloads_the_vectors_instead_of_mapping_the_file(
        tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    ids = _file_written(path, tmp_path)
    other = make_store(path)
    other.privacy_mark(other.scope(entry=ids[0]), "secret")
    other.close()
    assert _first_recall(path) == (0, 1)
