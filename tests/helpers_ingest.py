"""What the ingest feature tests share: a good Claude Code line, writing lines to a file, a
store with three sessions."""

from __future__ import annotations

import json
from pathlib import Path


GOOD = {"type": "user", "sessionId": "good", "uuid": "g1", "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "a line that must land"}}


def _write(path: Path, *lines: str | dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n"
                            for ln in lines))
    return path
