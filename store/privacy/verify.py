"""Proof that nothing is left: probes run after an erasure or redaction, stored, shown.

- ``rows``: the closure's rows are gone (erase) or still in place (redact), and no foreign key
  points at a missing row;
- ``fts``: no FTS row is left for a removed chunk, and FTS phrase queries for the text and for
  each distinctive word find nothing that holds them;
- ``substring``: a scan of every content column (``store.privacy.content``) of every
  relational table finds the text nowhere (bookkeeping tables included); metadata columns
  that hold it (a kind, an agent name, a path the store read) are named, never rewritten;
- ``semantic``: for a session, entry or memory, no remaining chunk is within 0.98 cosine of a
  removed one (the same text kept by a record outside the scope is noted, not a leak); for a
  match or regex, what the scope removed is measured — the text around each removed span
  (its sentence or line, at most 200 characters each side) embedded — and no other chunk may
  be within 0.80 of it while at least 0.10 nearer to it than to the same text with the span
  masked (near what was removed, not only near what stays: a paraphrase of the removed text
  kept elsewhere fails; the redacted records' rebuilt chunks are not compared);
  a failure names the chunk and the next step;
- ``traces``: no recall trace or candidate holds the text or points at what was erased, and a
  probe recall for it returns nothing derived from it — the probes write no trace;
- ``exports``: no export file the store wrote still holds it;
- ``memory-dir`` (when a directory is bound): the bound memory directory's files of the
  closure are deleted or rewritten, no file there holds the text, and a git history holding
  it is named (``store.privacy.bound_dir``);
- ``raw-bytes``: the WAL was truncated, and neither the database file nor its ``-wal`` holds
  the text or any of its distinctive words (words that occur nowhere else in the store).

Details are content-free (counts, ids, file paths), since they are stored.

A *distinctive word* is a word of the erased text (3+ characters, not a stop word) that no
remaining text column, schema statement or FTS term holds: finding its bytes in the file can
only mean residue.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, column, func, or_, table
from sqlmodel import col, select

from store.core.vocab import plural
from store.core import pragmas, vec
from store.core.models import Chunk
from store.export.models import Export
from store.recall.models import RecallCandidate, RecallTrace
from store.privacy.closure import Closure
from store.privacy.content import content_columns, metadata_columns
from store.privacy.scope import Matcher, words
from store.privacy.sets import holds_clause, register_matcher
from store.privacy.tables import dbapi, in_json, rel, relational_tables

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

SEMANTIC_LIMIT = 0.98
MAX_PHRASES = 20
MAX_WORDS = 400
PROBE_RECALLS = 3
_NOT_WORD = bytes(b if (chr(b).isalnum() or b == 0x5F or b >= 0x80) else 0x20
                  for b in range(256))
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Probe:
    name: str
    passed: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


@dataclass
class Verification:
    passed: bool
    probes: list[Probe] = field(default_factory=list)
    duration_ms: float = 0.0
    id: int | None = None
    not_rerun: list[str] | None = None
    """A re-verification's probes that could not run again (they need the erased text);
    None for an erasure's own verification."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"passed": self.passed,
                               "probes": [p.to_json() for p in self.probes]}
        if self.not_rerun is not None:
            out["not_rerun"] = list(self.not_rerun)
        return out


@dataclass
class Remaining:
    """What a scan of every text column found after the change."""

    holding: dict[str, int] = field(default_factory=dict)  # table → rows holding the text
    metadata: dict[str, int] = field(default_factory=dict)  # … in a metadata column only
    words: set[str] = field(default_factory=set)  # candidate words still found somewhere
    distinctive: list[str] = field(default_factory=list)


def _scan_remaining(conn: Connection, c: Closure, matcher: Matcher | None,
                    candidates: list[str]) -> Remaining:
    """One pass over every text column of every relational table (and the schema)."""
    if not pragmas.python_functions(conn):
        return _scan_remaining_here(conn, matcher, candidates)
    out = Remaining()
    wanted = set(candidates)
    raw = dbapi(conn)
    if matcher is not None:
        def seen(value: Any) -> int:
            if isinstance(value, str) and value:
                low = value.lower()
                out.words.update(w for w in wanted - out.words if w in low)
            return 0
        register_matcher(conn, matcher)
    else:
        def seen(value: Any) -> int:
            if isinstance(value, str) and value:
                out.words.update(wanted.intersection(w.lower() for w in _WORD.findall(value)))
            return 0
    raw.create_function("lca_seen", 1, seen)
    tables = relational_tables(conn)
    for name, info in sorted(tables.items()):
        cols = info.text_columns
        if not cols:
            continue
        t = rel(name, *cols)
        if matcher is not None:
            content = content_columns(info)
            if content:
                n = conn.execute(select(func.count()).select_from(t).where(
                    holds_clause(name, t, content))).scalar_one()
                if n:
                    out.holding[name] = int(n)
            meta = metadata_columns(info)
            if meta:  # ids, kinds, times, paths: never rewritten, reported
                n = conn.execute(select(func.count()).select_from(t).where(
                    or_(*(func.lca_holds(t.c[c]) for c in meta)))).scalar_one()
                if n:
                    out.metadata[name] = int(n)
        if wanted:
            conn.execute(select(func.count()).select_from(t).where(
                or_(*(func.lca_seen(t.c[c]) for c in cols)))).scalar_one()
    if wanted:  # the schema's own statements (a word found there is no residue)
        master = table("sqlite_master", column("sql"))
        conn.execute(select(func.count()).select_from(master)
                     .where(func.lca_seen(master.c.sql))).one()
        terms = vec.fts_terms(conn)
        left = [w for w in candidates if w not in out.words and w not in terms]
        if matcher is not None:  # few words: also drop those inside an indexed term
            left = [w for w in left if not any(w in t for t in terms)]
        out.distinctive = left
    return out


def _scan_remaining_here(conn: Connection, matcher: Matcher | None,
                         candidates: list[str]) -> Remaining:
    """``_scan_remaining`` on a server, where no Python function runs inside the database:
    every text column of every table is read here, row by row, and tested the same way."""
    out = Remaining()
    wanted = set(candidates)

    def seen(value: Any) -> None:
        if not (isinstance(value, str) and value):
            return
        if matcher is not None:
            low = value.lower()
            out.words.update(w for w in wanted - out.words if w in low)
        else:
            out.words.update(wanted.intersection(w.lower() for w in _WORD.findall(value)))

    for name, info in sorted(relational_tables(conn).items()):
        cols = info.text_columns
        if not cols:
            continue
        content = set(content_columns(info)) if matcher is not None else set()
        meta = set(metadata_columns(info)) if matcher is not None else set()
        holding = flagged = 0
        t = rel(name, *cols)
        for row in conn.execute(select(*(t.c[c] for c in cols))
                                .execution_options(yield_per=2000)):
            values = dict(zip(cols, row, strict=True))
            if matcher is not None:
                holding += any(matcher.holds_in(name, c, values[c]) for c in content)
                flagged += any(matcher.holds(values[c]) for c in meta)
            if wanted:
                for v in row:
                    seen(v)
        if holding:
            out.holding[name] = holding
        if flagged:
            out.metadata[name] = flagged
    if wanted:
        terms = vec.fts_terms(conn)
        left = [w for w in candidates if w not in out.words and w not in terms]
        if matcher is not None:
            left = [w for w in left if not any(w in t for t in terms)]
        out.distinctive = left
    return out


def _candidate_words(c: Closure) -> list[str]:
    return words(c.texts)[:MAX_WORDS * 4]


def _rows(conn: Connection, c: Closure) -> Probe:
    left = 0
    for name, rows in c.delete.items():
        t = rel(name)
        left += int(conn.execute(select(func.count()).select_from(t).where(
            in_json(t.c.rowid, json.dumps(sorted(rows))))).scalar_one())
    dangling = pragmas.foreign_key_check(conn)
    kept = 0
    if c.action == "redact":
        for name, changed in c.scrub.items():
            t = rel(name)
            kept += int(conn.execute(select(func.count()).select_from(t).where(
                in_json(t.c.rowid, json.dumps(sorted(changed))))).scalar_one())
        wanted = sum(len(r) for r in c.scrub.values())
        ok = not left and not dangling and kept == wanted
        return Probe("rows", ok, f"{kept} of {plural(wanted, 'rewritten row')} kept in "
                     f"place; {plural(len(dangling), 'dangling reference')}")
    deleted = sum(len(r) for r in c.delete.values())
    ok = not left and not dangling
    return Probe("rows", ok, f"{deleted - left} of {plural(deleted, 'row')} deleted; "
                 f"{plural(len(dangling), 'dangling reference')}")


def _fts(conn: Connection, c: Closure, matcher: Matcher | None, rem: Remaining) -> Probe:
    removed = [cid for cid, _, _ in c.chunk_rows]
    present = {int(r[0]) for r in conn.execute(
        select(Chunk.id).where(in_json(col(Chunk.id), json.dumps(removed)))).all()}
    gone = [cid for cid in removed if cid not in present]
    stale = vec.fts_indexed(conn, gone)
    bad: set[int] = set(stale)
    phrases = 0
    for t in c.texts[:MAX_PHRASES]:
        ws = _WORD.findall(t)[:12]
        if not ws:
            continue
        phrases += 1
        for cid in vec.fts_phrase(conn, ws):
            body = _chunk_text(conn, cid)
            if body is None or cid in gone or (matcher is not None and matcher.holds(body)):
                bad.add(cid)  # stale, or still holding it (a kept duplicate is no hit)
    for w in rem.distinctive[:MAX_WORDS]:
        for cid in vec.fts_phrase(conn, [w]):
            body = _chunk_text(conn, cid)
            # a hit through a shared stem ("reads" for "reading") is no residue
            held = body is not None and (w in body.lower() if matcher is not None else
                                         w in {x.lower() for x in _WORD.findall(body)})
            if body is None or cid in gone or held:
                bad.add(cid)
    n_words = min(len(rem.distinctive), MAX_WORDS)
    detail = (f"{len(stale)} FTS rows left of {len(gone)} removed chunks; "
              f"{plural(phrases, 'phrase query', 'phrase queries')} and "
              f"{plural(n_words, 'distinctive-word query', 'distinctive-word queries')}: "
              f"{len(bad - set(stale))} hits holding them")
    return Probe("fts", not bad, detail)


def _chunk_text(conn: Connection, chunk_id: int) -> str | None:
    row = conn.execute(select(Chunk.text).where(col(Chunk.id) == chunk_id)).first()
    return None if row is None else str(row[0])


def _substring(c: Closure, rem: Remaining, matcher: Matcher | None, total: int) -> Probe:
    if matcher is None:
        return Probe("substring", True, (
            f"{total - len(rem.words)} of {total} words of the erased text occur in no text "
            f"column any more; {len(rem.words)} still occur in records outside the scope")
            if total else "no text to look for")
    note = ""
    if rem.metadata:
        note = ("; metadata columns (ids, kinds, times, paths the store read), which "
                f"{c.action} never rewrites, hold it in rows of: "
                + ", ".join(f"{t} {n}" for t, n in sorted(rem.metadata.items())))
    if rem.holding:
        where = ", ".join(f"{t} {n}" for t, n in sorted(rem.holding.items()))
        return Probe("substring", False, f"still held by rows of: {where}{note}")
    return Probe("substring", True, "no content column of any table holds it" + note)


def _semantic(store: Store, conn: Connection, c: Closure, matcher: Matcher | None,
              tombstone_id: int | None = None) -> Probe:
    if not len(c.vectors):
        return Probe("semantic", True, "no vectors were removed")
    ids, matrix = vec.all_vectors(conn)
    if not len(ids):
        return Probe("semantic", True, f"{plural(len(c.vectors), 'vector')} removed; none "
                     "remain")
    rebuilt: set[int] = set()
    if c.action == "redact":
        for source_type, sources in c.rebuild.items():
            rebuilt |= {int(r[0]) for r in conn.execute(
                select(Chunk.id).where(col(Chunk.source_type) == source_type, in_json(
                    col(Chunk.source_id), json.dumps(sorted(sources)))))}
    windows = _windows(c, matcher) if matcher is not None else []
    if windows:
        return _semantic_windows(store, conn, c, ids, matrix, windows, rebuilt, tombstone_id)
    sims = c.vectors @ matrix.T
    best = sims.max(axis=1)
    where = ids[sims.argmax(axis=1)]
    erased_text = {body for _, body, has in c.chunk_rows if has}
    bad, noted = 0, 0
    first: tuple[int, float] | None = None
    for sim, cid in zip(best, where, strict=True):
        if sim < SEMANTIC_LIMIT:
            continue
        body = _chunk_text(conn, int(cid)) or ""
        if matcher is not None and matcher.holds(body):
            bad += 1
        elif c.action == "redact" and int(cid) in rebuilt:
            noted += 1
        elif matcher is None and body in erased_text:
            noted += 1  # the same text, kept by a record outside the scope
        elif matcher is not None:
            noted += 1  # near the removed chunk's head, but it does not hold the text
        else:
            bad += 1
        if bad and first is None:
            first = (int(cid), float(sim))
    detail = (f"{plural(len(c.vectors), 'vector')} removed; nearest remaining chunk at cosine "
              f"{float(best.max()):.3f}; {bad} within {SEMANTIC_LIMIT}")
    if noted:
        detail += (f" ({noted} more are rebuilt chunks of the redacted records, whose text "
                   "no longer holds it)" if c.action == "redact" and matcher is None else
                   f" ({noted} more do not hold the text: near, not a leak)"
                   if matcher is not None else
                   f" ({noted} more hold the same text, kept by records outside the scope)")
    if first is not None:
        detail += _next_step(conn, first[0], first[1], tombstone_id)
    return Probe("semantic", bad == 0, detail)


WINDOW_CHARS = 200
"""At most this many characters each side of a removed span, within its sentence or line, are
what the semantic probe embeds for a text scope."""
WINDOW_LIMIT = 0.80
"""A remaining chunk this close to the text around a removed span may paraphrase it
(all-MiniLM-L6-v2: a paraphrase of a one-sentence window 0.80–0.82, an unrelated sentence
0.05; the nearest other chunk to the `tidewave` redaction of the real transcripts 0.53)."""
MAX_WINDOWS = 40


SPAN_MARGIN = 0.10
"""How much closer a chunk must be to the window than to the same window with the span
masked: a chunk near only the surrounding context (a sibling path, the same template) is
near what stays, not near what was removed."""


def _windows(c: Closure, matcher: Matcher) -> list[tuple[str, str]]:
    """The text around each span a match or regex removed (each removed chunk's text) with
    the span, and the same text with the span masked: what the scope took, not the whole
    entry's head."""
    out: dict[tuple[str, str], None] = {}
    for _cid, body, _has in c.chunk_rows:
        for m in matcher.pattern.finditer(body):
            a, b = max(0, m.start() - WINDOW_CHARS), min(len(body), m.end() + WINDOW_CHARS)
            # within the sentence (or line) that holds the span
            cut = max(body.rfind(". ", a, m.start()), body.rfind("\n", a, m.start()))
            a = cut + 1 if cut >= 0 else a
            ends = [i for i in (body.find(". ", m.end(), b), body.find("\n", m.end(), b))
                    if i >= 0]
            b = min(ends) + 1 if ends else b
            out.setdefault((body[a:b].strip(), (body[a:m.start()] + " " + body[m.end():b])
                            .strip()))
            if len(out) >= MAX_WINDOWS:
                return list(out)
    return list(out)


def _semantic_windows(store: Store, conn: Connection, c: Closure, ids: Any, matrix: Any,
                      windows: list[tuple[str, str]], rebuilt: set[int],
                      tombstone_id: int | None) -> Probe:
    vectors = store.embedder.embed([w for w, _ in windows] + [m for _, m in windows])
    n = len(windows)
    keep = [i for i, cid in enumerate(ids) if int(cid) not in rebuilt]
    if not keep:
        return Probe("semantic", True, f"{plural(n, 'span')} removed: the text "
                     "around each embedded; no other chunk remains")
    sims = vectors[:n] @ matrix[keep].T
    masked = vectors[n:] @ matrix[keep].T
    kept_ids = ids[keep]
    near = (sims >= WINDOW_LIMIT) & (sims - masked >= SPAN_MARGIN)
    context = int(((sims >= WINDOW_LIMIT) & ~near).any(axis=1).sum())
    best = sims.max(axis=1)
    found: dict[int, float] = {}
    for i, j in zip(*np.nonzero(near), strict=True):
        cid = int(kept_ids[j])
        found[cid] = max(found.get(cid, 0.0), float(sims[i, j]))
    hits = sorted(found.items(), key=lambda h: -h[1])
    detail = (f"{plural(n, 'removed span')}: the text around each embedded; the "
              f"nearest other chunk at cosine {float(best.max()):.3f}; {len(hits)} within "
              f"{WINDOW_LIMIT:.2f} that are near what was removed")
    if context:
        detail += (f"; {plural(context, 'span')} with chunks near only the text around it, "
                   "which stays: not a leak")
    if rebuilt:
        detail += (f"; the {plural(len(rebuilt), 'rebuilt chunk')} of the redacted records "
                   "not compared: their text no longer holds it")
    if hits:
        detail += _next_step(conn, hits[0][0], hits[0][1], tombstone_id)
    return Probe("semantic", not hits, detail)


def _next_step(conn: Connection, chunk_id: int, sim: float, tombstone_id: int | None) -> str:
    """Which chunk may still hold the erased content, and what to do about it."""
    row = conn.execute(select(Chunk.source_type, Chunk.source_id)
                       .where(col(Chunk.id) == chunk_id)).first()
    source = f"{row[0]} {row[1]}" if row is not None else "a record"
    flag = f"--{row[0]} {row[1]}" if row is not None and row[0] in ("entry", "memory") else ""
    after = f" --after-tombstone {tombstone_id}" if tombstone_id else ""
    return (f"; chunk {chunk_id} ({source}) at cosine {sim:.3f} may paraphrase what was "
            f"removed: read it, then erase or redact it (`lca-tui erase {flag}{after}`)")


def _traces(store: Store, conn: Connection, c: Closure, matcher: Matcher | None,
            rem: Remaining) -> Probe:
    from store.recall.run import probe as probe_recall

    held = rem.holding.get("recall_trace", 0) + rem.holding.get("recall_candidate", 0)
    pointing = 0
    if c.action == "erase":
        for target in ("entry", "memory"):
            ids = sorted(c.delete.get(target, set()))
            if ids:
                pointing += int(conn.execute(
                    select(func.count()).select_from(RecallCandidate).where(
                        col(RecallCandidate.source_type) == target,
                        in_json(col(RecallCandidate.source_id), json.dumps(ids)))).scalar_one())
    before = _last_trace(store)
    removed = {cid for cid, _, _ in c.chunk_rows}
    derived = 0
    recalls = 0
    queries: list[str] = []
    returned = 0
    for t in [t for t in c.texts if t.strip()][:PROBE_RECALLS]:
        recalls += 1
        queries.append(t[:500])
        result = probe_recall(store, t[:500])
        returned += int(getattr(result, "trace_id", None) is not None)
        for cand in result.trace.candidates:
            body = cand.excerpt or ""
            if (c.action == "erase" and cand.chunk_id in removed) or (
                    matcher is not None and matcher.holds(body)):
                derived += 1
    written = max(returned, _probe_traces(store, before, queries))
    ok = not held and not pointing and not derived and not written
    return Probe("traces", ok, (
        f"{plural(held, 'trace row')} {plural(held, 'holds', 'hold', counted=False)} it; "
        f"{plural(pointing, 'candidate')} {plural(pointing, 'points', 'point', counted=False)} "
        f"at erased records; {plural(recalls, 'probe recall')}: "
        f"{plural(derived, 'candidate')} derived from it; "
        f"{plural(written, 'trace')} written by the probes"))


def _last_trace(store: Store) -> int:
    with store.read() as conn:  # a fresh snapshot each time
        last = conn.execute(select(func.coalesce(func.max(col(RecallTrace.id)), 0))).scalar()
        return int(last or 0)


def _probe_traces(store: Store, after_id: int, queries: list[str]) -> int:
    """Traces written since ``after_id`` for one of the probes' own queries: only what the
    probes wrote counts (a hook's recall answered meanwhile is not theirs)."""
    if not queries:
        return 0
    with store.read() as conn:
        return int(conn.execute(select(func.count()).select_from(RecallTrace).where(
            col(RecallTrace.id) > after_id, col(RecallTrace.query).in_(queries))).scalar_one())


def _exports(conn: Connection, c: Closure, matcher: Matcher | None,
             tombstone_id: int | None) -> Probe:
    """Text scopes: no export file the store wrote holds the text (each file read again).
    Session, entry, memory: none of the files the closure named is left."""
    if matcher is None:
        left = [f for f in c.export_files() if Path(f).is_file()]
    else:
        left = []
        for _id, path, files in conn.execute(
                select(Export.id, Export.path, Export.files)).all():
            try:
                listed = json.loads(files or "[]")
            except ValueError:
                listed = []
            for rel in listed:
                p = Path(path) / str(rel)
                if p.is_file() and _holds_file(p, matcher):
                    left.append(str(p))
        left += [f for f in c.export_files() if f not in left and Path(f).is_file()
                 and _holds_file(Path(f), matcher)]
    if left:
        how = [f"`lca-tui erase --exports-of-tombstone {tombstone_id}`"] if tombstone_id else []
        if matcher is not None or not tombstone_id:  # a text scope still finds them
            how.append("erase again with --delete-exports")
        return Probe("exports", False, f"{len(left)} export files still hold it: "
                     + ", ".join(left[:5]) + (" …" if len(left) > 5 else "")
                     + f" (delete them: {' or '.join(how)}; or remove them)")
    named = len(c.export_files())
    return Probe("exports", True, f"no export file holds it ({named} named by the closure "
                 "were deleted)" if named else "no export file holds it")


def _memory_dir(c: Closure) -> Probe:
    """The bound memory directory (``store.privacy.bound_dir``)."""
    from store.privacy import bound_dir

    ok, detail = bound_dir.probe(c)
    return Probe("memory-dir", ok, detail)


def _holds_file(path: Path, matcher: Matcher) -> bool:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return any(matcher.holds(line) for line in fh)
    except OSError:
        return False


def _own_strings(store: Store, c: Closure) -> tuple[list[str], int]:
    """The erased texts' own strings for a session, entry or memory scope (the longest
    ``MAX_PHRASES``), less those a remaining text column still holds verbatim (a record
    outside the scope keeps them: their bytes are no residue); and how many were kept so."""
    own = sorted({t.strip() for t in c.texts if len(t.strip()) >= 8}, key=len,
                 reverse=True)[:MAX_PHRASES]
    if not own:
        return [], 0
    kept: set[str] = set()
    folded = [(t, t.lower()) for t in own]  # the bytes are searched case-folded

    def seen(value: Any) -> int:
        if isinstance(value, str) and value:
            low = value.lower()
            kept.update(t for t, f in folded if t not in kept and f in low)
        return 0

    with store.read() as conn:
        inside = pragmas.python_functions(conn)
        if inside:
            dbapi(conn).create_function("lca_kept", 1, seen)
        for name, info in sorted(relational_tables(conn).items()):
            if not info.text_columns:
                continue
            t = rel(name, *info.text_columns)
            if not inside:  # a server: the values read here, tested the same way
                for row in conn.execute(select(*(t.c[x] for x in info.text_columns))
                                        .execution_options(yield_per=2000)):
                    for v in row:
                        seen(v)
                continue
            conn.execute(select(func.count()).select_from(t).where(
                or_(*(func.lca_kept(t.c[x]) for x in info.text_columns)))).scalar_one()
    return [t for t in own if t not in kept], len(kept)


def raw_needles(c: Closure, rem: Remaining,
                own: list[str] | None = None) -> tuple[list[bytes], set[bytes]]:
    """(strings searched as they are, words matched as whole tokens), lower-cased bytes.
    A text scope searches its texts; a session, entry or memory scope its texts' own strings
    (``own``) and the distinctive words."""
    needles: list[bytes] = []
    phrases = c.texts[:MAX_PHRASES] if c.scope.is_text else (own or [])
    for t in phrases:
        for form in (t, json.dumps(t)[1:-1]):
            b = form.lower().encode("utf-8", "surrogatepass")
            if b and b not in needles:
                needles.append(b)
    if c.scope.is_text:
        needles += [w.encode("utf-8") for w in rem.distinctive]
        return needles, set()
    tokens = {w.encode("utf-8") for w in rem.distinctive}
    needles += [t for t in tokens if any(b >= 0x80 for b in t) and t not in needles]
    return needles, tokens


def scan_bytes(path: Path, needles: list[bytes], tokens: set[bytes]) -> int:
    """How many of the needles and tokens the file's bytes hold (case-folded, ASCII)."""
    if not path.exists():
        return 0
    data = path.read_bytes().lower()
    found = sum(1 for n in needles if n in data)
    if tokens:
        found += len(tokens.intersection(data.translate(_NOT_WORD).split()))
    return found


def raw_probe(store: Store, c: Closure, rem: Remaining, wal_ok: bool, wal_left: int,
              vacuumed: bool) -> Probe:
    own, kept = ([], 0) if c.scope.is_text else _own_strings(store, c)
    needles, tokens = raw_needles(c, rem, own)
    if store.on_server:
        return _raw_probe_server(store, c, needles, tokens, kept)
    db = store.path
    wal = Path(f"{db}-wal")
    in_db = scan_bytes(db, needles, tokens)
    in_wal = scan_bytes(wal, needles, tokens)
    n = len(needles) + len(tokens - set(needles))
    parts = [f"{n} strings searched: {in_db} found in {db.name}, {in_wal} in {wal.name}"]
    # the recall's vector file beside the store (recall/vecfile.py) holds vector bytes: the
    # erasure deleted it; any such file now (the probe recalls' own, or a racing writer's) is
    # searched for the erased chunks' vectors, row by row, and named here when one holds them
    in_vectors, vector_files = _vector_files(store, c)
    if in_vectors:
        parts.append(vector_files)
    if kept:
        parts.append(f"{kept} of the erased texts are still held verbatim by records outside "
                     "the scope, so not searched")
    nothing = n == 0 and any(t.strip() for t in c.texts)
    if nothing:
        parts.append("nothing to search for: no proof that the bytes are gone")
    if not wal_ok:
        parts.append(f"the WAL could not be truncated ({wal_left} bytes left): a reader "
                     "holds a snapshot of it")
    if vacuumed:
        parts.append("vacuumed")
    if (in_db or in_wal) and rem.metadata:
        parts.append("metadata columns hold it (see substring): those bytes stay")
    return Probe("raw-bytes", wal_ok and not in_db and not in_wal and not nothing
                 and not in_vectors, "; ".join(parts))


def _vector_files(store: Store, c: Closure) -> tuple[int, str]:
    """(erased vectors found, what the probe says) for the vector files beside the store."""
    from store.recall import vecfile

    removed = len(c.vectors)
    found, names = vecfile.erased_rows(
        store.path, {cid for cid, _, has in c.chunk_rows if has}, c.vectors)
    if not names:
        return 0, (f"no vector file beside the store ({store.path.name}{vecfile.SUFFIX}: "
                   "deleted with the in-memory copy)")
    return found, (f"{found} of {plural(removed, 'erased vector')} found in "
                   f"{', '.join(names)}" + (" (written before the erasure: delete it and "
                                            "verify again)" if found else ""))


SERVER_COPIES = ("the server's WAL, its replicas and its backups keep the erased bytes until "
                 "they rotate out: not searched, not erased by this")


def _raw_probe_server(store: Store, c: Closure, needles: list[bytes], tokens: set[bytes],
                      kept: int) -> Probe:
    """The raw-bytes probe on a server: over the files of every touched table (heap, TOAST,
    indexes) when this process can read the server's data directory; otherwise not run, and
    then never reported as passed."""
    from store.core.db import server_files

    touched = sorted({*c.delete, *c.scrub} & set(c.tables)) + ["chunk_vec"]
    rebuilt = c.rebuilt
    parts = []
    if rebuilt:
        total = sum(ms for _, ms in rebuilt)
        parts.append(f"VACUUM FULL of {plural(len(rebuilt), 'table')} in {total:,.0f} ms "
                     "(each held an ACCESS EXCLUSIVE lock on its table meanwhile): "
                     + ", ".join(f"{t} {ms:,.0f} ms" for t, ms in rebuilt))
    files, why = server_files(store.engine, touched)
    n = len(needles) + len(tokens - set(needles))
    nothing = n == 0 and any(t.strip() for t in c.texts)
    if why is not None:
        parts.insert(0, f"NOT RUN: {why}; the rows are deleted and the tables rebuilt, but no "
                        "byte of the server's files was searched")
        parts.append(SERVER_COPIES)
        return Probe("raw-bytes", False, "; ".join(parts))
    found = sum(scan_bytes(f, needles, tokens) for f in files)
    parts.insert(0, f"{n} strings searched: {found} found in {plural(len(files), 'file')} of "
                    f"{plural(len(touched), 'table')} (heap, TOAST, indexes) on the server's disk")
    if kept:
        parts.append(f"{kept} of the erased texts are still held verbatim by records outside "
                     "the scope, so not searched")
    if nothing:
        parts.append("nothing to search for: no proof that the bytes are gone")
    parts.append(SERVER_COPIES)
    return Probe("raw-bytes", not found and not nothing and bool(files), "; ".join(parts))


def run_probes(store: Store, c: Closure, wal_ok: bool, wal_left: int,
               vacuumed: bool = False,
               tombstone_id: int | None = None) -> tuple[Verification, Remaining]:
    """Every probe; nothing is written (the caller stores the result)."""
    started = time.perf_counter()
    matcher = Matcher(c.scope) if c.scope.is_text else None
    with store.read() as conn:
        candidates = _candidate_words(c)
        rem = _scan_remaining(conn, c, matcher, candidates)
        probes = [_rows(conn, c), _fts(conn, c, matcher, rem),
                  _substring(c, rem, matcher, len(candidates)),
                  _semantic(store, conn, c, matcher, tombstone_id)]
        probes.append(_traces(store, conn, c, matcher, rem))
        probes.append(_exports(conn, c, matcher, tombstone_id))
    if c.bound_dir is not None:
        probes.append(_memory_dir(c))
    probes.append(raw_probe(store, c, rem, wal_ok, wal_left, vacuumed))
    ms = (time.perf_counter() - started) * 1000.0
    return Verification(all(p.passed for p in probes), probes, round(ms, 1)), rem

