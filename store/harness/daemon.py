"""``lca-tui serve``: a local daemon that keeps one store, its vector copy and the embedding
model open, embeds waiting entries in the background, and answers hooks and recalls over a
Unix socket (``paths.socket_path``: owner-only folder, socket mode 0600, and every peer's
uid checked with ``SO_PEERCRED``).

One JSON request per connection, one JSON reply (``client``). Operations: ``status``,
``hook`` (``{"event", "stdin"}``: what ``lca-tui hook`` would print; with ``"reply": "raw"``
a successful one is answered ``ok``, the output's length in bytes and a newline, then the
output, and the run's ``hook_run`` row is written after it), ``recall`` (a
``RecallResult`` as JSON; ``writer`` / ``writer_version`` name who its trace records, an
MCP client), ``statusline`` (``statusline.summary``), ``stop``. One daemon per store: a lock
file next to the socket holds its pid, so a second one refuses to start and a stale socket is
replaced safely.

Background embedding takes a few entries at a time and yields while a hook or recall is being
answered, so a prompt never waits behind a batch it does not need. Half a second after a hook,
once no request is running, the daemon also reads the hook's session transcripts again
(``catch_up``): what Claude Code writes after its Stop hook is then stored before the user's
next prompt, whose hook finds nothing left to import.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import socketserver
import struct
import threading
import time
from dataclasses import asdict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from store.core.vocab import Progress
from store.harness.client import ACK, lock_path, running_pid
from store.harness.failures import log_failure
from store.harness.paths import (
    StoreRef,
    on_server,
    resolve_store,
    socket_path,
    store_key,
    store_name,
)

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store
    from store.core.settings import Settings

log = logging.getLogger("lca-tui.serve")

WRITER = "lca-tui:serve"
MAX_REQUEST = 32 * 1024 * 1024
ROUND = 16  # entries embedded per background round: small, so hooks never wait long
POLL_S = 5.0  # how often an idle daemon looks for entries another process queued
# After a hook, the daemon reads the session's transcripts again once it is quiet for this
# long: Claude Code writes a few lines after the Stop hook (its summary, the turn's
# duration, file snapshots), and stored then, they are not the next prompt's to import.
CATCH_UP_S = 0.5
FOLLOW_S = 6 * 3600.0  # a session no hook has named for this long is no longer followed
CATCH_UP_RETRIES = 3  # rounds tried again (every POLL_S) after a failure, until the next hook
CARRIED = frozenset({"identity.name", "store.read_only", "store.url"})
"""Settings a request carries as its own fields (the person, the read-only flag, the store
named), not compared with the daemon's."""
IDENTITY_S = 2.0  # on a server, how often the daemon asks whether its database is the same one


def cache_finder(store: Store) -> Callable[[Any, Any], tuple[Any, Any] | None]:
    """New chunks' nearest indexed neighbours from the store's in-memory vectors (one matrix
    product) rather than one vec0 scan per chunk (~40 ms each at 50,000 chunks); None while
    there is nothing indexed."""
    import numpy as np

    from store.recall.pool import cache_for

    def nearest(conn: Any, vectors: Any) -> tuple[Any, Any] | None:
        cache = cache_for(store)
        with cache.lock:
            cache.sync(conn, store.embedder.name)
            if not len(cache.ids):
                return None
            sims = np.asarray(vectors, dtype=np.float32) @ cache.matrix.T
            best = sims.argmax(axis=1)
            return cache.ids[best], sims[np.arange(len(best)), best]

    return nearest


class AlreadyRunning(RuntimeError):
    """Another daemon serves this store (or is loading to)."""


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        daemon: Daemon = self.server.daemon  # type: ignore[attr-defined]
        sock = self.request
        try:
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                    struct.calcsize("3i"))
            _pid, uid, _gid = struct.unpack("3i", creds)
        except OSError:
            uid = -1
        if uid != os.getuid():
            self._reply({"ok": False, "error": "refused: another user"})
            return
        raw = self.rfile.read(MAX_REQUEST + 1)
        if len(raw) > MAX_REQUEST:
            self._reply({"ok": False, "error": "request too large"})
            return
        try:
            message = json.loads(raw)
            if not isinstance(message, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            self._reply({"ok": False, "error": f"bad request: {exc}"})
            return
        if message.get("ack"):  # the client tells a hung daemon from a busy one by this
            try:
                self.wfile.write(ACK)
            except OSError:
                return  # the client gave up already: do not run what it no longer waits for
        reply = daemon.dispatch(message)
        then = reply.pop("_then", None) or []  # counted by the daemon (will_write) already
        try:
            if message.get("reply") == "raw" and reply.get("ok") and "stdout" in reply:
                # lca_tui/hook_client.py, which has no JSON parser loaded: "ok", the output's
                # length and a newline, then the output (it stops reading there)
                body = str(reply["stdout"]).encode("utf-8", "replace")
                with contextlib.suppress(OSError):
                    self.wfile.write(b"ok %d\n" % len(body) + body)
            else:
                self._reply(reply)
        finally:
            try:
                for step in then:  # the hook_run record: after the answer left
                    step()
            finally:
                daemon.written(then)

    def _reply(self, reply: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):  # the client gave up waiting: nothing to tell it
            self.wfile.write(json.dumps(reply, ensure_ascii=False, default=str).encode("utf-8")
                             + b"\n")


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    daemon: Daemon


class Daemon:
    """The warm process behind ``lca-tui serve`` for one store."""

    def __init__(self, store_path: StoreRef, settings: Settings | None = None) -> None:
        self.store_path: StoreRef = resolve_store(store_path)
        """The store file's absolute path, or the server's URL as given (it opens the
        store; ``shown`` is what is said of it)."""
        self.shown = store_name(self.store_path)
        self.sock = socket_path(self.store_path)
        self.settings = settings
        self.base_settings: Settings | None = None
        """The settings this daemon loaded (before its own ``serve`` overrides): what a
        request's caller's settings are compared with."""
        self.store: Store | None = None
        self.server: _Server | None = None
        self.started = time.time()
        self.counts = {"requests": 0, "hooks": 0, "recalls": 0, "searches": 0, "approvals": 0,
                       "embedded_entries": 0, "embedded_chunks": 0, "errors": 0,
                       "caught_up_entries": 0}
        self.last_error: str | None = None
        self._active = 0
        self._active_lock = threading.Lock()
        self.embed_lock = threading.Lock()
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self._lock_fd: int | None = None
        self._embedder_thread: threading.Thread | None = None
        self._identity: tuple[int, int] | str | None = None
        """The store file's (device, inode); on a server, its database's identity
        (``db.database_identity``), looked at again at most every ``IDENTITY_S``."""
        self._identity_seen = 0.0
        # one import of a session's transcripts at a time (a hook's, or the catch-up's): two
        # readers of one transcript would count its skipped lines twice. One lock a session,
        # so that no session waits for another's backlog.
        self._import_locks: dict[str, threading.Lock] = {}
        self._import_locks_guard = threading.Lock()
        # hook_run rows still to write after their answer left (the handler's "_then"):
        # close() waits for them before it closes the store
        self._unwritten = 0
        self._unwritten_cv = threading.Condition()
        # session id → (its transcripts, when a hook last named it): read again after hooks
        self.followed: dict[str, tuple[dict[str, Any], float]] = {}
        self.catch_up_at: float | None = None  # time.monotonic() of the next catch-up
        self._sizes: dict[str, tuple[int, ...]] = {}  # a session's file sizes when last read
        self._catch_up_tries = 0

    # -- start and stop ----------------------------------------------------------------
    def _take_lock(self) -> None:
        fd = os.open(lock_path(self.sock), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(fd)
            pid = running_pid(self.sock)
            raise AlreadyRunning(f"a daemon already serves {self.shown}"
                                 + (f" (pid {pid})" if pid else "")) from exc
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        self._lock_fd = fd

    def open(self, progress: Progress | None = None) -> None:
        """Take the lock, open the store, load the model and the vectors, bind the socket."""
        from store.facade import open_store
        from store.core.settings import Settings
        from store.recall.pool import cache_for

        self._take_lock()
        try:
            base = self.settings or Settings.load()
            self.base_settings = base
            self.store = open_store(self.store_path,
                                    base.with_overrides({"recall.vector_cache": True,
                                                        "store.keep_connections": 4}, "serve"),
                                    writer=WRITER)
            if on_server(self.store_path):
                self._identity = self._database_identity()
                self._identity_seen = time.monotonic()
            else:
                info = os.stat(self.store_path)
                self._identity = (info.st_dev, info.st_ino)
            # One connection held open for the daemon's life: otherwise every request's last
            # connection to close would checkpoint the WAL (measured: half a hook's time).
            self.store.data_version()
            self.store.load_embedder(progress)
            self.store.embedder.embed(["warm up"])
            if progress:
                progress("loading the vectors", 0, 1)
            with self.store.read() as conn:
                cache_for(self.store).sync(conn, self.store.embedder.name)
            self.store.neighbour_finder = cache_finder(self.store)
            if progress:
                progress("loading the vectors", 1, 1)
            self.sock.unlink(missing_ok=True)  # stale: the lock says no daemon owns it
            old_mask = os.umask(0o177)
            try:
                self.server = _Server(str(self.sock), _Handler)
            finally:
                os.umask(old_mask)
            os.chmod(self.sock, 0o600)
            self.server.daemon = self
        except BaseException:
            self.close()
            raise

    def serve_forever(self) -> None:
        """Answer requests until ``stop``; embeds waiting entries meanwhile."""
        assert self.server is not None
        self._embedder_thread = threading.Thread(target=self._embed_loop, name="embedder",
                                                 daemon=True)
        self._embedder_thread.start()
        try:
            self.server.serve_forever(poll_interval=0.2)
        finally:
            self.stopping.set()
            self.wake.set()
            self._embedder_thread.join(timeout=30)
            self.close()

    def stop(self) -> None:
        """Stop serving (from any thread but the one in ``serve_forever``)."""
        self.stopping.set()
        self.wake.set()
        if self.server is not None:
            threading.Thread(target=self.server.shutdown, daemon=True).start()

    def import_lock(self, session_id: str) -> threading.Lock:
        """The lock one import of ``session_id``'s transcripts holds."""
        with self._import_locks_guard:
            return self._import_locks.setdefault(session_id, threading.Lock())

    def will_write(self, steps: list[Callable[[], None]]) -> None:
        """``steps`` (a hook's record) run once its answer left: counted until done."""
        with self._unwritten_cv:
            self._unwritten += len(steps)

    def written(self, steps: list[Callable[[], None]]) -> None:
        with self._unwritten_cv:
            self._unwritten -= len(steps)
            self._unwritten_cv.notify_all()

    def close(self) -> None:
        with self._unwritten_cv:  # every answered hook's row is written before the store closes
            self._unwritten_cv.wait_for(lambda: self._unwritten <= 0, timeout=60)
        if self.server is not None:
            self.server.server_close()
            self.server = None
            with contextlib.suppress(OSError):
                self.sock.unlink()
        if self.store is not None:
            with self.embed_lock:
                self.store.close()
            self.store = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = None

    # -- the store file ------------------------------------------------------------------
    def store_gone(self) -> str | None:
        """Why the daemon can no longer serve its store — the file was deleted, or replaced
        by another (a different inode) — or None while it is the file it opened. Checked
        before every request and background round: a connection opened on a deleted path
        would create an empty, schema-less file there. On a server: the database was dropped
        and another made under its name (an unreachable server is not a reason to stop: the
        request fails, and says why)."""
        if on_server(self.store_path):
            return self._database_replaced()
        try:
            info = os.stat(self.store_path)
        except FileNotFoundError:
            why = "was deleted"
        except OSError as exc:
            why = f"cannot be read ({exc.strerror or exc})"
        else:
            if (info.st_dev, info.st_ino) == self._identity:
                return None
            why = "was replaced by another file"
        return f"the store {self.shown} {why}: the daemon stops"

    def _database_identity(self) -> str | None:
        from store.core import db

        assert self.store is not None
        with self.store.read() as conn:
            return db.database_identity(conn)

    def _database_replaced(self) -> str | None:
        now = time.monotonic()
        if self.store is None or now - self._identity_seen < IDENTITY_S:
            return None
        try:
            found = self._database_identity()
        except Exception:  # noqa: BLE001 - unreachable now: the request itself says so
            return None
        self._identity_seen = now
        if found == self._identity:
            return None
        return (f"the store {self.shown} was replaced by another database of that name: "
                "the daemon stops")

    def _still_serving(self) -> bool:
        """False (and the daemon stopping) once its store file is gone or replaced."""
        gone = self.store_gone()
        if gone is None:
            return True
        if not self.stopping.is_set():
            self.last_error = gone
            log.warning("%s", gone)
            self.stop()
        return False

    # -- requests ------------------------------------------------------------------------
    @contextlib.contextmanager
    def _busy(self) -> Iterator[None]:
        with self._active_lock:
            self._active += 1
        try:
            yield
        finally:
            with self._active_lock:
                self._active -= 1

    def dispatch(self, message: dict[str, Any]) -> dict[str, Any]:
        self.counts["requests"] += 1
        op = message.get("op")
        if op in ("status", "hook", "recall", "search", "approve", "health", "statusline") and \
                not self._still_serving():
            # the client works in-process (where a store at that path is opened, migrated)
            return {"ok": False, "error": "store gone", "detail": self.last_error}
        try:
            if op == "status":
                return self.status()
            if op == "stop":
                self.stop()
                return {"ok": True, "stopping": True}
            if op in ("hook", "recall", "search", "approve", "health"):  # as the person
                from store.core.actor import acting_as

                if message.get("read_only") and op in ("recall", "approve"):  # they write
                    return {"ok": False, "error": f"read-only: {op} writes"}
                with acting_as(message.get("actor"), message.get("account")):
                    if op == "hook":
                        return self._hook(message)
                    if op == "approve":
                        return self._approve(message)
                    if op == "health":
                        return self._health(message)
                    return self._recall(message) if op == "recall" else self._search(message)
            if op == "statusline":
                return self._statusline(message)
            return {"ok": False, "error": f"unknown op {op!r}"}
        except Exception as exc:  # one bad request must not take the daemon down
            self.counts["errors"] += 1
            self.last_error = f"{type(exc).__name__}: {exc}"[:500]
            log.exception("request %s failed", op)
            return {"ok": False, "error": self.last_error}

    def _same_store(self, message: dict[str, Any]) -> bool:
        named = message.get("store")
        if not named:
            return True
        try:
            return store_key(resolve_store(str(named))) == store_key(self.store_path)
        except (OSError, RuntimeError):  # a path that cannot be resolved: not this store
            return False

    def _hook(self, message: dict[str, Any]) -> dict[str, Any]:
        from store.harness.hook import CHECKPOINT_EVENTS, handle_with, parse_payload

        if not self._same_store(message):
            return {"ok": False, "error": "wrong store"}
        assert self.store is not None
        event = str(message.get("event"))
        raw = message.get("stdin")
        self.counts["hooks"] += 1
        later: list[Callable[[], None]] = []
        try:  # read once here for the session's lock and the catch-up (handle_with records
            payload: dict[str, Any] | None = parse_payload(event, str(raw))  # a bad one)
        except (ValueError, RecursionError):
            payload = None
        # the session's import lock only around the hook's import (not its embedding,
        # consolidation, recall): no prompt waits for another session's work
        guard = self.import_lock(str(payload["session_id"])) if payload else None
        try:
            with self._busy():
                if event in CHECKPOINT_EVENTS:
                    with self.embed_lock:  # the background pass must not embed these too
                        out = handle_with(self.store, event, str(raw), "daemon",
                                          guard=guard, later=later)
                else:
                    out = handle_with(self.store, event, str(raw), "daemon", guard=guard,
                                      later=later)
        except BaseException:
            for step in later:  # never lose the run's record
                step()
            raise
        self.will_write(later)
        if payload is not None:
            try:
                self._follow(event, payload)
            except Exception as exc:  # noqa: BLE001 - the hook ran and is recorded: answer
                log.warning("could not follow the hook's session: %s", exc)
        self.wake.set()  # new entries may wait
        # the hook_run record is written once the reply is sent (the handler runs "_then"):
        # a client reading the raw reply has its answer ~2 ms sooner
        return {"ok": True, "stdout": out, "_then": later}

    def _follow(self, event: str, payload: dict[str, Any]) -> None:
        """Remember the hook's session for the catch-up (``CATCH_UP_S`` from now); a session
        that ended, or whose transcript the hook refused, is no longer followed."""
        from store.harness.hook import transcript_files

        sid = str(payload["session_id"])
        try:
            files = transcript_files(payload)
        except Exception:  # noqa: BLE001 - refused (recorded as the hook's failure): dropped
            files = []
        if event == "SessionEnd" or not files:
            self.followed.pop(sid, None)
            return
        self.followed[sid] = ({"session_id": sid,
                               "transcript_path": payload.get("transcript_path")},
                              time.monotonic())
        self._sizes.pop(sid, None)  # read once more whatever the sizes say
        self._catch_up_tries = 0
        self.catch_up_at = time.monotonic() + CATCH_UP_S

    def catch_up(self) -> int:
        """Store what the followed sessions' transcripts gained since they were last read
        (no embedding here: queued, as a hook does); returns the entries added.

        Each session's transcripts are checked as its hooks check them, every time (a path
        refused since is dropped); a session whose files have not changed size since its
        last catch-up is not read. Lines that cannot be stored are logged where
        ``hook_failures`` reads them, as a hook's would be recorded; a session that fails
        does not stop the others, and the round is tried again (``CATCH_UP_RETRIES``)."""
        from store.harness.hook import HookInputError, Outcome, import_new, transcript_files

        assert self.store is not None
        now = time.monotonic()
        added = 0
        failed = False
        for sid, (payload, seen) in list(self.followed.items()):
            if now - seen > FOLLOW_S:
                self.followed.pop(sid, None)
                continue
            try:
                files = transcript_files(payload)
                sizes = tuple(f.stat().st_size if f.exists() else -1 for f in files)
                if self._sizes.get(sid) == sizes:
                    continue
                outcome = Outcome("catch-up", sid)
                with self.import_lock(sid):
                    problems = import_new(self.store, outcome, files)
                self._sizes[sid] = sizes
                added += outcome.entries_added
                if problems:
                    log_failure("catch-up", self.shown,
                                f"{len(problems)} transcript line(s) could not be stored "
                                f"while catching up after a hook; first: {problems[0]}",
                                sid, via="daemon")
            except Exception as exc:  # noqa: BLE001 - say so, go on with the others
                failed = True
                self.counts["errors"] += 1
                self.last_error = f"catch-up: {type(exc).__name__}: {exc}"[:500]
                log.warning("catching up with session %s failed: %s", sid, exc)
                if not isinstance(exc, HookInputError):
                    continue
                self.followed.pop(sid, None)  # its transcript is refused now
                log_failure("catch-up", self.shown, f"no longer following the "
                            f"session: {exc}", sid, via="daemon")
        if failed and self._catch_up_tries < CATCH_UP_RETRIES:
            self._catch_up_tries += 1
            self.catch_up_at = time.monotonic() + POLL_S
        self.counts["caught_up_entries"] += added
        return added

    def _recall(self, message: dict[str, Any]) -> dict[str, Any]:
        from store.recall.run import recall

        if not self._same_store(message):
            return {"ok": False, "error": "wrong store"}
        assert self.store is not None
        writer = message.get("writer")
        who = ((str(writer), str(message.get("writer_version") or ""))
               if isinstance(writer, str) and writer else None)
        overrides = self._overrides(message, "recall.")
        if overrides is None:
            return {"ok": False, "error": "a --set the daemon cannot apply per request"}
        self.counts["recalls"] += 1
        with self._busy():
            result = recall(self.store, str(message.get("query") or ""),
                            message.get("role"), message.get("project"),
                            str(message.get("channel") or "private"),
                            bool(message.get("historical")), writer=who,
                            overrides=overrides or None)
        reply: dict[str, Any] = {"ok": True, "result": result.to_json()}
        if message.get("with_trace"):  # what `lca-tui recall` prints, without opening the store
            reply["trace"] = asdict(result.trace)
        return reply

    def _requested(self, message: dict[str, Any]) -> dict[str, Any]:
        """The settings this request asks for that differ from this daemon's: its ``--set``
        pairs, then every setting the caller's own config file and environment give a value
        other than this process's as it loaded them (``settings``: the caller's whole
        ``Settings``; ``CARRIED`` ones travel as the request's person and read-only flag, the
        app's do not matter here); a request with no ``settings`` (the hook client) asks for
        its ``--set`` alone."""
        import json

        from store.core.settings import parse_assignment

        given = message.get("set") or []
        pairs: dict[str, Any] = (dict(parse_assignment(str(a)) for a in given)
                                 if isinstance(given, list) else {"": ""})
        theirs = message.get("settings")
        ours = self.base_settings.as_dict() if self.base_settings is not None else {}
        if isinstance(theirs, dict):
            for name, value in theirs.items():
                if name in CARRIED or name.startswith("app."):
                    continue
                if name not in pairs and (name not in ours or json.dumps(
                        ours[name], sort_keys=True, default=str) != json.dumps(
                        value, sort_keys=True, default=str)):
                    pairs[str(name)] = value
        return pairs

    def _overrides(self, message: dict[str, Any], prefix: str) -> dict[str, Any] | None:
        """The request's ``--set NAME=VALUE`` (the caller's, never this process's) as the
        per-call overrides of an operation that reads only ``prefix`` settings per call,
        typed as ``Settings`` types them; None when one names another setting (this store
        was opened with this daemon's settings: the caller works in-process instead)."""
        pairs = self._requested(message)
        if not pairs:
            return {}
        from store.core.settings import Settings

        if not all(name.startswith(prefix) for name in pairs):
            return None
        typed = Settings.load(pairs)  # a bad value: SettingsError, the reply's error
        return {name[len(prefix):]: typed[name] for name in pairs}

    def _approve(self, message: dict[str, Any]) -> dict[str, Any]:
        """``lca-tui approve`` answered warm: its verify step embeds with the loaded model.
        The decision is recorded as the caller's (``dispatch`` runs it ``acting_as`` the
        request's person); any ``--set`` runs it in the caller's process instead."""
        from store.governance.apply import approve

        if not self._same_store(message):
            return {"ok": False, "error": "wrong store"}
        assert self.store is not None
        if self._overrides(message, "\0") != {}:  # no --set applies per request here
            return {"ok": False, "error": "a --set the daemon cannot apply per request"}
        self.counts["approvals"] += 1
        with self._busy():
            info = approve(self.store, int(message["proposal_id"]), message.get("as"),
                           message.get("reason"))
        self.wake.set()  # a memory was written: its chunk may wait for embedding
        return {"ok": True, "info": asdict(info)}

    def _health(self, message: dict[str, Any]) -> dict[str, Any]:
        """``lca-tui health`` answered warm (its modules imported, the model loaded): the scan
        as ``to_json`` gives it, stored as the caller's scan (its ``store.writer``) unless
        ``--no-save`` or ``--read-only``, and the rows of each signal it asked to ``show``.
        Its ``--set`` apply per request when each names a ``health.*`` threshold (read
        through the scan's settings); any other runs it in the caller's process."""
        from store.core.base import writer_version_for
        from store.health.drill import describe
        from store.health.records import view_to_json
        from store.health.registry import specs
        from store.health.scan import Save, scan

        if not self._same_store(message):
            return {"ok": False, "error": "wrong store"}
        assert self.store is not None
        pairs = self._requested(message)
        if not all(name.startswith("health.") for name in pairs):
            return {"ok": False, "error": "a --set the daemon cannot apply per request"}
        settings = self.store.settings.with_overrides(pairs)  # a bad value: the reply's error
        known = {s.name for s in specs()}
        if any(str(name) not in known for name in message.get("show") or []):
            # before any scan is stored: the caller's own check says which, as without us
            return {"ok": False, "error": "an unknown signal to show"}
        writer = str(settings["store.writer"])
        save: Save = "never" if message.get("no_save") or message.get("read_only") \
            else "always"
        with self._busy():
            result = scan(self.store, save=save, settings=settings,
                          writer=(writer, writer_version_for(writer, None)))
            shown = {str(name): [view_to_json(v) for v in describe(
                self.store, result.signal(str(name)).offending)]
                for name in message.get("show") or []}
        return {"ok": True, "result": result.to_json(), "shown": shown}

    def _search(self, message: dict[str, Any]) -> dict[str, Any]:
        """``lca-tui search`` answered warm (model and vectors loaded): the hits as records."""
        if not self._same_store(message):
            return {"ok": False, "error": "wrong store"}
        assert self.store is not None
        overrides = self._overrides(message, "search.")  # search reads search.limit only
        if overrides is None:
            return {"ok": False, "error": "a --set the daemon cannot apply per request"}
        self.counts["searches"] += 1
        limit = message.get("limit") or overrides.get("limit") or \
            self.store.settings["search.limit"]
        with self._busy():
            hits = self.store.search(str(message.get("query") or ""), int(limit),
                                     str(message.get("mode") or "hybrid"))
        return {"ok": True, "hits": [h.to_json() for h in hits]}

    def _statusline(self, message: dict[str, Any]) -> dict[str, Any]:
        from store.health.statusline import render, summary

        if not self._same_store(message):
            return {"ok": False, "error": "wrong store"}
        assert self.store is not None
        session = message.get("session_id")
        found = summary(self.store, str(session) if session else None)
        return {"ok": True, "result": found, "line": render(found)}

    def status(self) -> dict[str, Any]:
        assert self.store is not None
        embedder = self.store.embedder
        return {"ok": True, "pid": os.getpid(), "store": self.shown,
                "socket": str(self.sock), "started_at": time.strftime(
                    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
                "uptime_s": round(time.time() - self.started, 1), "model": embedder.name,
                "degraded": bool(embedder.degraded), "waiting": self.store.waiting(),
                "counts": dict(self.counts), "last_error": self.last_error}

    # -- background embedding --------------------------------------------------------------
    def _embed_loop(self) -> None:
        while not self.stopping.is_set():
            if not self._still_serving():
                return
            if self._active:
                time.sleep(0.05)
                continue
            store = self.store
            if store is None:
                return
            try:
                due = self.catch_up_at
                if due is not None and time.monotonic() >= due:
                    self.catch_up_at = None
                    self.catch_up()
                    continue
                waiting = store.waiting()
                if not waiting:
                    left = POLL_S if due is None else max(0.0, due - time.monotonic())
                    self.wake.wait(min(POLL_S, left))
                    self.wake.clear()
                    continue
                with self.embed_lock:
                    if self.stopping.is_set():
                        return
                    report = store.embed_waiting(limit=ROUND)
                self.counts["embedded_entries"] += report.entries
                self.counts["embedded_chunks"] += report.chunks
            except Exception as exc:  # keep serving; say why embedding stalls
                self.counts["errors"] += 1
                self.last_error = f"embedding: {type(exc).__name__}: {exc}"[:500]
                log.exception("background embedding failed")
                self.stopping.wait(POLL_S)


def serve(store_path: StoreRef, settings: Settings | None = None,
          progress: Progress | None = None,
          ready: Callable[[Daemon], None] | None = None) -> None:
    """Run a daemon for ``store_path`` in this process until it is stopped (``stop`` request
    or SIGTERM/SIGINT in the main thread)."""
    import signal

    daemon = Daemon(store_path, settings)
    daemon.open(progress)
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: daemon.stop())
    if ready:
        ready(daemon)
    daemon.serve_forever()
