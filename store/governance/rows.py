"""From a stored row to the record a listing hands out: a memory's ``MemoryRow``, a proposal's
``ProposalSummary``, and the filters' errors. Pure functions over any object with the table's
column names as attributes (an ORM row, or a bare DB-API row made into one), so that the ORM
reads (``views``, ``proposals``) and the listing commands' lean reads (``store.governance.lite``)
build every record, and refuse every filter, the same way. Imports nothing heavy."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from store.governance.records import (
    MASK,
    STATUSES,
    AuditInfo,
    CheckInfo,
    MemoryRow,
    ProposalSummary,
)

MEMORY_STATUSES = ("active", "superseded", "disputed", "quarantined", "expired")
# evidence keys holding candidate or memory text: withheld from a secret candidate's checks
_SCRUB = frozenset({"text", "candidate_sentence", "memory_sentence", "candidate", "memory",
                    "stdout", "verdict"})


def loads(raw: str | None, default: Any) -> Any:
    """A JSON column's value, ``default`` when empty or not JSON."""
    try:
        return json.loads(raw) if raw else default
    except ValueError:
        return default


def text_list(raw: str | None) -> tuple[str, ...]:
    """A JSON list column (tags, projects) as strings; () when it is not a list."""
    value = loads(raw, [])
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def memory_row(m: Any, flagged: bool) -> MemoryRow:
    """A memory's listing row; a secret memory's text withheld."""
    assert m.id is not None
    secret = m.sensitivity == "secret"
    return MemoryRow(m.id, m.name, m.type, m.status, bool(m.critical), bool(m.loadable),
                     m.sensitivity, m.hits, m.prevented, m.valid_from, m.valid_to,
                     None if secret else m.body, text_list(m.tags), text_list(m.projects),
                     m.authority, m.description, flagged, m.source_file)


def check_memory_filters(status: str | None, type: str | None,
                         types: Callable[[], list[str]] | None = None) -> None:
    """Refuse (``ValueError``) a status that is not one, or a type no memory has (``types()``
    gives the types the store holds, asked only when a type is given)."""
    if status is not None and status not in MEMORY_STATUSES:
        raise ValueError(f"status must be one of {', '.join(MEMORY_STATUSES)}, got {status!r}")
    if type and types is not None:
        held = types()
        if type not in held:
            raise ValueError(f"no memories of type {type!r} (types: "
                             f"{', '.join(held) or 'none: the store holds no memory'})")


def check_proposal_status(status: str | None) -> None:
    """Refuse (``ValueError``) a proposal status that is not one of ``STATUSES``."""
    if status is not None and status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")


def scrub(value: Any) -> Any:
    """Check evidence with every piece of candidate or memory text withheld."""
    if isinstance(value, dict):
        return {k: (MASK if k in _SCRUB and isinstance(v, (str, dict)) else scrub(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def is_secret(row: Any) -> bool:
    """Was the proposal's candidate marked secret by its proposer?"""
    return loads(row.meta, {}).get("sensitivity") == "secret"


def check_info(c: Any) -> CheckInfo:
    """A ``proposal_check`` row as its record."""
    return CheckInfo(c.kind, c.result, c.detail, loads(c.evidence, {}), c.suggestion,
                     c.revision)


def proposal_summary(row: Any, checks: Sequence[CheckInfo], masked: bool | None = None,
                     applied: tuple[str, tuple[int, ...]] | None = None) -> ProposalSummary:
    """The queue row; a secret candidate's checks are scrubbed and its name withheld unless
    the proposer named it."""
    assert row.id is not None
    masked = is_secret(row) if masked is None else masked
    name = row.name
    if masked:
        name = loads(row.meta, {}).get("name") or "[secret]"
        checks = [CheckInfo(c.kind, c.result, c.detail, scrub(c.evidence), c.suggestion,
                            c.revision) for c in checks]
    as_op, to = applied or (None, ())
    return ProposalSummary(row.id, row.op, row.type, row.status, row.origin,
                           tuple(int(t) for t in loads(row.targets, [])), row.ts, name,
                           tuple(checks), row.proposer, row.kind, row.external_id,
                           row.decided_at, as_op, to)


def applied_as(rows: Iterable[Any], decided: Iterable[tuple[int, str]],
               links: Iterable[tuple[int | None, int]]
               ) -> dict[int, tuple[str, tuple[int, ...]]]:
    """For each applied proposal approved as another operation: that operation and the
    memories it was applied to — the memory a reinforce counted, the memories a supersede
    replaced. ``decided``: (proposal id, ``as_op``) of those decisions; ``links``: (proposal
    id, old memory id) of their supersession links."""
    applied = {r.id: r for r in rows if r.id is not None and r.status == "applied"}
    replaced: dict[int, list[int]] = {}
    for pid, old in links:
        if pid is not None:
            replaced.setdefault(pid, []).append(old)
    out: dict[int, tuple[str, tuple[int, ...]]] = {}
    for pid, as_op in decided:
        row = applied[pid]
        to: tuple[int, ...]
        if as_op == "reinforce":
            to = (row.memory_id,) if row.memory_id is not None else ()
        else:
            to = tuple(sorted(replaced.get(pid, [])))
        out[pid] = (str(as_op), to)
    return out


def audit_info(r: Any) -> AuditInfo:
    """An ``audit_event`` row as its record: who did what to which ids (never content)."""
    assert r.id is not None
    # each column on its own: ids that are not a JSON list read as none, counts that are not
    # a JSON object as none (another writer's shape, or no JSON) -- never a crash
    ids, counts = loads(r.target_ids, []), loads(r.counts, {})
    return AuditInfo(r.id, r.ts, r.actor, r.action, r.target_kind,
                     tuple(ids) if isinstance(ids, list) else (),
                     counts if isinstance(counts, dict) else {})
