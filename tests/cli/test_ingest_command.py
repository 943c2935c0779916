"""``lca-tui ingest`` on a path that does not exist: it fails and imports nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import Store

from tests.conftest import CLAUDE_CODE, needs_shared_data
from tests.helpers_ui import _one_error_line, _run


@needs_shared_data
def test_ingest_missing_path_fails_and_imports_nothing(store: Store, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    missing = tmp_path / "no" / "such.jsonl"
    _one_error_line(*_run(["ingest", str(CLAUDE_CODE), str(missing), "--store",
                           str(store.path)], capsys), str(missing), "no such file")
    assert store.stats(with_embedder=False).entries == 0
