"""``stale_writer``: writers whose latest recorded code version is older than canonical.

Every table records ``writer`` and ``writer_version`` on each row (``store.core.models.Who``).
A writer is judged by the continuity data it wrote (``DATA_TABLES``: entries, chunks,
memories, sessions, checkpoints, ...), never by what inspecting the store writes — the health
scans themselves, audit events, recall traces, exports, proposals' review, import bookkeeping —
since the process that scans writes those at the running version: counting them, the scan
would clear the very finding it reports. A writer's version is the one on its most recent
data row; it is compared with the canonical version
for that writer: for lca-tui's own writers (``lca-tui``, ``lca-tui:hook``, ...) the running
lca-tui's version unless ``health.canonical_version`` names one; for other programs only when
that setting names them (``my-harness=2.4.1``), since their versions are not lca-tui's.
A writer that named no version records ``"unknown"`` (``store.core.base.writer_version_for``):
it is not compared when no canonical is named for it, and it is flagged when one is, since a
writer with no version cannot be shown to run the canonical code.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from sqlalchemy import column, func, inspect, table, union_all
from sqlmodel import select

from store.core.version import CODE_VERSION
from store.health.records import Row, SignalResult
from store.core.vocab import plural
from store.health.registry import ScanContext, result, signal
from store.health.signals_index import chunk_writers

OWN = "lca-tui"


def version_key(version: str) -> tuple[int, ...] | None:
    """``"0.10.2"`` → (0, 10, 2); None when it holds no number."""
    numbers = re.findall(r"\d+", version or "")
    return tuple(int(n) for n in numbers) if numbers else None


def canonical_versions(setting: str) -> tuple[str, dict[str, str]]:
    """(the canonical version of lca-tui's own writers, {other writer: its canonical})."""
    own, others = CODE_VERSION, {}
    for part in (p.strip() for p in (setting or "").split(",")):
        if not part:
            continue
        if "=" in part:
            name, _, version = part.partition("=")
            others[name.strip()] = version.strip()
        else:
            own = part
    return own, others


DATA_TABLES = frozenset({
    "entry", "session", "chunk", "memory", "evidence", "checkpoint", "compaction",
    "context_snapshot", "handoff", "prune_event", "supersession_link", "memory_flag",
    "claude_code_summary"})
"""The tables of continuity data: what a harness, a hook, an importer or an indexer writes.
Left out on purpose: ``health_scan`` / ``health_signal`` (the scan's own rows), ``audit_event``,
``recall_*``, ``export*``, ``proposal*``, ``import_*``, ``hook_run``, privacy bookkeeping —
rows any run of the current code writes while the stale deployment's data stays old."""


def _writer_tables(ctx: ScanContext) -> list[Any]:
    """The data tables this store has that record their writer, as SQLAlchemy tables of the
    three columns read: from the store's own schema (no capability's models imported, which
    imported every importer and took most of a scan's time)."""
    found = []
    inspector = inspect(ctx.conn)
    for name in sorted(DATA_TABLES & ctx.tables):
        columns = {c["name"] for c in inspector.get_columns(name)}
        if {"writer", "writer_version", "created_at"} <= columns:
            found.append(table(name, column("writer"), column("writer_version"),
                               column("created_at")))
    return found


class WriterVersion(NamedTuple):
    writer: str
    version: str  # the version on its latest row of continuity data
    rows: int  # every row of continuity data it wrote, whatever the version
    last: str | None  # when it last wrote one


def writer_versions(ctx: ScanContext) -> list[WriterVersion]:
    """One row per writer of continuity data, by name: its latest version, when it last
    wrote such a row, and how many it wrote. (Summed here, not in pandas: importing it cost
    0.15 s of every health scan.)"""
    parts = [select(t.c.writer, t.c.writer_version, func.count().label("rows"),
                    func.max(t.c.created_at).label("last"))
             .group_by(t.c.writer, t.c.writer_version) for t in _writer_tables(ctx)
             if t.name != "chunk"]
    found = [tuple(r) for r in ctx.conn.execute(union_all(*parts)).all()] if parts else []
    found += [(w.writer, w.version, w.rows, w.last) for w in chunk_writers(ctx)]
    versions: dict[tuple[str, str], tuple[int, str | None]] = {}
    for writer, version, rows, last in found:
        key = (str(writer), str(version))
        had_rows, had_last = versions.get(key, (0, None))
        lasts = [x for x in (had_last, None if last is None else str(last)) if x is not None]
        versions[key] = (had_rows + int(rows or 0), max(lasts) if lasts else None)
    totals: dict[str, int] = {}
    latest: dict[str, tuple[str, str | None]] = {}
    for (writer, version), (rows, last) in sorted(versions.items()):
        totals[writer] = totals.get(writer, 0) + rows
        # the version whose rows are the latest (equal times: the last version by name)
        if writer not in latest or (last or "") >= (latest[writer][1] or ""):
            latest[writer] = (version, last)
    return [WriterVersion(w, v, totals[w], last) for w, (v, last) in sorted(latest.items())]


@signal("stale_writer", "writers whose recorded code version is older than the canonical one")
def stale_writer(ctx: ScanContext) -> SignalResult:
    own, others = canonical_versions(str(ctx.setting("health.canonical_version")))
    frame = writer_versions(ctx)
    rows: list[Row] = []
    checked = 0
    for r in frame:
        name, version = str(r.writer), str(r.version)
        canon = own if name == OWN or name.startswith(OWN + ":") else others.get(name)
        if canon is None:
            continue
        checked += 1
        have, want = version_key(version), version_key(canon)
        if have is None and want is not None:
            # "unknown" (a writer that named no version) or any text without a number: it
            # cannot be shown current, and a canonical version was named for it: a finding.
            rows.append(Row("writer", name, f"records no version ({version!r}), canonical "
                            f"{canon}; {int(r.rows):,} rows written"))
        elif have is not None and want is not None and have < want:
            rows.append(Row("writer", name, f"runs {version}, canonical {canon}; "
                            f"{int(r.rows):,} rows written"))
    n = len(rows)
    if n:
        explanation = (f"{plural(n, 'writer')} {'runs' if n == 1 else 'run'} code older than "
                       "canonical or records no version ("
                       + ", ".join(f"{r.id}" for r in rows) + "): a stale deployment can "
                       "report success and do nothing")
    else:
        explanation = (f"{plural(checked, 'writer')} checked against canonical "
                       f"(lca-tui {own}" + "".join(f", {k} {v}" for k, v in others.items())
                       + f"); {plural(len(frame) - checked, 'other writer')} not compared")
    detail = {"canonical": own, "others": others,
              "writers": {str(r.writer): {"version": str(r.version), "rows": int(r.rows)}
                          for r in frame}}
    return result(ctx, "stale_writer", "warn" if n else "ok", float(n), str(n), 0.0, None,
                  "warn when a writer's latest version is older than canonical", explanation,
                  rows, detail=detail)
