"""Import runs: each ingest batch and the problems it met, stored so they can be shown again.

A run is recorded (``running``) before the first file is read; each problem is stored as it is
met, in the transaction that commits the import position of its file (``ImportContext.persist``);
the run is closed ``done`` (or ``aborted``, with the error) at the end. A run left ``running``
by a process that no longer exists was aborted (killed): ``runs()`` says so.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from sqlmodel import col, func, select

from store.core.db import orm
from store.core.errors import NotFound
from store.core.records import ImportIssue, IngestReport
from store.core.textsafe import storable
from store.core.timeutil import now_iso
from store.ingest.models import ImportProblem, ImportRun

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

MAX_PROBLEMS_STORED = 5000  # per run: a pathological batch must not fill the store


@dataclass(frozen=True)
class RunInfo:
    id: int
    started_at: str
    finished_at: str | None
    status: str  # running, done, aborted
    paths: list[str]
    format: str | None
    counts: dict[str, Any]
    error: str | None
    problems: int
    writer: str
    issues: list[ImportIssue] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["issues"] = [i.to_json() for i in self.issues]
        return out


def start_run(store: Store, paths: list[str], fmt: str | None) -> int:
    """Record a run before it reads anything; returns its id."""
    with store.write() as conn, orm(conn) as s:
        run = ImportRun(started_at=now_iso(), paths=json.dumps([storable(p) for p in paths]),
                        format=fmt, pid=os.getpid(), host=socket.gethostname(),
                        writer=store.writer, writer_version=store.writer_version,
                        created_at=now_iso())
        s.add(run)
        s.flush()
        assert run.id is not None
        return run.id


def save_problems(store: Store, conn: Connection, run_id: int, issues: list[ImportIssue],
                  notes: list[str]) -> None:
    """Store problems and notes of a run in the caller's transaction."""
    if not issues and not notes:
        return
    with orm(conn) as s:
        have = s.exec(select(func.count()).select_from(ImportProblem)
                      .where(ImportProblem.run_id == run_id)).one()
        room = max(0, MAX_PROBLEMS_STORED - have)
        now = now_iso()
        rows = [ImportProblem(run_id=run_id, kind="problem", path=i.path, line=i.line,
                              field=i.field, reason=i.reason, writer=store.writer,
                              writer_version=store.writer_version, created_at=now)
                for i in issues]
        rows += [ImportProblem(run_id=run_id, kind="note", path="", reason=storable(n),
                               writer=store.writer, writer_version=store.writer_version,
                               created_at=now) for n in notes]
        s.add_all(rows[:room])
        s.flush()


def finish_run(store: Store, run_id: int, report: IngestReport, error: str | None = None
               ) -> None:
    """Close the run: ``done``, or ``aborted`` with the error that stopped it."""
    counts = {k: v for k, v in report.to_json().items() if isinstance(v, int)}
    counts["problems"] = len(report.errors)
    with store.write() as conn, orm(conn) as s:
        run = s.get(ImportRun, run_id)
        if run is None:
            return
        run.finished_at = now_iso()
        run.status = "aborted" if error else "done"
        run.error = None if error is None else storable(error)[:2000]
        run.counts = json.dumps(counts)
        s.add(run)
        s.flush()


def _alive(run: ImportRun) -> bool:
    """Is the process that started a ``running`` run still there? (Unknown host: assume so.)"""
    if run.pid is None or run.host != socket.gethostname():
        return True
    try:
        os.kill(run.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _info(run: ImportRun, problems: int, issues: list[ImportProblem] | None = None) -> RunInfo:
    status = run.status
    error = run.error
    if status == "running" and not _alive(run):
        status = "aborted"
        error = error or "the import was stopped before it finished (its process is gone)"
    counts = json.loads(run.counts or "{}")
    listed = issues or []
    assert run.id is not None
    return RunInfo(run.id, run.started_at, run.finished_at, status, json.loads(run.paths),
                   run.format, counts, error, problems, run.writer,
                   [ImportIssue(p.path, p.line, p.reason, p.field) for p in listed
                    if p.kind == "problem"],
                   [p.reason for p in listed if p.kind == "note"])


def runs(store: Store, limit: int | None = 50) -> list[RunInfo]:
    """Import runs, newest first, each with the problems and notes it stored (one query for
    all of them), so ``problems`` is always the length of ``issues``."""
    with store.read() as conn, orm(conn) as s:
        query = select(ImportRun).order_by(col(ImportRun.id).desc())
        if limit:
            query = query.limit(limit)
        found = s.exec(query).all()
        by_run: dict[int, list[ImportProblem]] = {}
        ids = [r.id for r in found]
        if ids:
            for p in s.exec(select(ImportProblem).where(col(ImportProblem.run_id).in_(ids))
                            .order_by(col(ImportProblem.id))).all():
                by_run.setdefault(p.run_id, []).append(p)
        out = []
        for r in found:
            rows = by_run.get(r.id or 0, [])
            out.append(_info(r, sum(1 for p in rows if p.kind == "problem"), rows))
    return out


def run(store: Store, run_id: int | None = None) -> RunInfo:
    """One run with its problems and notes (the latest run when ``run_id`` is None)."""
    with store.read() as conn, orm(conn) as s:
        if run_id is None:
            found = s.exec(select(ImportRun).order_by(col(ImportRun.id).desc()).limit(1)).first()
            if found is None:
                raise NotFound("no import recorded yet: `lca-tui ingest PATH` imports files")
        else:
            found = s.get(ImportRun, run_id)
            if found is None:
                raise NotFound(f"no import run {run_id}: `lca-tui imports` lists them")
        rows = list(s.exec(select(ImportProblem).where(ImportProblem.run_id == found.id)
                           .order_by(col(ImportProblem.id))).all())
    return _info(found, sum(1 for r in rows if r.kind == "problem"), rows)
