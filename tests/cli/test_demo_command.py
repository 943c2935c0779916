"""``lca-tui demo`` says what the store it built holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers_ui import _output


def test_demo_prints_what_the_store_holds(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from store import open_store

    path = tmp_path / "d.db"
    out = _output(["demo", "--no-open", "--store", str(path)], capsys)
    store = open_store(str(path))
    try:
        st = store.stats(with_embedder=False)
    finally:
        store.close()
    assert (f"the store holds {st.sessions} sessions, {st.entries} entries, {st.memories} "
            f"memories, {st.checkpoints} checkpoints, {st.chunks:,} chunks") in out, out


def test_demo_names_each_step_after_the_import(tmp_path: Path) -> None:
    """After the last transcript the build is not one long `100 %`: marking, replaying the
    proposals, the recalls, the incidents and the re-check each report by name, with their
    own counts, in the order they run."""
    from store.core.settings import Settings
    from store.demo import build_demo
    from tests.helpers_shell import FALLBACK, FixedLatency

    heard: list[tuple[str, int, int]] = []
    build_demo(tmp_path / "d.db", settings=Settings.load(FALLBACK), timer=FixedLatency(),
               progress=lambda label, done, total: heard.append((label, done, total)))
    labels = [label for label, _, _ in heard]
    steps = ["marking Dana's e-mail private in the transcripts", "replaying proposals",
             "recording recall traces", "incidents: importing their memory files",
             "incidents: a second writer re-indexing, night after night",
             "incidents: embeddings an old indexer failed",
             "incidents: a stale hook's checkpoint and snapshot",
             "checking the pending proposals again"]
    firsts = [labels.index(s) for s in steps]
    assert firsts == sorted(firsts)
    last_file = max(i for i, label in enumerate(labels) if label.endswith(".jsonl"))
    assert firsts[0] > last_file  # they come after the import
    for step in ("replaying proposals", "recording recall traces",
                 "checking the pending proposals again"):
        counts = [(done, total) for label, done, total in heard if label == step]
        total = counts[-1][1]
        assert total > 0 and counts[0] == (0, total) and counts[-1] == (total, total)
        assert [d for d, _ in counts] == list(range(total + 1))
    nights = [(d, t) for label, d, t in heard if label.endswith("night after night")]
    assert nights == [(i, 5) for i in range(5)]


def test_the_demo_records_a_person_not_the_program(demo_template: Path) -> None:
    """Issue 22 nit: the demo's re-check of the pending proposals was recorded as by
    "lca-tui demo"; it is the person running it (here the tests' OS account or LCA_ACTOR)."""
    import sqlite3

    from tests.helpers_shell import DEMO_NAME

    with sqlite3.connect(demo_template / DEMO_NAME) as conn:
        actors = {r[0] for r in conn.execute("SELECT actor FROM audit_event")}
    assert actors and "lca-tui demo" not in actors
