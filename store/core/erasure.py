"""Erasure fingerprints: what lets every importer refuse to bring erased content back.

A fingerprint is HMAC-SHA256, keyed with a per-store secret kept in ``store_meta``, of what an
importer would write again: ``entry|<idempotency key>`` for a transcript entry (source +
position + content hash: the same line read from the same file, or from a copy of it at
another path, has the same key; ``entry|session:<id>`` for an erased session's row),
``memory|<content hash>`` for a memory (the hash of its
parsed fields, which does not depend on where the file lies), ``trace|<time>|<query>`` for a
recall trace an export carries. Without the secret a fingerprint
reveals nothing, not even a guess's confirmation. ``store.privacy`` writes them; the shared
write path (``store.core.writes``) and the memory importers check them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable

from sqlalchemy import Connection, func, insert
from sqlmodel import col, select

from store.core.models import ErasureFingerprint, StoreMeta
from store.core.timeutil import now_iso
from store.core.db import insert_ignore

KEY_NAME = "privacy.erasure_key"
KINDS = ("entry", "memory", "trace")
# An erased session's id is fingerprinted under the ``entry`` kind with this prefix (the kinds
# are fixed by migration 8; an idempotency key is 64 hex digits, so the two never meet): an
# export of the session re-imported does not create its row again.
SESSION_PREFIX = "session:"


def session_value(session_id: str) -> str:
    return SESSION_PREFIX + session_id


def erased_session(conn: Connection, session_id: str) -> bool:
    """True when an erasure took this session (its row is not to be created again)."""
    return bool(erased(conn, "entry", [session_value(session_id)]))


def _key(conn: Connection, create: bool) -> bytes | None:
    row = conn.execute(select(StoreMeta.value).where(StoreMeta.key == KEY_NAME)).first()
    if row is not None:
        return bytes.fromhex(str(row[0]))
    if not create:
        return None
    value = secrets.token_hex(32)
    conn.execute(insert(StoreMeta).values(key=KEY_NAME, value=value))
    return bytes.fromhex(value)


def stored_key(conn: Connection) -> bytes | None:
    """The store's erasure secret, or None when nothing was ever erased (never creates it)."""
    return _key(conn, create=False)


def keyed(key: bytes, kind: str, value: str) -> str:
    """The fingerprint of ``value`` (an idempotency key or content hash) under ``key``."""
    message = f"{kind}|{value}".encode("utf-8", "surrogatepass")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def keyed_hash(conn: Connection, label: str, value: str) -> str:
    """A keyed hash of ``value`` for rewriting a redacted row's idempotency key or content
    hash: unique per value, and it confirms no guess without the store's secret. Creates
    the secret when the store has none yet (call inside a write transaction)."""
    key = _key(conn, create=True)
    assert key is not None
    return keyed(key, label, value)


def record(conn: Connection, kind: str, values: Iterable[str], tombstone_id: int | None,
           writer: str, writer_version: str) -> int:
    """Store the fingerprints of ``values``; returns how many were new."""
    if kind not in KINDS:
        raise ValueError(f"fingerprint kind must be one of {KINDS}")
    key = _key(conn, create=True)
    assert key is not None
    now = now_iso()
    rows = [{"fingerprint": keyed(key, kind, v), "kind": kind, "tombstone_id": tombstone_id,
             "writer": writer, "writer_version": writer_version, "created_at": now}
            for v in dict.fromkeys(values) if v]
    if not rows:
        return 0
    count = select(func.count()).select_from(ErasureFingerprint)
    before = int(conn.execute(count).scalar_one())
    # a fingerprint already recorded (an earlier erasure of the same content) stays as it is
    conn.execute(insert_ignore(conn, ErasureFingerprint), rows)
    after = int(conn.execute(count).scalar_one())
    return after - before


def erased(conn: Connection, kind: str, values: Iterable[str]) -> set[str]:
    """The ``values`` whose fingerprint is recorded: erased earlier, not to be written again.

    Cheap when nothing was ever erased (no secret yet: no query per value)."""
    wanted = [v for v in dict.fromkeys(values) if v]
    if not wanted:
        return set()
    key = _key(conn, create=False)
    if key is None:
        return set()
    by_print = {keyed(key, kind, v): v for v in wanted}
    found: set[str] = set()
    prints = list(by_print)
    for i in range(0, len(prints), 500):
        part = prints[i:i + 500]
        rows = conn.execute(select(ErasureFingerprint.fingerprint)
                            .where(col(ErasureFingerprint.fingerprint).in_(part))).all()
        found.update(by_print[r[0]] for r in rows)
    return found
