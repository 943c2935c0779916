"""``store copy``: every record of one store into another, ids kept, then verified.

The way a user outgrows the file (a SQLite store to a PostgreSQL one) or takes a server's
store home again. What is copied is every table of the SQLModel metadata (each capability's
``models`` module), parents before children, in one write transaction on the target: entries,
memories, links, proposals and their checks, traces, snapshots, audit, tombstones, fingerprints,
the store's secret (``store_meta``), the migration history — and the index: the vectors as they
are (no re-embedding, so recall ranks the same) and the lexical index rebuilt from the chunks
that had a row in it. The high-water mark of every ``AUTOINCREMENT`` id is carried over too, so
an id erased in the source is not given again in the copy.

The target must be empty (a store just created, nothing but its schema); a source table that no
model describes (a schema this code does not know) refuses the copy rather than leave it out.

Verification reads both stores again after the commit: per table, the row count and a digest of
its content — the sum modulo 2**256 of each row's SHA-256 over its values in column order (ints
and floats by the column's type, text as UTF-8, bytes as hex), so it does not depend on the
order a backend returns rows in — and the same for the vectors (id and float32 bytes) and the
lexical index (its chunk ids). A copy whose digests differ is reported as failed, table by table.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection, Float, Integer, Table, func, inspect, select
from sqlmodel import SQLModel

from store.core import pragmas, vec
from store.core.base import StoreBase
from store.core.errors import StoreError
from store.core.migrations import current_version
from store.core.vocab import Progress, plural

CAPABILITIES = ("core", "ingest", "recall", "context", "export", "governance", "health",
                "privacy", "harness")
# Kept by the backend's vector / lexical index (``store.core.vec``), not by a model: copied as
# the index, not as tables.
INDEX_TABLES = ("chunk_vec", "chunk_fts", "embed_queue_fts")
# What a store holds before anything was written to it (its schema and its own bookkeeping):
# a target may hold these and still be empty; the copy replaces them with the source's.
BOOKKEEPING = ("schema_migration", "store_meta")
BATCH = 1000
_MOD = 2 ** 256


def tables() -> list[Table]:
    """Every table of the store, parents before children (foreign keys)."""
    for name in CAPABILITIES:
        importlib.import_module(f"store.{name}.models")
    return list(SQLModel.metadata.sorted_tables)


@dataclass
class TableCheck:
    """One table (or index) on both sides: counts and content digests."""

    name: str
    source_rows: int
    target_rows: int
    source_digest: str
    target_digest: str

    @property
    def ok(self) -> bool:
        return (self.source_rows == self.target_rows
                and self.source_digest == self.target_digest)

    def to_json(self) -> dict[str, object]:
        return {"table": self.name, "source_rows": self.source_rows,
                "target_rows": self.target_rows, "source_digest": self.source_digest,
                "target_digest": self.target_digest, "ok": self.ok}


@dataclass
class CopyReport:
    source: str
    target: str
    seconds: float = 0.0
    checks: list[TableCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    @property
    def rows(self) -> int:
        return sum(c.target_rows for c in self.checks if not c.name.startswith("index:"))

    def failed(self) -> list[TableCheck]:
        return [c for c in self.checks if not c.ok]

    def to_json(self) -> dict[str, object]:
        return {"source": self.source, "target": self.target, "ok": self.ok,
                "rows": self.rows, "seconds": round(self.seconds, 3),
                "tables": [c.to_json() for c in self.checks]}


class Digest:
    """An order-independent digest of rows: the sum of their SHA-256s modulo 2**256."""

    def __init__(self) -> None:
        self.total = 0
        self.count = 0

    def add(self, canonical: bytes) -> None:
        self.total = (self.total + int.from_bytes(hashlib.sha256(canonical).digest(), "big")) \
            % _MOD
        self.count += 1

    @property
    def hex(self) -> str:
        return f"{self.total:064x}"


def _kinds(table: Table) -> list[str]:
    kinds = []
    for c in table.columns:
        if isinstance(c.type, Float):
            kinds.append("float")
        elif isinstance(c.type, Integer):
            kinds.append("int")
        else:
            kinds.append("other")
    return kinds


def _norm(value: object, kind: str) -> object:
    if value is None:
        return None
    if kind == "float" and isinstance(value, int | float):
        return float(value)
    if kind == "int" and isinstance(value, int | float) and float(value).is_integer():
        return int(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return {"bytes": bytes(value).hex()}
    return value


def canonical(values: Sequence[object], kinds: Sequence[str]) -> bytes:
    """A row's values as bytes that are the same whichever backend returned them."""
    return json.dumps([_norm(v, k) for v, k in zip(values, kinds)], ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


def table_digest(conn: Connection, table: Table) -> tuple[int, str]:
    """(rows, digest) of one table's content."""
    digest = Digest()
    kinds = _kinds(table)
    result = conn.execution_options(yield_per=BATCH).execute(select(table))
    for part in result.partitions():
        for row in part:
            digest.add(canonical(tuple(row), kinds))
    return digest.count, digest.hex


def _vector_digest(conn: Connection) -> tuple[int, str]:
    ids, matrix = vec.all_vectors(conn)
    digest = Digest()
    for i, row in zip(ids.tolist(), matrix):
        digest.add(int(i).to_bytes(8, "big", signed=True) + vec.to_blob(row))
    return digest.count, digest.hex


def _chunk_ids(conn: Connection) -> list[int]:
    chunk = SQLModel.metadata.tables["chunk"]
    return [int(r[0]) for r in conn.execute(select(chunk.c.id).order_by(chunk.c.id))]


def _fts_digest(conn: Connection) -> tuple[int, str]:
    digest = Digest()
    for cid in sorted(vec.fts_indexed(conn, _chunk_ids(conn))):
        digest.add(str(cid).encode())
    return digest.count, digest.hex


def _row_count(conn: Connection, table: Table) -> int:
    return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def _unknown_tables(store: StoreBase, known: Iterable[str]) -> list[str]:
    names = set(inspect(store.engine).get_table_names())
    held = set(known)
    return sorted(n for n in names - held
                  if not n.startswith(INDEX_TABLES) and not n.startswith("sqlite_"))


def refuse(source: StoreBase, target: StoreBase, every: list[Table]) -> None:
    """Raise ``StoreError`` (saying why) when ``source`` cannot be copied into ``target``."""
    with source.read() as s, target.read() as t:
        have, want = current_version(s), current_version(t)
        if have != want:
            raise StoreError(f"the source is at schema version {have} and the target at {want}:"
                             " open both with this lca-tui (it migrates them) and copy again")
        held = [(tb.name, _row_count(t, tb)) for tb in every if tb.name not in BOOKKEEPING]
        indexed = vec.index_counts(t)
    full = [f"{name} {n:,}" for name, n in held if n]
    if full or any(indexed):
        shown = ", ".join(full[:4]) + (", …" if len(full) > 4 else "")
        what = (f"{plural(len(full), 'table')} hold rows ({shown})" if full else
                f"its index holds {plural(indexed[0], 'vector')} and "
                f"{plural(indexed[1], 'lexical row')}")
        raise StoreError(f"the target store is not empty: {what}. Copy into a new store (a "
                         "new file, or an empty database) — nothing was written")
    unknown = _unknown_tables(source, (tb.name for tb in every))
    if unknown:
        raise StoreError(f"the source has {plural(len(unknown), 'table')} this lca-tui has no "
                         f"model for ({', '.join(unknown)}): copying would leave them out; "
                         "copy with the lca-tui that made the store")


def copy_store(source: StoreBase, target: StoreBase, progress: Progress | None = None,
               source_label: str = "", target_label: str = "") -> CopyReport:
    """Copy every record of ``source`` into the empty store ``target`` (one transaction),
    then verify both (``CopyReport.checks``). Raises ``StoreError`` when the target is not
    empty or the schemas differ; nothing is written then."""
    started = time.perf_counter()
    every = tables()
    refuse(source, target, every)
    report = progress or (lambda _label, _done, _total: None)
    with source.read() as s:
        totals = {tb.name: _row_count(s, tb) for tb in every}
        counted = [tb for tb in every if _counter(tb)]
        highs = {tb.name: max(pragmas.high_water(s, tb.name),
                              int(s.execute(select(func.max(tb.c.id))).scalar() or 0))
                 for tb in counted}
        grand = sum(totals.values())
        done = 0
        with target.write() as t:
            for name in BOOKKEEPING:  # the target's own schema rows give way to the source's
                t.execute(SQLModel.metadata.tables[name].delete())
            for tb in every:
                report(f"copying {tb.name}", done, grand)
                done = _copy_table(s, t, tb, done, grand, report)
            for tb in counted:
                pragmas.set_high_water(t, tb.name, highs[tb.name],
                                       bool(tb.dialect_options["sqlite"].get("autoincrement")))
            _copy_index(s, t, report)
    result_report = CopyReport(source_label, target_label)
    result_report.checks = verify(source, target, every, report)
    result_report.seconds = time.perf_counter() - started
    return result_report


def _counter(tb: Table) -> bool:
    """Does ``tb`` number its rows (one integer primary key ``id``)?"""
    pk = list(tb.primary_key.columns)
    return len(pk) == 1 and pk[0].name == "id" and isinstance(pk[0].type, Integer)


def _copy_table(s: Connection, t: Connection, tb: Table, done: int, grand: int,
                report: Progress) -> int:
    """Copy one table in batches, ids kept. A column pointing at a row of the same table
    (a memory's ``superseded_by_id``, a trace's ``rerun_of``) may name a later row: it is
    written empty first and set once every row of the table is in, so no foreign key is
    ever checked against a row not copied yet, on either backend."""
    own = [fk.parent.name for fk in tb.foreign_keys if fk.column.table is tb]
    later: list[dict[str, object]] = []
    result = s.execution_options(yield_per=BATCH).execute(
        select(tb).order_by(*tb.primary_key.columns))
    for part in result.partitions():
        rows = [dict(r._mapping) for r in part]
        for row in rows:
            pointers = {c: row[c] for c in own if row[c] is not None}
            if pointers:
                later.append({"key": row["id"], **pointers})
                row.update(dict.fromkeys(pointers))
        t.execute(tb.insert(), rows)
        done += len(rows)
        report(f"copying {tb.name}", done, grand)
    for pointers in later:
        key = pointers.pop("key")
        t.execute(tb.update().where(tb.c.id == key).values(**pointers))
    return done


def _copy_index(s: Connection, t: Connection, report: Progress) -> None:
    ids, matrix = vec.all_vectors(s)
    total = len(ids)
    for start in range(0, total, BATCH):
        rows = [(int(i), matrix[j]) for j, i in
                enumerate(ids[start:start + BATCH].tolist(), start)]
        vec.insert_vectors(t, rows)
        report("copying the vectors", min(total, start + BATCH), total)
    chunk = SQLModel.metadata.tables["chunk"]
    fts_ids = sorted(vec.fts_indexed(s, _chunk_ids(s)))
    for start in range(0, len(fts_ids), BATCH):
        part = fts_ids[start:start + BATCH]
        texts = {int(r[0]): str(r[1]) for r in s.execute(
            select(chunk.c.id, chunk.c.text).where(chunk.c.id.in_(part)))}
        vec.insert_fts(t, [(cid, texts[cid]) for cid in part])
        report("rebuilding the lexical index", min(len(fts_ids), start + BATCH), len(fts_ids))


def verify(source: StoreBase, target: StoreBase, every: list[Table] | None = None,
           progress: Progress | None = None) -> list[TableCheck]:
    """Per table (then the vectors and the lexical index): counts and digests on both sides."""
    every = every if every is not None else tables()
    report = progress or (lambda _label, _done, _total: None)
    checks: list[TableCheck] = []
    with source.read() as s, target.read() as t:
        for i, tb in enumerate(every):
            report(f"verifying {tb.name}", i, len(every))
            (sn, sd), (tn, td) = table_digest(s, tb), table_digest(t, tb)
            checks.append(TableCheck(tb.name, sn, tn, sd, td))
        report("verifying the index", len(every), len(every))
        for label, fn in (("index:vectors", _vector_digest), ("index:lexical", _fts_digest)):
            (sn, sd), (tn, td) = fn(s), fn(t)
            checks.append(TableCheck(label, sn, tn, sd, td))
    return checks

