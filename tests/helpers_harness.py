"""Shared by the harness tests: a short runtime folder for sockets, and running
``lca-tui hook EVENT`` with a given stdin as Claude Code would."""

from __future__ import annotations

import io
import json
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from lca_tui.cli import main
from store.harness.daemon import Daemon


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """$XDG_RUNTIME_DIR in a short folder of its own (a socket path must fit 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="lcart-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def run_hook(event: str, stdin: dict[str, Any] | str | bytes, store: Path | str,
             monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    """``lca-tui hook EVENT --store STORE`` with ``stdin``; asserts exit 0; returns stdout.
    ``STORE`` is what the test's store at that path is opened on (``store_target``: in a
    [postgres] test, the database cloned for the path), so ``make_store(path)`` sees it."""
    from tests.conftest import store_target

    raw = stdin if isinstance(stdin, bytes) else (
        stdin if isinstance(stdin, str) else json.dumps(stdin)).encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    capsys.readouterr()
    code = main(["hook", event, "--store", str(store_target(store))])
    assert code == 0
    return capsys.readouterr().out


def check_hook_output(out: str) -> dict[str, Any] | None:
    """Empty, or exactly the UserPromptSubmit hookSpecificOutput document."""
    if out == "":
        return None
    doc = json.loads(out)
    assert set(doc) == {"hookSpecificOutput"}
    spec = doc["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "additionalContext"}
    assert spec["hookEventName"] == "UserPromptSubmit"
    assert isinstance(spec["additionalContext"], str) and spec["additionalContext"].strip()
    return doc


@contextmanager
def serving(path: Path, **settings: object) -> Iterator[Daemon]:
    """A daemon for the store at ``path`` (with these settings) answering in a thread of
    this process until the block ends."""
    from store.core.settings import Settings

    d = Daemon(path, Settings.load(dict(settings)) if settings else None)
    d.open()
    thread = threading.Thread(target=d.serve_forever, daemon=True)
    thread.start()
    try:
        yield d
    finally:
        d.stop()
        thread.join(timeout=60)


def hook_payload(tmp_path: Path, name: str = "tool_heavy.jsonl") -> dict[str, str]:
    """A hook's JSON payload for a copy of the shared Claude Code transcript ``name`` in
    ``tmp_path``: its session id, the copy's path and ``tmp_path`` as the working folder."""
    from tests.conftest import CLAUDE_CODE

    transcript = tmp_path / name
    transcript.write_bytes((CLAUDE_CODE / name).read_bytes())
    sid = next(json.loads(line)["sessionId"] for line in transcript.read_text().splitlines()
               if '"sessionId"' in line)
    return {"session_id": sid, "transcript_path": str(transcript), "cwd": str(tmp_path)}
