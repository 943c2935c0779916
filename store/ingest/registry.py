"""The formats ``lca-tui ingest`` knows, and how a file's format is detected.

Formats register in ``FILE_FORMATS`` (line-oriented files, detected from their first JSON
objects: a ``LineImporter`` subclass per format, see ``store.ingest.base``) and
``DIR_FORMATS`` (folders with a layout of their own: a function importing the folder).
A new importer adds one line to one of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from store.ingest.acp import import_acp_dir, is_acp_dir, is_acp_journal
from store.ingest.acp_journal import import_journal_dir
from store.ingest.base import ImportContext, LineImporter
from store.ingest.claude_code import ClaudeCodeImporter
from store.ingest.claude_code import looks_like as looks_like_claude_code
from store.ingest.claude_memory import import_claude_memory, is_claude_memory
from store.ingest.codex import CodexImporter
from store.ingest.codex import looks_like as looks_like_codex
from store.ingest.detect import refused_format
from store.ingest.gemini import GeminiImporter
from store.ingest.gemini import looks_like as looks_like_gemini
from store.ingest.lca_export import import_export_dir, is_export_dir
from store.ingest.memory_dir import import_memory_dir, is_memory_dir
from store.ingest.mindstone import MindStoneImporter
from store.ingest.mindstone import looks_like as looks_like_mindstone

LINE_SUFFIXES = (".jsonl", ".ndjson")
DETECT_LINES = 50

# name → (looks like it?, importer factory); checked in order, per line
FILE_FORMATS: dict[str, tuple[Callable[[dict[str, Any]], bool], Callable[[], LineImporter]]] = {
    "codex": (looks_like_codex, CodexImporter),
    "gemini": (looks_like_gemini, GeminiImporter),
    "claude-code": (looks_like_claude_code, ClaudeCodeImporter),
    "mindstone": (looks_like_mindstone, MindStoneImporter),
}
# name → (is this folder in that layout?, import the folder); checked in order
DIR_FORMATS: dict[str, tuple[Callable[[Path], bool], Callable[[ImportContext, Path], None]]] = {
    "lca-export": (is_export_dir, import_export_dir),
    "acp": (is_acp_dir, import_acp_dir),
    "acp-journal": (is_acp_journal, import_journal_dir),
    "claude-memory": (is_claude_memory, import_claude_memory),
    "memory-dir": (is_memory_dir, import_memory_dir),
}


def formats() -> list[str]:
    return [*FILE_FORMATS, *DIR_FORMATS]


def detect_file(path: Path) -> str | None:
    """The format of a line-oriented file from its first parseable JSON objects (a line that
    cannot be read, nested too deeply among them, is passed over here and reported by the
    import). A refused format (Qwen Code) anywhere among the first ``DETECT_LINES`` wins over
    what an earlier line looks like: Qwen Code's housekeeping lines (``type: system``,
    ``subtype: ui_telemetry``) look like Claude Code's before its first ``message.parts[]``."""
    found: str | None = None
    with path.open("rb") as fh:
        for _, raw in zip(range(DETECT_LINES), fh, strict=False):
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                if refused_format(obj):
                    return None  # a format of its own lca-tui does not read (Qwen Code)
                if found is None:
                    found = next((name for name, (looks_like, _) in FILE_FORMATS.items()
                                  if looks_like(obj)), None)
    return found
