"""What the privacy feature tests share: opening a store, the CLI's exit code and output, the
entries holding a text, the demo's private detail."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from store import Store


def _open(path: Path) -> Store:
    """The store at ``path`` with the deterministic embedder given to it (``make_store``)."""
    from tests.conftest import make_store

    return make_store(path)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from tests.helpers_shell import cli

    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _entries_with(store: Store, needle: str) -> set[int]:
    with store.read() as conn:
        # LIKE, escaped: both backends answer it (SQLite's instr is not PostgreSQL's)
        escaped = needle.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return {int(r[0]) for r in conn.execute(text(
            "SELECT id FROM entry WHERE lower(content) LIKE :n ESCAPE '\\'"),
            {"n": f"%{escaped}%"})}


EMAIL = "dana.r@example.com"


DANA_SESSION = "bd8ec9a1-f803-45ed-bd7c-9ec7081ab44d"
