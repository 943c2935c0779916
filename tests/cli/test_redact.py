"""``lca-tui redact``: a database error is one line and changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from store.privacy import apply
from store.privacy.api import preview, run, scope_from

from tests.helpers_privacy import _cli, _open


def test_a_database_error_in_redact_is_one_line_and_changes_nothing(
        demo_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewrite the schema refuses (a CHECK on ``entry.kind``) rolls back: ErasureFailed,
    and the CLI says so on one line."""
    with _open(demo_path) as store:
        c = preview(store, scope_from(match="dana.r@example.com"), "redact")
        row = next(iter(c.scrub["entry"]))
        c.scrub["entry"][row]["kind"] = "[REDACTED]"
        with store.read() as conn:
            before = conn.execute(text("SELECT id, kind, content FROM entry")).all()
        with pytest.raises(apply.ErasureFailed, match="nothing was changed"):
            run(store, scope_from(match="dana.r@example.com"), "redact", closure=c)
        with store.read() as conn:
            assert conn.execute(text("SELECT id, kind, content FROM entry")).all() == before
            assert conn.execute(text("SELECT count(*) FROM tombstone")).scalar_one() == 0
    from store.privacy import redaction

    real = redaction.redact_text

    def with_kind(conn: Any, c: Any, matcher: Any) -> None:
        real(conn, c, matcher)
        for values in c.scrub.get("entry", {}).values():
            values["kind"] = "[REDACTED]"

    monkeypatch.setattr(redaction, "redact_text", with_kind)
    code, out, err = _cli(capsys, "redact", "--match", "dana.r@example.com", "--yes",
                          "--store", str(demo_path))
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "nothing was changed" in err
