"""The privacy operations ``store.facade.Store`` exposes: preview, erase, redact, mark,
tombstones.

An erasure or redaction runs: closure (a read) → one write transaction (``apply``) → the
process drops its in-memory vector copy → export files deleted when asked → the WAL
checkpointed with TRUNCATE → the probes (``verify``) → if the database file still holds bytes
of the text, VACUUM and the raw-byte probe again → the verification stored with the tombstone.
Other processes (the app) follow through ``PRAGMA data_version`` and ``latest_tombstone``.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, update
from sqlmodel import col, select

from store.core import filejournal
from store.core.db import checkpoint_truncate, orm, vacuum
from store.core.actor import resolve as resolve_actor
from store.core.models import Entry, Memory, Session
from store.core.timeutil import now_iso
from store.privacy import apply, exports
from store.privacy.closure import Closure, ExportHit, compute
from store.privacy.models import ErasureProbe, ErasureVerification, Tombstone
from store.privacy.scope import Matcher, Scope, ScopeError
from store.privacy.sets import scan
from store.privacy.tables import in_json, relational_tables, rowid
from store.privacy.verify import Probe, Verification, raw_probe, run_probes
from store.core.plan import confirm_unchanged
from store.core.vocab import SENSITIVITIES, Progress

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

STAGES = ("closure", "change", "checkpoint", "verify", "record")


def scope_from(**given: Any) -> Scope:
    """The one scope among ``session``, ``entry``, ``memory``, ``match``, ``regex``."""
    named = {k: v for k, v in given.items() if v is not None}
    if len(named) != 1:
        raise ScopeError("name exactly one scope: --session ID, --entry ID, --memory ID, "
                         "--match TEXT or --regex RE")
    kind, value = next(iter(named.items()))
    return Scope(kind, str(value))


@dataclass
class PrivacyResult:
    action: str
    scope_kind: str
    closure: dict[str, int]
    exports: list[str]
    verification: Verification
    tombstone_id: int | None
    exports_deleted: list[str] = field(default_factory=list)
    review: dict[int, str] = field(default_factory=dict)
    duration_ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"closure": self.closure, "exports": self.exports,
                "verification": self.verification.to_json(),
                "tombstone_id": self.tombstone_id}


def preview(store: Store, scope: Scope, action: str = "erase") -> Closure:
    """The closure only: what an erasure (or redaction) would touch. Nothing changes."""
    return compute(store, scope, action)


def run(store: Store, scope: Scope, action: str, *, delete_exports: bool = False,
        actor: str | None = None, reason: str | None = None,
        progress: Progress | None = None, step: apply.Step | None = None,
        closure: Closure | None = None, after_tombstone: int | None = None) -> PrivacyResult:
    """Erase or redact ``scope``, then verify; see the module docstring. ``closure``: the
    preview the person confirmed — the closure is computed again and the action refuses
    (``PlanStale``, nothing changed) unless it lists exactly the same records.
    ``after_tombstone``: this erases what an earlier one left (its verification failed); when
    every probe passes here, the earlier tombstone's FAIL is cleared by a verification linked
    to this one."""
    store.refuse_if_read_only("erasing" if action == "erase" else "redacting")
    if after_tombstone is not None:
        with store.read() as conn, orm(conn) as s:
            if s.get(Tombstone, int(after_tombstone)) is None:
                raise ScopeError(f"--after-tombstone {after_tombstone}: no such tombstone "
                                 "(`lca-tui tombstones` lists them)")
    started = time.perf_counter()
    tick = progress or (lambda _stage, _done, _total: None)
    tick("closure", 0, len(STAGES))
    c = compute(store, scope, action)
    if closure is not None:  # act on what was confirmed, if the store still holds just that
        confirm_unchanged(closure.digest(), c.digest())
        c = closure
    tick("change", 1, len(STAGES))
    tombstone_id = None
    filejournal.finish(store)
    if not c.empty:
        change = apply.erase if action == "erase" else apply.redact
        tombstone_id = change(store, c, actor=actor, reason=reason, step=step)
        if c.journal is not None:  # the bound directory's files, after the commit
            try:
                filejournal.play(store, c.journal)
            except OSError:
                pass  # left pending for the next writer; the memory-dir probe names the files
    from store.recall.pool import drop_cache

    drop_cache(store)
    deleted: list[str] = []
    left = c.exports
    if delete_exports and c.exports:
        deleted, failed = exports.delete_files(store, c.exports)
        left = [ExportHit(e.export_id, e.path, [f for f in e.files if f in failed])
                for e in c.exports]
    if tombstone_id is not None:  # what is left can be deleted later, by tombstone
        exports.remember(store, tombstone_id, left)
    tick("checkpoint", 2, len(STAGES))
    if store.on_server:
        # a server: the touched tables rebuilt (VACUUM FULL: their files rewritten without
        # the freed tuples); its WAL is the server's (the raw probe says what it keeps)
        from store.core.db import scrub_server

        touched = sorted({*c.delete, *c.scrub} & set(c.tables)) + ["chunk_vec"]
        c.rebuilt = scrub_server(store.engine, touched)
        wal_ok, wal_left = True, 0
    else:
        wal_ok, wal_left = checkpoint_truncate(store.engine)
    tick("verify", 3, len(STAGES))
    verification, rem = run_probes(store, c, wal_ok, wal_left, tombstone_id=tombstone_id)
    raw = verification.probes[-1]
    if not raw.passed and wal_ok and not store.on_server:  # bytes left in free space
        vacuum(store.engine)
        wal_ok, wal_left = checkpoint_truncate(store.engine)
        verification.probes[-1] = raw_probe(store, c, rem, wal_ok, wal_left, vacuumed=True)
        verification.passed = all(p.passed for p in verification.probes)
    tick("record", 4, len(STAGES))
    if tombstone_id is not None:
        verification.id = record(store, tombstone_id, verification)
        from store.privacy.terms import remember_terms

        # what a later re-verification needs to run the lexical probes without the text
        # (words found nowhere else after the change; a one-word match is itself such a word)
        words = list(rem.distinctive)
        if c.scope.kind == "match" and re.fullmatch(r"\w+", c.scope.value.strip()):
            words.append(c.scope.value.strip())
        remember_terms(store, tombstone_id, words)
        if after_tombstone is not None:
            clear(store, int(after_tombstone), tombstone_id, verification)
    tick("done", len(STAGES), len(STAGES))
    return PrivacyResult(action, scope.kind, c.counts(), c.export_files(), verification,
                         tombstone_id, deleted, dict(c.review),
                         round((time.perf_counter() - started) * 1000.0, 1))


def record(store: Store, tombstone_id: int, v: Verification) -> int:
    """Store a verification, probe by probe, and set the tombstone's ``verified``."""
    now = now_iso()
    w, wv = store.writer, store.writer_version
    with store.write() as conn, orm(conn) as s:
        row = ErasureVerification(tombstone_id=tombstone_id, ts=now, passed=int(v.passed),
                                  duration_ms=v.duration_ms, writer=w, writer_version=wv,
                                  created_at=now)
        s.add(row)
        s.flush()
        assert row.id is not None
        for i, p in enumerate(v.probes, start=1):
            s.add(ErasureProbe(verification_id=row.id, seq=i, name=p.name,
                               passed=int(p.passed), detail=p.detail, writer=w,
                               writer_version=wv, created_at=now))
        tomb = s.get(Tombstone, tombstone_id)
        if tomb is not None:
            tomb.verified = int(v.passed)
            s.add(tomb)
        s.flush()
        return row.id


def clear(store: Store, earlier: int, later: int, v: Verification) -> int | None:
    """Link the verification of erasure ``later`` (which erased what ``earlier`` left) to
    tombstone ``earlier``: when it passed every probe, a verification of ``earlier`` that
    says so (``cleared-by``) is recorded and the earlier FAIL is cleared. Returns its id."""
    if not v.passed:
        return None
    names = ", ".join(p.name for p in v.probes)
    probe = Probe("cleared-by", True, f"tombstone {later} erased what this one left: its "
                  f"verification {v.id} passed every probe ({names})")
    return record(store, earlier, Verification(True, [probe], v.duration_ms))


# -- tombstones ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TombstoneInfo:
    id: int
    ts: str
    action: str
    scope_kind: str
    counts: dict[str, int]
    actor: str
    reason: str | None
    verified: bool | None
    probes: tuple[tuple[str, bool, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "ts": self.ts, "scope_kind": self.scope_kind,
                "counts": self.counts, "actor": self.actor}


def tombstones(store: Store, with_probes: bool = False) -> list[TombstoneInfo]:
    """Every tombstone, newest first (with its latest verification's probes if asked)."""
    out = []
    with store.read() as conn, orm(conn) as s:
        for t in s.exec(select(Tombstone).order_by(col(Tombstone.id).desc())).all():
            probes: tuple[tuple[str, bool, str], ...] = ()
            if with_probes:
                latest = s.exec(select(ErasureVerification)
                                .where(ErasureVerification.tombstone_id == t.id)
                                .order_by(col(ErasureVerification.id).desc())).first()
                if latest is not None:
                    probes = tuple((p.name, bool(p.passed), p.detail) for p in s.exec(
                        select(ErasureProbe).where(ErasureProbe.verification_id == latest.id)
                        .order_by(col(ErasureProbe.seq))).all())
            try:
                counts = json.loads(t.counts or "{}")
            except ValueError:
                counts = {}
            out.append(TombstoneInfo(int(t.id or 0), t.ts, t.action, t.scope_kind, counts,
                                     t.actor, t.reason,
                                     None if t.verified is None else bool(t.verified), probes))
    return out


def latest_tombstone(store: Store) -> int:
    """The newest tombstone id (0 when none): a long-lived reader that sees it move drops
    what it keeps in memory (its vector copy, the text it shows)."""
    with store.read() as conn:
        return int(conn.execute(select(func.coalesce(func.max(col(Tombstone.id)), 0)))
                   .scalar_one() or 0)


# -- sensitivity -----------------------------------------------------------------------------
def mark(store: Store, scope: Scope, level: str, actor: str | None = None) -> dict[str, int]:
    """Set the sensitivity of what ``scope`` names: a session (its default and its entries),
    an entry, a memory, or every entry and memory holding the text. Returns counts."""
    if level not in SENSITIVITIES:
        raise ScopeError(f"--as must be one of {', '.join(SENSITIVITIES)}, got {level!r}")
    counts = {"session": 0, "entry": 0, "memory": 0}
    with store.write() as conn:
        if scope.kind == "session":
            sid = store.session(scope.value).id
            counts["session"] = conn.execute(
                update(Session).where(col(Session.id) == sid)
                .values(sensitivity=level)).rowcount or 0
            counts["entry"] = conn.execute(
                update(Entry).where(col(Entry.session_id) == sid)
                .values(sensitivity=level)).rowcount or 0
        elif scope.kind in ("entry", "memory"):
            model = Entry if scope.kind == "entry" else Memory
            counts[scope.kind] = conn.execute(
                update(model).where(col(model.id) == int(scope.value))
                .values(sensitivity=level)).rowcount or 0
            if not counts[scope.kind]:
                from store.core.errors import NotFound

                raise NotFound(f"no {scope.kind} with id {scope.value}")
        else:
            # the same content columns an erasure matches (store.privacy.content)
            found = scan(conn, relational_tables(conn), Matcher(scope),
                         only=frozenset({"entry", "memory"}))
            for model in (Entry, Memory):
                rows = sorted(found.get(str(model.__tablename__), {}))
                if rows:
                    counts[str(model.__tablename__)] = conn.execute(
                        update(model).where(in_json(rowid(model), json.dumps(rows)))
                        .values(sensitivity=level)).rowcount or 0
        store.audit_in(conn, f"mark-{level}", scope.kind, [], counts, actor=actor)
    return counts


def unmark_detected(store: Store, scope: Scope, level: str | None = None,
                    actor: str | None = None) -> dict[str, int]:
    """A false positive of the secrets detector: the entries and memories of ``scope`` it
    marked ``secret`` go back to ``level`` (default: an entry its session's default, a
    memory ``public``), their findings are stamped dismissed (a later ``scan-secrets`` or
    re-write leaves them be) and the change is audited. Records the detector did not mark
    are left as they are. Their index keeps the placeholders it was written with."""
    from store.core.detected import dismiss

    if level is not None and level not in SENSITIVITIES:
        raise ScopeError(f"--as must be one of {', '.join(SENSITIVITIES)}, got {level!r}")
    counts = {"entry": 0, "memory": 0}
    changed: dict[str, list[int]] = {}
    with store.write() as conn:
        for table, ids in _scope_ids(store, conn, scope).items():
            hit = dismiss(conn, table, ids, resolve_actor(actor, store.settings))
            changed[table] = hit
            if not hit:
                continue
            model = Entry if table == "entry" else Memory
            if table == "entry" and level is None:
                default = (select(Session.sensitivity).where(
                    col(Session.id) == col(Entry.session_id)).scalar_subquery())
                values: dict[str, Any] = {"sensitivity": default}
            else:
                values = {"sensitivity": level or "public"}
            counts[table] = conn.execute(
                update(model).where(in_json(rowid(model), json.dumps(hit)),
                                    col(model.sensitivity) == "secret")
                .values(**values)).rowcount or 0
        store.audit_in(conn, "unmark-detected", scope.kind,
                       [f"{t} {i}" for t, ids in changed.items() for i in ids], counts,
                       actor=actor)
    return counts


def _scope_ids(store: Store, conn: Any, scope: Scope) -> dict[str, list[int]]:
    """The entry and memory ids a scope names (a session: its entries)."""
    if scope.kind == "session":
        sid = store.session(scope.value).id
        return {"entry": [int(i) for i in conn.execute(select(Entry.id).where(
            col(Entry.session_id) == sid)).scalars()], "memory": []}
    if scope.kind in ("entry", "memory"):
        model = Entry if scope.kind == "entry" else Memory
        if conn.execute(select(model.id).where(col(model.id) == int(scope.value))).first() \
                is None:
            from store.core.errors import NotFound

            raise NotFound(f"no {scope.kind} with id {scope.value}")
        return {scope.kind: [int(scope.value)]}
    found = scan(conn, relational_tables(conn), Matcher(scope),
                 only=frozenset({"entry", "memory"}))
    return {t: sorted(int(i) for i in found.get(t, {})) for t in ("entry", "memory")}
