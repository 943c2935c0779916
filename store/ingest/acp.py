"""Agent Continuity Protocol directories (ACP v0.1, ``seeds/002_…``).

Layout: ``SOUL.md`` (identity anchor), ``MEMORY.md`` (curated long-term memory), ``AGENTS.md``
(operating instructions), ``state.json`` (agent id, heartbeat, soul hash), ``journal/*.md``
(raw session logs); ACP-Context-Graph adds ``DECISIONS.md``, ``PATTERNS.md``, ``OBSERVER.md``.

What each becomes (decisions where the protocol is silent):

- ``SOUL.md`` → one memory of type ``identity``, evergreen, named by its first ``#`` heading;
- ``AGENTS.md`` → one memory of type ``procedure``, evergreen; ``OBSERVER.md`` → ``procedure``,
  ``DECISIONS.md`` → ``design``, ``PATTERNS.md`` → ``reference``;
- ``MEMORY.md`` → one memory of type ``reference`` (tagged ``acp``, ``curated``) per ``##``
  section, named by its heading (text before the first section is one more memory); each is
  identified as ``<path>#<slug>``, so an edited section updates its memory, and a section the
  agent pruned from the file becomes ``expired`` (``valid_to`` set) rather than vanishing;
- ``state.json``: the agent id names the journal sessions' agent; ``soulHash`` is checked
  against the sha256 of ``SOUL.md``'s bytes (``sha256:<hex>`` or bare hex): a mismatch, or a
  hash that cannot be checked, is reported with the path, and everything still imports; the
  heartbeat is recorded in the import's audit event and report notes;
- other ``*.md`` files beside them are imported as MindStone memory files (a file without
  front matter is recorded as not loadable and reported), never silently dropped; a folder
  holding MindStone memory files (``LOG.md``, ``IDENTITY.md``, ``USER.md`` or
  ``<type>_<slug>.md`` with front matter) is a memory directory, not ACP, unless its
  ``state.json`` has ACP keys;
- ``journal/<name>.md`` → one session (format ``acp-journal``) per file, one ``assistant``
  entry per paragraph (a heading starts a paragraph and stays in it; a lone ``#`` title is the
  session title), timestamped by the file's date and a ``HH:MM`` in its section heading.
  Paragraphs are keyed by byte offset + content hash, so a journal that grows adds only its
  new paragraphs.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import StatementError

from store.core import memories
from store.governance.chains import sync_links
from store.core.timeutil import now_iso
from store.ingest.base import BOM, SHAPE_ERRORS, ImportContext, file_problem
from store.ingest.memory_dir import (
    import_memory_file,
    parse_memory_file,
    split_front_matter,
    write_memory,
)

FORMAT = "acp"
STATE_KEYS = {"agentId", "heartbeat", "soulHash"}
FILE_TYPES = {"SOUL.md": "identity", "AGENTS.md": "procedure", "OBSERVER.md": "procedure",
              "DECISIONS.md": "design", "PATTERNS.md": "reference"}
ACP_FILES = {*FILE_TYPES, "MEMORY.md"}
MINDSTONE_FILES = ("LOG.md", "IDENTITY.md", "USER.md")
# A markdown heading line (level, text); shared with acp_journal.
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_HEX = re.compile(r"^[0-9a-f]{64}$")


def read_state(folder: Path) -> tuple[dict[str, Any] | None, tuple[int | None, str] | None]:
    """(state.json as an object, or None; the problem reading it, if any)."""
    path = folder / "state.json"
    if not path.exists() and not path.is_symlink():
        return None, None
    problem = file_problem(path)
    if problem or path.is_dir():
        return None, (None, problem or "a directory, not a file")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        return None, (None, "not UTF-8")
    except json.JSONDecodeError as exc:
        return None, (exc.lineno, f"invalid JSON: {exc.msg} at column {exc.colno}")
    except OSError as exc:
        return None, (None, f"cannot read: {exc.strerror}")
    if not isinstance(data, dict):
        return None, (1, f"a JSON {type(data).__name__}, not an object")
    return data, None


def has_mindstone_memories(folder: Path) -> bool:
    """MindStone memory files here: ``LOG.md``, ``IDENTITY.md``, ``USER.md``, or a
    ``<type>_<slug>.md`` with ``---`` front matter."""
    if any((folder / name).is_file() for name in MINDSTONE_FILES):
        return True
    for md in sorted(folder.glob("*_*.md"))[:200]:
        if md.name in ACP_FILES or not md.is_file():
            continue
        try:
            with md.open("rb") as fh:
                if fh.read(8).removeprefix(BOM).startswith(b"---"):
                    return True
        except OSError:
            continue
    return False


def is_acp_dir(folder: Path) -> bool:
    """ACP when state.json has ACP keys; else not when MindStone memory files are here (a
    memory directory, whatever SOUL.md or AGENTS.md sit beside them); else when SOUL.md
    sits with a journal/, AGENTS.md or MEMORY.md (ACP-Minimal)."""
    state, _ = read_state(folder)
    if state is not None and STATE_KEYS & set(state):
        return True
    if not (folder / "SOUL.md").is_file() or has_mindstone_memories(folder):
        return False
    return ((folder / "journal").is_dir() or (folder / "AGENTS.md").is_file()
            or (folder / "MEMORY.md").is_file())


def is_acp_journal(folder: Path) -> bool:
    return folder.name == "journal" and is_acp_dir(folder.parent)


def _read_text(ctx: ImportContext, path: Path) -> str | None:
    problem = file_problem(path)
    if problem is None and path.is_dir():
        problem = "a directory, not a file"
    if problem:
        ctx.report.error(str(path), None, problem)
        return None
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        ctx.report.error(str(path), line, "not UTF-8: undecodable bytes replaced")
        return data.decode("utf-8", errors="replace")


def _title(raw: str, default: str) -> str:
    for line in raw.splitlines():
        match = HEADING.match(line)
        if match and len(match.group(1)) == 1 and match.group(2):
            return match.group(2)
    return default


def _row(path: Path, raw: str, name: str, mtype: str, description: str, tags: list[str],
         evergreen: bool) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """A memory row in memory_dir's shape; plain Markdown is loadable as ACP reads it."""
    row, problems = parse_memory_file(path, raw)
    if split_front_matter(raw)[0] is None:
        row.update(name=name, type=mtype, description=description, tags=json.dumps(tags),
                   evergreen=int(evergreen), loadable=1, load_error=None, front_matter=None)
    elif row.get("type") in (None, path.stem.split("_", 1)[0]):
        row["type"] = mtype
    return row, problems


def _slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") or "section"


def memory_sections(raw: str) -> list[tuple[str, str, str]]:
    """MEMORY.md as (slug, heading, body) per ``##`` section; text before the first section
    (other than a ``#`` title) is the section ``preamble``."""
    _, body, _ = split_front_matter(raw)
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in body.splitlines():
        match = HEADING.match(line)
        if match and len(match.group(1)) == 2:
            sections.append((match.group(2), []))
        elif match and len(match.group(1)) == 1 and len(sections) == 1 and not any(
                s.strip() for s in sections[0][1]):
            continue
        else:
            sections[-1][1].append(line)
    out: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for heading, lines in sections:
        text_body = "\n".join(lines).strip("\n")
        if not text_body.strip() and not heading:
            continue
        slug = _slug(heading) if heading else "preamble"
        seen[slug] = seen.get(slug, 0) + 1
        if seen[slug] > 1:
            slug = f"{slug}-{seen[slug]}"
        out.append((slug, heading or "MEMORY (preamble)", text_body))
    return out


def _check_soul(ctx: ImportContext, folder: Path, state: dict[str, Any]) -> str:
    """Verify soulHash against SOUL.md: 'verified', 'mismatch', 'unverifiable' or 'absent'."""
    claimed = state.get("soulHash")
    state_path = str(folder / "state.json")
    if claimed is None:
        return "absent"
    soul = folder / "SOUL.md"
    if not soul.is_file():
        ctx.report.error(state_path, None, "soulHash is set but there is no readable SOUL.md "
                         "to verify it against")
        return "unverifiable"
    value = str(claimed).strip().lower()
    hex_part = value.removeprefix("sha256:")
    if not _HEX.match(hex_part):
        ctx.report.error(state_path, None, f"soulHash {str(claimed)!r} is not sha256:<64 hex "
                         "digits>: identity cannot be verified")
        return "unverifiable"
    actual = hashlib.sha256(soul.read_bytes()).hexdigest()
    if actual != hex_part:
        ctx.report.error(state_path, None, f"soulHash sha256:{hex_part[:12]}… does not match "
                         f"SOUL.md (sha256:{actual[:12]}…): the identity anchor changed since "
                         "state.json was written, or is not this agent's")
        return "mismatch"
    return "verified"


def _expired_by_the_gate(conn: Connection) -> set[int]:
    """Memories an applied ``expire`` proposal expired (retention, or a person): the gate
    decided those, so a section still in MEMORY.md does not bring them back."""
    from sqlmodel import select

    from store.core.db import orm
    from store.governance.models import Proposal

    with orm(conn) as s:
        rows = s.exec(select(Proposal.memory_id, Proposal.targets).where(
            Proposal.status == "applied", Proposal.op == "expire")).all()
    out: set[int] = set()
    for mid, targets in rows:
        if mid is not None:
            out.add(int(mid))
        out.update(int(t) for t in json.loads(targets or "[]"))
    return out


def _expire_pruned(ctx: ImportContext, conn: Connection, prefix: str, keep: set[str]) -> int:
    """Sections gone from MEMORY.md → expired; sections back again → active, unless an
    applied ``expire`` proposal expired the memory (then it stays expired: only a proposal
    brings it back)."""
    now = now_iso()
    expired = 0
    gated: set[int] | None = None
    for memory in memories.with_source_prefix(conn, prefix):
        assert memory.id is not None
        if memory.source_file not in keep and memory.status == "active":
            memories.set_status(conn, ctx.store, memory.id, "expired", valid_to=now)
            expired += 1
        elif memory.source_file in keep and memory.status == "expired":
            if gated is None:
                gated = _expired_by_the_gate(conn)
            if memory.id not in gated:
                memories.set_status(conn, ctx.store, memory.id, "active", valid_to=None)
    return expired


def import_acp_dir(ctx: ImportContext, folder: Path) -> None:
    """Import the ACP files directly in ``folder`` (``journal/`` is its own format)."""
    report = ctx.report
    state, state_problem = read_state(folder)
    if state_problem:
        report.files += 1
        report.error(str(folder / "state.json"), *state_problem)
    state = state or {}
    agent = str(state.get("agentId") or folder.name)
    soul = _check_soul(ctx, folder, state)
    expired = 0
    with ctx.store.write() as conn:
        for name, mtype in FILE_TYPES.items():
            path = folder / name
            if not path.exists() and not path.is_symlink():
                continue
            report.files += 1
            raw = _read_text(ctx, path)
            if raw is None:
                continue
            if not raw.strip():
                report.error(str(path), None, "empty file: nothing to import")
                continue
            title = _title(raw, f"{path.stem} ({agent})")
            row, problems = _row(path, raw, title, mtype, f"ACP {name} of agent {agent}",
                                 ["acp"], mtype in ("identity", "procedure"))
            for line, reason, *field in problems:
                report.error(str(path), line, reason, field[0] if field else None)
            write_memory(ctx, conn, path, row)
        path = folder / "MEMORY.md"
        if path.exists() or path.is_symlink():
            report.files += 1
            raw = _read_text(ctx, path)
            if raw is not None:
                prefix = f"{path.resolve()}#"
                keep: set[str] = set()
                for slug, heading, body in memory_sections(raw):
                    row, _ = _row(path, body, heading, "reference",
                                  f"ACP curated memory of agent {agent}: {heading}",
                                  ["acp", "curated"], False)
                    write_memory(ctx, conn, path, row, prefix + slug)
                    keep.add(prefix + slug)
                expired = _expire_pruned(ctx, conn, prefix, keep)
        others = _import_others(ctx, conn, folder)
        ctx.store.audit_in(conn, "import-acp", "acp-agent", [agent], {
            "heartbeat": int(state["heartbeat"]) if isinstance(state.get("heartbeat"), int)
            else -1, "soul_hash_verified": int(soul == "verified"),
            "soul_hash_mismatch": int(soul == "mismatch"), "memories_expired": expired})
    report.notes.append(f"{folder}: ACP agent {agent}, heartbeat {state.get('heartbeat', '?')}, "
                        f"soul hash {soul}" + (f"; {expired} MEMORY.md sections no longer in "
                                               "the file marked expired" if expired else "")
                        + (f"; other Markdown files imported as memory files: "
                           f"{', '.join(others)}" if others else ""))


def _import_others(ctx: ImportContext, conn: Connection, folder: Path) -> list[str]:
    """The Markdown files that are not ACP files, through the memory-directory path (each
    problem reported with its file), so that nothing in the folder is silently dropped."""
    others = sorted(p for p in folder.iterdir() if p.suffix == ".md" and
                    p.name not in ACP_FILES)
    for path in others:
        ctx.report.files += 1
        try:
            with conn.begin_nested():  # one bad file never costs the others
                import_memory_file(ctx, conn, path)
        except SHAPE_ERRORS + (StatementError,) as exc:
            ctx.report.error(str(path), None, f"could not be imported: "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
    if others:
        memories.resolve_supersedes_refs(conn)
        sync_links(conn, ctx.store)
    return [p.name for p in others]
