"""Recall feedback: a harness reports that an injected item was used or prevented a mistake.

A governed memory write: a memory's ``hits`` / ``prevented`` rise (and ``last_applied`` is
set), and its file in the bound memory directory is rewritten. It lives here, not in
``store.recall``, so that dependencies point one way: governance reads recall's traces,
recall never imports governance.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from store.core import memories
from store.core.timeutil import now_iso
from store.governance.files import write_back
from store.recall.traces import add_feedback, find_candidate, get_trace

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store


@dataclass(frozen=True)
class FeedbackResult:
    """What one feedback report did: the candidate (``rank`` of trace ``trace_id``, its
    source), ``kind`` (used / prevented), whether it was ``recorded`` (False: the same report
    was already there, ``note`` says so) and a memory's counts after it (None otherwise)."""

    trace_id: int
    rank: int
    source_type: str
    source_id: int | None
    kind: str
    recorded: bool
    hits: int | None
    prevented: int | None
    note: str | None

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def feedback(store: Store, trace_id: int, item: str, kind: str) -> FeedbackResult:
    """A harness reports that an injected item was ``used`` or ``prevented`` a mistake.

    For a memory this raises ``hits`` or ``prevented`` (and sets ``last_applied``), so later
    recalls weigh it more, and rewrites its file when it lives in the bound memory directory
    (``memory.dir``); the trace keeps the E that applied when it ran. Reporting the same
    thing twice for one candidate counts once.
    """
    if kind not in ("used", "prevented"):
        raise ValueError("feedback is --used or --prevented")
    trace = get_trace(store, trace_id)
    if trace.origin != "lca-tui":
        raise ValueError(f"trace {trace_id} was derived from a harness event; report feedback "
                         "on a recall lca-tui ran")
    cand = find_candidate(trace, item)
    if cand.decision != "injected":
        raise ValueError(f"candidate {cand.rank} of trace {trace_id} was not injected "
                         f"({cand.decision}): only injected items can be used")
    now = now_iso()
    assert trace.id is not None and cand.id is not None
    with store.write() as conn:
        added = add_feedback(conn, trace.id, cand.id, kind, now,
                             (store.writer, store.writer_version, now))
        hits = prevented = None
        if added and cand.source_type == "memory" and cand.source_id is not None:
            applied = memories.count_applied(conn, cand.source_id, prevented=kind != "used",
                                             at=now)
            if applied is not None:
                hits, prevented = applied
                # the bound memory directory's file gets the new figures too, so a
                # re-import no longer resets them (a failure here rolls the feedback back)
                write_back(conn, store, cand.source_id)
        if added:
            store.audit_in(conn, f"recall_feedback_{kind}", cand.source_type,
                           [cand.source_id, trace.id], {"trace": int(trace.id or 0)})
    return FeedbackResult(int(trace.id), cand.rank, cand.source_type, cand.source_id, kind,
                          bool(added), hits, prevented,
                          None if added else "already recorded for this candidate")
