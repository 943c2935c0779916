"""Entries as MindStone-Agent lines for ``lca-tui export`` (see ``store.export.writer``).

A line imported from MindStone is written back exactly as it was read (``native_line``); a
line of another harness gets the shape a MindStone reader expects: a run id
``run_<base36 ms>_<8 hex>`` derived from the session and the entry (so a re-export is
byte-identical), ``metadata.event`` ``user_message`` / ``assistant_response`` (tool calls and
reasoning are assistant lines with ``metadata.kind`` and ``metadata.toolName``), tool results
as role ``tool`` with ``metadata.toolName``, compactions with ``preTokens`` / ``trigger``.
lca-tui's own record of the entry travels under ``metadata.lca``.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from store.export.wire_format import KIND_ROLES, LCA_KEY, WIRE_KEYS, native_line, wire_meta

def dumps_line(obj: dict[str, Any]) -> bytes:
    """One line as ``JSON.stringify`` would write it; lone surrogates as \\u escapes."""
    try:
        return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    except UnicodeEncodeError:
        return (json.dumps(obj, ensure_ascii=True, separators=(",", ":")) + "\n").encode()


def loads_json(raw: str | None) -> Any:
    """A stored JSON column's value: None when empty, the raw text when it is not JSON."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def run_id(session_id: str, ts: str | None, idem_key: str) -> str:
    """``run_<base36 ms since epoch>_<8 hex>``, the same for the same entry every time."""
    millis = 0
    if ts:
        try:
            millis = max(0, int(datetime.fromisoformat(ts).timestamp() * 1000))
        except ValueError:
            millis = 0
    digits = ""
    while True:
        millis, rem = divmod(millis, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[rem] + digits
        if not millis:
            break
    tag = hashlib.sha256(f"{session_id}|{idem_key}".encode("utf-8", "surrogatepass"))
    return f"run_{digits}_{tag.hexdigest()[:8]}"


def wire_line(session: dict[str, Any], row: Any, first: bool) -> dict[str, Any]:
    """An entry row as a MindStone-Agent line, with lca-tui's record under metadata.lca.

    A line imported from MindStone is written as it was read (see ``native_line``); a line of
    another harness gets a run id, ``metadata.event`` and, where known, the tool name and
    compaction figures, so that a MindStone reader can tell what it is.
    """
    (_id, sid, agent, seq, ts, kind, content, content_hash, source_path, source_offset,
     source_line, block, idem_key, uuid, parent_uuid, message_id, tool_name, tool_use_id,
     meta_raw) = row
    meta = loads_json(meta_raw) or {}
    native = isinstance(meta, dict) and {"role", "sessionKey", "metadata"} <= set(meta)
    line: dict[str, Any]
    if native:
        line = native_line(dict(meta, sessionKey=meta.get("sessionKey") or sid), content, ts)
    else:
        line = {"id": f"{uuid}:{block}" if uuid and block else uuid or f"lca_{idem_key[:20]}",
                "timestamp": ts, "sessionKey": sid,
                "agentId": session.get("agent") if agent == "main" else agent,
                "role": KIND_ROLES[kind], "text": content,
                "source": {"substrate": session.get("surface") or session.get("format"),
                           "chatType": "direct" if agent == "main" else "internal"},
                "runId": run_id(sid, ts, idem_key), "parentId": parent_uuid,
                "metadata": _native_metadata(kind, meta, tool_name, tool_use_id)}
        line = {k: line[k] for k in WIRE_KEYS if line.get(k) is not None}
    lca: dict[str, Any] = {
        "v": 1, "kind": kind, "agent": agent, "seq": seq, "ts": ts, "idem_key": idem_key,
        "content_hash": content_hash, "source_path": source_path,
        "source_offset": source_offset, "source_line": source_line, "block": block,
        "uuid": uuid, "parent_uuid": parent_uuid, "message_id": message_id,
        "tool_name": tool_name, "tool_use_id": tool_use_id}
    if first:
        lca["session"] = session
    if wire_meta(line, sid) != meta:
        lca["meta"] = meta
    metadata = line.get("metadata")
    if not isinstance(metadata, dict):
        lca["bare"] = True  # the original line had no metadata object
        metadata = {}
    line["metadata"] = dict(metadata, **{LCA_KEY: lca})
    return line


def _native_metadata(kind: str, meta: Any, tool_name: str | None,
                     tool_use_id: str | None) -> dict[str, Any]:
    """What a MindStone consumer expects in ``metadata`` for an entry of another harness."""
    meta = meta if isinstance(meta, dict) else {}
    out: dict[str, Any]
    if kind == "user":
        return {"event": "user_message"}
    if kind in ("assistant", "tool_call", "reasoning"):
        out = {"event": "assistant_response"}
        if kind != "assistant":
            out["kind"] = kind
        if kind == "tool_call" and tool_name:
            out["toolName"] = tool_name
        out.update({k: meta[k] for k in ("model", "usage") if k in meta})
        return out
    if kind == "tool_result":
        out = {"toolName": tool_name} if tool_name else {}
        if tool_use_id:
            out["toolUseId"] = tool_use_id
        return out
    if kind == "event":
        inner = meta.get("metadata")
        out = dict(inner) if isinstance(inner, dict) else {}
        if meta.get("event") is not None:
            out.setdefault("event", meta["event"])
        return out
    out = {"kind": kind}
    if kind == "compaction":
        out.update({k: meta[k] for k in ("preTokens", "trigger") if meta.get(k) is not None})
    return out


