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
