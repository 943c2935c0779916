"""Finishing an erasure or redaction that was interrupted after its commit.

The change itself is one transaction; the WAL checkpoint, the VACUUM and the stored
verification come after it. A crash (``kill -9``, power loss) in between leaves a tombstone
with no verification (``verified`` NULL), and running the same erase again finds an empty
closure. ``verify`` finishes the job for such tombstones (or one named): drops this process's
vector copy, checkpoints the WAL with TRUNCATE, VACUUMs (it cannot tell whether free pages
hold the text, so it always rebuilds the file), checkpoints again, runs the probes below and
records them like any verification.

The erased text is not kept anywhere (that is the point), so the probes that search for it
(substring, FTS phrases, semantic, probe recalls, raw bytes by content) cannot run again. What
can, and can fail:

- ``rows``: no live entry, session, memory or recall trace carries one of the tombstone's
  erasure fingerprints (keyed hashes of what was erased), and no foreign key dangles;
- ``index``: no vector and no FTS row is left whose chunk is gone;
- ``exports``: none of the export files the tombstone listed is still on disk;
- ``raw-bytes``: the WAL is truncated to zero bytes and the database file has no free pages
  after the VACUUM, with ``secure_delete`` on: deleted bytes have nowhere left to be;
- ``fts`` and ``substring`` again, without the text: an erasure keeps keyed fingerprints
  (HMAC with the store's secret, ``store_meta`` key ``privacy.terms.<tombstone>``) of the
  erased text's distinctive words and of their FTS stems; every remaining FTS term and every
  word of every content column is fingerprinted the same way and compared.

A re-verification never turns a failed verdict into a pass from fewer probes: when an earlier
verification of the tombstone failed a probe that cannot run again (semantic, traces, the
phrase and raw-byte searches by content), the new verdict fails too (``earlier-verdict``),
naming the probes and the way out — erase what leaked (``erase --after-tombstone ID``), whose
own verification is linked to this tombstone. Every verdict is kept with its time.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import func
from sqlmodel import col, select

from store.core.vocab import plural
from store.core import erasure, pragmas, vec
from store.core.db import checkpoint_truncate, orm, vacuum
from store.core.errors import NotFound
from store.core.models import Entry, ErasureFingerprint, Memory, Session
from store.privacy import exports
from store.privacy.content import content_columns
from store.privacy.models import ErasureProbe, ErasureVerification, Tombstone
from store.privacy.tables import rel, relational_tables
from store.privacy.terms import stored_terms
from store.privacy.verify import Probe, Verification
from store.recall.models import RecallTrace

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from store.core.base import StoreBase as Store

NOTE = "`lca-tui tombstones --verify`"


def unverified(store: Store) -> list[int]:
    """Ids of the tombstones with no recorded verification (an erasure interrupted after its
    commit, or one still running in another process), oldest first."""
    with store.read() as conn, orm(conn) as s:
        return [int(t or 0) for t in s.exec(select(Tombstone.id)
                                       .where(col(Tombstone.verified).is_(None))
                                       .order_by(col(Tombstone.id))).all()]


def warning(store: Store) -> str | None:
    """One line naming the unverified tombstones and the command that finishes them."""
    ids = unverified(store)
    if not ids:
        return None
    named = ", ".join(map(str, ids[:5])) + (" …" if len(ids) > 5 else "")
    return (f"{plural(len(ids), 'tombstone', counted=False)} {named} not verified (erasure "
            f"interrupted or still running): run {NOTE}")


RERUN = ("rows", "index", "exports", "raw-bytes", "fts", "substring")
"""The probes a re-verification runs; the others need the erased text."""
_WORD = re.compile(r"\w+", re.UNICODE)


def _lexical(conn: Connection, tombstone_id: int) -> list[Probe]:
    """``fts`` and ``substring`` by keyed fingerprint (nothing when none were kept)."""
    terms = stored_terms(conn, tombstone_id)
    key = erasure.stored_key(conn)
    if terms is None or key is None:
        return []
    fts_hits = sum(1 for t in vec.fts_terms(conn) if erasure.keyed(key, "stem", t)
                   in terms["stems"])
    seen: set[str] = set()
    held: dict[str, int] = {}
    for name, info in sorted(relational_tables(conn).items()):
        cols = content_columns(info)
        if not cols:
            continue
        t = rel(name, *cols)
        for row in conn.execute(select(*(t.c[c] for c in cols))):
            hit = False
            for value in row:
                if not isinstance(value, str) or not value:
                    continue
                for w in {w.lower() for w in _WORD.findall(value)}:
                    if w in seen:
                        continue
                    if erasure.keyed(key, "term", w) in terms["words"]:
                        hit = True
                    else:
                        seen.add(w)
            if hit:
                held[name] = held.get(name, 0) + 1
    n = len(terms["words"])
    where = ", ".join(f"{t} {c}" for t, c in sorted(held.items()))
    return [Probe("fts", not fts_hits, f"{fts_hits} of {len(terms['stems'])} fingerprinted "
                  "FTS terms of the erased text are indexed again"),
            Probe("substring", not held,
                  f"{n:,} fingerprinted {plural(n, 'word', counted=False)} of the erased text: "
                  + (f"held again by rows of: {where}" if held else
                     "no content column of any table holds one"))]


ERASURE_PROBES = ("rows", "fts", "substring", "semantic", "traces", "exports", "raw-bytes")
"""What an erasure's own verification runs (``memory-dir`` too with a bound directory)."""
CARRIED = ("earlier-verdict", "cleared-by")
"""Probes about other verdicts, not measurements of the store."""


def _not_rerun(conn: Connection, tombstone_id: int, probes: list[Probe]) -> list[str]:
    """What this re-verification could not run again, said in the passing case too: the
    probes of the tombstone's first verification (an erasure's usual set when none was
    recorded) that did not run now, an FTS probe with no fingerprinted stem, and the raw-byte
    search by content."""
    with orm(conn) as s:
        first = s.exec(select(ErasureVerification.id).where(
            ErasureVerification.tombstone_id == tombstone_id)
            .order_by(col(ErasureVerification.id))).first()
        names = [str(n) for n in s.exec(select(ErasureProbe.name).where(
            ErasureProbe.verification_id == first).order_by(col(ErasureProbe.seq))).all()
                 ] if first is not None else list(ERASURE_PROBES)
    ran = {p.name for p in probes}
    missing = [n for n in dict.fromkeys(names) if n not in ran and n not in CARRIED]
    for p in probes:
        if p.name == "fts" and p.detail.startswith("0 of 0 "):
            missing.append("fts (no FTS term was the erased text's alone: none fingerprinted)")
    if "raw-bytes" in ran:
        missing.append("raw-bytes by content (only the WAL and the free pages are checked)")
    return missing


def _earlier(conn: Connection, tombstone_id: int, rerun: set[str]) -> Probe | None:
    """A failed earlier verdict whose failed probes this run cannot repeat."""
    with orm(conn) as s:
        cleared = s.exec(select(func.max(col(ErasureProbe.verification_id))).join(
            ErasureVerification, col(ErasureVerification.id) ==
            col(ErasureProbe.verification_id)).where(
                ErasureVerification.tombstone_id == tombstone_id,
                col(ErasureProbe.name) == "cleared-by", col(ErasureProbe.passed) == 1)).one()
        since = int(cleared or 0)
        failed = s.exec(select(ErasureVerification).where(
            ErasureVerification.tombstone_id == tombstone_id,
            col(ErasureVerification.id) > since,
            col(ErasureVerification.passed) == 0).order_by(
                col(ErasureVerification.id).desc())).first()
        if failed is None:
            return None
        names = [p.name for p in s.exec(select(ErasureProbe).where(
            ErasureProbe.verification_id == failed.id, col(ErasureProbe.passed) == 0)
            .order_by(col(ErasureProbe.seq))).all()]
        if names == ["earlier-verdict"]:  # itself a carried verdict: find the original
            names = [p.name for p in s.exec(select(ErasureProbe).join(
                ErasureVerification, col(ErasureVerification.id) ==
                col(ErasureProbe.verification_id)).where(
                    ErasureVerification.tombstone_id == tombstone_id,
                    col(ErasureVerification.id) > since, col(ErasureProbe.passed) == 0,
                    col(ErasureProbe.name) != "earlier-verdict")).all()]
    missing = sorted(set(names) - rerun)
    if not missing:
        return None
    return Probe("earlier-verdict", False, (
        f"verification {failed.id} of {failed.ts} failed {', '.join(missing)}, which cannot run "
        "again (the erased text is kept nowhere): this re-verification does not clear it; "
        f"erase what leaked (`lca-tui erase ... --after-tombstone {tombstone_id}`) and its own "
        "verification is linked to this tombstone"))


def _live_prints(conn: Connection, key: bytes) -> dict[str, set[str]]:
    """The fingerprints every live entry, session, memory and trace would have."""
    out: dict[str, set[str]] = {"entry": set(), "memory": set(), "trace": set()}
    for (idem,) in conn.execute(select(Entry.idem_key)).all():
        out["entry"].add(erasure.keyed(key, "entry", str(idem)))
    for (sid,) in conn.execute(select(Session.id)).all():
        out["entry"].add(erasure.keyed(key, "entry", erasure.session_value(str(sid))))
    for (digest,) in conn.execute(select(Memory.content_hash)).all():
        out["memory"].add(erasure.keyed(key, "memory", str(digest)))
    for ts, query in conn.execute(select(RecallTrace.ts, RecallTrace.query)
                                  .where(col(RecallTrace.origin) == "lca-tui")).all():
        out["trace"].add(erasure.keyed(key, "trace", f"{ts}|{query}"))
    return out


def _rows(conn: Connection, tombstone_id: int) -> Probe:
    with orm(conn) as s:
        prints = s.exec(select(ErasureFingerprint.kind, ErasureFingerprint.fingerprint)
                        .where(ErasureFingerprint.tombstone_id == tombstone_id)).all()
    key = erasure.stored_key(conn)
    live = _live_prints(conn, key) if key is not None and prints else {}
    back = sum(1 for kind, fp in prints if fp in live.get(kind, set()))
    dangling = pragmas.foreign_key_check(conn)
    return Probe("rows", not back and not dangling,
                 f"{back} of {len(prints)} erased records (by fingerprint) are present; "
                 f"{len(dangling)} dangling references")


def _index(conn: Connection) -> Probe:
    vectors, fts = vec.index_orphans(conn)
    return Probe("index", not vectors and not fts,
                 f"{plural(vectors, 'vector')} and {plural(fts, 'FTS row')} left whose chunk "
                 "is gone")


def _exports(store: Store, tombstone_id: int) -> Probe:
    listed = [f for hit in exports.pending(store, tombstone_id) for f in hit.files]
    left = [f for f in listed if Path(f).is_file()]
    if left:
        return Probe("exports", False, f"{len(left)} of {len(listed)} export files listed for "
                     f"this tombstone still exist: {', '.join(left[:5])}"
                     f"{' …' if len(left) > 5 else ''} (delete them: `lca-tui erase "
                     f"--exports-of-tombstone {tombstone_id}`)")
    return Probe("exports", True, f"{len(listed)} export files listed for this tombstone, none "
                 "left on disk")


def _file(store: Store, wal_ok: bool, wal_left: int) -> Probe:
    with store.read() as conn:
        free = pragmas.freelist_count(conn)
    parts = [f"WAL {'truncated' if wal_ok else f'not truncated ({wal_left} bytes left)'}; "
             f"vacuumed, {free} free pages in {store.path.name}; the erased text is not kept, "
             "so the file is not searched for it"]
    if not wal_ok:
        parts.append("a reader holds a snapshot of the WAL: close it and verify again")
    # the recall's vector file beside the store holds vector bytes (recall/vecfile.py): it
    # was deleted just before (drop_cache); one there now was written meanwhile and, with no
    # erased vector kept to compare, is not searched
    from store.recall import vecfile

    left = [p.name for p in vecfile.files_beside(store.path)]
    parts.append(f"vector file beside the store: {', '.join(left)} written meanwhile, not "
                 "searched: verify again" if left else "no vector file beside the store "
                 "(deleted)")
    return Probe("raw-bytes", wal_ok and free == 0 and not left, "; ".join(parts))


def verify(store: Store, tombstone_id: int | None = None) -> list[tuple[int, Verification]]:
    """Finish the unverified tombstones (or the one named, verified or not): checkpoint,
    VACUUM, the probes, stored. Returns (tombstone id, verification) for each."""
    from store.core import filejournal
    from store.privacy.api import record
    from store.recall.pool import drop_cache

    filejournal.finish(store)  # an erasure's file deletions a kill left unplayed
    if tombstone_id is not None:
        with store.read() as conn, orm(conn) as s:
            if s.get(Tombstone, int(tombstone_id)) is None:
                raise NotFound(f"no tombstone {tombstone_id}: `lca-tui tombstones` lists them")
        ids = [int(tombstone_id)]
    else:
        ids = unverified(store)
    if not ids:
        return []
    started = time.perf_counter()
    drop_cache(store)
    wal_ok, wal_left = checkpoint_truncate(store.engine)
    if wal_ok:
        vacuum(store.engine)
        wal_ok, wal_left = checkpoint_truncate(store.engine)
    raw = _file(store, wal_ok, wal_left)
    shared = (time.perf_counter() - started) * 1000.0
    out = []
    for tid in ids:
        begun = time.perf_counter()
        with store.read() as conn:
            probes = [_rows(conn, tid), _index(conn)]
            probes += _lexical(conn, tid)
        probes += [_exports(store, tid), raw]
        with store.read() as conn:
            carried = _earlier(conn, tid, {p.name for p in probes if p.passed})
        if carried is not None:
            probes.append(carried)
        with store.read() as conn:
            missing = _not_rerun(conn, tid, probes)
        ms = round(shared + (time.perf_counter() - begun) * 1000.0, 1)
        v = Verification(all(p.passed for p in probes), probes, ms, not_rerun=missing)
        v.id = record(store, tid, v)
        out.append((tid, v))
    # recording wrote to the WAL (no content); leave it empty as an erasure does
    checkpoint_truncate(store.engine)
    return out
