"""`lca-tui scan-secrets`: the secrets detector over a store imported before it
existed, `--dry-run`, `--list`; what it prints never holds a value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import make_store
from tests.helpers_privacy import _cli
from tests.store.test_secrets_at_capture import AWS, GITHUB, VALUES, seeded_transcript


def test_scan_secrets_from_the_command_line(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "old.db"
    old = make_store(db, **{"privacy.detect_secrets": False})  # as before the detector
    old.ingest([seeded_transcript(tmp_path)])
    old.close()
    code, out, _ = _cli(capsys, "--store", str(db), "scan-secrets", "--dry-run", "--json")
    dry = json.loads(out)
    assert code == 0 and dry["dry_run"] and dry["entries_marked"] == 4
    assert dry["chunks_rebuilt"] == 0
    code, out, _ = _cli(capsys, "--store", str(db), "scan-secrets")
    assert code == 0 and "marked secret: 4 entries, 0 memories" in out
    assert "aws-key 1" in out and "github-token 1" in out
    code, out, _ = _cli(capsys, "--store", str(db), "scan-secrets", "--list", "--json")
    listed = json.loads(out)
    kinds = sorted(k for f in listed for k in f["kinds"])
    assert kinds == ["aws-key", "github-token", "password-url", "private-key", "private-span"]
    assert {f["via"] for f in listed if "private-span" not in f["kinds"]} == {"scan"}
    code, table, _ = _cli(capsys, "--store", str(db), "scan-secrets", "--list")
    assert code == 0 and "redacted" in table and "secret" in table
    for value in (*VALUES, AWS, GITHUB):
        assert value not in out and value not in table
