"""MindStone memory directories: Markdown files with YAML front matter.

Every file is recorded, loadable or not. A file is *not loadable* when the agent's loader
could not read it as its schema says: no front matter, front matter that is not valid YAML or
not a mapping, or a key the loader reads at the top level found only under a nested key (LCA
Appendix D: ``critical`` moved under ``metadata`` and critical memories were never injected).
The importer itself reads nested keys too, so it knows which unloadable memories are critical.
``MEMORY.md`` (the index) is not a memory; ``LOG.md``'s archive entries become checkpoints.
"""

from __future__ import annotations

import json
import os
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import Connection
from sqlalchemy.exc import StatementError
from sqlmodel import col

from store.core import memories
from store.governance.chains import sync_links
from store.core.index import sha256_text
from store.core.models import Checkpoint
from store.ingest import fields
from store.ingest.base import BOM, SHAPE_ERRORS, ImportContext, file_problem
from store.core.textsafe import storable
from store.core.timeutil import normalise_iso, now_iso
from store.core.vocab import SENSITIVITIES, plural
from store.core.db import insert_ignore

FORMAT = "memory-dir"
LOADER_KEYS = ("name", "description", "type", "tags", "projects", "hits", "prevented",
               "last_applied", "created", "half_life_days", "critical", "evergreen", "status",
               "author", "date", "supersedes", "invariant")
STATUSES = ("active", "superseded", "disputed", "quarantined", "expired")
SPECIAL_TYPES = {"IDENTITY.md": "identity", "USER.md": "user", "SOUL.md": "identity"}
_LOG_HEAD = re.compile(r"^###\s+(?P<kind>[\w-]+?)-archive\s+[—-]+\s+(?P<ts>\S+)\s*$",
                       re.IGNORECASE | re.MULTILINE)
_LOG_FIELD = re.compile(r"^-\s+(?P<key>[^:]+):\s*(?P<value>.+)$", re.MULTILINE)


def split_front_matter(raw: str) -> tuple[str | None, str, int]:
    """(front matter text or None, body, line number where the front matter starts)."""
    if not raw.startswith("---"):
        return None, raw, 0
    lines = raw.split("\n")
    if lines[0].strip() != "---":
        return None, raw, 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1:]).lstrip("\n"), 2
    return "\n".join(lines[1:]), "", 2


_MAX_NODES = 100_000
"""Front matter is a handful of keys; past this many values (counted as YAML aliases expand
them) it is refused rather than expanded, which could take gigabytes."""


def _expands_past(value: Any, limit: int) -> bool:
    """Whether ``value`` holds more than ``limit`` values once aliases are expanded (a walk
    that stops as soon as it passes the limit)."""
    seen = 0
    stack = [value]
    while stack:
        item = stack.pop()
        seen += 1
        if seen > limit:
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set)):
            stack.extend(item)
    return False


def _find_nested(data: Any, key: str, path: tuple[str, ...] = ()) -> tuple[tuple[str, ...],
                                                                           Any] | None:
    if isinstance(data, dict):
        for k, v in data.items():
            if k == key and path:
                return path, v
            found = _find_nested(v, key, path + (str(k),))
            if found:
                return found
    return None


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [s.strip() for s in str(value).split(",") if s.strip()]


def _as_time(value: Any) -> str | None:
    if isinstance(value, datetime):
        return normalise_iso(value.isoformat())
    if isinstance(value, date):
        return normalise_iso(value.isoformat())
    return normalise_iso(str(value)) if value is not None else None


def _plausible_time(value: Any) -> str | None:
    """``_as_time``, None for a year before 1970 or past 9998 (``0001-01-01``: a
    placeholder)."""
    shown = _as_time(value)
    year = int(shown[:4]) if shown and shown[:4].isdigit() else 0
    return shown if fields.EARLIEST_YEAR <= year <= 9998 else None


def _as_int(value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        return 0
    return number if -(2**63) < number < 2**63 else 0


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=_json_default, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return str(value)


def _as_days(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if 0 < number < 1e9 else None


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "yes", "1", "on"}
    return bool(value)


def _json_default(value: Any) -> str:
    return value.isoformat() if isinstance(value, (date, datetime)) else str(value)


def _key_line(fm_text: str, fm_line: int, key: str) -> int | None:
    """The file's line of ``key:`` in the front matter (its first line is ``fm_line``)."""
    for i, line in enumerate(fm_text.splitlines()):
        if re.match(rf"\s*{re.escape(key)}\s*:", line):
            return fm_line + i
    return None


def field_problems(data: dict[str, Any], fm_text: str, fm_line: int
                   ) -> list[tuple[int | None, str, str]]:
    """(line, reason, field) for each loader field of the wrong type: ``hits`` and
    ``prevented`` whole numbers, ``created`` / ``last_applied`` times (ISO-8601, from 1970),
    ``name`` text. The memory is stored all the same (the front matter kept whole, so
    nothing is lost), with the value coerced as the reason says."""
    found: list[tuple[int | None, str, str]] = []

    def add(key: str, reason: str) -> None:
        found.append((_key_line(fm_text, fm_line, key), reason, key))

    for key in ("hits", "prevented"):
        value = data.get(key)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)
                             and -(2**63) < value < 2**63):
            continue
        add(key, f"a YAML {type(value).__name__} ({str(value)[:60]!r}), not a whole number: "
            f"stored as {_as_int(value)}")
    for key in ("created", "last_applied"):
        value = data.get(key)
        if key == "created" and value is None:
            key, value = "date", data.get("date")
        if value is None:
            continue
        if _plausible_time(value) is None:
            add(key, f"{str(value)[:60]!r} is not a plausible ISO-8601 time (from "
                f"{fields.EARLIEST_YEAR}): left out, kept in the front matter")
    value = data.get("name")
    if value is not None and not isinstance(value, str):
        add("name", f"a YAML {type(value).__name__}, not text: stored as "
            f"{_as_text(value)!r}"[:200])
    return found


def parse_memory_file(path: Path, raw: str) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """The memory row for a file's text, and the problems to report (line, reason[, field])."""
    problems: list[tuple[Any, ...]] = []
    fm_text, body, fm_line = split_front_matter(raw)
    data: dict[str, Any] = {}
    load_error: str | None = None
    if fm_text is None:
        if path.name not in SPECIAL_TYPES:
            load_error = "no YAML front matter: the loader reads none of its fields"
    else:
        try:
            parsed = yaml.safe_load(fm_text) if fm_text.strip() else {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = (mark.line + fm_line) if mark is not None else fm_line
            problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
            load_error = f"front matter is not valid YAML: {problem}"
            problems.append((line, load_error))
            parsed = None
        except (ValueError, OverflowError, RecursionError) as exc:  # e.g. created: 2024-02-30
            load_error = f"front matter has a value YAML cannot read: {exc}"
            problems.append((fm_line, load_error))
            parsed = None
        if parsed is not None and _expands_past(parsed, _MAX_NODES):
            load_error = (f"front matter expands to more than {_MAX_NODES:,} values through "
                          "YAML aliases (an alias bomb?): not read")
            problems.append((fm_line, load_error))
            parsed = None
        if parsed is not None and not isinstance(parsed, dict):
            load_error = f"front matter is a YAML {type(parsed).__name__}, not a mapping"
            problems.append((fm_line, load_error))
        elif isinstance(parsed, dict):
            data = parsed
    nested_notes = []
    effective = dict(data)
    for key in LOADER_KEYS:
        if key in data:
            continue
        found = _find_nested(data, key)
        if found:
            where, value = found
            effective[key] = value
            nested_notes.append(f"'{key}' is under '{'.'.join(where)}'")
    if nested_notes and load_error is None:
        load_error = ("; ".join(nested_notes) + ": the loader reads top-level keys only, so "
                      "this memory is never loaded as written")
    problems += field_problems(effective, fm_text or "", fm_line)
    name = _as_text(effective.get("name")) or path.stem
    mtype = effective.get("type") or SPECIAL_TYPES.get(path.name)
    if mtype is None and "_" in path.stem:
        mtype = path.stem.split("_", 1)[0]
    status = str(effective.get("status") or "active").lower()
    if status not in STATUSES:
        problems.append((None, f"status {status!r} is not one of {', '.join(STATUSES)}; "
                               "stored as active"))
        status = "active"
    sensitivity = str(effective.get("sensitivity") or "public").lower()
    if sensitivity not in SENSITIVITIES:
        problems.append((None, f"sensitivity {sensitivity!r} unknown; stored as private"))
        sensitivity = "private"
    invariant = effective.get("invariant")
    row = {
        "name": name,
        "description": _as_text(effective.get("description")),
        "type": _as_text(mtype),
        "body": body.strip("\n"),
        "tags": json.dumps(_as_list(effective.get("tags"))),
        "projects": json.dumps(_as_list(effective.get("projects"))),
        "role": _as_text(effective.get("role")),
        "created": _plausible_time(effective.get("created") or effective.get("date")),
        "last_applied": _plausible_time(effective.get("last_applied")),
        "hits": _as_int(effective.get("hits")),
        "prevented": _as_int(effective.get("prevented")),
        "half_life_days": _as_days(effective.get("half_life_days")),
        "critical": int(_as_bool(effective.get("critical"))),
        "evergreen": int(_as_bool(effective.get("evergreen"))),
        "invariant": None if invariant is None else (_as_text(invariant) or "").strip(),
        "authority": _as_text(effective.get("authority")) or "unreviewed",
        "sensitivity": sensitivity,
        "valid_from": _as_time(effective.get("valid_from")),
        "valid_to": _as_time(effective.get("valid_to")),
        "supersedes_ref": _as_text(effective.get("supersedes")),
        "status": status,
        "loadable": 0 if load_error else 1,
        "load_error": load_error,
        "front_matter": _as_text(data) if data else fm_text,
    }
    return row, problems


def is_memory_dir(path: Path) -> bool:
    """A folder is a memory directory when it has MEMORY.md or a Markdown file with front
    matter."""
    if (path / "MEMORY.md").is_file():
        return True
    for md in sorted(path.glob("*.md"))[:50]:
        if not md.is_file():  # never open a FIFO, socket or device named *.md: it may block
            continue
        try:
            with md.open("rb") as fh:
                head = fh.read(8)
                if head.removeprefix(BOM).startswith(b"---"):
                    return True
        except OSError:
            continue
    return False


UNREAD = ("no YAML front matter", "front matter ", "not UTF-8")
"""How ``load_error`` begins when the file's fields could not be read at all (no front
matter, YAML that does not parse or is no mapping, bytes that are not UTF-8) — unlike a nested
key, where the fields are read and the loader only misses them."""


def _keep_critical(ctx: ImportContext, conn: Connection, path: Path, row: dict[str, Any],
                   source_file: str) -> dict[str, Any]:
    """A critical memory whose file has become unreadable stays critical: the file no longer
    says what it is, which is not saying it is not critical — and a critical memory the loader
    cannot read is exactly what ``loader_drift`` must fail on (Appendix D)."""
    error = str(row.get("load_error") or "")
    if row.get("critical") or not error.startswith(UNREAD):
        return row
    have = memories.find(conn, source_file=source_file)
    if have is None or not have.critical:
        return row
    ctx.report.notes.append(f"{path}: its fields cannot be read ({error}); the memory "
                            f"stays critical as stored (memory {have.id})")
    return dict(row, critical=1)


def write_memory(ctx: ImportContext, conn: Connection, path: Path, row: dict[str, Any],
                 source_file: str | None = None) -> int:
    """Create or update the memory of ``source_file`` (default: the file's resolved path; a
    file holding several memories names each, e.g. ``path#section``) through
    ``store.core.memories``, counting it in the report; a new memory gets the file as its
    evidence. Returns the memory's id (0 when its content was erased earlier: nothing is
    written)."""
    file_path = storable(str(path.resolve()))
    row = _keep_critical(ctx, conn, path, row, source_file or file_path)
    # the whole parsed file, so that a fix the loader notices (front matter, loadability)
    # updates the memory even when its content is the same
    file_hash = sha256_text(json.dumps(row, sort_keys=True))
    written = memories.upsert(conn, ctx.store, dict(row, source_file=source_file or file_path,
                                                    content_hash=file_hash))
    if written.action == "created":
        memories.add_evidence(conn, ctx.store, written.memory_id, file_path=file_path,
                              note="imported from memory file")
    ctx.report.count_memory(written)
    return written.memory_id


def _log_number(fields: dict[str, str], *keys: str) -> int:
    for key in keys:
        digits = re.match(r"\d+", fields.get(key, ""))
        if digits:
            return int(digits.group())
    return 0


def _import_log(ctx: ImportContext, conn: Connection, path: Path, raw: str) -> None:
    """``LOG.md`` archive entries → checkpoint rows (trigger, chunks, memories)."""
    heads = list(_LOG_HEAD.finditer(raw))
    for i, head in enumerate(heads):
        block = raw[head.end(): heads[i + 1].start() if i + 1 < len(heads) else len(raw)]
        fields = {m["key"].strip().lower(): m["value"].strip()
                  for m in _LOG_FIELD.finditer(block)}
        ts = normalise_iso(head["ts"])
        if ts is None:
            line = raw[: head.start()].count("\n") + 1
            ctx.report.error(str(path), line, f"log entry time {head['ts']!r} is not ISO-8601")
            continue

        key = sha256_text(f"{path.resolve()}|{ts}|{head['kind']}")
        inserted = conn.execute(insert_ignore(conn, Checkpoint).values(
            ts=ts, trigger=head["kind"].lower() + "-archive", status="ok",
            chunks_embedded=_log_number(fields, "transcript chunks vectorized",
                                        "chunks vectorized"),
            memories_written=_log_number(fields, "memory files re-indexed"),
            source=storable(str(path)),
            idem_key=key, writer=ctx.store.writer, writer_version=ctx.store.writer_version,
            created_at=now_iso()).returning(col(Checkpoint.id))).first()
        # the id RETURNING gives, not ``rowcount`` (a skipped repeat returns no row on both
        # backends; tests/store/test_insert_counts.py)
        ctx.report.checkpoints_added += int(inserted is not None)


def import_memory_file(ctx: ImportContext, conn: Connection, path: Path,
                       gate: list[Any] | None = None) -> None:
    """Import one Markdown memory file (``LOG.md``: its archive entries as checkpoints;
    ``MEMORY.md``, the index, is skipped by design); problems go to the report.

    With ``gate`` (a list; the bound directory after its first import), a file that differs
    from its stored memory is not written but collected there as a change to propose."""
    report = ctx.report
    problem = file_problem(path)
    if problem is None and path.is_dir():
        problem = "a directory, not a memory file"
    if problem:
        report.error(str(path), None, problem)
        return
    try:
        data = path.read_bytes()
    except OSError as exc:
        report.error(str(path), None, f"cannot read: {exc.strerror}")
        return
    data = data[len(BOM):] if data.startswith(BOM) else data
    decode_error: str | None = None
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        decode_error = f"not UTF-8 at line {line}: the loader cannot read it"
        report.error(str(path), line, "not UTF-8: recorded as not loadable")
        raw = data.decode("utf-8", errors="replace")
    if path.name == "MEMORY.md":
        report.skip("memory-dir/MEMORY.md")
        return
    if path.name == "LOG.md":
        _import_log(ctx, conn, path, raw)
        return
    if not raw.strip():
        report.error(str(path), None, "empty file: nothing to import")
        return
    row, problems = parse_memory_file(path, raw)
    for lineno, reason, *field in problems:
        report.error(str(path), lineno, reason, field[0] if field else None)
    if decode_error:
        row["loadable"], row["load_error"] = 0, decode_error
    elif row["load_error"] and not any(p[1] == row["load_error"] for p in problems):
        report.error(str(path), None, f"recorded as not loadable: {row['load_error']}")
    if gate is not None:
        _gate_file(ctx, conn, path, row, gate)
        return
    write_memory(ctx, conn, path, row)


def _gate_file(ctx: ImportContext, conn: Connection, path: Path, row: dict[str, Any],
               gate: list[Any]) -> None:
    """The bound directory after its first import: content changes become proposals (see
    ``store.governance.gate``); usage counters move forward in place."""
    from store.governance.gate import FileChange, content_changed, counters

    source = storable(str(path.resolve()))
    if memories.erased_earlier(conn, row):  # erased or redacted: not proposed again either
        ctx.report.erased_earlier += 1
        return
    have = memories.find(conn, source_file=source)
    if row.get("load_error"):
        # the agent's loader cannot read the file as written: nothing in it is a change a
        # person could approve (a name taken from the file name is not one); the approved
        # memory stays and is marked not loadable, as before the gate (the reason is in
        # the report)
        if have is not None and have.id is not None and (
                have.loadable, have.load_error) != (0, row["load_error"]):
            ctx.report.count_memory(memories.update(conn, ctx.store, have.id, {
                "loadable": 0, "load_error": row["load_error"]}, index=False))
        return
    if have is None:
        gate.append(FileChange("add", source, row))
        return
    if content_changed(have, row):
        gate.append(FileChange("revise", source, row, have))
        return
    if not have.loadable and have.id is not None:  # readable again
        ctx.report.count_memory(memories.update(conn, ctx.store, have.id, {
            "loadable": 1, "load_error": None}, index=False))
    bump = counters(have, row)
    if bump and have.id is not None:
        ctx.report.count_memory(memories.update(conn, ctx.store, have.id, bump, index=False))


def link_out(path: Path, folder: Path) -> bool:
    """True when ``path`` is a symlink whose target lies outside ``folder``."""
    if not path.is_symlink():
        return False
    target = Path(os.path.realpath(path))
    home = Path(os.path.realpath(folder))
    return target.parent != home and home not in target.parents


def import_memory_dir(ctx: ImportContext, folder: Path) -> None:
    """Import every ``*.md`` file directly in ``folder``."""
    report = ctx.report
    files = sorted(p for p in folder.iterdir() if p.suffix == ".md" or
                   (p.is_symlink() and p.name.endswith(".md")))
    for link in [p for p in files if link_out(p, folder)]:
        files.remove(link)  # never read: what it points at is not the agent's memory
        report.error(str(link), None, "a link out of the memory directory: not followed")
    gate: list[Any] | None = None
    with ctx.store.write() as conn:
        gate = _gate_for(ctx, conn, folder)
        for path in files:
            report.files += 1
            try:
                with conn.begin_nested():  # one bad file never costs the others
                    import_memory_file(ctx, conn, path, gate)
            except SHAPE_ERRORS + (StatementError,) as exc:
                report.error(str(path), None, f"could not be imported: {type(exc).__name__}: "
                             f"{str(exc).splitlines()[0][:200]}")
        memories.resolve_supersedes_refs(conn)
        sync_links(conn, ctx.store)
        if gate is not None:
            gate.extend(_deleted(conn, folder, files))
        ctx.store.audit_in(conn, "import-memory-dir", "memory", [],
                           {"files": len(files), "memories_added": report.memories_added})
    if gate:
        from store.governance.gate import propose_changes

        done = propose_changes(ctx.store, gate)
        for problem in done.problems:
            report.error(folder.as_posix(), None, f"could not propose: {problem}")
        if done.added:
            n = len(done.added)
            report.notes.append(f"{plural(n, 'change')} made in the bound memory "
                                f"directory outside the gate became proposals "
                                f"(lca-tui proposals): {', '.join(map(str, done.added))}")
        if done.updated:
            report.notes.append(f"{plural(len(done.updated), 'pending proposal', counted=False)} "
                                f"{', '.join(map(str, done.updated))} updated to the file's "
                                "latest version")


def is_bound_dir(store: Any, folder: Path) -> bool:
    """Whether ``folder`` is the store's bound memory directory (``memory.dir``)."""
    from store.governance.gate import is_bound

    return is_bound(store, folder)


def gated_dir(store: Any) -> Path | None:
    """The bound memory directory when it has been imported before (so its files go through
    the gate); None when no directory is bound, it does not exist, or it was never
    imported."""
    from store.governance.files import usable_bound_dir

    folder = usable_bound_dir(store)
    if folder is None:
        return None
    with store.read() as conn:
        return folder if memories.with_source_prefix(conn, str(folder) + "/") else None


def _gate_for(ctx: ImportContext, conn: Connection, folder: Path) -> list[Any] | None:
    """A list to collect changes in when ``folder`` is the bound memory directory and was
    imported before; None otherwise (the first import reads the files as they are)."""
    from store.governance.gate import is_bound

    if not is_bound(ctx.store, folder):
        return None
    prefix = str(folder.resolve()) + "/"
    return [] if memories.with_source_prefix(conn, prefix) else None


def _deleted(conn: Connection, folder: Path, files: list[Path]) -> list[Any]:
    """Active memories of files no longer in the bound directory: quarantine proposals."""
    from store.governance.gate import FileChange

    present = {str(p.resolve()) for p in files}
    out = []
    for m in memories.with_source_prefix(conn, str(folder.resolve()) + "/"):
        source = (m.source_file or "").split("#", 1)[0]
        if m.status == "active" and source not in present and not Path(source).exists():
            out.append(FileChange("quarantine", source, {}, m))
    return out
