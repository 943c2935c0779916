"""The detector's findings in the store (``secret_finding``, migration 17): recorded as an
entry or a memory is written (or scanned), read by the health signal, dismissed by
``mark --unmark-detected``. Kinds and counts only: never a value, nor where it was."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import Connection, delete, func, insert, update
from sqlmodel import col, select

from store.core.models import SecretFinding, StoreMeta
from store.core.timeutil import now_iso


def record(conn: Connection, source_type: str, found: Mapping[int, Mapping[str, int]],
           via: str, writer: str, version: str, at: str | None = None) -> int:
    """Record ``found`` (source id → kind → how many) for ``source_type`` records; returns
    how many rows were written."""
    at = at or now_iso()
    rows = [{"source_type": source_type, "source_id": sid, "kind": kind, "count": n,
             "via": via, "found_at": at, "writer": writer, "writer_version": version,
             "created_at": at}
            for sid, kinds in found.items() for kind, n in kinds.items()]
    if rows:
        conn.execute(insert(SecretFinding), rows)
    return len(rows)


def dismissed(conn: Connection, source_type: str, ids: Iterable[int]) -> set[int]:
    """The records among ``ids`` whose findings a person dismissed (false positives)."""
    ids = list(ids)
    out: set[int] = set()
    for i in range(0, len(ids), 500):
        out.update(int(r) for r in conn.execute(select(SecretFinding.source_id).where(
            col(SecretFinding.source_type) == source_type,
            col(SecretFinding.source_id).in_(ids[i:i + 500]),
            col(SecretFinding.dismissed_at).is_not(None))).scalars())
    return out


def found_secret(conn: Connection, source_type: str, ids: Iterable[int]) -> set[int]:
    """The records among ``ids`` holding a caught secret: open findings other than a
    ``<private>`` span (whose text is already redacted)."""
    ids = list(ids)
    out: set[int] = set()
    for i in range(0, len(ids), 500):
        out.update(int(r) for r in conn.execute(select(SecretFinding.source_id).where(
            col(SecretFinding.source_type) == source_type,
            col(SecretFinding.source_id).in_(ids[i:i + 500]),
            col(SecretFinding.dismissed_at).is_(None),
            col(SecretFinding.kind) != "private-span")).scalars())
    return out


def recorded(conn: Connection, source_type: str, ids: Iterable[int]) -> set[int]:
    """The records among ``ids`` that already have findings (dismissed or not)."""
    ids = list(ids)
    out: set[int] = set()
    for i in range(0, len(ids), 500):
        out.update(int(r) for r in conn.execute(select(SecretFinding.source_id).where(
            col(SecretFinding.source_type) == source_type,
            col(SecretFinding.source_id).in_(ids[i:i + 500]))).scalars())
    return out


def dismiss(conn: Connection, source_type: str, ids: Iterable[int], actor: str) -> list[int]:
    """Stamp the open findings of these records dismissed; returns the records that had
    any (the ones ``mark --unmark-detected`` turns back from secret)."""
    ids = sorted(set(ids))
    hit: set[int] = set()
    at = now_iso()
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        where = (col(SecretFinding.source_type) == source_type,
                 col(SecretFinding.source_id).in_(part),
                 col(SecretFinding.dismissed_at).is_(None),
                 col(SecretFinding.kind) != "private-span")
        hit.update(int(r) for r in conn.execute(
            select(SecretFinding.source_id).where(*where)).scalars())
        conn.execute(update(SecretFinding).where(*where).values(dismissed_at=at,
                                                                dismissed_by=actor))
    return sorted(hit)


def counts_since(conn: Connection, since: str) -> dict[str, int]:
    """kind → records found with it since ``since`` (open findings; a ``private-span`` is
    a redaction, not a secret, and is not counted)."""
    rows = conn.execute(select(SecretFinding.kind, func.count()).where(
        col(SecretFinding.found_at) >= since, col(SecretFinding.dismissed_at).is_(None),
        col(SecretFinding.kind) != "private-span").group_by(col(SecretFinding.kind))).all()
    return {str(k): int(n) for k, n in rows}


def kinds_of(conn: Connection, source_type: str, source_id: int) -> dict[str, int]:
    """kind → how many, of one record's open findings."""
    rows = conn.execute(select(SecretFinding.kind, SecretFinding.count).where(
        col(SecretFinding.source_type) == source_type,
        col(SecretFinding.source_id) == source_id,
        col(SecretFinding.dismissed_at).is_(None))).all()
    out: dict[str, int] = {}
    for k, n in rows:
        out[str(k)] = out.get(str(k), 0) + int(n)
    return out


UNSCANNED = ("secrets.unscanned_entries_through", "secrets.unscanned_memories_through")


def unscanned(conn: Connection) -> dict[str, int]:
    """``entry`` / ``memory`` → the highest id written before the detector existed and never
    scanned (migration 17's ``store_meta`` keys); empty once ``scan-secrets`` ran."""
    rows = conn.execute(select(StoreMeta.key, StoreMeta.value).where(
        col(StoreMeta.key).in_(UNSCANNED))).all()
    return {("entry" if "entries" in str(k) else "memory"): int(v) for k, v in rows}


def mark_scanned(conn: Connection) -> None:
    """Everything written before the detector existed has been scanned."""
    conn.execute(delete(StoreMeta).where(col(StoreMeta.key).in_(UNSCANNED)))
