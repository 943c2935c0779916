"""What a closure is made of (``Closure``: rows to delete and to rewrite per table, chunks,
exports, the texts the probes look for) and the set helpers ``closure``, ``redaction`` and
``describe`` share. Everything here reads; nothing writes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, func, or_, select
from sqlmodel import col

from store.privacy.content import content_columns, is_json_meta
from store.privacy.scope import Matcher, Scope
from store.core import pragmas
from store.core.models import ImportPosition
from store.privacy.tables import BOOKKEEPING, TableInfo, dbapi, in_json, rel, rowid

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store



@dataclass
class ExportHit:
    """An export the store wrote that holds part of the scope: its folder and files."""

    export_id: int
    path: str
    files: list[str]


@dataclass
class Closure:
    """What an erasure or redaction of ``scope`` touches; nothing has changed yet."""

    scope: Scope
    action: str
    tables: dict[str, TableInfo] = field(default_factory=dict)
    delete: dict[str, set[int]] = field(default_factory=dict)
    scrub: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    nullify: dict[str, dict[str, set[int]]] = field(default_factory=dict)
    cleared: dict[str, int] = field(default_factory=dict)  # SET NULL pointers SQLite clears
    review: dict[int, str] = field(default_factory=dict)
    # on a server, after the change: (table, ms) of each VACUUM FULL (the raw probe says it)
    rebuilt: list[tuple[str, float]] = field(default_factory=list)
    rebuild: dict[str, set[int]] = field(default_factory=dict)
    chunk_rows: list[tuple[int, str, bool]] = field(default_factory=list)  # id, text, has vector
    exports: list[ExportHit] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    fingerprints: dict[str, list[str]] = field(default_factory=dict)
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 384), np.float32))
    labels: dict[str, list[str]] = field(default_factory=dict)
    session_id: str | None = None
    # bound memory directory: file path → its new text (None: deleted), and the folder
    files: dict[str, str | None] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)  # a redacted file: old → new path
    bound_dir: str | None = None
    journal: str | None = None  # the file journal the change committed (store.core.filejournal)

    # -- figures ---------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Rows touched per table (deleted or rewritten), the vectors and FTS rows of the
        chunks removed or rebuilt, and memories flagged for review."""
        out: dict[str, int] = {}
        for table in sorted(set(self.delete) | set(self.scrub)):
            n = len(self.delete.get(table, ())) + len(
                set(self.scrub.get(table, {})) - self.delete.get(table, set()))
            if n:
                out[table] = n
        chunks = len(self.chunk_rows)
        if chunks:
            out["chunk"] = max(out.get("chunk", 0), chunks)
            out["chunk_vec"] = sum(1 for _, _, v in self.chunk_rows if v)
            out["chunk_fts"] = chunks
        if self.review:
            out["memory_review"] = len(self.review)
        if self.files:
            out["memory_file"] = len(self.files)
        return out

    def export_files(self) -> list[str]:
        return [f for e in self.exports for f in e.files]

    def digest(self) -> str:
        """The fingerprint of exactly what this closure lists (``store.core.plan``): every
        row it deletes, rewrites or clears, the chunks rebuilt, the memories flagged, the
        export files."""
        from store.core.plan import digest

        return digest({"action": self.action, "scope": (self.scope.kind, str(self.scope.value)),
                       "delete": self.delete, "scrub": {t: set(r) for t, r in self.scrub.items()},
                       "nullify": self.nullify, "rebuild": self.rebuild,
                       "review": set(self.review), "chunks": {r[0] for r in self.chunk_rows},
                       "exports": self.export_files()})

    @property
    def empty(self) -> bool:
        return not self.counts()

    def deletedids_json(self, table: str) -> set[int]:
        return self.delete.get(table, set())


# -- helpers ---------------------------------------------------------------------------------
def ids_json(values: set[int] | list[int]) -> str:
    return json.dumps(sorted(int(v) for v in values))


def rows_where(conn: Connection, table: str, column: str, values: list[Any]) -> set[int]:
    if not values:
        return set()
    t = rel(table, column)
    rows = conn.execute(select(t.c.rowid).where(in_json(t.c[column], json.dumps(values)))).all()
    return {int(r[0]) for r in rows}


def column_values(conn: Connection, table: str, column: str, rowids: set[int]) -> list[Any]:
    if not rowids:
        return []
    t = rel(table, column)
    rows = conn.execute(select(t.c[column]).where(in_json(t.c.rowid, ids_json(rowids)))).all()
    return [r[0] for r in rows if r[0] is not None]


def add_rows(target: dict[str, set[int]], table: str, rows: set[int]) -> bool:
    have = target.setdefault(table, set())
    new = rows - have
    have |= new
    return bool(new)


def register_matcher(conn: Connection, matcher: Matcher) -> None:
    """``lca_holds(value)`` for this connection: the matcher, case folding included; and
    ``lca_holds_in(table, column, value)``, which matches content only
    (``store.privacy.content``: a meta-like JSON column by its content strings)."""
    raw = dbapi(conn)
    raw.create_function("lca_holds", 1, lambda v: int(matcher.holds(v)), deterministic=True)
    raw.create_function("lca_holds_in", 3, lambda t, c, v: int(matcher.holds_in(t, c, v)),
                        deterministic=True)


def holds_clause(name: str, t: Any, cols: list[str]) -> Any:
    """SQL true when one of ``cols`` of table ``name`` (handle ``t``) holds the scope."""
    return or_(*(func.lca_holds_in(name, c, t.c[c]) if is_json_meta(name, c)
                 else func.lca_holds(t.c[c]) for c in cols))


def scan(conn: Connection, tables: dict[str, TableInfo], matcher: Matcher,
         skip: frozenset[str] = BOOKKEEPING,
         only: frozenset[str] | None = None) -> dict[str, dict[int, list[str]]]:
    """table → rowid → the content columns holding the scope's text, for every table but
    ``skip`` (or only those in ``only``). Content only: identifiers, kinds, times, hashes,
    paths the store read and writers are never matched (``store.privacy.content``). A read:
    the matcher runs inside SQLite, rows that do not match never leave. On a server, where no
    Python function runs inside the database, rows with content are read and matched here."""
    inside = pragmas.python_functions(conn)
    if inside:
        register_matcher(conn, matcher)
    found: dict[str, dict[int, list[str]]] = {}
    for name, info in sorted(tables.items()):
        if name in skip or (only is not None and name not in only):
            continue
        cols = content_columns(info)
        if not cols:
            continue
        t = rel(name, *cols)
        rows = conn.execute(select(t.c.rowid, *(t.c[c] for c in cols)).where(
            holds_clause(name, t, cols) if inside
            else or_(*(t.c[c].is_not(None) for c in cols)))).all()
        for r in rows:
            hit = [c for c, v in zip(cols, r[1:], strict=True)
                   if matcher.holds_in(name, c, v)]
            if hit:
                found.setdefault(name, {})[int(r[0])] = hit
    return found


def resolve_session(store: Store, value: str) -> str:
    return store.session(value).id


def import_positions(conn: Connection, c: Closure, entry_rows: set[int]) -> bool:
    if not entry_rows or "import_position" not in c.tables:
        return False
    paths = set(column_values(conn, "entry", "source_path", entry_rows))
    resolved = sorted({str(Path(p).resolve()) for p in paths} | paths)
    rows = rows_where(conn, "import_position", "path", resolved)
    for relative in sorted(p for p in paths if not Path(p).is_absolute()):
        # an entry keeps the path it was imported by; the position keeps it resolved
        tail = "/" + (relative.lstrip("./").replace("\\", "\\\\").replace("%", "\\%")
                      .replace("_", "\\_"))
        rows |= {int(r[0]) for r in conn.execute(
            select(rowid(ImportPosition)).select_from(ImportPosition)
            .where(col(ImportPosition.path).like("%" + tail, escape="\\"))).all()}
    return add_rows(c.delete, "import_position", rows)


