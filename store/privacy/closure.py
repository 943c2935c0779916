"""The closure of a scope: every record of every kind that holds or points at it, with
counts per table, computed before anything changes.

Erase: the scope's own rows (a session with every row keyed by it, an entry, a memory, or every
row of any table with a text column holding the text) are deleted, then the closure grows until
nothing is left pointing at a deleted row:

- foreign keys (read from the schema, so new tables are followed): ``ON DELETE CASCADE`` rows
  go; ``SET NULL`` pointers are cleared by SQLite and counted; a ``NO ACTION`` pointer that
  must not dangle is handled here — its row is deleted when the column is NOT NULL or in
  ``DELETE_ON`` (``evidence.entry_id``, ``checkpoint.session_id``), else the pointer is cleared
  (``memory.supersedes_id`` / ``superseded_by_id``);
- pointers without a foreign key (``SOFT``): chunks and recall candidates name their source by
  type and id, export items their item; ``chunk.nn_chunk_id`` is cleared;
- a memory derived from erased entries is erased when all its evidence goes and flagged for
  review when some does (a proposal, by the entries its JSON evidence names, is erased when
  all of them go); a session whose entries all go goes too;
- the import position of every file an erased entry came from goes (it holds a plain sha256 of
  the file's bytes), so the next import reads the file again and the fingerprints refuse it.

Rows of ``SCRUB_TABLES`` (sessions, export records, audit events) are containers: a text scope
redacts the matching columns there instead of deleting the row.

Redact: the same scopes, but every matching value is rewritten in place (``[REDACTED]``), the
chunks of changed entries and memories are rebuilt, and nothing is deleted except import
positions. Entries named by id (``--entry``, ``--session``) are redacted whole, and so are the
excerpts, queries and paths that copied them (``DERIVED``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, text

from store.core import vec
from store.core.errors import NotFound
from store.privacy.scope import MARK, Matcher, Scope, redact_all
from store.privacy.tables import BOOKKEEPING, TableInfo, dbapi, q, relational_tables

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

SCRUB_TABLES = frozenset({"session", "export", "audit_event"})
DELETE_ON = frozenset({("evidence", "entry_id"), ("checkpoint", "session_id")})
# table → (type column, id column, {type value: table it names})
SOFT = {
    "chunk": ("source_type", "source_id", {"entry": "entry", "memory": "memory"}),
    "recall_candidate": ("source_type", "source_id", {"entry": "entry", "memory": "memory"}),
    "export_item": ("item_type", "item_id", {"session": "session", "entry": "entry",
                                              "memory": "memory", "evidence": "evidence"}),
}
# Pointers kept inside a JSON list (table → (column, keys naming an entry id)): a proposal
# derived from entries names them in its evidence; it goes when all of them go, as a memory
# does.
JSON_EVIDENCE = {"proposal": ("evidence", ("entry_id", "entry"))}
# Redacting a record named by id: the columns of its own row replaced whole, and the rows
# that copied its text (table → (pointer columns to it, columns replaced whole)).
OWN = {"entry": ("content", "meta"), "memory": ("name", "description", "body", "invariant",
                                                "front_matter"), "session": ("title",)}
DERIVED = {
    "recall_candidate": ({"entry": "source_id", "memory": "source_id"}, ("excerpt", "label")),
    "recall_trace": ({"entry": "entry_id"}, ("query", "settings")),
    "handoff": ({"entry": "source_entry_id"}, ("path",)),
}
LABELS_PER_TABLE = 40


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
    rebuild: dict[str, set[int]] = field(default_factory=dict)
    chunk_rows: list[tuple[int, str, bool]] = field(default_factory=list)  # id, text, has vector
    exports: list[ExportHit] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    fingerprints: dict[str, list[str]] = field(default_factory=dict)
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 384), np.float32))
    labels: dict[str, list[str]] = field(default_factory=dict)
    session_id: str | None = None

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
        return out

    def export_files(self) -> list[str]:
        return [f for e in self.exports for f in e.files]

    @property
    def empty(self) -> bool:
        return not self.counts()

    def deleted_ids(self, table: str) -> set[int]:
        return self.delete.get(table, set())


# -- helpers ---------------------------------------------------------------------------------
def _ids(values: set[int] | list[int]) -> str:
    return json.dumps(sorted(int(v) for v in values))


def _rows_where_in(conn: Connection, table: str, column: str, values: list[Any]) -> set[int]:
    if not values:
        return set()
    rows = conn.execute(text(f"SELECT rowid FROM {q(table)} WHERE {q(column)} IN "
                             "(SELECT value FROM json_each(:v))"),
                        {"v": json.dumps(values)}).all()
    return {int(r[0]) for r in rows}


def _column_values(conn: Connection, table: str, column: str, rowids: set[int]) -> list[Any]:
    if not rowids:
        return []
    rows = conn.execute(text(f"SELECT {q(column)} FROM {q(table)} WHERE rowid IN "
                             "(SELECT value FROM json_each(:i))"), {"i": _ids(rowids)}).all()
    return [r[0] for r in rows if r[0] is not None]


def _add(target: dict[str, set[int]], table: str, rows: set[int]) -> bool:
    have = target.setdefault(table, set())
    new = rows - have
    have |= new
    return bool(new)


def _register(conn: Connection, matcher: Matcher) -> None:
    """``lca_holds(value)`` for this connection: the matcher, case folding included."""
    dbapi(conn).create_function("lca_holds", 1, lambda v: int(matcher.holds(v)), deterministic=True)


def scan(conn: Connection, tables: dict[str, TableInfo], matcher: Matcher,
         skip: frozenset[str] = BOOKKEEPING) -> dict[str, dict[int, list[str]]]:
    """table → rowid → the text columns holding the scope's text, for every table but
    ``skip`` (a read: the matcher runs inside SQLite, rows that do not match never leave)."""
    _register(conn, matcher)
    found: dict[str, dict[int, list[str]]] = {}
    for name, info in sorted(tables.items()):
        if name in skip or not info.text_columns:
            continue
        cols = info.text_columns
        where = " OR ".join(f"lca_holds({q(c)})" for c in cols)
        rows = conn.exec_driver_sql(
            f"SELECT rowid, {', '.join(q(c) for c in cols)} FROM {q(name)} WHERE {where}").all()
        for r in rows:
            hit = [c for c, v in zip(cols, r[1:], strict=True) if matcher.holds(v)]
            if hit:
                found.setdefault(name, {})[int(r[0])] = hit
    return found


# -- seeds -----------------------------------------------------------------------------------
def _resolve_session(store: Store, value: str) -> str:
    return store.session(value).id


def _seed_ids(store: Store, conn: Connection, c: Closure) -> None:
    """The rows a session, entry or memory scope names."""
    kind, value = c.scope.kind, c.scope.value
    if kind == "session":
        sid = _resolve_session(store, value)
        c.session_id = sid
        c.delete["session"] = {int(r[0]) for r in conn.execute(
            text("SELECT rowid FROM session WHERE id = :s"), {"s": sid}).all()}
        for name, info in c.tables.items():
            if name not in BOOKKEEPING and name != "session" and "session_id" in info.columns:
                _add(c.delete, name, _rows_where_in(conn, name, "session_id", [sid]))
        return
    table = "entry" if kind == "entry" else "memory"
    exists = conn.execute(text(f"SELECT rowid FROM {table} WHERE id = :i"),
                          {"i": int(value)}).first()
    if exists is None:
        where = "`lca-tui entries SESSION`" if kind == "entry" else "`lca-tui memories`"
        raise NotFound(f"no {table} with id {value}: {where} shows ids")
    c.delete[table] = {int(exists[0])}


def _seed_text(conn: Connection, c: Closure, matcher: Matcher) -> None:
    """Every row holding the text: deleted, or its matching columns redacted in a
    container table (``SCRUB_TABLES``)."""
    for table, rows in scan(conn, c.tables, matcher).items():
        keys = c.tables[table].keys
        for rowid, cols in rows.items():
            if table in SCRUB_TABLES and set(cols) - keys:
                c.scrub.setdefault(table, {})[rowid] = {col: None for col in cols
                                                        if col not in keys}
            elif table == "chunk":  # a chunk holding it: its source holds it too
                src = conn.execute(text("SELECT source_type, source_id FROM chunk WHERE "
                                        "rowid = :r"), {"r": rowid}).one()
                _add(c.delete, str(src[0]), {int(src[1])})
                _add(c.delete, "chunk", {rowid})
            else:
                _add(c.delete, table, {rowid})


# -- growing the erase closure ---------------------------------------------------------------
def _grow(conn: Connection, c: Closure) -> None:
    """Follow foreign keys and soft pointers until no deleted row is pointed at."""
    while True:
        changed = False
        for name, info in c.tables.items():
            if name in BOOKKEEPING:
                continue
            for fk in info.foreign_keys:
                gone = c.delete.get(fk.parent)
                if not gone:
                    continue
                keys = _column_values(conn, fk.parent, fk.parent_column, gone)
                rows = _rows_where_in(conn, name, fk.column, keys) - c.delete.get(name, set())
                if not rows:
                    continue
                if fk.on_delete == "CASCADE" or (fk.on_delete in ("NO ACTION", "RESTRICT") and (
                        fk.column not in info.nullable or (name, fk.column) in DELETE_ON)):
                    changed |= _add(c.delete, name, rows)
                elif fk.on_delete == "SET NULL":
                    c.cleared[f"{name}.{fk.column}"] = len(rows)
                else:
                    c.nullify.setdefault(name, {}).setdefault(fk.column, set()).update(rows)
        for name, (type_col, id_col, targets) in SOFT.items():
            if name not in c.tables:
                continue
            for type_value, target in targets.items():
                gone = c.delete.get(target)
                if not gone:
                    continue
                keys = [str(k) if name == "export_item" else k
                        for k in _column_values(conn, target, "id", gone)]
                rows = {int(r[0]) for r in conn.execute(text(
                    f"SELECT rowid FROM {q(name)} WHERE {q(type_col)} = :t AND {q(id_col)} IN "
                    "(SELECT value FROM json_each(:v))"),
                    {"t": type_value, "v": json.dumps(keys)}).all()}
                changed |= _add(c.delete, name, rows)
        changed |= _json_evidence(conn, c)
        changed |= _memories_losing_evidence(conn, c)
        changed |= _emptied_sessions(conn, c)
        changed |= _import_positions(conn, c, c.delete.get("entry", set()))
        if not changed:
            break
    if c.delete.get("chunk") and "chunk" in c.tables:
        rows = _rows_where_in(conn, "chunk", "nn_chunk_id",
                              sorted(c.delete["chunk"])) - c.delete["chunk"]
        if rows:
            c.nullify.setdefault("chunk", {})["nn_chunk_id"] = rows


def _json_evidence(conn: Connection, c: Closure) -> bool:
    """Rows whose JSON evidence names only erased entries (``JSON_EVIDENCE``)."""
    gone = c.delete.get("entry")
    if not gone:
        return False
    changed = False
    for table, (column, keys) in JSON_EVIDENCE.items():
        if table not in c.tables or column not in c.tables[table].columns:
            continue
        pointer = "COALESCE(" + ", ".join(f"json_extract(j.value, '$.{k}')" for k in keys) + ")"
        rows = {int(r[0]) for r in conn.execute(text(
            f"SELECT t.rowid FROM {q(table)} t WHERE json_valid(t.{q(column)}) AND EXISTS "
            f"(SELECT 1 FROM json_each(t.{q(column)}) j WHERE {pointer} IN (SELECT value FROM "
            f"json_each(:i))) AND NOT EXISTS (SELECT 1 FROM json_each(t.{q(column)}) j WHERE "
            f"{pointer} IS NOT NULL AND {pointer} NOT IN (SELECT value FROM json_each(:i)))"),
            {"i": _ids(gone)}).all()}
        changed |= _add(c.delete, table, rows)
    return changed


def _memories_losing_evidence(conn: Connection, c: Closure) -> bool:
    gone = c.delete.get("evidence")
    if not gone:
        return False
    changed = False
    rows = conn.execute(text(
        "SELECT memory_id, COUNT(*) FROM evidence WHERE rowid IN (SELECT value FROM "
        "json_each(:i)) GROUP BY memory_id"), {"i": _ids(gone)}).all()
    erased_memories = c.delete.get("memory", set())
    for memory_id, lost in rows:
        if int(memory_id) in erased_memories:
            continue
        total = int(conn.execute(text("SELECT COUNT(*) FROM evidence WHERE memory_id = :m"),
                                 {"m": memory_id}).scalar_one())
        if lost >= total:
            changed |= _add(c.delete, "memory", {int(memory_id)})
            c.review.pop(int(memory_id), None)
        else:
            c.review[int(memory_id)] = (f"{lost} of its {total} evidence rows were erased: "
                                        "review whether it still stands")
    return changed


def _emptied_sessions(conn: Connection, c: Closure) -> bool:
    gone = c.delete.get("entry")
    if not gone:
        return False
    changed = False
    for sid, lost in conn.execute(text(
            "SELECT session_id, COUNT(*) FROM entry WHERE rowid IN (SELECT value FROM "
            "json_each(:i)) GROUP BY session_id"), {"i": _ids(gone)}).all():
        total = int(conn.execute(text("SELECT COUNT(*) FROM entry WHERE session_id = :s"),
                                 {"s": sid}).scalar_one())
        if lost >= total:
            rows = {int(r[0]) for r in conn.execute(
                text("SELECT rowid FROM session WHERE id = :s"), {"s": sid}).all()}
            if _add(c.delete, "session", rows):
                changed = True
                for row in rows:
                    c.scrub.get("session", {}).pop(row, None)
    return changed


def _import_positions(conn: Connection, c: Closure, entry_rows: set[int]) -> bool:
    if not entry_rows or "import_position" not in c.tables:
        return False
    paths = set(_column_values(conn, "entry", "source_path", entry_rows))
    resolved = sorted({str(Path(p).resolve()) for p in paths} | paths)
    rows = _rows_where_in(conn, "import_position", "path", resolved)
    for rel in sorted(p for p in paths if not Path(p).is_absolute()):
        # an entry keeps the path it was imported by; the position keeps it resolved
        tail = "/" + rel.lstrip("./").replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows |= {int(r[0]) for r in conn.execute(text(
            "SELECT rowid FROM import_position WHERE path LIKE :t ESCAPE '\\'"),
            {"t": "%" + tail}).all()}
    return _add(c.delete, "import_position", rows)


# -- redaction -------------------------------------------------------------------------------
def _redact_text(conn: Connection, c: Closure, matcher: Matcher) -> None:
    for table, rows in scan(conn, c.tables, matcher).items():
        if table == "chunk":  # chunks are rebuilt from their source
            for rowid in rows:
                src = conn.execute(text("SELECT source_type, source_id FROM chunk WHERE "
                                        "rowid = :r"), {"r": rowid}).one()
                c.rebuild.setdefault(str(src[0]), set()).add(int(src[1]))
            continue
        if table == "import_position":  # a path holding it: read the file again next time
            _add(c.delete, table, set(rows))
            continue
        keys = c.tables[table].keys
        for rowid, cols in rows.items():
            cols = [col for col in cols if col not in keys]  # keys cannot be rewritten
            if not cols:
                continue
            values = conn.execute(text(f"SELECT {', '.join(q(col) for col in cols)} FROM "
                                       f"{q(table)} WHERE rowid = :r"), {"r": rowid}).one()
            c.scrub.setdefault(table, {})[rowid] = {
                col: matcher.redact(v)[0] for col, v in zip(cols, values, strict=True)}
        if table in ("entry", "memory") and c.scrub.get(table):
            c.rebuild.setdefault(table, set()).update(
                int(v) for v in _column_values(conn, table, "id", set(c.scrub[table])))


def _redact_ids(store: Store, conn: Connection, c: Closure) -> None:
    kind, value = c.scope.kind, c.scope.value
    own: dict[str, set[int]] = {}
    if kind == "session":
        sid = _resolve_session(store, value)
        c.session_id = sid
        own["entry"] = _rows_where_in(conn, "entry", "session_id", [sid])
        own["session"] = _rows_where_in(conn, "session", "id", [sid])
    else:
        table = "entry" if kind == "entry" else "memory"
        row = conn.execute(text(f"SELECT rowid FROM {table} WHERE id = :i"),
                           {"i": int(value)}).first()
        if row is None:
            raise NotFound(f"no {table} with id {value}")
        own[table] = {int(row[0])}
    for table, rows in own.items():
        cols = [col for col in OWN[table] if col in c.tables[table].columns]
        for r in conn.execute(text(f"SELECT rowid, {', '.join(q(x) for x in cols)} FROM "
                                   f"{q(table)} WHERE rowid IN (SELECT value FROM json_each(:i))"),
                              {"i": _ids(rows)}).all():
            c.scrub.setdefault(table, {})[int(r[0])] = {
                col: redact_all(v) for col, v in zip(cols, r[1:], strict=True)
                if isinstance(v, str) and v}
            c.texts.extend(v for v in r[1:] if isinstance(v, str) and v and v[:1] not in "{[")
        if table in ("entry", "memory"):
            c.rebuild.setdefault(table, set()).update(rows)
    for table, (pointers, copied) in DERIVED.items():
        if table not in c.tables:
            continue
        for target, column in pointers.items():
            ids = c.rebuild.get(target)
            if not ids:
                continue
            where = f"{q(column)} IN (SELECT value FROM json_each(:i))"
            if table == "recall_candidate":
                where += " AND source_type = :t"
            for r in conn.execute(text(f"SELECT rowid, {', '.join(q(x) for x in copied)} "
                                       f"FROM {q(table)} WHERE {where}"),
                                  {"i": _ids(ids), "t": target}).all():
                c.scrub.setdefault(table, {})[int(r[0])] = {
                    col: redact_all(v) for col, v in zip(copied, r[1:], strict=True)
                    if isinstance(v, str) and v and v != MARK}


def _redact_followups(conn: Connection, c: Closure) -> None:
    """Memories whose evidence was redacted are flagged; import positions of changed files
    go; what importers must refuse from now on is fingerprinted."""
    entries = c.rebuild.get("entry", set())
    memories = c.rebuild.get("memory", set())
    if entries:
        for memory_id, n in conn.execute(text(
                "SELECT memory_id, COUNT(*) FROM evidence WHERE entry_id IN (SELECT value FROM "
                "json_each(:i)) GROUP BY memory_id"), {"i": _ids(entries)}).all():
            if int(memory_id) not in memories:
                c.review[int(memory_id)] = (f"{n} of its evidence entries were redacted: "
                                            "review whether it still stands")
        _import_positions(conn, c, entries)


# -- what the probes and the fingerprints need ----------------------------------------------
def _fingerprints(conn: Connection, c: Closure) -> None:
    if c.action == "erase":
        entries = c.delete.get("entry", set())
        memories = c.delete.get("memory", set())
        traces = c.delete.get("recall_trace", set())
    else:
        entries = set(c.scrub.get("entry", {}))
        memories = set(c.scrub.get("memory", {}))
        traces = {r for r, cols in c.scrub.get("recall_trace", {}).items() if "query" in cols}
    c.fingerprints = {
        "entry": [str(v) for v in _column_values(conn, "entry", "idem_key", entries)],
        "memory": [str(v) for v in _column_values(conn, "memory", "content_hash", memories)],
        "trace": [f"{r[0]}|{r[1]}" for r in conn.execute(text(
            "SELECT ts, query FROM recall_trace WHERE origin = 'lca-tui' AND rowid IN "
            "(SELECT value FROM json_each(:i))"), {"i": _ids(traces)}).all()] if traces else [],
    }


def _chunks(conn: Connection, c: Closure) -> None:
    """The chunks removed (erase) or replaced (redact), their vectors for the semantic probe."""
    if c.action == "erase":
        ids = set(c.delete.get("chunk", set()))
    else:
        ids = set()
        for source_type, sources in c.rebuild.items():
            ids |= {int(r[0]) for r in conn.execute(text(
                "SELECT id FROM chunk WHERE source_type = :t AND source_id IN (SELECT value "
                "FROM json_each(:i))"), {"t": source_type, "i": _ids(sources)}).all()}
    rows = conn.execute(text("SELECT id, text, status FROM chunk WHERE id IN (SELECT value FROM "
                             "json_each(:i)) ORDER BY id"), {"i": _ids(ids)}).all()
    found = vec.vectors_of(conn, [int(r[0]) for r in rows])
    kept: list[np.ndarray] = []
    chunk_rows = []
    for cid, body, _status in rows:
        v = found.get(int(cid))
        chunk_rows.append((int(cid), str(body), v is not None))
        if v is not None:
            kept.append(v)
    c.chunk_rows = chunk_rows
    if kept:
        c.vectors = np.stack(kept).astype(np.float32)


def _texts(conn: Connection, c: Closure, matcher: Matcher | None) -> None:
    if matcher is not None:
        c.texts = [c.scope.value] if c.scope.kind == "match" else list(matcher.found)
        return
    if c.action == "erase":
        entries = c.delete.get("entry", set())
        memories = c.delete.get("memory", set())
        c.texts = [str(v) for v in _column_values(conn, "entry", "content", entries)]
        c.texts += [str(v) for v in _column_values(conn, "memory", "body", memories)]


def _exports(conn: Connection, c: Closure, matcher: Matcher | None) -> None:
    """Exports holding part of the scope: by what they recorded, and (text scopes) by what
    their files say."""
    if "export" not in c.tables:
        return
    holding: set[int] = set()
    touched = c.delete if c.action == "erase" else {
        t: set(rows) for t, rows in c.scrub.items()}
    for item_type in ("session", "entry", "memory", "evidence"):
        rows = touched.get(item_type)
        if not rows or "export_item" not in c.tables:
            continue
        ids = [str(v) for v in _column_values(conn, item_type, "id", rows)]
        holding |= {int(r[0]) for r in conn.execute(text(
            "SELECT DISTINCT export_id FROM export_item WHERE item_type = :t AND item_id IN "
            "(SELECT value FROM json_each(:v))"), {"t": item_type, "v": json.dumps(ids)})}
    for export_id, path, files in conn.exec_driver_sql(
            "SELECT id, path, files FROM export ORDER BY id").all():
        try:
            listed = [str(f) for f in json.loads(files or "[]")]
        except ValueError:
            listed = []
        folder = Path(path)
        present = [folder / f for f in listed if (folder / f).is_file()]
        held = [str(p) for p in present if matcher is not None and _file_holds(p, matcher)]
        if int(export_id) in holding:
            held = [str(p) for p in present]
        if held:
            c.exports.append(ExportHit(int(export_id), str(folder), held))


def _file_holds(path: Path, matcher: Matcher) -> bool:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return any(matcher.holds(line) for line in fh)
    except OSError:
        return False


def _labels(conn: Connection, c: Closure) -> None:
    """A few readable rows per table for the preview tree (ids, kinds, names; no text
    excerpt: the preview names records, it does not show them again)."""
    touched: dict[str, set[int]] = {t: set(r) for t, r in c.delete.items()}
    for t, rows in c.scrub.items():
        touched.setdefault(t, set()).update(rows)
    for table, rowids in touched.items():
        first = sorted(rowids)[:LABELS_PER_TABLE]
        if table == "entry":
            sql = ("SELECT session_id, seq, kind, agent, sensitivity FROM entry WHERE rowid IN "
                   "(SELECT value FROM json_each(:i)) ORDER BY session_id, seq")
            out = [f"{r[0][:8]}#{r[1]} {r[2]}" + (f" · {r[3]}" if r[3] != "main" else "")
                   + (f" · {r[4]}" if r[4] != "public" else "")
                   for r in conn.execute(text(sql), {"i": _ids(first)}).all()]
        elif table == "memory":
            out = [f"memory {r[0]} · {r[1] if r[2] != 'secret' else '[secret]'}"
                   for r in conn.execute(text(
                       "SELECT id, name, sensitivity FROM memory WHERE rowid IN (SELECT value "
                       "FROM json_each(:i)) ORDER BY id"), {"i": _ids(first)}).all()]
        elif table == "session":
            out = [f"session {r[0][:8]}" for r in conn.execute(text(
                "SELECT id FROM session WHERE rowid IN (SELECT value FROM json_each(:i))"),
                {"i": _ids(first)}).all()]
        elif table == "import_position":
            out = [f"import position of {Path(r[0]).name}" for r in conn.execute(text(
                "SELECT path FROM import_position WHERE rowid IN (SELECT value FROM "
                "json_each(:i)) ORDER BY path"), {"i": _ids(first)}).all()]
        elif "id" in c.tables[table].columns:
            out = [f"{table} {r[0]}" for r in conn.execute(text(
                f"SELECT id FROM {q(table)} WHERE rowid IN (SELECT value FROM json_each(:i)) "
                "ORDER BY id"), {"i": _ids(first)}).all()]
        else:
            out = [f"{table} row {r}" for r in first]
        action = ("deleted" if table in c.delete and table not in c.scrub else "rewritten")
        if table in c.delete and table in c.scrub:
            action = "deleted or rewritten"
        c.labels[table] = [f"{x} ({action})" for x in out]
    if c.review:
        c.labels["memory_review"] = [f"memory {m}: {why}" for m, why in sorted(c.review.items())]


def compute(store: Store, scope: Scope, action: str) -> Closure:
    """The closure of ``scope`` for ``action`` (``erase`` or ``redact``): a read, nothing
    changes."""
    if action not in ("erase", "redact"):
        raise ValueError("action must be 'erase' or 'redact'")
    c = Closure(scope, action)
    matcher = Matcher(scope) if scope.is_text else None
    with store.read() as conn:
        c.tables = relational_tables(conn)
        if action == "erase":
            if matcher is not None:
                _seed_text(conn, c, matcher)
            else:
                _seed_ids(store, conn, c)
            _grow(conn, c)
            if matcher is not None:  # columns of container rows that stay
                for table, rows in c.scrub.items():
                    for rowid, cols in rows.items():
                        values = conn.execute(text(
                            f"SELECT {', '.join(q(col) for col in cols)} FROM {q(table)} "
                            "WHERE rowid = :r"), {"r": rowid}).one()
                        rows[rowid] = {col: matcher.redact(v)[0] if isinstance(v, str) else v
                                       for col, v in zip(cols, values, strict=True)}
        else:
            if matcher is not None:
                _redact_text(conn, c, matcher)
            else:
                _redact_ids(store, conn, c)
            _redact_followups(conn, c)
        _texts(conn, c, matcher)
        _fingerprints(conn, c)
        _chunks(conn, c)
        _exports(conn, c, matcher)
        _labels(conn, c)
    return c
