"""``StoreBase``: the core object of a store. It opens (and migrates) the file, lends out
connections, reads records, searches and appends entries. Every capability takes a
``StoreBase``; ``store.facade.Store`` adds the capabilities (the harness API) on top."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import sqlean
from sqlalchemy import Connection, Engine, column, func, inspect, table
from sqlalchemy.exc import DatabaseError, OperationalError
from sqlmodel import SQLModel, col, select

from store.core import db
from store.core.db import orm
from store.core import lite, vec
from store.core.actor import resolve as resolve_actor
from store.core.embed import Embedder, embedder_key, load_embedder, take_early
from store.core.errors import NotFound, ReadOnly, StoreError, StoreUnavailable
from store.core.location import refused, store_location
from store.core.index import Indexer, NeighbourFinder
from store.core.models import AuditEvent, Checkpoint, Chunk, EmbedQueue, Entry, Memory
from store.core.models import Session as SessionRow
from store.core.migrations import current_version, migrate, newest_version, refuse_newer
from store.core.secrets import Detector
from store.core.records import (
    AuditInfo,
    EmbedderInfo,
    EntryInfo,
    EntryPage,
    HookRunInfo,
    MemoryInfo,
    SearchHit,
    SessionInfo,
    Stats,
    entry_info,
    memory_info,
)
from store.core.settings import Settings
from store.core.timeutil import now_iso, parse_iso
from store.core.version import CODE_VERSION, UNKNOWN_VERSION
from store.core.version import WRITER as OWN_WRITER
from store.core.vocab import Progress

if TYPE_CHECKING:
    from store.core.waiting import EmbedReport
    from store.core.writes import NewEntry, NewSession


# Capabilities' tables that ``stats`` counts, named here as bare table clauses: core imports
# no capability (and importing ``store.ingest`` would load every importer). Their SQLModel
# classes in ``store/<capability>/models.py`` describe them (``tests/store/test_schema.py``).
_PROPOSAL = table("proposal", column("status"))
_RECALL_TRACE = table("recall_trace", column("id"))
_IMPORT_SKIP = table("import_skip", column("reason"), column("line_type"), column("count"))
_HOOK_RUN = table("hook_run", *(column(c) for c in (
    "id", "ts", "event", "status", "via", "duration_ms", "entries_added", "injected", "error")))
_Row = TypeVar("_Row", bound=SQLModel)


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


def writer_version_for(writer: str, given: str | None) -> str:
    """The version rows written by ``writer`` record: ``given`` when it names one; lca-tui's
    own code version for lca-tui's own writers (``lca-tui``, ``lca-tui:hook``, ...); otherwise
    ``UNKNOWN_VERSION`` -- another program's rows must never claim lca-tui's version, or
    ``stale_writer`` could not tell which writer is stale."""
    if given:
        return given
    if writer == OWN_WRITER or writer.startswith(OWN_WRITER + ":"):
        return CODE_VERSION
    return UNKNOWN_VERSION


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
                 writer_version: str | None = None,
                 timer: Callable[[], float] | None = None,
                 read_only: bool | None = None) -> None:
        self.settings = settings or Settings.load()
        self.read_only = bool(self.settings["store.read_only"]) if read_only is None \
            else read_only
        """Every write refused (``ReadOnly``); the file opened with SQLite's mode=ro; never
        migrated. Recalls keep no trace and health scans are not stored."""
        self.writer = writer or str(self.settings["store.writer"])
        self.writer_version = writer_version_for(self.writer, writer_version)
        location = store_location(path, str(self.settings["store.url"]))
        self.url: str | None = None
        self.engine: Engine
        """The server's URL (``postgresql://``, password masked) when the store is on
        PostgreSQL; None for a file. ``path`` is then this machine's folder for the store's
        local files (undo journals, the daemon's socket)."""
        self._opened_as = str(location)  # how to open it again (a URL keeps its password here)
        if isinstance(location, str):
            self.engine, self.path, self.url = db.open_server(
                location, int(self.settings["store.keep_connections"]),
                int(self.settings["store.pg_ef_search"]), read_only=self.read_only)
        else:
            self.path = location
            if self.read_only:
                blocked = refused(self.path, read_only=True)
                if blocked:
                    raise StoreError(blocked)
            else:
                db.ensure_file(self.path)
            # Refuse a newer store before the first connection switches it to WAL: a store in
            # rollback-journal mode would otherwise have its header changed by the refusal.
            refuse_newer(db.schema_version_of(self.path))
            self.engine = db.make_engine(self.path, self.settings["store.busy_timeout_ms"],
                                         int(self.settings["store.keep_connections"]),
                                         read_only=self.read_only)
        try:
            if self.read_only:
                self._refuse_older()
            else:
                migrate(self.engine)
        except DatabaseError as exc:
            self.engine.dispose()
            if "locked" in str(exc.orig) or "busy" in str(exc.orig):
                raise StoreUnavailable(" ".join(str(exc.orig).split())) from exc
            raise StoreError(f"{self.location} cannot be opened as an lca-tui store: "
                             f"{' '.join(str(exc.orig).split())}") from exc
        self._embedder = embedder
        self.timer: Callable[[], float] = timer or time.perf_counter
        """What measures a recall's latency, in seconds (a fixed one in snapshot tests)."""
        self._embedder_lock = threading.Lock()
        self._watch: Any = None
        self._watch_lock = threading.Lock()  # the watch connection is shared by threads
        self._closed = False
        self._last_version = 0
        # Set by a warm process that keeps the vectors in memory (the daemon): new chunks'
        # nearest neighbours from that copy instead of a vec0 scan per chunk.
        self.neighbour_finder: NeighbourFinder | None = None

    @property
    def location(self) -> str:
        """Where the store is, as shown to people: its file, or its URL (password masked)."""
        return self.url if self.url is not None else str(self.path)

    @property
    def opened_as(self) -> str | Path:
        """What opens this store again in this process (another writer on it): the file, or
        the server's URL as given (never shown: it may hold a password)."""
        return self._opened_as if self.url is not None else self.path

    @property
    def on_server(self) -> bool:
        """Is the store on a PostgreSQL server (shared by machines) rather than a file?"""
        return self.url is not None

    # -- connections ---------------------------------------------------------------------
    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection to read with; SQLite refusing it (or a query in the block) raises
        ``StoreUnavailable``."""
        try:
            with self.engine.connect() as conn:
                yield conn
        except OperationalError as exc:
            raise StoreUnavailable(" ".join(str(exc.orig).split())) from exc

    def _refuse_older(self) -> None:
        """A read-only store is never migrated: one older than this code is refused."""
        newest = newest_version()
        with self.engine.connect() as conn:
            have = current_version(conn)
        if have < newest:
            self.engine.dispose()
            raise ReadOnly(f"migrating {self.location} from schema version {have} to "
                           f"{newest}")

    def refuse_if_read_only(self, action: str) -> None:
        """Raise ``ReadOnly`` naming ``action`` ("approving a proposal") when the store is
        open read-only: a writing operation calls it first, so its refusal says what."""
        if self.read_only:
            raise ReadOnly(action)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction; waits (retrying) while another writer holds the lock, then
        raises ``StoreLocked``; SQLite refusing the write raises ``StoreUnavailable``; a
        read-only store raises ``ReadOnly``."""
        if self.read_only:
            raise ReadOnly()
        try:
            with db.write(self.engine,
                          float(self.settings["store.write_retry_seconds"])) as conn:
                yield conn
        except OperationalError as exc:
            raise StoreUnavailable(" ".join(str(exc.orig).split())) from exc

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
            if self.url is not None:  # a server: its commit counter, one cheap query
                if self._watch is None:
                    self._watch = self.engine.connect().execution_options(
                        isolation_level="AUTOCOMMIT")
                try:
                    self._last_version = db.change_counter(self._watch)
                except DatabaseError:
                    self._watch.close()
                    self._watch = None
                return self._last_version
            if self._watch is None:
                mode = "ro" if self.read_only else "rw"
                self._watch = sqlean.connect(f"{self.path.resolve().as_uri()}?mode={mode}",
                                             uri=True, check_same_thread=False)
            # raw SQL: PRAGMA data_version on a watch connection of its own (its counter moves
            # only for other connections' commits), polled every second by a following app
            self._last_version = int(self._watch.execute("PRAGMA data_version").fetchone()[0])
            return self._last_version

    # -- embedding -----------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                key = embedder_key(self.settings)
                early = take_early(key)  # begun before this store was opened, if it was
                self._embedder = early if early is not None else load_embedder(*key)
            return self._embedder

    @property
    def embedder_loaded(self) -> bool:
        """Whether the embedder is loaded already (loading the model takes a moment)."""
        return self._embedder is not None

    def load_embedder(self, progress: Progress | None = None) -> Embedder:
        """The embedder, loaded now; ``progress("loading the embedding model", 0, 0)`` (no
        total: it takes a moment) before a first load, so a command can say why it pauses."""
        if self._embedder is None and progress:
            progress("loading the embedding model", 0, 0)
        return self.embedder

    def embedder_info(self) -> EmbedderInfo:
        """The embedder in use, without loading the model when it would load: a report
        (``stats``, health) costs no model load; the vectors are the loaded model's."""
        with self._embedder_lock:
            e = self._embedder
        return lite.embedder_info(self.settings, e, lambda: self.embedder)

    def indexer(self, progress: Progress | None = None,
                writer: tuple[str, str] | None = None) -> Indexer:
        """The store's indexer; ``writer`` (name, version) stands in for another program
        indexing with the same chunking (the health incidents' second writer)."""
        name, version = writer or (self.writer, self.writer_version)
        return Indexer(self.load_embedder(progress), self.settings["embed.max_tokens"],
                       self.settings["embed.batch_size"], name, version,
                       self.settings["embed.tool_head_tokens"], progress,
                       self.neighbour_finder, self.detector())

    def detector(self) -> Detector:
        """The secrets detector every entry and memory written goes through (its opt-in
        e-mail and phone detection from the ``privacy.detect_*`` settings)."""
        return Detector.from_settings(self.settings)

    # -- audit -----------------------------------------------------------------------------
    def audit_in(self, conn: Connection, action: str, target_kind: str | None = None,
                 target_ids: Sequence[int | str | None] | None = None,
                 counts: dict[str, int] | None = None, actor: str | None = None) -> AuditInfo:
        """Record an audit event inside the transaction ``conn`` a capability holds (so the
        event commits or rolls back with the change it records): ids and counts only, never
        content. ``Store.audit`` is the same in a transaction of its own."""
        ts = now_iso()
        ids = list(target_ids or [])
        event = AuditEvent(ts=ts, actor=resolve_actor(actor, self.settings), action=action,
                           target_kind=target_kind, target_ids=json.dumps(ids),
                           counts=json.dumps(counts or {}), writer=self.writer,
                           writer_version=self.writer_version, created_at=ts)
        with orm(conn) as session:
            session.add(event)
            session.flush()
            assert event.id is not None
            return AuditInfo(int(event.id), ts, event.actor, action, target_kind, tuple(ids),
                             dict(counts or {}))

    # -- reads -----------------------------------------------------------------------------
    def stats(self, with_embedder: bool = True) -> Stats:
        with self.read() as conn, orm(conn) as s:
            def grouped(column: Any) -> dict[str, int]:
                rows = s.exec(select(column, func.count()).group_by(column).order_by(column))
                return {str(k): int(v) for k, v in rows.all()}

            def count(model: Any, *where: Any) -> int:
                return int(s.exec(select(func.count()).select_from(model).where(*where)).one())

            by_kind = grouped(Entry.kind)
            mem_status = grouped(Memory.status)
            chunk_status = grouped(Chunk.status)
            chunk_model = grouped(Chunk.model)
            vectors, fts_rows = vec.index_counts(conn)
            present = set(inspect(conn).get_table_names())
            pending = (count(_PROPOSAL, _PROPOSAL.c.status == "pending")
                       if "proposal" in present else 0)
            traces = count(_RECALL_TRACE) if "recall_trace" in present else 0
            skips: list[tuple[str, str, int]] = []
            if "import_skip" in present:
                skip = _IMPORT_SKIP.c
                skips = [(str(r), str(w), int(n)) for r, w, n in s.exec(
                    select(skip.reason, skip.line_type, func.sum(skip.count))
                    .group_by(skip.reason, skip.line_type)
                    .order_by(skip.reason, skip.line_type)).all()]
            counts = dict(
                by_kind=by_kind, mem_status=mem_status, chunk_status=chunk_status,
                sessions=count(SessionRow),
                memories_unloadable=count(Memory, Memory.loadable == 0),
                vectors=vectors, fts_rows=fts_rows, checkpoints=count(Checkpoint),
                proposals_pending=pending, traces=traces,
                schema_version=current_version(conn), entries_waiting=count(EmbedQueue),
                chunks_lexical_only=count(Chunk, Chunk.lexical_only == 1))
            backend, server_version, vector_version = db.backend_versions(conn)
            size = db.server_size(conn) if self.on_server else lite.file_size(self.path)
        return lite.stats_record(self.location, size, counts, skips, chunk_model,
                                 self.embedder_info() if with_embedder else None, backend,
                                 server_version, vector_version)

    def sessions(self, limit: int | None = None, ids: Sequence[str] | None = None
                 ) -> list[SessionInfo]:
        """Every session (``ids``: those only), latest first, with its entry count and
        agents."""
        query = (select(SessionRow, func.count(col(Entry.id)),
                        func.aggregate_strings(col(Entry.agent), ","))
                 .outerjoin(Entry, col(Entry.session_id) == SessionRow.id)
                 .group_by(col(SessionRow.id))
                 .order_by(func.coalesce(SessionRow.ended_at, SessionRow.started_at).desc(),
                           col(SessionRow.id)))
        if ids is not None:
            query = query.where(col(SessionRow.id).in_(list(ids)))
        if limit:
            query = query.limit(int(limit))
        with self.read() as conn, orm(conn) as s:
            rows = s.exec(query).all()
        return [lite.session_info(row.id, row.agent, row.surface, row.project, row.title,
                                  row.started_at, row.ended_at, row.source, row.format,
                                  entries, agent_list) for row, entries, agent_list in rows]

    def session(self, session_id: str) -> SessionInfo:
        """The session with this id, or the only one whose id starts with it."""
        if not session_id:
            raise NotFound("no session named: give a session id (`lca-tui sessions`)")
        exact = self.sessions(ids=[session_id])  # the whole id: one session's entries counted
        if exact:
            return exact[0]
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

    def agent(self, session_id: str, agent: str) -> str:
        """The agent of session ``session_id`` named ``agent``: exactly, or the only one whose
        id starts with it (as session ids resolve); an error names the agents there are."""
        session = self.session(session_id)
        return resolve_agent(agent, session.agents, f"session {session.id[:8]}")

    def entries(self, session_id: str, agent: str | None = None, offset: int = 0,
                limit: int | None = None, by_time: bool = False, after_id: int = 0
                ) -> list[EntryInfo]:
        """A session's entries (``agent``: one agent's, a unique prefix will do), in ``seq``
        order, or with ``by_time`` interleaved by time (main agent and workers as they
        happened; an entry without a time keeps its place after the one before it);
        ``after_id``: only those with a higher id (what a following screen appends)."""
        session = self.session(session_id)
        query = select(Entry).where(Entry.session_id == session.id)
        if after_id:
            query = query.where(col(Entry.id) > after_id)
        if agent:
            query = query.where(Entry.agent == resolve_agent(agent, session.agents,
                                                             f"session {session.id[:8]}"))
        query = query.order_by(col(Entry.seq))
        if limit is not None and not by_time:
            query = query.limit(limit).offset(offset)
        with self.read() as conn, orm(conn) as s:
            rows = [entry_info(e) for e in s.exec(query).all()]
        if not by_time:
            return rows
        rows = by_time_order(rows)
        return rows[offset:] if limit is None else rows[offset:offset + limit]

    def entry_page(self, session_id: str, agent: str | None = None, *,
                   after: tuple[int, int] | None = None, last: bool = False,
                   limit: int = 500, words: Sequence[str] = (),
                   by_time: bool = False) -> EntryPage:
        """A page of a session's entries in ``seq`` order, read by key (never by offset): the
        first ``limit``, the ``limit`` after ``after`` (the last row's ``(seq, id)``), or with
        ``last`` the last ``limit``. ``words``: only entries whose kind or agent contains
        every word (case-insensitively), as a table's ``/`` filter matches. The page says how
        many matching entries come before it and how many match in all. ``by_time``: a page
        that holds every matching entry is interleaved by time, as ``entries(by_time=True)``
        (a longer one stays in seq order: the time order is not a key to page by)."""
        with self.read() as conn, orm(conn) as s:  # not ``session()``: it counts every entry
            exact = s.get(SessionRow, session_id)
        sid = exact.id if exact is not None else self.session(session_id).id
        where: list[Any] = [Entry.session_id == sid]
        if agent:
            with self.read() as conn, orm(conn) as s:
                agents = s.exec(select(Entry.agent).where(Entry.session_id == sid)
                                .distinct()).all()
            where.append(Entry.agent == resolve_agent(agent, tuple(agents),
                                                      f"session {sid[:8]}"))
        haystack = func.lower(col(Entry.kind) + " " + col(Entry.agent))
        for word in words:
            where.append(haystack.contains(word.lower(), autoescape=True))
        seq, eid = col(Entry.seq), col(Entry.id)
        query = select(Entry).where(*where)
        if after is not None:  # (seq is unique in a session: the id only names the row)
            query = query.where(seq > after[0])
        query = (query.order_by(seq.desc()) if last and after is None
                 else query.order_by(seq)).limit(int(limit))
        with self.read() as conn, orm(conn) as s:
            rows = [entry_info(e) for e in s.exec(query).all()]
            if last and after is None:
                rows.reverse()
            total = int(s.exec(select(func.count(eid)).where(*where)).one())
            before = 0
            if rows:
                first = rows[0]
                before = int(s.exec(select(func.count(eid)).where(*where, seq < first.seq)).one())
        if by_time and before == 0 and len(rows) == total:
            rows = by_time_order(rows)
        return EntryPage(rows, before, total)

    def _get(self, model: type[_Row], key: Any, missing: str) -> _Row:
        """The row of ``model`` with primary key ``key``; ``NotFound(missing)`` if none."""
        with self.read() as conn, orm(conn) as s:
            row = s.get(model, key)
        if row is None:
            raise NotFound(missing)
        return row

    def entry(self, entry_id: int) -> EntryInfo:
        return entry_info(self._get(Entry, entry_id, f"no entry {entry_id}"))

    def memories(self) -> list[MemoryInfo]:
        with self.read() as conn, orm(conn) as s:
            rows = s.exec(select(Memory).order_by(col(Memory.type), col(Memory.name))).all()
        return [memory_info(m) for m in rows]

    def memory(self, memory_id: int) -> MemoryInfo:
        return memory_info(self._get(Memory, memory_id, f"no memory {memory_id}: "
                                     "`lca-tui memories` lists them"))

    def reveal_secret(self, memory_id: int, actor: str | None = None) -> str:
        """A secret (or any) memory's text for a person who asked to see it: the reveal is an
        audit event (who, which memory, when — never the text)."""
        body = self.memory(memory_id).body
        with self.write() as conn:
            self.audit_in(conn, "reveal-secret", "memory", [memory_id], {}, actor=actor)
        return body

    # -- search ----------------------------------------------------------------------------
    def search(self, query: str, limit: int = 10, mode: str = "hybrid") -> list[SearchHit]:
        """Lexical (FTS5 BM25), semantic (vector KNN) or both blended 0.7 cos + 0.3 lex.

        A probe: it writes nothing, no trace.
        """
        from store.core.search import search

        return search(self, query, limit, mode)

    # -- writes ----------------------------------------------------------------------------
    def append_entries(self, session: NewSession, entries: list[NewEntry], defer: bool = False
                       ) -> list[int]:
        """Harness API: append ``NewEntry`` rows to ``session`` (a ``NewSession``); returns
        the ids of entries added (already-present ones are skipped by idempotency key).

        ``defer=True`` stores them without embedding: searchable by FTS at once, embedded
        later by ``embed_waiting`` (the daemon, a checkpoint)."""
        from store.core.writes import embed_new, upsert_session, write_entries

        indexer = None if defer else self.indexer()
        prepared = None
        if indexer is not None:
            with self.read() as conn:
                prepared = embed_new(conn, entries, indexer)
        with self.write() as conn:
            upsert_session(conn, session, self.writer, self.writer_version)
            result = write_entries(conn, session.id, entries, indexer, self.writer,
                                   self.writer_version, prepared, defer=defer,
                                   detector=self.detector())
        return result.entry_ids

    def hook_runs(self, limit: int = 10) -> list[HookRunInfo]:
        """The latest ``limit`` hook runs recorded (``lca-tui hook``), newest first."""
        from sqlalchemy import select as core_select  # sqlmodel's select types ORM rows only

        h = _HOOK_RUN.c
        with self.read() as conn:
            rows = conn.execute(core_select(h.id, h.ts, h.event, h.status, h.via, h.duration_ms,
                                            h.entries_added, h.injected, h.error)
                                .order_by(h.id.desc()).limit(limit)).all()
        return [HookRunInfo(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), r[5],
                            int(r[6] or 0), int(r[7] or 0), r[8]) for r in rows]

    def waiting(self, session_id: str | None = None) -> int:
        """Entries stored but waiting for embedding (of one session, or all)."""
        from store.core.waiting import waiting_count

        with self.read() as conn:
            return waiting_count(conn, session_id)

    def embed_waiting(self, session_id: str | None = None, limit: int | None = None,
                      progress: Progress | None = None) -> EmbedReport:
        """Embed entries waiting in the queue (of one session, or all; at most ``limit``);
        returns an ``EmbedReport``."""
        from store.core.waiting import embed_waiting

        return embed_waiting(self, session_id, limit, progress)
