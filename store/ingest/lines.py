"""Streaming a line-oriented file from where the last import stopped.

The import position of a file is the byte offset after the last complete line read and the
sha256 of every byte before it. A file that has grown is read from that offset; a file whose
bytes before the offset changed (rewritten, truncated) is read again from the start, and the
idempotency keys keep the lines already stored from being added twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import Connection, func
from sqlmodel import col

from store.core.db import columns
from store.core.models import ImportPosition
from store.core.textsafe import storable
from store.core.timeutil import now_iso
from store.core.db import upsert


MAX_LINE_BYTES = 32 << 20
"""A line longer than this is reported and skipped (read past in bounded blocks); an
unfinished last line longer than this is not read at all until it ends."""


@dataclass
class Position:
    offset: int = 0
    lines: int = 0
    fingerprint: str = hashlib.sha256(b"").hexdigest()


@dataclass
class Line:
    number: int  # 1-based line number in the file
    offset: int  # byte offset of the line's start
    end: int  # byte offset after the line (and its newline)
    raw: bytes


def load_position(conn: Connection, path: Path) -> Position | None:
    row = conn.execute(columns(col(ImportPosition.byte_offset), col(ImportPosition.line_count),
                              col(ImportPosition.fingerprint))
                       .where(col(ImportPosition.path) == storable(str(path)))).first()
    return Position(int(row[0]), int(row[1]), row[2]) if row else None


def save_position(conn: Connection, path: Path, fmt: str, source_key: str | None,
                  pos: Position, size: int, writer: str, version: str) -> None:
    now = now_iso()
    values = {"byte_offset": pos.offset, "line_count": pos.lines,
              "fingerprint": pos.fingerprint, "size": size, "updated_at": now, "writer": writer,
              "writer_version": version}
    insert = upsert(conn, ImportPosition).values(
        path=storable(str(path)), source_key=source_key, format=fmt, created_at=now, **values)
    conn.execute(insert.on_conflict_do_update(index_elements=["path"], set_={
        **values, "source_key": func.coalesce(insert.excluded.source_key,
                                              col(ImportPosition.source_key))}))


def resume_point(path: Path, saved: Position | None) -> tuple[Position, bool]:
    """Where to start reading: (position, rewritten?)."""
    if saved is None or saved.offset == 0:
        return Position(), False
    size = path.stat().st_size
    if size < saved.offset:
        return Position(), True
    digest = hashlib.sha256()
    remaining = saved.offset
    with path.open("rb") as fh:
        while remaining:
            block = fh.read(min(remaining, 1 << 20))
            if not block:
                break
            digest.update(block)
            remaining -= len(block)
    if digest.hexdigest() != saved.fingerprint:
        return Position(), True
    return saved, False


class LineReader:
    """Complete lines from ``start``; keeps the running fingerprint for the new position.

    A final line without a newline is read only if it is a complete JSON value (a harness may
    be in the middle of writing it); otherwise it waits for the next import.
    """

    def __init__(self, path: Path, start: Position) -> None:
        self.path = path
        self.position = Position(start.offset, start.lines, start.fingerprint)
        self._digest = hashlib.sha256()
        self._prefix_ok = start.offset == 0
        self._start = start
        self.pending_tail = False  # a final line without newline that is not complete JSON
        self.oversized: list[int] = []  # numbers of lines skipped for their size

    def _seed_digest(self) -> None:
        # The saved fingerprint covers [0, offset); recompute the running hash from the file.
        remaining = self._start.offset
        with self.path.open("rb") as fh:
            while remaining:
                block = fh.read(min(remaining, 1 << 20))
                if not block:
                    break
                self._digest.update(block)
                remaining -= len(block)

    def __iter__(self) -> Iterator[Line]:
        if not self._prefix_ok:
            self._seed_digest()
        offset = self.position.offset
        number = self.position.lines
        with self.path.open("rb") as fh:
            fh.seek(offset)
            while True:
                raw = fh.readline(MAX_LINE_BYTES + 1)  # bounded: never a whole huge line
                if not raw:
                    break
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    skipped = self._skip_rest(fh, raw)
                    if skipped is None:  # an unfinished huge last line: waits, unread
                        self.pending_tail = True
                        break
                    number += 1
                    end = offset + skipped
                    self.oversized.append(number)
                    self.position = Position(end, number, self._digest.hexdigest())
                    offset = end
                    continue
                end = offset + len(raw)
                if not raw.endswith(b"\n"):
                    try:
                        json.loads(raw)
                    except (ValueError, RecursionError):
                        self.pending_tail = bool(raw.strip())
                        break  # partial last line: left for the next import
                number += 1
                self._digest.update(raw)
                self.position = Position(end, number, self._digest.hexdigest())
                yield Line(number, offset, end, raw.rstrip(b"\r\n"))
                offset = end

    def _skip_rest(self, fh: BinaryIO, head: bytes) -> int | None:
        """Past a line longer than ``MAX_LINE_BYTES``, in bounded blocks: its length with the
        newline (its bytes go into the running digest), or None when it has no newline yet
        (nothing is consumed: the digest is left as it was)."""
        start = fh.tell() - len(head)
        length = len(head)
        while True:
            block = fh.readline(1 << 20)
            if not block:
                fh.seek(start)
                return None
            length += len(block)
            if block.endswith(b"\n"):
                break
        fh.seek(start)
        remaining = length
        while remaining:
            part = fh.read(min(remaining, 1 << 20))
            self._digest.update(part)
            remaining -= len(part)
        return length
