"""Detection helpers: formats lca-tui recognises but does not read, and what an unrecognised
line-oriented file starts with (so that the report says what the file is, not only what it
is not).

Qwen Code (``~/.qwen/tmp/<project>/chats/*.jsonl``) writes lines that look like Claude Code's
at a glance (``uuid``, ``parentUuid``, ``sessionId``, ``type: user``) but carry a Gemini-style
``message: {role, parts[]}``: read as Claude Code, every line would be stored wrong or not at
all. Such a file is refused by name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DETECT_LINES = 50


def is_qwen_code(obj: dict[str, Any]) -> bool:
    message = obj.get("message")
    return isinstance(message, dict) and isinstance(message.get("parts"), list) and (
        "sessionId" in obj or "uuid" in obj)


def refused_format(obj: dict[str, Any]) -> bool:
    """True for a line of a format recognised here and not imported."""
    return is_qwen_code(obj)


def _objects(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        with path.open("rb") as fh:
            for _, raw in zip(range(DETECT_LINES), fh, strict=False):
                try:
                    obj = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(obj, dict):
                    out.append(obj)
    except OSError:
        return out
    return out


def refused_format_of(path: Path) -> str | None:
    """Why a file of a refused format is not imported, or None."""
    for obj in _objects(path):
        if is_qwen_code(obj):
            return ("a Qwen Code session (its lines hold message.parts[]): not a format "
                    "lca-tui imports, and not read as Claude Code, whose lines look alike")
    return None


def first_keys(path: Path) -> str:
    """The keys of the file's first JSON object (up to 8), or what its first line is."""
    objects = _objects(path)
    if objects:
        keys = list(objects[0])[:8]
        more = ", …" if len(objects[0]) > 8 else ""
        kind = objects[0].get("type")
        typed = f" (type {kind!r})" if isinstance(kind, str) else ""
        return "{" + ", ".join(str(k) for k in keys) + more + "}" + typed
    return "no line is a JSON object"
