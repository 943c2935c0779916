"""The guided tour of the demo store: one step per part of the demo's story, each found in the
store (never a hard-coded id), with what the step shows, what it invites a person to do
(``TourStep.invites``: the app names the keys, from its live bindings) and the row to put the
cursor on. Nothing here names a key or a screen.

The story (``assets/demo/README.md``): what the store holds (Overview), the long session's
compaction that ran before any checkpoint (Context), a recall that injected "Database setup"
and held back the better-ranked but superseded "Local dev on SQLite" (Recall), the pending
write that contradicts "Database setup" (Proposals), the supersession chain that memory ends
(Memories), the Appendix D incidents the health scan finds (Health), and the staging key Dana
pasted into a session, erased with proof (Privacy).

A step is computed when it is shown (in the app's worker), so its text is the store's as it is
then: after the erasure, the Privacy step shows the tombstone and its verification. The tour
runs on the demo's own file only (``store.demo.demo_refusal``); the step the tour is on is
kept beside the store, in its demo data folder (``tour-step``), so a tour left (or the app
closed) resumes where it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from store.core.records import RecordRef, Subject
from store.core.timeutil import when
from store.core.vocab import plural
from store.tour.marker import MARKER_FILE, demo_data_dir, demo_refusal

if TYPE_CHECKING:
    from store.context.records import Compaction
    from store.recall.traces import Candidate, Trace
    from store.facade import Store

PASTED_KEY = "sk-demo-7f3a9c2e1b4d"
"""The fake staging key Dana pasted into a session (``assets/demo/README.md``, "Secrets")."""
APPENDIX_D = ("duplicate_ratio", "shared_index_writers", "loader_drift", "critical_budget",
              "checkpoint_noop", "compaction_without_checkpoint", "embedding_failures",
              "threshold_order", "stale_writer", "hook_failures")
"""The signals of the paper's Appendix D incidents, in the order the step names them."""
HELD_BACK = ("superseded", "policy_filtered")
POSITION_FILE = "tour-step"
Invitation = Literal["open", "review", "drill", "erase", "verify"]
"""What a step invites a person to do with what it shows: open the record (its summary, its
terms), review a pending write (approve or reject), drill into a signal (its rows, a fix), erase
a scope, verify an erasure. The app says which key does it."""


@dataclass(frozen=True)
class TourStep:
    """One step: what part of the store it is about (``subject``, never a screen: the app
    maps it to the screen that shows it), the facts it shows (``text``, plain: shown with
    markup off; no key named), what it invites a person to do there (``invites``: the app
    adds the keys), and what to select there — ``target`` a record to open,
    ``row`` the row's key (a session id, a compaction's time, a candidate's rank, a signal's
    name) or, for an erasure, the text of the scope."""

    index: int
    subject: Subject
    text: str
    target: RecordRef | None = None
    row: str | None = None
    refused: str | None = None
    """Why the step does not act (its erase step on a store that is not the demo's)."""
    invites: Invitation | None = None

    @property
    def total(self) -> int:
        return len(STEPS)


# -- the story's records, found in the store -------------------------------------------------
def _compacted_series(store: Store) -> tuple[str, str, Compaction] | None:
    """(session id, agent, compaction) of the latest compaction no checkpoint preceded."""
    found = []
    for key in store.series_keys():
        series = store.series(key.session_id, key.agent)
        found += [(c.ts, key.session_id, key.agent, c) for c in series.compactions
                  if not c.checkpoint_before]
    if not found:
        return None
    _, session_id, agent, compaction = max(found, key=lambda x: x[0])
    return session_id, agent, compaction


def _overview(store: Store, now: datetime) -> TourStep:
    st = store.stats(with_embedder=False)
    found = _compacted_series(store)
    text = (f"A continuity store holds an agent's transcripts (here "
            f"{plural(st.sessions, 'session')}, {plural(st.entries, 'entry', 'entries')}), "
            f"the {plural(st.memories, 'memory', 'memories')} derived from them, "
            f"{plural(st.chunks, 'index chunk')}, {plural(st.traces, 'recall trace')} and "
            f"{plural(st.proposals_pending, 'write')} waiting for a person.")
    if found is None:
        return TourStep(0, "store", text)
    session_id = found[0]
    return TourStep(0, "store",
                    text + f" Highlighted: session {session_id[:8]}, with a worker and a "
                    "compaction.", RecordRef("session", session_id),
                    session_id)


def _context(store: Store, now: datetime) -> TourStep:
    found = _compacted_series(store)
    if found is None:
        return TourStep(1, "series", "No compaction without a checkpoint in this "
                        "store.")
    session_id, agent, c = found
    size = f"{c.pre_tokens:,} tokens" if c.pre_tokens else "the window"
    ts = c.ts
    return TourStep(
        1, "series",
        f"Session {session_id[:8]}: at {when(ts)} the harness compacted {size} with no "
        "checkpoint before it (\u2717, highlighted): the pre-compaction trigger never fired, "
        "so nothing was preserved first.",
        RecordRef("series", session_id, agent), ts, invites="open")


def _recall(store: Store, now: datetime) -> TourStep:
    best: tuple[tuple[bool, int], Trace, Candidate, Candidate] | None = None
    for info in store.traces():
        trace = store.trace(int(info.id or 0))
        memories = [c for c in trace.candidates if c.source_type == "memory"]
        injected = [c for c in memories if c.decision == "injected"]
        held_back = [c for c in memories if c.decision in HELD_BACK and not c.masked]
        if not injected or not held_back:
            continue
        # the story: a held-back memory that ranked above the one injected (the newest such)
        above = [c for c in held_back if c.rank < injected[0].rank]
        score = (bool(above), int(trace.id or 0))
        if best is None or score > best[0]:
            best = (score, trace, injected[0], (above or held_back)[0])
    if best is None:
        return TourStep(2, "trace", "No trace here injected one memory and held "
                        "another back.")
    _, trace, inj, held = best
    return TourStep(
        2, "trace",
        f"Trace {trace.id} \u201c{trace.query}\u201d: \u201c{inj.label}\u201d was injected "
        f"(#{inj.rank}); \u201c{held.label}\u201d ranked #{held.rank} (highlighted) but was "
        f"held back: {(held.reason or held.decision).split(';')[0]}.",
        RecordRef("trace", int(trace.id or 0)), str(held.rank), invites="open")


def _contradicted(store: Store) -> tuple[int, str, int, str, str] | None:
    """(proposal id, its name, memory id, memory name, the cue) of the first pending
    proposal whose contradiction check flags a memory."""
    for p in sorted(store.proposals(), key=lambda p: p.id):
        if p.status != "pending":
            continue
        for check in p.checks:
            if check.kind != "contradiction" or check.result == "pass":
                continue
            conflicts = (check.evidence or {}).get("conflicts") or []
            if not conflicts:
                continue
            first = conflicts[0]
            cues = first.get("cues") or []
            cue = (f"{cues[0].get('candidate')} where it says {cues[0].get('memory')}"
                   if cues else "a different value")
            return int(p.id), str(p.name or ""), int(first["memory_id"]), \
                str(first.get("name") or ""), cue
    return None


def _proposals(store: Store, now: datetime) -> TourStep:
    found = _contradicted(store)
    if found is None:
        return TourStep(3, "proposal", "No pending proposal here has a "
                        "contradiction flagged.")
    pid, name, mid, mname, cue = found
    return TourStep(
        3, "proposal",
        f"Proposal {pid} \u201c{name}\u201d waits for a person: its contradiction check "
        f"flags memory {mid} \u201c{mname}\u201d ({cue}).",
        RecordRef("proposal", pid), str(pid), invites="review")


def _memories(store: Store, now: datetime) -> TourStep:
    found = _contradicted(store)
    if found is None:
        return TourStep(4, "memory", "No contradicted memory here.")
    pid, _, mid, mname, _ = found
    chain = store.chain(mid)
    links = sum(len(link.successors) for link in chain)
    into: dict[int, int] = {}
    for link in chain:
        for successor in link.successors:
            into[successor] = into.get(successor, 0) + 1
    merge = ", one a merge" if any(n > 1 for n in into.values()) else ""
    return TourStep(
        4, "memory",
        f"Memory {mid} \u201c{mname}\u201d, which proposal {pid} contradicts, ends a "
        f"supersession chain of {plural(len(chain), 'memory', 'memories')} "
        f"({plural(links, 'link')}{merge}): the chain pane shows each link's validity and "
        "the proposal that made it.",
        RecordRef("memory", mid), str(mid))


def _health(store: Store, now: datetime) -> TourStep:
    scan = store.health(now=now, save="never")
    bad = [s for name in APPENDIX_D for s in scan.signals
           if s.name == name and s.status in ("fail", "warn")]
    if not bad:
        return TourStep(5, "signal", "Every Appendix D signal is ok here.")
    fails = [s for s in bad if s.status == "fail"]
    first = (fails or bad)[0]
    listed = ", ".join(f"{s.name} {s.display}" for s in (fails or bad)[:4])
    return TourStep(
        5, "signal",
        f"The silent failures of the paper's Appendix D, found: {listed} "
        f"({len(fails)} fail, {len(bad) - len(fails)} warn).", None, first.name,
        invites="drill")


def _privacy(store: Store, now: datetime) -> TourStep:
    refused = demo_refusal(store)
    if refused is not None:
        return TourStep(6, "erasure",
                        f"This step erases records, so it acts on the demo's own store only: "
                        f"{refused}.", refused=refused)
    hits = [h for h in store.search(PASTED_KEY, limit=20, mode="fts")
            if h.source_type == "entry" and PASTED_KEY in (h.text or "")]
    if not hits:
        erased = [t for t in store.tombstones(with_probes=True) if t.action == "erase"]
        if erased:
            t = erased[0]
            proof = ("verified: every probe passed" if t.verified
                     else "NOT verified: a probe failed")
            return TourStep(6, "erasure",
                            f"Erased: no record holds the pasted key any more. Tombstone "
                            f"{t.id} keeps counts, time and actor, no content; {proof}.",
                            invites="verify")
        return TourStep(6, "erasure", "Nothing here holds the pasted key.")
    sessions = sorted({str(h.session_id)[:8] for h in hits if h.session_id})
    return TourStep(
        6, "erasure",
        f"Dana pasted a staging key into session {', '.join(sessions)}: "
        f"{plural(len(hits), 'entry', 'entries')} hold it.",
        None, PASTED_KEY, invites="erase")


STEPS: tuple[Callable[[Store, datetime], TourStep], ...] = (
    _overview, _context, _recall, _proposals, _memories, _health, _privacy)


def tour_step(store: Store, index: int, now: datetime) -> TourStep:
    """Step ``index`` (0-based, clamped to the tour) as the store is now."""
    return STEPS[max(0, min(len(STEPS) - 1, index))](store, now)


# -- where the tour was left ------------------------------------------------------------------
def tour_position(store: Store) -> int:
    """The step the tour was left on (0 when it never ran or the note is unreadable)."""
    try:
        text = (demo_data_dir(store.path) / POSITION_FILE).read_text(encoding="utf-8")
        return max(0, min(len(STEPS) - 1, int(text.strip())))
    except (OSError, ValueError):
        return 0


def remember_tour_position(store: Store, index: int) -> None:
    """Keep the step beside the demo store (never in it: the store's data does not change);
    on a store opened read-only nothing is written, beside it either (the app keeps the step
    for this run only)."""
    if store.read_only:
        return
    folder = demo_data_dir(store.path)
    if (folder / MARKER_FILE).is_file():
        (folder / POSITION_FILE).write_text(f"{index}\n", encoding="utf-8")
