"""What a closure tells besides its rows: the texts the probes look for, the fingerprints to
record, the chunks removed (with their vectors, for the semantic probe), the exports holding
the scope, and a few readable labels per table for the preview."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import Connection
from sqlmodel import col, select

from store.core import erasure, vec
from store.core.models import Chunk, Entry, ImportPosition, Memory, Session
from store.export.models import Export, ExportItem
from store.recall.models import RecallTrace
from store.privacy.scope import Matcher
from store.privacy.sets import Closure, ExportHit, column_values, ids_json
from store.privacy.tables import in_json, rel, rowid

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

LABELS_PER_TABLE = 40


def fingerprints(conn: Connection, c: Closure) -> None:
    if c.action == "erase":
        entries = c.delete.get("entry", set())
        memories = c.delete.get("memory", set())
        traces = c.delete.get("recall_trace", set())
    else:
        entries = set(c.scrub.get("entry", {}))
        memories = set(c.scrub.get("memory", {}))
        traces = {r for r, cols in c.scrub.get("recall_trace", {}).items() if "query" in cols}
    sessions = c.delete.get("session", set()) if c.action == "erase" else set()
    c.fingerprints = {
        "entry": [str(v) for v in column_values(conn, "entry", "idem_key", entries)]
        + [erasure.session_value(str(v)) for v in column_values(conn, "session", "id",
                                                                 sessions)],
        "memory": [str(v) for v in column_values(conn, "memory", "content_hash", memories)],
        "trace": [f"{r[0]}|{r[1]}" for r in conn.execute(
            select(RecallTrace.ts, RecallTrace.query)
            .where(col(RecallTrace.origin) == "lca-tui",
                   in_json(rowid(RecallTrace), ids_json(traces)))).all()] if traces else [],
    }


def chunks(conn: Connection, c: Closure) -> None:
    """The chunks removed (erase) or replaced (redact), their vectors for the semantic probe."""
    if c.action == "erase":
        ids = set(c.delete.get("chunk", set()))
    else:
        ids = set()
        for source_type, sources in c.rebuild.items():
            ids |= {int(r[0]) for r in conn.execute(
                select(Chunk.id).where(col(Chunk.source_type) == source_type,
                                       in_json(col(Chunk.source_id), ids_json(sources)))).all()}
    rows = conn.execute(select(Chunk.id, Chunk.text, Chunk.status)
                        .where(in_json(col(Chunk.id), ids_json(ids)))
                        .order_by(col(Chunk.id))).all()
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


def texts(conn: Connection, c: Closure, matcher: Matcher | None) -> None:
    if matcher is not None:
        c.texts = [c.scope.value] if c.scope.kind == "match" else list(matcher.found)
        return
    if c.action == "erase":
        entries = c.delete.get("entry", set())
        memories = c.delete.get("memory", set())
        c.texts = [str(v) for v in column_values(conn, "entry", "content", entries)]
        c.texts += [str(v) for v in column_values(conn, "memory", "body", memories)]


def exports(conn: Connection, c: Closure, matcher: Matcher | None) -> None:
    """The export files that hold part of the scope — only those, never the rest of an
    export: for a text scope, the files whose lines hold the text; for a session, entry or
    memory, the files the export recorded those records in (``export_item.file``)."""
    if "export" not in c.tables:
        return
    recorded = _recorded_files(conn, c) if matcher is None else {}
    for export_id, path, files in conn.execute(
            select(Export.id, Export.path, Export.files).order_by(col(Export.id))).all():
        try:
            listed = [str(f) for f in json.loads(files or "[]")]
        except ValueError:
            listed = []
        folder = Path(path)
        present = [(f, folder / f) for f in listed if (folder / f).is_file()]
        if matcher is not None:
            held = [str(p) for _, p in present if _file_holds(p, matcher)]
        else:
            wanted = recorded.get(int(export_id), set())
            # an item recorded without its file (an older export): every file may hold it
            held = [str(p) for f, p in present if f in wanted or None in wanted]
        if held:
            c.exports.append(ExportHit(int(export_id), str(folder), held))


def _recorded_files(conn: Connection, c: Closure) -> dict[int, set[str | None]]:
    """export id → the files its records of the closure's sessions, entries, memories and
    evidence were written to."""
    out: dict[int, set[str | None]] = {}
    if "export_item" not in c.tables:
        return out
    touched = c.delete if c.action == "erase" else {
        t: set(rows) for t, rows in c.scrub.items()}
    for item_type in ("session", "entry", "memory", "evidence"):
        rows = touched.get(item_type)
        if not rows:
            continue
        ids = [str(v) for v in column_values(conn, item_type, "id", rows)]
        for export_id, file in conn.execute(
                select(ExportItem.export_id, ExportItem.file).distinct()
                .where(col(ExportItem.item_type) == item_type,
                       in_json(col(ExportItem.item_id), json.dumps(ids)))).all():
            out.setdefault(int(export_id), set()).add(None if file is None else str(file))
    return out


def _file_holds(path: Path, matcher: Matcher) -> bool:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return any(matcher.holds(line) for line in fh)
    except OSError:
        return False


EXCERPT = 60
"""Characters of an entry's or memory's text a preview label quotes."""


def excerpt(text: str | None, matcher: Matcher | None) -> str:
    """What goes, in a few words: around the first match for a text scope, else the text's
    start; on one line, cut to about ``EXCERPT`` characters."""
    if not text:
        return ""
    found = matcher.pattern.search(text) if matcher is not None else None
    start = 0 if found is None else max(0, found.start() - EXCERPT // 3)
    piece = " ".join(text[start:start + EXCERPT].split())
    return ("…" if start else "") + piece + ("…" if start + EXCERPT < len(text) else "")


def labels(conn: Connection, c: Closure) -> None:
    """A few readable rows per table for the preview tree: ids, kinds, names, and for an
    entry or a memory an excerpt of what goes (around the match for a text scope; none for
    a secret one)."""
    matcher = Matcher(c.scope) if c.scope.is_text else None
    touched: dict[str, set[int]] = {t: set(r) for t, r in c.delete.items()}
    for t, rows in c.scrub.items():
        touched.setdefault(t, set()).update(rows)
    for table, rowids in touched.items():
        first = sorted(rowids)[:LABELS_PER_TABLE]
        if table == "entry":
            query = (select(Entry.session_id, Entry.seq, Entry.kind, Entry.agent)
                     .add_columns(col(Entry.sensitivity), col(Entry.content))
                     .where(in_json(rowid(Entry), ids_json(first)))
                     .order_by(col(Entry.session_id), col(Entry.seq)))
            out = [f"{r[0][:8]}#{r[1]} {r[2]}" + (f" · {r[3]}" if r[3] != "main" else "")
                   + (f" · {r[4]}" if r[4] != "public" else "")
                   + (f' "{excerpt(r[5], matcher)}"' if r[4] != "secret" and r[5] else "")
                   for r in conn.execute(query).all()]
        elif table == "memory":
            out = [f"memory {r[0]} · " + (f'{r[1]} "{excerpt(r[3], matcher)}"'
                                          if r[2] != "secret" else "[secret]")
                   for r in conn.execute(
                       select(Memory.id, Memory.name, Memory.sensitivity, Memory.body)
                       .where(in_json(rowid(Memory), ids_json(first)))
                       .order_by(col(Memory.id))).all()]
        elif table == "session":
            out = [f"session {r[0][:8]}" for r in conn.execute(
                select(Session.id).where(in_json(rowid(Session), ids_json(first)))).all()]
        elif table == "import_position":
            out = [f"import position of {Path(r[0]).name}" for r in conn.execute(
                select(ImportPosition.path)
                .where(in_json(rowid(ImportPosition), ids_json(first)))
                .order_by(col(ImportPosition.path))).all()]
        elif "id" in c.tables[table].columns:
            handle = rel(table, "id")
            out = [f"{table} {r[0]}" for r in conn.execute(
                select(handle.c.id).where(in_json(handle.c.rowid, ids_json(first)))
                .order_by(handle.c.id)).all()]
        else:
            out = [f"{table} row {r}" for r in first]
        action = ("deleted" if table in c.delete and table not in c.scrub else "rewritten")
        if table in c.delete and table in c.scrub:
            action = "deleted or rewritten"
        c.labels[table] = [f"{x} ({action})" for x in out]
    if c.review:
        c.labels["memory_review"] = [f"memory {m}: {why}" for m, why in sorted(c.review.items())]




def bound_files(store: Store, conn: Connection, c: Closure) -> None:
    """The bound memory directory's files of the memories the closure erases (deleted) or
    redacts (rewritten as the memory will read), and the fingerprints of what each file says
    now, so that a copy of it coming back is refused as erased earlier. A symlink is never
    followed: the link itself is deleted, what it points at is left alone."""
    from store.governance.files import usable_bound_dir

    folder = usable_bound_dir(store)
    if folder is None:
        return
    c.bound_dir = str(folder)
    if c.action == "erase":
        rows = c.delete.get("memory", set())
    else:
        rows = set(c.scrub.get("memory", {}))
    if not rows:
        return
    found = conn.execute(select(rowid(Memory), Memory.id, Memory.source_file)
                         .where(in_json(rowid(Memory), ids_json(rows)))).all()
    prints: list[str] = []
    for row, memory_id, source in found:
        if not source or "#" in str(source):
            continue
        path = Path(str(source))
        if path.parent != folder or not (path.exists() or path.is_symlink()):
            continue
        if not path.is_symlink():
            prints += file_prints(path)
        if c.action == "erase" or path.is_symlink():
            c.files[str(path)] = None
            continue
        m = _redacted_memory(conn, int(memory_id), c.scrub["memory"][int(row)])
        data = _redacted_file(conn, m, folder)
        if _names_it(c, path.name):  # the name holds the text too: the file is renamed
            new = _new_name(conn, c, m, folder, {Path(p) for p in c.files})
            c.files[str(path)] = None
            c.files[str(new)] = data
            c.renamed[str(path)] = str(new)
        else:
            c.files[str(path)] = data
    c.fingerprints.setdefault("memory", [])
    c.fingerprints["memory"] += [p for p in prints if p not in c.fingerprints["memory"]]


def file_prints(path: Path) -> list[str]:
    """The content hashes an import of this memory file would give (the gate's and the plain
    importer's), for the erasure fingerprints."""
    from store.core import memories as memory_rows
    from store.core.index import sha256_text
    from store.ingest.memory_dir import parse_memory_file

    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    row, _ = parse_memory_file(path, raw)
    out = [sha256_text(json.dumps(row, sort_keys=True))]
    try:
        out.append(memory_rows.content_hash(Memory(**row)))
    except (TypeError, ValueError):
        pass
    return out


def _names_it(c: Closure, name: str) -> bool:
    """Whether a file name holds the redacted text (a text scope's matcher; ``-`` and ``_``
    read as spaces too, as a slug writes them)."""
    from store.privacy.bound_dir import name_holds

    return c.scope.is_text and name_holds(name, Matcher(c.scope))


def _new_name(conn: Connection, c: Closure, m: Memory, folder: Path,
              taken: set[Path]) -> Path:
    """The redacted memory's new file: named from its redacted name the way a new file is,
    or ``<type>_redacted.md`` when that name would still hold the text."""
    from store.governance import files

    def named(name: str, kind: str | None) -> Path:
        saved = (m.source_file, m.name, m.type)
        m.source_file, m.name, m.type = None, name, kind  # a new file's name, not its own
        try:
            return files.path_for(conn, m, folder, taken)
        finally:
            m.source_file, m.name, m.type = saved

    new = named(m.name, m.type)
    if _names_it(c, new.name):
        new = named("redacted", m.type)
    if _names_it(c, new.name):  # the type itself holds it
        new = named("redacted", "memory")
    return new


def _redacted_memory(conn: Connection, memory_id: int, values: dict[str, object]) -> Memory:
    """Memory ``memory_id`` as it reads after the redaction (not stored)."""
    from store.core import memories as memory_rows

    m = memory_rows.get(conn, memory_id)
    assert m is not None
    for name, value in values.items():
        setattr(m, name, value)
    return m


def _redacted_file(conn: Connection, m: Memory, folder: Path) -> str:
    """The file of the redacted memory ``m``."""
    from store.governance import files

    fm = files.front_matter(m, files.supersedes_ref(conn, m, folder), files.kept_keys(m))
    return files.render(fm, m.body)
