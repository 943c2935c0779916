"""``lca-tui mcp``: the store as a Model Context Protocol server (the official ``mcp`` SDK).

An agent reads with traces and writes proposals; a person decides in the app. One process per
client, thin: ``recall`` asks the warm daemon (``lca-tui serve``: model and vectors loaded)
when one serves the store, and runs in this process otherwise; every other tool reads or
writes through ``Store`` methods here. Before each call the newest tombstone is read: when an
erasure happened since, the store (its connections, snapshot and caches) is closed and opened
again, as every long-lived reader does.

What no tool does: approve, reject, erase, preview an erasure, reveal a secret. The client's
channel (``--channel``, default ``private``) applies the recall's channel rule to every tool:
a record the channel may not see (``secret`` in any channel, ``private`` in ``public``) never
leaves — not its text, id or name, nor a count that would betray it: searches and listings
leave it out, a lookup of it answers exactly as a lookup of nothing does. A call may narrow
its channel (``private`` → ``shared`` → ``public``), never widen it. Every write (traces,
proposals, feedback) records the MCP client's name and version (``mcp:<name>``) as its writer.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ToolAnnotations

if TYPE_CHECKING:
    from store import Store

CHANNELS = ("private", "shared", "public")  # widest first
_STRICT = {c: i for i, c in enumerate(CHANNELS)}
SNIPPET = 240
ENTRY_CHARS = 4000
SEARCH_CAP = 2000  # the most hits one search asks the store for while filling `limit`
ALLOWED_OPS = ("add", "reinforce", "revise", "supersede", "merge", "noop", "quarantine")


class ToolFailure(Exception):
    """A call the agent got wrong (or that found nothing): one clear line, no traceback."""


def visible(sensitivity: str | None, channel: str) -> bool:
    """The recall's channel rule: secret is seen by no channel, private by no public one."""
    if sensitivity == "secret":
        return False
    return not (sensitivity == "private" and channel == "public")


def snippet(text: str | None, limit: int = SNIPPET) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


class Backend:
    """The store behind the tools: opened on the first call, re-opened after an erasure,
    used by one call at a time (the SDK runs calls concurrently; SQLite and the embedder are
    shared)."""

    def __init__(self, store_path: str | None, overrides: list[str], channel: str,
                 use_daemon: bool = True) -> None:
        if channel not in CHANNELS:
            raise ValueError(f"--channel must be one of {', '.join(CHANNELS)}, got {channel!r}")
        self.store_path = store_path
        self.overrides = list(overrides)
        self.channel = channel
        self.use_daemon = use_daemon and not overrides
        self.lock = threading.Lock()
        self._store: Store | None = None
        self._tombstone = 0

    # -- the store -------------------------------------------------------------------
    def resolved_path(self) -> Path | str:
        from store import resolve_store

        return resolve_store(self.store_path)

    def store(self) -> Store:
        from store import open_store
        from store import Settings, parse_assignment

        if self._store is not None:
            latest = self._store.latest_tombstone()
            if latest != self._tombstone:  # an erasure since: let go of everything held
                self._store.close()
                self._store = None
        if self._store is None:
            settings = Settings.load(dict(parse_assignment(a) for a in self.overrides))
            self._store = open_store(self.resolved_path(), settings, writer="mcp",
                                     writer_version="unknown")
            self._tombstone = self._store.latest_tombstone()
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def run(self, writer: tuple[str, str], fn: Any, *args: Any, **kwargs: Any) -> Any:
        """``fn(self, store, *args)`` with the client's writer, one call at a time; the
        store's own errors become ``ToolFailure`` (one line)."""
        from store import StoreError
        from store import SettingsError

        with self.lock:
            try:
                store = self.store()
                store.writer, store.writer_version = writer
                return fn(self, store, *args, **kwargs)
            except ToolFailure:
                raise
            except (StoreError, SettingsError, ValueError, LookupError) as exc:
                raise ToolFailure(str(exc).strip() or type(exc).__name__) from None
            except OSError as exc:
                where = f" ({exc.filename})" if exc.filename else ""
                raise ToolFailure(f"{exc.strerror or exc}{where}") from None

    def channel_for(self, asked: str | None) -> str:
        """The call's channel: the client's, or a narrower one it asks for."""
        if asked is None or asked == "":
            return self.channel
        if asked not in CHANNELS:
            raise ToolFailure(f"channel must be one of {', '.join(CHANNELS)}, got {asked!r}")
        if _STRICT[asked] < _STRICT[self.channel]:
            raise ToolFailure(f"this client is on the {self.channel!r} channel: a call may "
                              f"narrow it ({', '.join(CHANNELS[_STRICT[self.channel]:])}), "
                              f"not widen it to {asked!r}")
        return asked

    def daemon_recall(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The recall as the warm daemon answers it, or None (no daemon, or it failed: the
        call then runs here, where a bad query gets its own clear error)."""
        import os

        if not self.use_daemon or os.environ.get("LCA_NO_DAEMON"):
            return None
        from store import (
            DaemonError,
            DaemonNotRunning,
            UnsafeDirectory,
            daemon_request,
            socket_path,
            store_name,
        )

        try:
            store = self.resolved_path()
            reply = daemon_request(socket_path(store), dict(message, op="recall",
                                                                  store=store_name(store)),
                                   timeout=60.0, ack_timeout=2.0)
        except (DaemonNotRunning, DaemonError, UnsafeDirectory):
            return None
        if not reply.get("ok"):
            return None
        return dict(reply["result"])


# -- the tools' bodies: (backend, store, ...) → JSON-able -----------------------------------
def _not_found_memory(memory_id: int) -> ToolFailure:
    # word for word what Store.memory says of a memory that does not exist
    return ToolFailure(f"no memory {memory_id}: `lca-tui memories` lists them")


def _not_found_entry(entry_id: int) -> ToolFailure:
    return ToolFailure(f"no entry {entry_id}")


def _not_found_session(session_id: str) -> ToolFailure:
    return ToolFailure(f"no session {session_id!r}: `lca-tui sessions` lists them")


ID_MAX = 2**63 - 1  # SQLite's largest integer: no row has a larger id


def _in_range(ident: Any, what: str) -> int:
    if isinstance(ident, bool) or not isinstance(ident, int) or not 0 <= ident <= ID_MAX:
        raise ToolFailure(f"{what} must be a whole number from 0 to {ID_MAX}, got {ident!r}")
    return ident


def _visible(store: Store, kind: str, ident: int, channel: str) -> Any:
    """The memory or entry ``ident`` when the channel may see it; one the channel may not see
    answers as one that does not exist (its id is not to be confirmed)."""
    from store import NotFound

    memory = kind == "memory"
    _in_range(ident, "a memory id" if memory else "an entry id")
    missing = _not_found_memory if memory else _not_found_entry
    try:
        row = store.memory(int(ident)) if memory else store.entry(int(ident))
    except NotFound:
        raise missing(ident) from None
    if not visible(row.sensitivity, channel):
        raise missing(ident)
    return row


def _visible_memory(store: Store, memory_id: int, channel: str) -> Any:
    return _visible(store, "memory", memory_id, channel)


def _visible_entry(store: Store, entry_id: int, channel: str) -> Any:
    return _visible(store, "entry", entry_id, channel)


def _visible_entries(store: Store, session: str, channel: str) -> tuple[Any, list[Any]]:
    """The session and its entries the channel may see; a session whose every entry is
    hidden answers as an unknown one (its id is not to be confirmed)."""
    from store import NotFound

    try:
        info = store.session(session)
        rows = store.entries(info.id)
    except NotFound:
        raise _not_found_session(session) from None
    seen = [e for e in rows if visible(e.sensitivity, channel)]
    if rows and not seen:
        raise _not_found_session(session)
    return info, seen


def recall_tool(backend: Backend, store: Store, query: str, role: str | None,
                project: str | None, asked: str | None) -> dict[str, Any]:
    channel = backend.channel_for(asked)
    if not isinstance(query, str) or not query.strip():
        raise ToolFailure("a recall needs a non-empty query")
    writer = (store.writer, store.writer_version)
    answered = backend.daemon_recall({"query": query, "role": role, "project": project,
                                      "channel": channel, "historical": False,
                                      "writer": writer[0], "writer_version": writer[1]})
    via = "daemon"
    if answered is None:
        answered = store.recall(query, role, project, channel).to_json()
        via = "in-process"
    items = []
    for i in answered["items"]:
        if i["source_type"] == "memory":
            sens = _sensitivity(store, "memory", i["source_id"])
            pointer = f"memory:{i['source_id']}"
        else:
            sens = _sensitivity(store, "entry", i["source_id"])
            pointer = f"entry:{i['source_id']}"
        if not visible(sens, channel):  # the recall's own rule already left these out
            continue
        items.append({"rank": i["rank"], "pointer": pointer, "source_type": i["source_type"],
                      "source_id": i["source_id"], "session_id": i.get("session_id"),
                      "seq": i.get("seq"), "label": i.get("label"), "score": i["score"],
                      "text": i["text"]})
    return {"trace_id": answered["trace_id"], "channel": channel, "via": via,
            "latency_ms": answered.get("latency_ms"), "degraded": answered.get("degraded"),
            "items": items,
            "note": "report an item that helped with report_use(trace_id, pointer, 'used')"}


def _sensitivity(store: Store, kind: str, ident: Any) -> str | None:
    from store import NotFound

    try:
        row = store.memory(int(ident)) if kind == "memory" else store.entry(int(ident))
    except NotFound:
        return "secret"  # gone since (erased): treated as unseen
    return row.sensitivity


def search_tool(backend: Backend, store: Store, query: str, mode: str,
                limit: int) -> dict[str, Any]:
    if not isinstance(limit, int) or not 1 <= limit <= 100:
        raise ToolFailure(f"limit must be a whole number from 1 to 100, got {limit!r}")
    from store import SEARCH_COS_WEIGHT as COS_WEIGHT  # hybrid: w·cos + (1−w)·lex

    channel = backend.channel
    want = limit * 4
    while True:  # oversample until `limit` visible hits or the store has no more
        hits = store.search(query, limit=want, mode=mode)
        shown = [h for h in hits if not h.masked and (
            channel != "public" or visible(_sensitivity(store, h.source_type, h.source_id),
                                           channel))]
        if len(shown) >= limit or len(hits) < want or want >= SEARCH_CAP:
            break
        want = min(want * 4, SEARCH_CAP)
    # scores as if the hidden hits did not exist: lex relative to the best visible one
    best_lex = max((h.lex or 0.0 for h in shown), default=0.0)
    rescored = []
    for h in shown:
        lex = (h.lex or 0.0) / best_lex if best_lex > 0 else 0.0
        score = (lex if mode == "fts" else h.score if mode == "semantic"
                 else COS_WEIGHT * (h.cos or 0.0) + (1 - COS_WEIGHT) * lex)
        rescored.append((round(score, 6), h))
    rescored.sort(key=lambda t: -t[0])
    out = []
    for score, h in rescored:
        row: dict[str, Any] = {"pointer": f"{h.source_type}:{h.source_id}",
                               "source_type": h.source_type, "source_id": h.source_id,
                               "score": score, "snippet": snippet(h.text)}
        if h.source_type == "memory":
            row["name"] = h.memory_name
        else:
            row.update(session_id=h.session_id, seq=h.seq, kind=h.kind, agent=h.agent)
        out.append(row)
        if len(out) == limit:
            break
    return {"query": query, "mode": mode, "hits": out,
            "next": "get_memory(id) or get_entries(session, seq) for the full records"}


def get_entries_tool(backend: Backend, store: Store, session: str, seq: int | None,
                     around: int, limit: int) -> dict[str, Any]:
    if not isinstance(limit, int) or not 1 <= limit <= 500:
        raise ToolFailure(f"limit must be a whole number from 1 to 500, got {limit!r}")
    if not isinstance(around, int) or around < 0:
        raise ToolFailure(f"around must be a whole number ≥ 0, got {around!r}")
    info, rows = _visible_entries(store, session, backend.channel)
    if seq is not None:
        rows = [e for e in rows if abs(e.seq - seq) <= around]
    more = len(rows) > limit
    rows = rows[:limit]
    return {"session_id": info.id, "project": info.project, "more": more,
            "entries": [{"id": e.id, "seq": e.seq, "agent": e.agent, "ts": e.ts,
                         "kind": e.kind, "tool_name": e.tool_name,
                         "content": e.content[:ENTRY_CHARS],
                         "truncated": len(e.content) > ENTRY_CHARS} for e in rows]}


def get_memory_tool(backend: Backend, store: Store, memory_id: int) -> dict[str, Any]:
    m = _visible_memory(store, memory_id, backend.channel)
    return {"id": m.id, "name": m.name, "description": m.description, "type": m.type,
            "status": m.status, "body": m.body, "tags": list(m.tags),
            "projects": list(m.projects), "role": m.role, "created": m.created,
            "last_applied": m.last_applied, "hits": m.hits, "prevented": m.prevented,
            "critical": m.critical, "evergreen": m.evergreen, "authority": m.authority,
            "sensitivity": m.sensitivity, "valid_from": m.valid_from, "valid_to": m.valid_to,
            "supersedes_id": m.supersedes_id if _seen_id(store, m.supersedes_id,
                                                          backend.channel) else None,
            "superseded_by_id": m.superseded_by_id if _seen_id(
                store, m.superseded_by_id, backend.channel) else None}


def _seen_id(store: Store, memory_id: int | None, channel: str) -> bool:
    return memory_id is not None and visible(_sensitivity(store, "memory", memory_id), channel)


def list_memories_tool(backend: Backend, store: Store, type: str | None, status: str | None,
                       tag: str | None) -> dict[str, Any]:
    rows = store.list_memories(status, type)
    out = [{"id": r.id, "name": r.name, "type": r.type, "status": r.status,
            "description": r.description, "tags": list(r.tags), "projects": list(r.projects),
            "critical": r.critical}
           for r in rows if visible(r.sensitivity, backend.channel)
           and (not tag or tag in r.tags)]
    return {"memories": out, "next": "get_memory(id) for one memory's full text"}


def propose_tool(backend: Backend, store: Store, op: str, content: str | None,
                 type: str | None, metadata: dict[str, Any] | None,
                 evidence: list[dict[str, Any]] | None, rationale: str | None,
                 target: list[int] | None) -> dict[str, Any]:
    channel = backend.channel
    for memory_id in target or []:  # a target the channel may not see is as none
        _visible_memory(store, memory_id, channel)
    for pointer in evidence or []:
        if isinstance(pointer, dict) and pointer.get("entry") is not None:
            _visible_entry(store, pointer["entry"], channel)
        if isinstance(pointer, dict) and pointer.get("session") is not None:
            given = str(pointer["session"])
            _, seen = _visible_entries(store, given, channel)
            seq = pointer.get("seq")
            if seq is not None and not any(e.seq == seq for e in seen):
                # a hidden entry answers exactly as one that does not exist
                raise ToolFailure(f"no entry at seq {seq!r} of session {given!r}")
    doc: dict[str, Any] = {"op": op, "proposer": store.writer}
    for key, value in (("content", content), ("type", type), ("metadata", metadata),
                       ("evidence", evidence), ("rationale", rationale)):
        if value is not None:
            doc[key] = value
    if target:
        doc["targets" if len(target) > 1 else "target"] = target if len(target) > 1 \
            else target[0]
    info = store.propose(doc, origin="api")
    status = info.status
    applied = status == "applied"
    checks = []
    for c in info.checks:
        if _evidence_seen(store, c.evidence, channel):
            checks.append({"kind": c.kind, "result": c.result, "detail": c.detail})
        else:  # as the check would have gone without the records this channel may not see
            checks.append(_check_without_hidden(store, c, channel))
    if applied:
        told = ("applied at once: governance.auto_apply allows this kind of change; the "
                "memory is live for the next recall")
    elif status == "pending":
        told = ("pending: a person reviews it in lca-tui (the Proposals screen, or `lca-tui "
                "proposals`); it is not live until they approve it")
    else:
        told = f"{status}: {info.status_reason or 'see the checks'}"
    out = {"proposal_id": info.id, "status": status, "applied": applied, "checks": checks,
           "message": told}
    if applied and info.memory_id is not None and _seen_id(store, info.memory_id, channel):
        out["memory_id"] = info.memory_id
    return out


def _evidence_ids(evidence: dict[str, Any]) -> list[int]:
    ids = [int(row["memory_id"]) for key in ("matches", "conflicts", "same_text")
           for row in evidence.get(key) or []
           if isinstance(row, dict) and row.get("memory_id") is not None]
    ids += [int(i) for i in evidence.get("not_comparable") or [] if isinstance(i, int)]
    if evidence.get("memory_id") is not None:
        ids.append(int(evidence["memory_id"]))
    return ids


def _evidence_seen(store: Store, evidence: dict[str, Any], channel: str) -> bool:
    """False when a check's evidence names a memory the channel may not see (its result
    and detail line may then betray it)."""
    return all(_seen_id(store, i, channel) for i in _evidence_ids(evidence))


def _check_without_hidden(store: Store, check: Any, channel: str) -> dict[str, Any]:
    """A duplicate or contradiction check's result and detail recomputed from the evidence
    rows this channel may see, as if the hidden memories did not exist (any other kind of
    check naming a hidden memory keeps its result, without its detail)."""
    ev = check.evidence

    def seen(rows: list[Any]) -> list[dict[str, Any]]:
        return [r for r in rows or [] if isinstance(r, dict) and r.get("memory_id")
                is not None and _seen_id(store, int(r["memory_id"]), channel)]

    if check.kind == "duplicate":
        threshold = float(ev.get("threshold") or 0.0)
        near = seen(ev.get("matches"))
        same = seen(ev.get("same_text"))
        dupes = [m for m in near if float(m.get("cos") or -1) >= threshold]
        if same or dupes:
            top = same[0] if same else dupes[0]
            how = "same text" if same else f"cos {float(top['cos']):.2f}"
            return {"kind": "duplicate", "result": "warn",
                    "detail": f"near-duplicate of memory {top['memory_id']} "
                              f"'{top.get('name')}' ({how})"}
        blind = [i for i in ev.get("not_comparable") or [] if _seen_id(store, int(i), channel)]
        best = (f" (nearest: memory {near[0]['memory_id']}, cos {float(near[0]['cos']):.2f})"
                if near else "")
        if blind:
            return {"kind": "duplicate", "result": "warn",
                    "detail": f"{len(blind)} memories embedded by another model or not at all "
                              f"were compared by exact text only; none is the same "
                              f"text{best}"}
        return {"kind": "duplicate", "result": "pass",
                "detail": f"no active memory at cos ≥ {threshold:.2f} or with the same "
                          f"text{best}"}
    if check.kind == "contradiction":
        left = seen(ev.get("conflicts"))
        heuristic = "heuristic (negation, number, date, 'X is Y' values), not a verdict"
        if not left:
            return {"kind": "contradiction", "result": "pass",
                    "detail": f"no conflicting active memory found — {heuristic}"}
        top = left[0]
        return {"kind": "contradiction", "result": check.result,
                "detail": f"may contradict memory {top['memory_id']} '{top.get('name')}' — "
                          f"{heuristic}"}
    return {"kind": check.kind, "result": check.result}


def report_use_tool(backend: Backend, store: Store, trace_id: int, item: str,
                    kind: str) -> dict[str, Any]:
    from store import NotFound

    if kind not in ("used", "prevented"):
        raise ToolFailure(f"kind must be 'used' or 'prevented', got {kind!r}")
    nothing = ToolFailure(f"trace {trace_id} has no injected item {item!r} this client may "
                          "report on: give a pointer (memory:ID / entry:ID) or rank recall "
                          "returned")
    try:
        trace = store.trace(int(trace_id))
    except NotFound:
        raise nothing from None
    if trace.channel not in _STRICT or _STRICT[trace.channel] < _STRICT[backend.channel]:
        raise nothing  # a recall on a wider channel than this client's
    text = str(item).strip()
    kind_part, _, ident = text.partition(":")
    match = [c for c in trace.candidates if c.decision == "injected" and (
        (text.isdigit() and c.rank == int(text))
        or (c.source_type == kind_part and str(c.source_id) == ident.strip()))]
    if not match or not visible(_sensitivity(store, match[0].source_type,
                                             match[0].source_id), backend.channel):
        raise nothing
    result = store.feedback(int(trace_id), f"{match[0].source_type}:{match[0].source_id}",
                            kind)
    return {"trace_id": result.trace_id, "pointer": f"{result.source_type}:"
            f"{result.source_id}", "kind": result.kind, "recorded": result.recorded,
            "hits": result.hits, "prevented": result.prevented}


def context_status_tool(backend: Backend, store: Store, session: str | None) -> dict[str, Any]:
    if session:
        # the caller's own string in every error: a hidden session's full id never leaves
        sid = _visible_entries(store, session, backend.channel)[0].id
    else:
        sid = None
        for info in store.sessions(limit=50):  # the newest this channel may see
            try:
                _visible_entries(store, info.id, backend.channel)
            except ToolFailure:
                continue
            sid = info.id
            break
        if sid is None:
            return {"session_id": None, "pressure": None,
                    "message": "no session this client may see"}
    summary = store.status_summary(sid)
    pressure = summary.pressure
    return {"session_id": sid, "pressure": summary.as_json()["pressure"],
            "message": "no context snapshot recorded for this session (the hooks record "
                       "them)" if pressure is None else
                       f"{pressure.used_tokens:,} tokens used, {pressure.state} " + (
                           f"(checkpoint at {pressure.checkpoint_threshold:,})"
                           if pressure.checkpoint_threshold else "(no checkpoint threshold)")}


def health_tool(backend: Backend, store: Store) -> dict[str, Any]:
    from store import SIGNAL_RANK as RANK

    scan = store.health(save="never")
    signals = sorted(scan.signals, key=lambda s: (-RANK.get(s.status, 1),
                                                  s.status != "unknown", s.name))
    return {"status": max((s.status for s in scan.signals),
                          key=lambda st: RANK.get(st, 1), default="ok"),
            "signals": [{"name": s.name, "status": s.status, "rule": s.rule, "fix": s.fix}
                        for s in signals],
            "note": "values and offending rows are left out (they count records this "
                    "channel may not see); a person sees them with `lca-tui health`"}


# -- the server -------------------------------------------------------------------------------
TOOLS: dict[str, dict[str, Any]] = {
    "recall": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
    "search": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    "get_entries": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    "get_memory": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    "list_memories": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    "propose_memory": {"readOnlyHint": False, "destructiveHint": False,
                       "idempotentHint": False},
    "report_use": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
    "context_status": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    "health": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
}


def build_server(backend: Backend, host: str = "127.0.0.1", port: int = 8000) -> Any:
    """The ``FastMCP`` server with every tool registered on ``backend``."""
    from store import CODE_VERSION

    server = FastMCP(
        "lca-tui", host=host, port=port, log_level="WARNING",
        instructions=(
            "The user's governed continuity store: past sessions and reviewed memories. "
            "Call recall(query) for context before answering from memory; search(query) for "
            "a cheap index, then get_memory / get_entries for full records. Write with "
            "propose_memory: a person approves it in lca-tui unless policy applies it at "
            "once (the result says which). Report recalled items that helped with "
            "report_use."))
    server._mcp_server.version = CODE_VERSION

    def writer_of(ctx: Context | None) -> tuple[str, str]:
        info = None
        try:
            params = ctx.session.client_params if ctx is not None else None
            info = params.clientInfo if params is not None else None
        except (AttributeError, ValueError):
            info = None
        if info is None:
            return "mcp:unknown", "unknown"
        return f"mcp:{info.name}"[:80], str(info.version or "unknown")[:40]

    async def call(ctx: Context | None, fn: Any, *args: Any) -> dict[str, Any]:
        who = writer_of(ctx)
        try:
            return await anyio.to_thread.run_sync(lambda: backend.run(who, fn, *args))
        except ToolFailure as exc:
            raise ToolError(str(exc)) from None

    def tool(name: str, title: str, description: str) -> Any:
        """Register the function below as the tool ``name``: its title, its description and
        its hints (read-only, destructive, idempotent: ``TOOLS``)."""
        return server.tool(name=name, description=description, annotations=ToolAnnotations(
            title=title, openWorldHint=False, **TOOLS[name]))

    @tool("recall", "Recall from the store",
          description=(
              "Recall what the store knows about `query` (a question or the task at "
              "hand): the items to inject, each with a pointer (memory:ID or "
              "entry:ID), a score and its text, and the trace_id of the recall (its "
              "trace is stored). `role` / `project` sharpen the cue; `channel` may "
              "narrow this client's channel (private → shared → public), never widen "
              "it."))
    async def recall(query: str, role: str | None = None, project: str | None = None,
                     channel: str | None = None, ctx: Context | None = None) -> dict[str, Any]:
        return await call(ctx, recall_tool, query, role, project, channel)

    @tool("search", "Search the store",
          description=(
              "A cheap index first: ids, scores and short snippets of transcript "
              "entries and memories matching `query`. `mode`: hybrid (default), fts "
              "(words) or semantic (meaning); `limit` 1-100 (default 10). Fetch the "
              "full records with get_memory(id) or get_entries(session, seq)."))
    async def search(query: str, mode: str = "hybrid", limit: int = 10,
                     ctx: Context | None = None) -> dict[str, Any]:
        return await call(ctx, search_tool, query, mode, limit)

    @tool("get_entries", "Read a transcript",
          description=(
              "Entries of one stored session (its id, or a unique prefix), in order: "
              "with `seq`, those within `around` positions of it (default 5); at most "
              "`limit` (default 50, up to 500); `more` says whether some were left "
              "out. Each entry's content is cut at 4,000 characters."))
    async def get_entries(session: str, seq: int | None = None, around: int = 5,
                          limit: int = 50, ctx: Context | None = None) -> dict[str, Any]:
        return await call(ctx, get_entries_tool, session, seq, around, limit)

    @tool("get_memory", "Read a memory",
          description="One memory in full (body, type, status, tags, provenance "
                      "figures) by its id, as search, recall or list_memories gave it.")
    async def get_memory(id: int, ctx: Context | None = None) -> dict[str, Any]:
        return await call(ctx, get_memory_tool, id)

    @tool("list_memories", "List memories",
          description=(
              "Memories by type and name (id, name, type, status, description, tags), "
              "optionally only one `type` (e.g. feedback, project, reference, user), "
              "`status` (active, superseded, expired, quarantined) or `tag`."))
    async def list_memories(type: str | None = None, status: str | None = None,
                            tag: str | None = None,
                            ctx: Context | None = None) -> dict[str, Any]:
        return await call(ctx, list_memories_tool, type, status, tag)

    @tool("propose_memory", "Propose a memory change",
          description=(
              "Propose a change to the user's memories; it is checked (duplicates, "
              "contradictions, support in the evidence, budget) and then either "
              "applied at once, where the store's policy (governance.auto_apply) "
              "allows that kind of change, or left pending until a person approves "
              "it — the result's `status` and `message` say which. `op`: add, "
              "reinforce, revise, supersede, merge, noop or quarantine; `content`: "
              "the memory's text (add, revise, supersede, merge); `type`: e.g. "
              "feedback, project, reference, user; `target`: the memory id(s) "
              "changed (reinforce, revise, supersede, quarantine: one; merge: two or "
              "more); `metadata`: name, description, tags, projects, role, critical, "
              "sensitivity, ...; `evidence`: pointers such as {\"entry\": 812} or "
              "{\"session\": \"<id>\", \"seq\": 14}; `rationale`: why."))
    async def propose_memory(op: str, content: str | None = None, type: str | None = None,
                             metadata: dict[str, Any] | None = None,
                             evidence: list[dict[str, Any]] | None = None,
                             rationale: str | None = None,
                             target: int | list[int] | None = None,
                             ctx: Context | None = None) -> dict[str, Any]:
        targets = [target] if isinstance(target, int) else list(target or [])
        return await call(ctx, propose_tool, op, content, type, metadata, evidence,
                          rationale, targets)

    @tool("report_use", "Report a recalled item",
          description=(
              "Tell the store that an item a recall injected was `used` (it helped) "
              "or `prevented` a mistake: `trace_id` from recall, `item` its pointer "
              "(memory:ID / entry:ID) or rank. Later recalls weigh it more; "
              "reporting the same item twice counts once."))
    async def report_use(trace_id: int, item: str, kind: str = "used",
                         ctx: Context | None = None) -> dict[str, Any]:
        return await call(ctx, report_use_tool, trace_id, item, kind)

    @tool("context_status", "Context pressure",
          description=(
              "How full the live context window is (the latest recorded snapshot of "
              "`session`, default the most recent session) against the checkpoint "
              "and auto-compact thresholds: `state` is below, over checkpoint or over "
              "auto-compact. Over checkpoint: write down what must survive now."))
    async def context_status(session: str | None = None,
                             ctx: Context | None = None) -> dict[str, Any]:
        return await call(ctx, context_status_tool, session)

    @tool("health", "Store health",
          description=(
              "Each health signal of the store (what silently stopped working: "
              "duplicate index rows, stale writers, index lag, ...) with its status "
              "(fail, warn, unknown, ok), worst first, and the fix a person can run. "
              "Nothing is changed."))
    async def health(ctx: Context | None = None) -> dict[str, Any]:
        return await call(ctx, health_tool)

    _forbid_unknown_arguments(server)
    return server


def _forbid_unknown_arguments(server: Any) -> None:
    """An argument no tool has is an error (the SDK drops it silently by default: an agent
    that misspells ``limit`` would never learn that it was ignored); the schemas say
    ``additionalProperties: false``."""
    from pydantic import ConfigDict

    for tool in server._tool_manager.list_tools():
        base = tool.fn_metadata.arg_model
        strict: Any = type(base.__name__, (base,), {
            "model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True),
            "__module__": base.__module__})
        tool.fn_metadata.arg_model = strict
        tool.parameters = strict.model_json_schema(by_alias=True)
