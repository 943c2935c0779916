"""The MindStone-Agent wire format, defined once: the keys of a line in their order, the file
a session's lines go to (``base64url(sessionKey).jsonl``), and how a stored entry's meta maps
to and from a line. The importer (``store.ingest.mindstone``) reads with it, the exporter
(``store.export.wire``, ``store.export.writer``) writes with it."""

from __future__ import annotations

import base64
import binascii
from hashlib import sha256
from pathlib import Path
from typing import Any

WIRE_KEYS = ("id", "timestamp", "sessionKey", "agentId", "role", "text", "content", "source",
             "runId", "parentId", "metadata")
LCA_KEY = "lca"
WIRE = "wire"
MAX_NAME_CHARS = 200
KIND_ROLES = {"user": "user", "assistant": "assistant", "reasoning": "assistant",
              "tool_call": "assistant", "tool_result": "tool", "system": "system",
              "compaction": "system", "checkpoint": "system", "event": "event"}
"""An entry kind -> the line's ``role`` (the exporter writes it)."""
ROLE_KINDS = {"user": "user", "assistant": "assistant", "tool": "tool_result",
              "system": "system", "event": "event"}
"""A line's ``role`` -> the entry kind of a native line (the importer reads it; an exported
line's own kind is restored from ``metadata.lca.kind``)."""
LCA_TEXT_FIELDS = ("idem_key", "content_hash", "source_key", "agent", "ts", "source_path",
                   "uuid", "parent_uuid", "message_id", "tool_name", "tool_use_id")
LCA_NUMBER_FIELDS = ("source_offset", "source_line", "block")
"""The fields of ``metadata.lca`` (besides ``v``, ``kind``, ``seq``, ``session``, ``meta``,
``bare``) the importer checks and restores: the exporter writes each of them but
``source_key`` (an export of another store's export may carry it)."""
HASHED_PREFIX = "sha256_"


def file_name_for(session_key: str) -> str:
    """``agent:default:main`` → ``YWdlbnQ6ZGVmYXVsdDptYWlu.jsonl``."""
    encoded = base64.urlsafe_b64encode(session_key.encode("utf-8", "surrogatepass"))
    name = encoded.rstrip(b"=").decode("ascii")
    if len(name) > MAX_NAME_CHARS:  # too long for a file name: a hash, read back from lines
        digest = sha256(session_key.encode("utf-8", "surrogatepass")).hexdigest()
        return f"{HASHED_PREFIX}{digest}.jsonl"
    return name + ".jsonl"


def session_key_from_name(path: Path) -> str | None:
    """The session key a file name encodes, or None when it is not base64url of text."""
    stem = path.name.split(".", 1)[0]
    if stem.startswith(HASHED_PREFIX):
        return None
    padded = stem + "=" * (-len(stem) % 4)
    try:
        raw = base64.b64decode(padded.translate(str.maketrans("-_", "+/")), validate=True)
        key = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return key if key and key.isprintable() else None


def wire_meta(obj: dict[str, Any], session_key: str) -> dict[str, Any]:
    """The entry meta of a line as this importer stores it (``metadata.lca`` left out)."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        metadata = {k: v for k, v in metadata.items() if k != LCA_KEY}
    meta: dict[str, Any] = {
        "event": metadata.get("event") if isinstance(metadata, dict) else None,
        "metadata": metadata, "role": obj.get("role"), "runId": obj.get("runId"),
        "source": obj.get("source"), "id": obj.get("id"), "sessionKey": session_key}
    for key in ("agentId", "parentId"):
        if obj.get(key) is not None:
            meta[key] = obj[key]
    content = obj.get("content")
    if content is not None and content != obj.get("text"):
        meta["content"] = content
    return meta


def without_lca(obj: dict[str, Any]) -> dict[str, Any]:
    """The line without ``metadata.lca`` (and without ``metadata`` when only that was in it
    and the lca record says the original line had none)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or LCA_KEY not in metadata:
        return obj
    out = dict(obj)
    lca = metadata[LCA_KEY]
    rest = {k: v for k, v in metadata.items() if k != LCA_KEY}
    if not rest and isinstance(lca, dict) and lca.get("bare"):
        del out["metadata"]
    else:
        out["metadata"] = rest
    return out


def native_line(meta: dict[str, Any], content: str, ts: str | None) -> dict[str, Any]:
    """The line the stored meta, content and time describe (the original, when meta has
    ``wire``)."""
    if isinstance(meta.get(WIRE), dict):
        return dict(meta[WIRE])
    line = {"id": meta.get("id"), "timestamp": ts, "sessionKey": meta.get("sessionKey"),
            "agentId": meta.get("agentId"), "role": meta.get("role"), "text": content,
            "content": meta.get("content"), "source": meta.get("source"),
            "runId": meta.get("runId"), "parentId": meta.get("parentId"),
            "metadata": meta.get("metadata")}
    return {k: line[k] for k in WIRE_KEYS if line.get(k) is not None}
