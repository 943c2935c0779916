"""``lca-tui export``: a scope of the store as MindStone-Agent NDJSON plus a JSON manifest.

Layout of an export directory::

    manifest.json                      format "lca-export": sessions, memories, evidence,
                                       lineage (supersession), checkpoints, lca-tui's recall
                                       traces, and the files with size, sha256 and lines
    transcripts/<base64url(id)>.jsonl  one MindStone-Agent transcript per session
                                       (``sha256_<hex>.jsonl`` when the id is too long for a
                                       file name: the importer reads the id from the lines)

Every line is in the MindStone-Agent wire format (keys in the order ``id, timestamp,
sessionKey, agentId, role, text, content, source, runId, parentId, metadata``, unset ones
dropped), so the reference implementation can read it. What that format cannot say (the
entry's kind, agent, sequence, source pointers, idempotency key and meta) travels under
``metadata.lca``, so importing the export restores the same entries in the same order — and
into the store it came from adds nothing (``store.export.wire`` builds the lines;
``store.export.extra`` the checkpoints and traces). Every export is recorded in the
``export`` table, with the ids of what it holds, and an audit event (ids and counts, never
content). The record is written before the files: when writing fails (``ExportError``), the
files written so far are removed and the record with them; a file that cannot be removed
stays listed in a record whose counts say ``"failed": 1``, so no export file is unrecorded.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, delete, update
from sqlmodel import col, select

from store.core.db import columns, orm
from store.core.detected import found_secret
from store.core.errors import NotFound, StoreError
from store.core.index import sha256_text
from store.core.models import Entry, Evidence
from store.core.models import Memory as MemoryRow
from store.core.models import Session as SessionRow
from store.export.models import Export as ExportRow
from store.export.models import ExportItem
from store.export.extra import checkpoints, traces
from store.export.verify import folder_problem
from store.export.wire import dumps_line, loads_json, wire_line
from store.export.wire_format import file_name_for
from store.core.secrets import Detector
from store.core.timeutil import now_iso
from store.core.db import insert_ignore

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

MANIFEST = "manifest.json"
EXPORT_FORMAT = "lca-export"
TRANSCRIPTS = "transcripts"
# An entry row in the order ``store.export.wire.wire_line`` unpacks it.
_ENTRIES = columns(Entry.id, Entry.session_id, Entry.agent, Entry.seq, Entry.ts, Entry.kind,
                   Entry.content, Entry.content_hash, Entry.source_path, Entry.source_offset,
                   Entry.source_line, Entry.block, Entry.idem_key, Entry.uuid,
                   Entry.parent_uuid, Entry.message_id, Entry.tool_name, Entry.tool_use_id,
                   Entry.meta)
_SESSION_COLS = ("id", "agent", "surface", "project", "title", "started_at", "ended_at",
                 "source", "format", "meta")
# A memory's record: every column but its id, links (exported as lineage) and writer.
_MEMORY_FIELDS = [k for k in MemoryRow.model_fields if k not in
                  {"id", "supersedes_id", "superseded_by_id", "writer", "writer_version",
                   "created_at"}]
_JSON_LISTS = ("tags", "projects")


class ExportError(StoreError):
    """The export cannot be written where asked."""


class ExportWriteError(ExportError):
    """Writing the export failed part way; what it wrote was removed (or recorded)."""


@dataclass
class ExportReport:
    export_id: int
    path: str
    scope: dict[str, Any]
    files: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def session_record(row: SessionRow) -> dict[str, Any]:
    record = {k: getattr(row, k) for k in _SESSION_COLS}
    record["meta"] = loads_json(record["meta"]) or {}
    return record


def _prepare(out_dir: Path, force: bool) -> None:
    """Check and create ``out_dir``; with ``force`` remove the earlier export's files."""
    try:
        if out_dir.exists() and not out_dir.is_dir():
            raise ExportError(f"{out_dir} exists and is not a directory: choose another --out")
        if out_dir.is_dir() and any(out_dir.iterdir()):
            if not force:
                raise ExportError(f"{out_dir} is not empty: choose an empty or new directory, "
                                  "or pass --force to replace an earlier export there")
            old = out_dir / MANIFEST
            if old.is_file():
                try:
                    listed = json.loads(old.read_text("utf-8")).get("files", [])
                except (ValueError, OSError, AttributeError):
                    listed = []
                for item in listed:
                    target = (out_dir / str(item.get("path", ""))).resolve()
                    if target.is_file() and out_dir.resolve() in target.parents:
                        target.unlink()
                old.unlink()
        if not out_dir.exists():
            out_dir.mkdir(parents=True, mode=0o700)
            os.chmod(out_dir, 0o700)  # owner-only, whatever the umask: it holds transcripts
        sub = out_dir / TRANSCRIPTS
        if sub.is_symlink() or (sub.exists() and not sub.is_dir()):
            # never written through: a link would put transcripts outside the export
            raise ExportError(f"{sub} is {'a symlink' if sub.is_symlink() else 'not a folder'}"
                              ": the export writes its transcripts only into a real folder "
                              "there; remove it or choose another --out")
        sub.mkdir(exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ExportError(f"cannot write an export to {out_dir}: {_why(exc, out_dir)}") from exc


def _why(exc: OSError, known: Path) -> str:
    """The OS's reason, with the file it names when that is not ``known``."""
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(known) else ""
    return f"{exc.strerror or type(exc).__name__}{where}"


def _write_file(out_dir: Path, rel: str, chunks: list[bytes], written: list[Path]
                ) -> dict[str, Any]:
    """Write atomically, owner-only; returns the file's path, size, sha256 and lines.

    Every path created (the temporary file first) is added to ``written`` before it exists,
    so that a failed export can remove what it left.
    """
    target = out_dir / rel
    tmp = target.with_name(target.name + ".tmp")
    digest = hashlib.sha256()
    size = lines = 0
    if target.is_symlink():
        raise ExportError(f"{target} is a symlink: an export never writes through one")
    written.append(tmp)
    # O_NOFOLLOW: a link planted at the temporary name is refused, never followed
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        for chunk in chunks:
            fh.write(chunk)
            digest.update(chunk)
            size += len(chunk)
            lines += chunk.count(b"\n")
    written.append(target)
    os.replace(tmp, target)
    return {"path": rel, "bytes": size, "sha256": digest.hexdigest(), "lines": lines}


def _remove(path: Path) -> None:
    """Remove one file this export wrote (a seam for tests)."""
    path.unlink()


def _clean_up(written: list[Path]) -> list[Path]:
    """Remove what a failed export wrote; returns the files that could not be removed."""
    left: list[Path] = []
    for path in dict.fromkeys(reversed(written)):
        if not path.is_file() and not path.is_symlink():
            continue
        try:
            _remove(path)
        except OSError:
            left.append(path)
    return left


def _scope_ids(conn: Connection, sessions: list[str] | None, memories: list[int] | None
               ) -> tuple[list[str], set[int], list[int]]:
    """(whole sessions, single entries, memories) of the scope; nothing named is everything.

    A session brings the memories its entries are evidence of; a memory brings the entries
    its evidence points at (only those, when their session is not exported whole), so that
    every exported evidence row can be re-linked on import.
    """
    if not sessions and not memories:
        sids = list(conn.execute(select(SessionRow.id).order_by(col(SessionRow.id))).scalars())
        mids = [int(i) for i in conn.execute(select(MemoryRow.id).order_by(col(MemoryRow.id)))
                .scalars()]
        return sids, set(), mids
    sids = sorted(set(sessions or []))
    wanted = set(memories or [])
    evidence_entries = select(Evidence.memory_id, Evidence.entry_id, Entry.session_id).join(
        Entry, col(Entry.id) == col(Evidence.entry_id))
    for _memory, _entry, _session in conn.execute(
            evidence_entries.where(col(Entry.session_id).in_(sids))):
        wanted.add(int(_memory))
    mids = sorted(wanted)
    entry_ids = {int(e) for _m, e, _s in conn.execute(evidence_entries.where(
        col(Evidence.memory_id).in_(mids), col(Entry.session_id).not_in(sids)))
        if e is not None}
    return sids, entry_ids, mids


def _masked(conn: Connection, det: Detector, rows: Sequence[Any]) -> list[Any]:
    """Entry rows (``_ENTRIES``) with a caught secret's values replaced by placeholders (and
    the content hash of that text, which the importer checks): an export never holds them."""
    caught = found_secret(conn, "entry", [int(r[0]) for r in rows])
    out: list[Any] = []
    for r in rows:
        if int(r[0]) in caught:
            text = det.mask(r[6])
            r = (*r[:6], text, sha256_text(text), *r[8:])
        out.append(r)
    return out


def _memories(conn: Connection, mids: list[int], det: Detector | None = None
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with orm(conn) as s:
        rows = s.exec(select(MemoryRow).where(col(MemoryRow.id).in_(mids))
                      .order_by(col(MemoryRow.id))).all()
    caught = found_secret(conn, "memory", mids)
    records, lineage = [], []
    for row in rows:
        mid = row.id
        record: dict[str, Any] = {"ref": mid, **{k: getattr(row, k) for k in _MEMORY_FIELDS}}
        if det is not None and mid in caught:  # a caught secret's values never leave
            for key in ("name", "description", "body", "invariant"):
                if isinstance(record.get(key), str):
                    record[key] = det.mask(record[key])
        for key in _JSON_LISTS:
            record[key] = loads_json(record.get(key)) or []
        record["supersedes"], record["superseded_by"] = row.supersedes_id, row.superseded_by_id
        records.append(record)
        if record["supersedes"] is not None:
            lineage.append({"memory": mid, "supersedes": record["supersedes"]})
    return records, lineage


def _evidence(conn: Connection, mids: list[int]) -> list[dict[str, Any]]:
    rows = conn.execute(
        columns(Evidence.id, Evidence.memory_id, Evidence.span_start, Evidence.span_end,
                Evidence.file_path, Evidence.note, Entry.session_id, Entry.seq, Entry.idem_key)
        .outerjoin(Entry, col(Entry.id) == col(Evidence.entry_id))
        .where(col(Evidence.memory_id).in_(mids)).order_by(col(Evidence.id))).all()
    return [{"ref": int(r[0]), "memory": int(r[1]), "span_start": r[2], "span_end": r[3],
             "file_path": r[4], "note": r[5],
             "entry": None if r[8] is None else {"session": r[6], "seq": r[7],
                                                 "idem_key": r[8]}} for r in rows]


def export(store: Store, out_dir: Path | str, sessions: list[str] | None = None,
           memories: list[int] | None = None, force: bool = False) -> ExportReport:
    """Write the scope to ``out_dir`` and record the export; see the module docstring.

    The record is written before the first file: if writing fails, the files this export
    wrote are removed and so is the record; a file that cannot be removed stays listed in
    the record, whose counts then say ``"failed": 1``, so privacy can still find it.
    """
    out_dir = Path(out_dir).expanduser()
    resolved = [store.session(s).id for s in sessions or []]
    for mid in memories or []:
        try:
            store.memory(mid)
        except NotFound:
            raise NotFound(f"no memory with id {mid}: memory ids are shown by "
                           "`lca-tui search QUERY`") from None
    scope: dict[str, Any] = ({"all": True} if not resolved and not memories else
                             {"sessions": resolved, "memories": sorted(memories or [])})
    _prepare(out_dir, force)
    pending: list[tuple[str, list[bytes]]] = []
    held: list[tuple[str, str, str | None]] = []
    manifest_sessions: list[dict[str, Any]] = []
    counts = {"sessions": 0, "entries": 0, "memories": 0, "evidence": 0}
    det = store.detector()
    with store.read() as conn:
        sids, single, mids = _scope_ids(conn, resolved, memories)
        partial = sorted(set(conn.execute(select(Entry.session_id).where(
            col(Entry.id).in_(sorted(single)))).scalars()))
        for sid in sids + partial:
            with orm(conn) as s:
                srow = s.get(SessionRow, sid)
            if srow is None:
                continue
            session = session_record(srow)
            query = _ENTRIES.where(col(Entry.session_id) == sid)
            if sid not in sids:
                query = query.where(col(Entry.id).in_(sorted(single)))
            rows = _masked(conn, det, conn.execute(query.order_by(col(Entry.seq))).all())
            rel = f"{TRANSCRIPTS}/{file_name_for(sid)}"
            lines = [dumps_line(wire_line(session, r, i == 0)) for i, r in enumerate(rows)]
            if lines:
                pending.append((rel, lines))
            manifest_sessions.append(dict(session, file=rel if lines else None,
                                          entries=len(lines), whole=sid in sids))
            held.append(("session", sid, rel if lines else None))
            held.extend(("entry", str(r[0]), rel) for r in rows)
            counts["sessions"] += 1
            counts["entries"] += len(rows)
        memory_records, lineage = _memories(conn, mids, det)
        evidence = _evidence(conn, mids)
        everything = scope.get("all") is True
        checkpoint_records = checkpoints(conn, None if everything else sids)
        trace_records = traces(conn, None if everything else sids + partial, mids)
    held.extend(("memory", str(m["ref"]), MANIFEST) for m in memory_records)
    held.extend(("evidence", str(v["ref"]), MANIFEST) for v in evidence)
    counts.update(memories=len(memory_records), evidence=len(evidence),
                  checkpoints=len(checkpoint_records), recall_traces=len(trace_records))
    ts = now_iso()
    export_id = _record(store, out_dir, ts, scope, [MANIFEST] + [r for r, _ in pending],
                        dict(counts, writing=1, pid=os.getpid()), held)
    files: list[dict[str, Any]] = []
    written: list[Path] = []
    try:
        for rel, lines in pending:
            files.append(_write_file(out_dir, rel, lines, written))
        manifest = {"format": EXPORT_FORMAT, "version": 1, "exported_at": ts,
                    "writer": store.writer, "writer_version": store.writer_version,
                    "scope": scope, "counts": counts, "sessions": manifest_sessions,
                    "memories": memory_records, "evidence": evidence, "lineage": lineage,
                    "checkpoints": checkpoint_records, "recall_traces": trace_records,
                    "files": files}
        body = json.dumps(manifest, indent=2, ensure_ascii=True, default=str) + "\n"
        files.insert(0, _write_file(out_dir, MANIFEST, [body.encode()], written))
    except OSError as exc:
        _failed(store, export_id, out_dir, written, counts)
        raise ExportWriteError(f"cannot write the export to {out_dir}: {_why(exc, out_dir)}; the "
                               "files it had written were removed") from exc
    with store.write() as conn:
        conn.execute(update(ExportRow).where(col(ExportRow.id) == export_id)
                     .values(counts=json.dumps(counts)))
        store.audit_in(conn, "export", "export", [export_id], dict(counts, files=len(files)))
    return ExportReport(export_id, str(out_dir.resolve()), scope, files, counts)


def _record(store: Store, out_dir: Path, ts: str, scope: dict[str, Any], files: list[str],
            counts: dict[str, int], held: list[tuple[str, str, str | None]]) -> int:
    """The export's record and what it holds, written before its files are."""
    with store.write() as conn:
        with orm(conn) as s:
            record = ExportRow(ts=ts, scope=json.dumps(scope), path=str(out_dir.resolve()),
                               files=json.dumps(files), counts=json.dumps(counts),
                               format=EXPORT_FORMAT, writer=store.writer,
                               writer_version=store.writer_version, created_at=ts)
            s.add(record)
            s.flush()
        assert record.id is not None
        if held:  # one executemany through Core: an export can hold every entry of the store
            conn.execute(insert_ignore(conn, ExportItem), [
                {"export_id": record.id, "item_type": t, "item_id": i, "file": f,
                 "writer": store.writer, "writer_version": store.writer_version,
                 "created_at": ts} for t, i, f in held])
    return record.id


def _failed(store: Store, export_id: int, out_dir: Path, written: list[Path],
            counts: dict[str, int]) -> None:
    """Remove what a failed export wrote; keep its record only for files left behind."""
    left = _clean_up(written)
    with store.write() as conn:
        items = delete(ExportItem).where(col(ExportItem.export_id) == export_id)
        if not left:
            conn.execute(items)
            conn.execute(delete(ExportRow).where(col(ExportRow.id) == export_id))
            return
        rels = [str(p.relative_to(out_dir)) for p in left]
        conn.execute(update(ExportRow).where(col(ExportRow.id) == export_id).values(
            files=json.dumps(rels), counts=json.dumps(dict(counts, failed=1, left=len(rels)))))
        conn.execute(items.where(col(ExportItem.file).is_not(None),
                                 col(ExportItem.file).not_in(rels)))
        store.audit_in(conn, "export-failed", "export", [export_id],
                       dict(counts, files_left=len(rels)))


def _still_writing(pid: Any) -> bool:
    """Is the process that started writing an export still running? (An export recorded
    before the pid was kept: assume not, it cannot still be writing.)"""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def export_status(counts: dict[str, Any], folder: Path | None = None
                  ) -> tuple[str, str | None]:
    """(status, reason): ``written``; ``writing`` while its process runs; ``failed`` when
    writing failed, or its process ended and the folder is not a complete export (killed
    mid-write: what it left is partial, its ``*.tmp`` files are never imported). A process
    killed after its manifest was written (the record's last update lost) left a complete
    export: ``written``. A written export whose folder has since lost or changed a file is
    ``incomplete``. ``folder`` None: the record alone decides."""
    if counts.get("failed"):
        return "failed", "writing failed; the files it could not remove are listed"
    if counts.get("writing") and _still_writing(counts.get("pid")):
        return "writing", None
    problem = None if folder is None else folder_problem(folder)
    if counts.get("writing"):
        if problem is None and folder is not None:
            return "written", None
        return "failed", ("interrupted: its process ended before the export was complete "
                          f"({problem})" if problem else "interrupted: its process ended "
                          "before the manifest was written, so the export is partial")
    if problem is not None:
        return "incomplete", f"the folder changed since it was written: {problem}"
    return "written", None


@dataclass(frozen=True)
class ExportInfo:
    """One export recorded in the store: its scope, folder, files and counts as written, the
    writer, and its ``status`` now (``export_status``; ``reason`` when not written)."""

    id: int
    ts: str
    scope: object
    path: str | None
    files: object
    counts: dict[str, object]
    writer: str | None
    status: str
    reason: str | None = None

    def as_json(self) -> dict[str, object]:
        """The record as ``export --list --json`` prints it (``reason`` only when there is
        one)."""
        out = asdict(self)
        if self.reason is None:
            del out["reason"]
        return out


def exports(store: Store) -> list[ExportInfo]:
    """Every export recorded in the store, newest first, with its ``status``."""
    with store.read() as conn, orm(conn) as s:
        rows = s.exec(select(ExportRow).order_by(col(ExportRow.id).desc())).all()
    out = []
    for r in rows:
        counts = loads_json(r.counts)
        counts = counts if isinstance(counts, dict) else {}
        status, reason = export_status(counts, Path(r.path) if r.path else None)
        out.append(ExportInfo(int(r.id or 0), r.ts, loads_json(r.scope), r.path,
                              loads_json(r.files), counts, r.writer, status, reason or None))
    return out
