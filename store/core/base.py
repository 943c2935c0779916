"""``StoreBase``: the core object of a store. It opens (and migrates) the file, lends out
connections, reads records, searches and appends entries. Every capability takes a
``StoreBase``; ``store.facade.Store`` adds the capabilities (the harness API) on top."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC
from pathlib import Path
from typing import Any

import sqlean
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DatabaseError

from store.core import db
from store.core.db import orm
from store.core import vec
from store.core.embed import Embedder, load_embedder
from store.core.errors import NotFound, StoreError
from store.core.index import Indexer
from store.core.models import AuditEvent
from store.core.migrations import current_version, migrate, refuse_newer
from store.core.records import (
    EmbedderInfo,
    EntryInfo,
    IngestReport,
    MemoryInfo,
    SearchHit,
    SessionInfo,
    Stats,
)
from store.core.settings import Settings
from store.core.timeutil import now_iso, parse_iso
from store.core.version import CODE_VERSION

Progress = Callable[[str, int, int], None]


def _loads(raw: str | None, default: Any) -> Any:
    if not raw:
        return default
    try:
        return json.loads(raw)
    except ValueError:
        return default


def resolve_agent(given: str, agents: Iterable[str], where: str) -> str:
    """``given`` among ``agents``: the exact name, else the only one starting with it."""
    names = list(dict.fromkeys(agents))
    if given in names:
        return given
    matches = [a for a in names if a.startswith(given)] if given else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise NotFound(f"{given!r} names {len(matches)} agents in {where} "
                       f"({', '.join(matches)}): give more of the id")
    there = ", ".join(names) if names else "none"
    raise NotFound(f"no agent {given!r} in {where}: its agents are {there}")


def by_time_order(entries: list[EntryInfo]) -> list[EntryInfo]:
    """Entries interleaved by time (then seq); one without a time follows its predecessor."""
    keyed: list[tuple[str, int, int, EntryInfo]] = []
    last = ""
    for i, e in enumerate(entries):
        t = parse_iso(e.ts)
        if t is not None:
            last = t.astimezone(UTC).isoformat()
        keyed.append((last, e.seq, i, e))
    keyed.sort(key=lambda k: (k[0], k[1], k[2]))
    return [k[3] for k in keyed]


class StoreBase:
    """A continuity store on one SQLite file: connections, settings, embedder, reads."""

    def __init__(self, path: Path | str | None = None, settings: Settings | None = None,
                 embedder: Embedder | None = None, writer: str | None = None,
                 writer_version: str | None = None) -> None:
        self.path = Path(path).expanduser() if path else db.default_store_path()
        self.settings = settings or Settings.load()
        self.writer = writer or str(self.settings["store.writer"])
        self.writer_version = writer_version or CODE_VERSION
        db.ensure_file(self.path)
        # Refuse a newer store before the first connection switches it to WAL: a store in
        # rollback-journal mode would otherwise have its header changed by the refusal.
        refuse_newer(db.schema_version_of(self.path))
        self.engine: Engine = db.make_engine(self.path, self.settings["store.busy_timeout_ms"])
        try:
            migrate(self.engine)
        except DatabaseError as exc:
            self.engine.dispose()
            if "locked" in str(exc.orig) or "busy" in str(exc.orig):
                raise
            raise StoreError(f"{self.path} cannot be opened as an lca-tui store: {exc.orig}"
                             ) from exc
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        self._watch: Any = None
        self._watch_lock = threading.Lock()  # the watch connection is shared by threads
        self._closed = False
        self._last_version = 0

    # -- connections ---------------------------------------------------------------------
    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction; waits (retrying) while another writer holds the lock."""
        with db.write(self.engine, float(self.settings["store.write_retry_seconds"])) as conn:
            yield conn

    def close(self) -> None:
        with self._watch_lock:  # never close it under a data_version() in another thread
            self._closed = True
            if self._watch is not None:
                self._watch.close()
                self._watch = None
        self.engine.dispose()

    def __enter__(self) -> StoreBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def data_version(self) -> int:
        """Changes whenever another connection commits: a cheap "did anything change?"."""
        with self._watch_lock:
            if self._closed:  # a closed store no longer changes
                return self._last_version
            if self._watch is None:
                self._watch = sqlean.connect(str(self.path), check_same_thread=False)
            self._last_version = int(self._watch.execute("PRAGMA data_version").fetchone()[0])
            return self._last_version

    # -- embedding -----------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = load_embedder(self.settings["embed.backend"],
                                               self.settings["embed.threads"],
                                               self.settings["embed.batch_size"])
            return self._embedder

    def embedder_info(self) -> EmbedderInfo:
        e = self.embedder
        return EmbedderInfo(e.name, e.dim, e.degraded, e.reason)

    def indexer(self) -> Indexer:
        return Indexer(self.embedder, self.settings["embed.max_tokens"],
                       self.settings["embed.batch_size"], self.writer, self.writer_version)

    # -- audit -----------------------------------------------------------------------------
    def audit(self, conn: Connection, action: str, target_kind: str | None = None,
              target_ids: list[Any] | None = None, counts: dict[str, int] | None = None,
              actor: str | None = None) -> None:
        """Record an audit event: ids and counts only, never content."""
        with orm(conn) as session:
            session.add(AuditEvent(
                ts=now_iso(), actor=actor or os.environ.get("USER") or self.writer,
                action=action, target_kind=target_kind, target_ids=json.dumps(target_ids or []),
                counts=json.dumps(counts or {}), writer=self.writer,
                writer_version=self.writer_version, created_at=now_iso()))
            session.flush()

    # -- reads -----------------------------------------------------------------------------
    def stats(self, with_embedder: bool = True) -> Stats:
        def grouped(conn: Connection, sql: str) -> dict[str, int]:
            return {str(k): int(v) for k, v in conn.exec_driver_sql(sql).all()}

        with self.read() as conn:
            scalar = lambda sql: int(conn.exec_driver_sql(sql).scalar_one())  # noqa: E731
            by_kind = grouped(conn, "SELECT kind, COUNT(*) FROM entry GROUP BY kind ORDER BY kind")
            mem_status = grouped(conn, "SELECT status, COUNT(*) FROM memory GROUP BY status")
            chunk_status = grouped(conn, "SELECT status, COUNT(*) FROM chunk GROUP BY status")
            chunk_model = grouped(conn, "SELECT model, COUNT(*) FROM chunk GROUP BY model")
            vectors, fts_rows = vec.index_counts(conn)
            tables = {r[0] for r in conn.exec_driver_sql(
                "SELECT name FROM sqlite_master WHERE type = 'table'").all()}
            pending = (scalar("SELECT COUNT(*) FROM proposal WHERE status = 'pending'")
                       if "proposal" in tables else 0)
            traces = scalar("SELECT COUNT(*) FROM recall_trace") if "recall_trace" in tables else 0
            skipped: dict[str, dict[str, int]] = {"by-design": {}, "unknown": {}}
            if "import_skip" in tables:  # the ingest capability's table (migration 9)
                for reason, what, n in conn.exec_driver_sql(
                        "SELECT reason, line_type, SUM(count) FROM import_skip "
                        "GROUP BY reason, line_type ORDER BY reason, line_type").all():
                    skipped.setdefault(str(reason), {})[str(what)] = int(n)
            stats_args: dict[str, Any] = dict(
                sessions=scalar("SELECT COUNT(*) FROM session"),
                entries=sum(by_kind.values()), entries_by_kind=by_kind,
                memories=sum(mem_status.values()), memories_by_status=mem_status,
                memories_unloadable=scalar("SELECT COUNT(*) FROM memory WHERE loadable = 0"),
                chunks=sum(chunk_status.values()), chunks_by_status=chunk_status,
                chunks_by_model=chunk_model, vectors=vectors, fts_rows=fts_rows,
                checkpoints=scalar("SELECT COUNT(*) FROM checkpoint"),
                proposals_pending=pending, traces=traces,
                schema_version=current_version(conn),
                skipped_by_design=skipped["by-design"], skipped_unknown=skipped["unknown"])
        size = sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal"))
                   if p.exists())
        info = (self.embedder_info() if with_embedder
                else EmbedderInfo("not loaded", 384, False, None))
        foreign = {m: n for m, n in chunk_model.items() if m != info.model}
        if with_embedder and foreign:
            names = ", ".join(f"{n} by {m}" for m, n in foreign.items())
            note = (f"{sum(foreign.values())} chunks were embedded by another model ({names}): "
                    "semantic search ignores them until `lca-tui reindex`")
            info = EmbedderInfo(info.model, info.dim, True,
                                f"{info.reason}; {note}" if info.reason else note)
        return Stats(path=str(self.path), size_bytes=size, embedder=info, **stats_args)

    def sessions(self, limit: int | None = None) -> list[SessionInfo]:
        sql = ("SELECT s.id, s.agent, s.surface, s.project, s.title, s.started_at, s.ended_at, "
               "s.source, s.format, (SELECT COUNT(*) FROM entry e WHERE e.session_id = s.id), "
               "(SELECT GROUP_CONCAT(DISTINCT agent) FROM entry e WHERE e.session_id = s.id) "
               "FROM session s ORDER BY COALESCE(s.ended_at, s.started_at) DESC, s.id")
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self.read() as conn:
            rows = conn.exec_driver_sql(sql).all()
        out = []
        for r in rows:
            agents = sorted(set((r[10] or "").split(",")) - {""},
                            key=lambda a: (a != "main", a))
            out.append(SessionInfo(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8],
                                   int(r[9]), tuple(agents)))
        return out

    def session(self, session_id: str) -> SessionInfo:
        """The session with this id, or the only one whose id starts with it."""
        if not session_id:
            raise NotFound("no session named: give a session id (`lca-tui sessions`)")
        every = self.sessions()
        for s in every:
            if s.id == session_id:
                return s
        matches = [s for s in every if s.id.startswith(session_id)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            names = ", ".join(s.id for s in matches[:5])
            raise NotFound(f"{session_id!r} names {len(matches)} sessions ({names}"
                           f"{', …' if len(matches) > 5 else ''}): give more of the id")
        raise NotFound(f"no session {session_id!r}: `lca-tui sessions` lists them")

    _ENTRY_COLS = ("id, session_id, agent, seq, ts, kind, content, tokens, tool_name, "
                   "message_id, source_path, source_line, meta")

    @staticmethod
    def _entry(r: Any) -> EntryInfo:
        return EntryInfo(int(r[0]), r[1], r[2], int(r[3]), r[4], r[5], r[6], int(r[7]), r[8],
                         r[9], r[10], r[11], _loads(r[12], {}))

    def agent(self, session_id: str, agent: str) -> str:
        """The agent of session ``session_id`` named ``agent``: exactly, or the only one whose
        id starts with it (as session ids resolve); an error names the agents there are."""
        session = self.session(session_id)
        return resolve_agent(agent, session.agents, f"session {session.id[:8]}")

    def entries(self, session_id: str, agent: str | None = None, offset: int = 0,
                limit: int | None = None, by_time: bool = False) -> list[EntryInfo]:
        """A session's entries (``agent``: one agent's, a unique prefix will do), in ``seq``
        order, or with ``by_time`` interleaved by time (main agent and workers as they
        happened; an entry without a time keeps its place after the one before it)."""
        session = self.session(session_id)
        sql = f"SELECT {self._ENTRY_COLS} FROM entry WHERE session_id = :s"
        params: dict[str, Any] = {"s": session.id}
        if agent:
            sql += " AND agent = :a"
            params["a"] = resolve_agent(agent, session.agents, f"session {session.id[:8]}")
        sql += " ORDER BY seq"
        if limit is not None and not by_time:
            sql += " LIMIT :l OFFSET :o"
            params.update(l=limit, o=offset)
        with self.read() as conn:
            rows = [self._entry(r) for r in conn.execute(text(sql), params).all()]
        if not by_time:
            return rows
        rows = by_time_order(rows)
        return rows[offset:] if limit is None else rows[offset:offset + limit]

    def entry(self, entry_id: int) -> EntryInfo:
        with self.read() as conn:
            r = conn.execute(text(f"SELECT {self._ENTRY_COLS} FROM entry WHERE id = :i"),
                             {"i": entry_id}).first()
        if r is None:
            raise NotFound(f"no entry {entry_id}")
        return self._entry(r)

    _MEMORY_COLS = ("id, name, description, type, body, tags, projects, role, created, "
                    "last_applied, hits, prevented, half_life_days, critical, evergreen, "
                    "invariant, authority, sensitivity, valid_from, valid_to, supersedes_ref, "
                    "supersedes_id, superseded_by_id, status, source_file, loadable, load_error")

    @staticmethod
    def _memory(r: Any) -> MemoryInfo:
        return MemoryInfo(int(r[0]), r[1], r[2], r[3], r[4], tuple(_loads(r[5], [])),
                          tuple(_loads(r[6], [])), r[7], r[8], r[9], int(r[10]), int(r[11]),
                          r[12], bool(r[13]), bool(r[14]), r[15], r[16], r[17], r[18], r[19],
                          r[20], r[21], r[22], r[23], r[24], bool(r[25]), r[26])

    def memories(self) -> list[MemoryInfo]:
        with self.read() as conn:
            rows = conn.exec_driver_sql(
                f"SELECT {self._MEMORY_COLS} FROM memory ORDER BY type, name").all()
        return [self._memory(r) for r in rows]

    def memory(self, memory_id: int) -> MemoryInfo:
        with self.read() as conn:
            r = conn.execute(text(f"SELECT {self._MEMORY_COLS} FROM memory WHERE id = :i"),
                             {"i": memory_id}).first()
        if r is None:
            raise NotFound(f"no memory {memory_id}: `lca-tui memories` lists them")
        return self._memory(r)

    # -- search ----------------------------------------------------------------------------
    def search(self, query: str, limit: int = 10, mode: str = "hybrid") -> list[SearchHit]:
        """Lexical (FTS5 BM25), semantic (vector KNN) or both blended 0.7 cos + 0.3 lex.

        A probe: it writes nothing, no trace.
        """
        from store.core.search import search

        return search(self, query, limit, mode)

    # -- writes ----------------------------------------------------------------------------
    def append_entries(self, session: Any, entries: list[Any]) -> list[int]:
        """Harness API: append ``NewEntry`` rows to ``session`` (a ``NewSession``); returns
        the ids of entries added (already-present ones are skipped by idempotency key)."""
        from store.core.writes import embed_new, upsert_session, write_entries

        indexer = self.indexer()
        with self.read() as conn:
            prepared = embed_new(conn, entries, indexer)
        with self.write() as conn:
            upsert_session(conn, session, self.writer, self.writer_version)
            result = write_entries(conn, session.id, entries, indexer, self.writer,
                                   self.writer_version, prepared)
        return result.entry_ids

