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
from typing import TYPE_CHECKING

from sqlalchemy import Connection, exists, func, literal_column, not_, or_
from sqlmodel import col, select

from store.core.errors import NotFound
from store.core.models import Chunk, Entry, Evidence, Memory, Session
from store.privacy import describe, redaction
from store.privacy.scope import Matcher, Scope
from store.privacy.sets import (
    Closure,
    ExportHit,
    add_rows,
    column_values,
    ids_json,
    import_positions,
    resolve_session,
    rows_where,
    scan,
)
from store.privacy.tables import BOOKKEEPING, in_json, rel, relational_tables, rowid

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

__all__ = ["Closure", "ExportHit", "compute"]

SCRUB_TABLES = frozenset({"session", "export", "audit_event"})
DELETE_ON = frozenset({("evidence", "entry_id"), ("checkpoint", "session_id")})
# table → (type column, id column, {type value: table it names})
SOFT = {
    "chunk": ("source_type", "source_id", {"entry": "entry", "memory": "memory"}),
    "recall_candidate": ("source_type", "source_id", {"entry": "entry", "memory": "memory"}),
    "secret_finding": ("source_type", "source_id", {"entry": "entry", "memory": "memory"}),
    "export_item": ("item_type", "item_id", {"session": "session", "entry": "entry",
                                              "memory": "memory", "evidence": "evidence"}),
}
# Pointers kept inside a JSON list (table → (column, keys naming an entry id)): a proposal
# derived from entries names them in its evidence; it goes when all of them go, as a memory
# does.
JSON_EVIDENCE = {"proposal": ("evidence", ("entry_id", "entry"))}


# -- seeds -----------------------------------------------------------------------------------
def _seedids_json(store: Store, conn: Connection, c: Closure) -> None:
    """The rows a session, entry or memory scope names."""
    kind, value = c.scope.kind, c.scope.value
    if kind == "session":
        sid = resolve_session(store, value)
        c.session_id = sid
        c.delete["session"] = {int(r[0]) for r in conn.execute(
            select(rowid(Session)).where(col(Session.id) == sid)).all()}
        for name, info in c.tables.items():
            if name not in BOOKKEEPING and name != "session" and "session_id" in info.columns:
                add_rows(c.delete, name, rows_where(conn, name, "session_id", [sid]))
        return
    if kind == "entries":  # a set of entries (the transcript retention): each must exist
        ids = c.scope.ids
        rows = {int(eid): int(row) for row, eid in conn.execute(
            select(rowid(Entry), col(Entry.id))
            .where(in_json(col(Entry.id), json.dumps(ids)))).all() if eid is not None}
        missing = [i for i in ids if i not in rows]
        if missing:
            raise NotFound(f"no entry with id {', '.join(map(str, missing[:5]))}"
                           + (f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""))
        c.delete["entry"] = set(rows.values())
        return
    model = Entry if kind == "entry" else Memory
    table = str(model.__tablename__)
    found = conn.execute(select(rowid(model)).where(col(model.id) == int(value))).first()
    if found is None:
        where = "`lca-tui entries SESSION`" if kind == "entry" else "`lca-tui memories`"
        raise NotFound(f"no {table} with id {value}: {where} shows ids")
    c.delete[table] = {int(found[0])}


def _seed_text(conn: Connection, c: Closure, matcher: Matcher) -> None:
    """Every row holding the text: deleted, or its matching columns redacted in a
    container table (``SCRUB_TABLES``)."""
    for table, rows in scan(conn, c.tables, matcher).items():
        keys = c.tables[table].keys
        for row, cols in rows.items():
            if table in SCRUB_TABLES and set(cols) - keys:
                c.scrub.setdefault(table, {})[row] = {name: None for name in cols
                                                      if name not in keys}
            elif table == "chunk":  # a chunk holding it: its source holds it too
                src = conn.execute(select(Chunk.source_type, Chunk.source_id)
                                   .where(rowid(Chunk) == row)).one()
                add_rows(c.delete, str(src[0]), {int(src[1])})
                add_rows(c.delete, "chunk", {row})
            else:
                add_rows(c.delete, table, {row})


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
                keys = column_values(conn, fk.parent, fk.parent_column, gone)
                rows = rows_where(conn, name, fk.column, keys) - c.delete.get(name, set())
                if not rows:
                    continue
                if fk.on_delete == "CASCADE" or (fk.on_delete in ("NO ACTION", "RESTRICT") and (
                        fk.column not in info.nullable or (name, fk.column) in DELETE_ON)):
                    changed |= add_rows(c.delete, name, rows)
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
                        for k in column_values(conn, target, "id", gone)]
                t = rel(name, type_col, id_col)
                rows = {int(r[0]) for r in conn.execute(
                    select(t.c.rowid).where(t.c[type_col] == type_value,
                                            in_json(t.c[id_col], json.dumps(keys)))).all()}
                changed |= add_rows(c.delete, name, rows)
        changed |= _json_evidence(conn, c)
        changed |= _memories_losing_evidence(conn, c)
        changed |= _emptied_sessions(conn, c)
        changed |= import_positions(conn, c, c.delete.get("entry", set()))
        if not changed:
            break
    if c.delete.get("chunk") and "chunk" in c.tables:
        rows = rows_where(conn, "chunk", "nn_chunk_id",
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
        t = rel(table, column)
        gone_json = ids_json(gone)
        # the items of the JSON list, and the entry id each names (or NULL)
        j1 = func.json_each(t.c[column]).table_valued("value").alias("j1")
        j2 = func.json_each(t.c[column]).table_valued("value").alias("j2")
        p1 = func.coalesce(*(func.json_extract(j1.c.value, f"$.{k}") for k in keys))
        p2 = func.coalesce(*(func.json_extract(j2.c.value, f"$.{k}") for k in keys))
        rows = {int(r[0]) for r in conn.execute(
            select(t.c.rowid).where(
                func.json_valid(t.c[column]),
                exists(select(literal_column("1")).select_from(j1)
                       .where(in_json(p1, gone_json))),
                not_(exists(select(literal_column("1")).select_from(j2)
                            .where(p2.is_not(None), not_(in_json(p2, gone_json))))))).all()}
        changed |= add_rows(c.delete, table, rows)
    return changed


def _memories_losing_evidence(conn: Connection, c: Closure) -> bool:
    gone = c.delete.get("evidence")
    if not gone:
        return False
    changed = False
    rows = conn.execute(select(Evidence.memory_id, func.count())
                        .where(in_json(rowid(Evidence), ids_json(gone)))
                        .group_by(col(Evidence.memory_id))).all()
    erased_memories = c.delete.get("memory", set())
    for memory_id, lost in rows:
        if int(memory_id) in erased_memories:
            continue
        total = int(conn.execute(select(func.count()).select_from(Evidence)
                                 .where(col(Evidence.memory_id) == memory_id)).scalar_one())
        if lost >= total:
            changed |= add_rows(c.delete, "memory", {int(memory_id)})
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
    for sid, lost in conn.execute(select(Entry.session_id, func.count())
                                  .where(in_json(rowid(Entry), ids_json(gone)))
                                  .group_by(col(Entry.session_id))).all():
        total = int(conn.execute(select(func.count()).select_from(Entry)
                                 .where(col(Entry.session_id) == sid)).scalar_one())
        if lost >= total:
            rows = {int(r[0]) for r in conn.execute(
                select(rowid(Session)).where(col(Session.id) == sid)).all()}
            if add_rows(c.delete, "session", rows):
                changed = True
                for row in rows:
                    c.scrub.get("session", {}).pop(row, None)
    return changed


# Governance records that can hold a copy of a memory's or an entry's text: the proposal that
# made a memory (its content), proposals aimed at it (``target_snapshot``), their checks'
# evidence, their edit history, their verification records, decisions and flags.
COPY_TABLES = ("proposal", "proposal_check", "proposal_edit", "proposal_decision",
               "memory_flag")
COPY_MIN = 8


def _copy_texts(conn: Connection, c: Closure) -> list[str]:
    texts = [str(v) for v in column_values(conn, "memory", "body", c.delete.get("memory",
                                                                                 set()))]
    texts += [str(v) for v in column_values(conn, "memory", "name", c.delete.get("memory",
                                                                                 set()))]
    texts += [str(v) for v in column_values(conn, "entry", "content", c.delete.get("entry",
                                                                                  set()))]
    out: list[str] = []
    for t in texts:
        t = t.strip()
        if len(t) >= COPY_MIN:
            for form in (t, json.dumps(t)[1:-1], json.dumps(t, ensure_ascii=False)[1:-1]):
                if form not in out:
                    out.append(form)
    return out


def governance_copies(conn: Connection, c: Closure) -> bool:
    """Proposals naming an erased memory (the add that made it, those aimed at it), and every
    governance row holding an erased memory's or entry's own text (``COPY_TABLES``): erased
    with it — a proposal goes with its checks, edits and decisions (``_grow``)."""
    changed = False
    memories = sorted(int(v) for v in column_values(conn, "memory", "id",
                                                    c.delete.get("memory", set())))
    if memories and "proposal" in c.tables:
        t = rel("proposal", "memory_id", "targets")
        j = func.json_each(t.c.targets).table_valued("value").alias("j")
        rows = {int(r[0]) for r in conn.execute(select(t.c.rowid).where(
            in_json(t.c.memory_id, ids_json(memories))
            | (func.json_valid(t.c.targets) & exists(
                select(literal_column("1")).select_from(j)
                .where(in_json(j.c.value, ids_json(memories))))))).all()}
        changed |= add_rows(c.delete, "proposal", rows)
    texts = _copy_texts(conn, c)
    if not texts:
        return changed
    raw_texts = tuple(texts)

    def holds(value: object) -> int:
        return int(isinstance(value, str) and any(t in value for t in raw_texts))

    from store.core import pragmas
    from store.privacy.tables import dbapi

    inside = pragmas.python_functions(conn)
    if inside:
        dbapi(conn).create_function("lca_holds_copy", 1, holds, deterministic=True)
    for name in COPY_TABLES:
        info = c.tables.get(name)
        if info is None:
            continue
        cols = [col_ for col_ in info.text_columns if col_ not in info.keys]
        if not cols:
            continue
        t = rel(name, *cols)
        # on a server: the same substring test in SQL (LIKE is case-sensitive there)
        clause = or_(*(func.lca_holds_copy(t.c[x]) for x in cols)) if inside else or_(
            *(t.c[x].contains(v, autoescape=True) for x in cols for v in raw_texts))
        rows = {int(r[0]) for r in conn.execute(select(t.c.rowid).where(clause)).all()}
        changed |= add_rows(c.delete, name, rows - c.delete.get(name, set()))
    return changed


def redact_copies(conn: Connection, c: Closure) -> None:
    """A redaction by id: the governance rows holding the redacted texts (``COPY_TABLES``)
    get each copy replaced by the mark, in place (as JSON-escaped text too)."""
    from store.privacy.scope import MARK
    from store.privacy.tables import dbapi

    forms: list[str] = []
    for t in c.texts:
        t = t.strip()
        if len(t) >= COPY_MIN:
            for form in (t, json.dumps(t)[1:-1], json.dumps(t, ensure_ascii=False)[1:-1]):
                if form not in forms:
                    forms.append(form)
    if not forms:
        return
    forms.sort(key=len, reverse=True)
    found = tuple(forms)
    from store.core import pragmas

    inside = pragmas.python_functions(conn)
    if inside:
        dbapi(conn).create_function(
            "lca_holds_copy", 1,
            lambda v: int(isinstance(v, str) and any(f in v for f in found)),
            deterministic=True)
    for name in COPY_TABLES:
        info = c.tables.get(name)
        if info is None:
            continue
        cols = [x for x in info.text_columns if x not in info.keys]
        if not cols:
            continue
        handle = rel(name, *cols)
        for r in conn.execute(select(handle.c.rowid, *(handle.c[x] for x in cols)).where(
                or_(*(func.lca_holds_copy(handle.c[x]) for x in cols)) if inside else or_(
                    *(handle.c[x].contains(f, autoescape=True) for x in cols
                      for f in found)))).all():
            changed: dict[str, str] = {}
            for col_name, value in zip(cols, r[1:], strict=True):
                if isinstance(value, str) and any(f in value for f in found):
                    text = str(value)
                    for f in found:
                        text = text.replace(f, MARK)
                    changed[col_name] = text
            if changed:
                c.scrub.setdefault(name, {}).setdefault(int(r[0]), {}).update(changed)


def compute(store: Store, scope: Scope, action: str) -> Closure:
    """The closure of ``scope`` for ``action`` (``erase`` or ``redact``): a read, nothing
    changes."""
    if action not in ("erase", "redact"):
        raise ValueError("action must be 'erase' or 'redact'")
    if scope.kind == "entries" and action != "erase":
        raise ValueError("a set of entries (the transcript retention) is erased, not redacted")
    c = Closure(scope, action)
    matcher = Matcher(scope) if scope.is_text else None
    with store.read() as conn:
        c.tables = relational_tables(conn)
        if action == "erase":
            if matcher is not None:
                _seed_text(conn, c, matcher)
            else:
                _seedids_json(store, conn, c)
            _grow(conn, c)
            if governance_copies(conn, c):
                _grow(conn, c)
            if matcher is not None:  # columns of container rows that stay
                for table, rows in c.scrub.items():
                    for row, cols in rows.items():
                        t = rel(table, *cols)
                        values = conn.execute(select(*(t.c[name] for name in cols))
                                              .where(t.c.rowid == row)).one()
                        rows[row] = {name: matcher.redact_in(table, name, v)[0]
                                     if isinstance(v, str) else v
                                     for name, v in zip(cols, values, strict=True)}
        else:
            if matcher is not None:
                redaction.redact_text(conn, c, matcher)
            else:
                redaction.redact_ids(store, conn, c)
                redact_copies(conn, c)
            redaction.redact_followups(conn, c)
        describe.texts(conn, c, matcher)
        describe.fingerprints(conn, c)
        describe.bound_files(store, conn, c)
        describe.chunks(conn, c)
        describe.exports(conn, c, matcher)
        describe.labels(conn, c)
    return c

