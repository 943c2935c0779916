"""An ACP ``journal/`` folder: one session per ``*.md`` file, one entry per paragraph.

See ``store.ingest.acp`` for the decisions. A paragraph is a run of non-blank lines; a heading
starts a new paragraph and stays its first line (so nothing of the file is lost); a paragraph
that is only a ``#`` title becomes the session title instead. Times: the file name's date
(``YYYY-MM-DD``) plus the ``HH:MM[:SS]`` of the current section heading, read as UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from store.ingest.acp import HEADING, read_state
from store.ingest.base import ImportContext, file_problem
from store.core.timeutil import normalise_iso
from store.core.writes import NewEntry, NewSession, upsert_session, write_entries

FORMAT = "acp-journal"
_TIME = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?\b")


@dataclass
class Paragraph:
    offset: int
    line: int
    text: str
    section: str | None
    ts: str | None


def _day(stem: str) -> str | None:
    try:
        return date.fromisoformat(stem[:10]).isoformat()
    except ValueError:
        return None


def _ts(day: str | None, heading: str | None) -> str | None:
    if day is None:
        return None
    match = _TIME.search(heading or "")
    if match is None:
        return normalise_iso(day)
    hh, mm, ss = match.group(1), match.group(2), match.group(3) or "00"
    return normalise_iso(f"{day}T{int(hh):02d}:{mm}:{ss}")


def paragraphs(data: bytes, day: str | None) -> tuple[list[Paragraph], str | None]:
    """(paragraphs with their byte offsets and 1-based line numbers, the ``#`` title)."""
    out: list[Paragraph] = []
    title: str | None = None
    section: str | None = None
    lines: list[str] = []
    start = first_line = 0
    offset = 0

    def flush() -> None:
        nonlocal title
        if not lines:
            return
        match = HEADING.match(lines[0])
        if len(lines) == 1 and match and len(match.group(1)) == 1:
            title = title or match.group(2)
        else:
            out.append(Paragraph(start, first_line, "\n".join(lines), section,
                                 _ts(day, section)))
        lines.clear()

    for number, raw in enumerate(data.splitlines(keepends=True), 1):
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        match = HEADING.match(line)
        if match or not line.strip():
            flush()
        if match:
            section = match.group(2) if len(match.group(1)) > 1 else section
        if line.strip():
            if not lines:
                start, first_line = offset, number
            lines.append(line)
        offset += len(raw)
    flush()
    return out, title


def import_journal_dir(ctx: ImportContext, folder: Path) -> None:
    """Import every ``*.md`` in an ACP ``journal/`` folder."""
    acp = folder.parent
    state, _ = read_state(acp)
    state = state or {}
    agent = str(state.get("agentId") or acp.name)
    store, report = ctx.store, ctx.report
    for path in sorted(p for p in folder.iterdir() if p.name.endswith(".md")):
        report.files += 1
        problem = file_problem(path)
        if problem is None and path.is_dir():
            problem = "a directory, not a journal file"
        if problem:
            report.error(str(path), None, problem)
            continue
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            report.error(str(path), data[: exc.start].count(b"\n") + 1,
                         "not UTF-8: undecodable bytes replaced")
        day = _day(path.stem)
        found, title = paragraphs(data, day)
        if not found:
            report.error(str(path), None, "empty journal: nothing to import")
            continue
        session_id = f"acp:{agent}:{path.stem}"
        times = [p.ts for p in found if p.ts]
        session = NewSession(
            id=session_id, format=FORMAT, agent=agent,
            surface=str(state.get("platform") or "acp"), project=str(acp.resolve()),
            title=title or path.stem, started_at=min(times, default=None),
            ended_at=max(times, default=None), source=str(path.resolve()),
            meta={k: state[k] for k in ("agentId", "platform", "model") if k in state})
        source_key = f"{FORMAT}:{session_id}"
        entries = [NewEntry(kind="assistant", content=p.text, source_key=source_key, ts=p.ts,
                            source_path=str(path.resolve()), source_offset=p.offset,
                            source_line=p.line, meta={"section": p.section,
                                                      "journal": path.stem})
                   for p in found]
        with store.write() as conn:
            new = upsert_session(conn, session, store.writer, store.writer_version)
            if new and session_id not in ctx.sessions_seen:
                report.sessions_added += 1
            ctx.sessions_seen.add(session_id)
            result = write_entries(conn, session_id, entries, store.indexer(), store.writer,
                                   store.writer_version)
        report.entries_added += len(result.entry_ids)
        report.entries_secret += len(result.secret)
        report.private_spans += result.private_spans
        report.erased_earlier += result.erased_earlier
        report.chunks += result.chunks
        report.chunks_failed += result.chunks_failed
        for err in result.errors:
            report.error(str(path), None, f"embedding failed: {err}")
