"""``lca-tui search``: an empty query is an error, no hits says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import Store

from tests.helpers_ui import _one_error_line, _output, _run, _store_with_worker
from tests.helpers_ui import demo  # noqa: F401 (a pytest fixture, named as a parameter)


def test_empty_search_is_an_error(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    for text in ("", "   "):
        _one_error_line(*_run(["search", text, "--store", str(store.path)], capsys),
                        "nothing to search for")


def test_search_with_no_hits_says_so(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _output(["search", "zzqqxxnothing", "--mode", "fts", "--store", str(demo)], capsys)
    assert out == "no hits for 'zzqqxxnothing' (fts search)\n", out
