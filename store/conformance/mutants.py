"""Named seeded defects ("mutants"): each patches one function of the store's own code path,
in this process, for as long as its context manager is open, so that the suite can show it
catches the defect — a case of the mutant's family that passes on the real code fails with the
defect in place. A mutant nobody catches means the suite cannot see that defect.

Each is a defect the paper's invariants forbid (Anamnesis §6.6, §10.1): the channel rule off,
``hits`` raising authority, supersession ignored, a procedure auto-applied, a tool result read
as the person's request, erased vectors kept in a warm cache, the verification probes skipped,
the item budget ignored, reasons dropped from the trace.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

from store.conformance.bundle import Bundle, load_bundle
from store.conformance.runner import run_case


@dataclass(frozen=True)
class Mutant:
    name: str
    family: str
    defect: str
    patch: Callable[[], contextlib.AbstractContextManager[Any]]


@dataclass
class MutantResult:
    name: str
    family: str
    defect: str
    caught_by: list[str] = field(default_factory=list)
    ran: int = 0

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "defect": self.defect,
                "caught": self.caught, "caught_by": self.caught_by, "cases_run": self.ran}


@contextlib.contextmanager
def _channel_rule_off() -> Iterator[None]:
    from store.recall import terms

    real = terms.hard_decision

    def fake(f: Any, channel: str, historical: bool, now: Any) -> Any:
        return real(dataclasses.replace(f, sensitivity="public"), channel, historical, now)

    with mock.patch.object(terms, "hard_decision", fake):
        yield


@contextlib.contextmanager
def _supersession_ignored() -> Iterator[None]:
    from store.recall import terms

    real = terms.hard_decision

    def fake(f: Any, channel: str, historical: bool, now: Any) -> Any:
        got = real(f, channel, historical, now)
        return None if got is not None and got[0] == "superseded" else got

    with mock.patch.object(terms, "hard_decision", fake):
        yield


@contextlib.contextmanager
def _hits_raise_authority() -> Iterator[None]:
    from store.recall import terms

    real = terms.authority

    def fake(f: Any) -> float:
        if f.source_type == "memory" and f.hits >= 10:
            return terms.APPROVED_MEMORY
        return real(f)

    with mock.patch.object(terms, "authority", fake):
        yield


@contextlib.contextmanager
def _evidence_dropped() -> Iterator[None]:
    from store.core import memories
    from store.governance import apply

    def fake(conn: Any, store: Any, memory_id: int, new: Any, proposal_id: int) -> None:
        memories.add_evidence(conn, store, memory_id, note=f"proposal {proposal_id}")

    with mock.patch.object(apply, "_evidence", fake):
        yield


@contextlib.contextmanager
def _procedure_auto_applied() -> Iterator[None]:
    from store.governance import apply

    with mock.patch.object(apply, "auto_apply_allowed",
                           lambda store, info: (True, "mutant: every write auto-applied")):
        yield


@contextlib.contextmanager
def _tool_result_as_request() -> Iterator[None]:
    from store.governance import detect

    real = detect.is_typed_turn

    def fake(entry: Any) -> bool:
        if entry.kind in ("tool_result", "assistant") and entry.content.strip():
            return True
        return real(entry)

    with mock.patch.object(detect, "is_typed_turn", fake):
        yield


@contextlib.contextmanager
def _harness_as_typed() -> Iterator[None]:
    from store.governance import detect

    with mock.patch.object(detect, "_HARNESS", detect.re.compile(r"(?!x)x")):
        yield


@contextlib.contextmanager
def _tool_text_authority() -> Iterator[None]:
    from store.recall import terms

    with mock.patch.dict(terms.ENTRY_AUTHORITY, {"tool_result": 1.0}):
        yield


@contextlib.contextmanager
def _vector_cache_kept() -> Iterator[None]:
    from store.recall import pool

    real_sync = pool.VectorCache.sync

    def sync(self: Any, conn: Any, model: str) -> None:
        if self.stamp is None:
            real_sync(self, conn, model)

    with mock.patch.object(pool, "drop_cache", lambda store: None), \
            mock.patch.object(pool.VectorCache, "sync", sync):
        yield


@contextlib.contextmanager
def _index_rows_kept() -> Iterator[None]:
    from store.core import vec

    with mock.patch.object(vec, "delete_chunks_index", lambda conn, rows: None):
        yield


@contextlib.contextmanager
def _chain_bridge_dropped() -> Iterator[None]:
    from store.privacy import apply

    with mock.patch.object(apply, "_bridge", lambda store, conn, bridges, refs: None):
        yield


@contextlib.contextmanager
def _budget_ignored() -> Iterator[None]:
    from store.recall import run

    real = run._decide

    def fake(ranked: Any, cfg: dict[str, Any], vector_of: Any) -> Any:
        return real(ranked, {**cfg, "memory_items": 1000, "transcript_items": 1000},
                    vector_of)

    with mock.patch.object(run, "_decide", fake):
        yield


@contextlib.contextmanager
def _reasons_dropped() -> Iterator[None]:
    from store.recall import run

    real = run._decide

    def fake(ranked: Any, cfg: dict[str, Any], vector_of: Any) -> Any:
        items = real(ranked, cfg, vector_of)
        for cand, _ in ranked:
            if cand.decision != "injected":
                cand.reason = ""
        return items

    with mock.patch.object(run, "_decide", fake):
        yield


MUTANTS = (
    Mutant("channel-rule-off", "scope_isolation",
           "recall ignores sensitivity: secret and private records are ranked as public",
           _channel_rule_off),
    Mutant("evidence-dropped", "provenance_preservation",
           "an applied proposal stores no pointer to its evidence, only a note",
           _evidence_dropped),
    Mutant("hits-raise-authority", "authority_non_amplification",
           "a memory used ten times or more gets the approved authority term",
           _hits_raise_authority),
    Mutant("supersession-ignored", "temporal_revision",
           "superseded and expired memories are served as current",
           _supersession_ignored),
    Mutant("procedure-auto-applied", "procedure_inertness",
           "the gate auto-applies every proposal, procedures and identity writes included",
           _procedure_auto_applied),
    Mutant("tool-result-as-request", "poisoning_resistance",
           "the consolidation pass reads tool results and assistant turns as the person's "
           "requests", _tool_result_as_request),
    Mutant("harness-as-typed", "poisoning_resistance",
           "harness text in a user line (a system reminder) is read as the person's typing",
           _harness_as_typed),
    Mutant("tool-text-authority", "poisoning_resistance",
           "a tool result gets the authority of an approved memory", _tool_text_authority),
    Mutant("vector-cache-kept", "deletion_closure",
           "a warm process keeps its in-memory vectors after an erasure", _vector_cache_kept),
    Mutant("index-rows-kept", "deletion_closure",
           "an erasure leaves the erased chunks' vector and FTS rows", _index_rows_kept),
    Mutant("chain-bridge-dropped", "deletion_closure",
           "erasing a chain member splits the chain silently and leaves the erased memory's "
           "name in its successor's supersedes reference", _chain_bridge_dropped),
    Mutant("budget-ignored", "termination_and_audit",
           "recall injects every candidate above the floor, past its item budgets",
           _budget_ignored),
    Mutant("reasons-dropped", "termination_and_audit",
           "candidates that were not injected are stored with no reason", _reasons_dropped),
)


def run_mutants(bundle: Bundle | None = None, names: list[str] | None = None,
                baseline: dict[str, str] | None = None,
                first_only: bool = False) -> list[MutantResult]:
    """Run each mutant's family under the defect; a case that passes on the real code
    (``baseline``: case id → status, run here when not given) and fails with the defect
    catches it. ``first_only``: stop at the first case that catches each mutant."""
    bundle = bundle or load_bundle()
    chosen = [m for m in MUTANTS if names is None or m.name in names]
    unknown = sorted(set(names or ()) - {m.name for m in MUTANTS})
    if unknown:
        raise ValueError(f"unknown mutant {unknown[0]!r}; the mutants are "
                         f"{', '.join(m.name for m in MUTANTS)}")
    out = []
    for m in chosen:
        cases = [c for c in bundle.select(m.family) if "not_applicable" not in c]
        if baseline is None:
            base = {c["id"]: run_case(c).status for c in cases}
        else:
            base = baseline
        result = MutantResult(m.name, m.family, m.defect)
        with m.patch():
            for c in cases:
                if base.get(c["id"]) != "pass":
                    continue
                result.ran += 1
                if run_case(c).status == "fail":
                    result.caught_by.append(c["id"])
                    if first_only:
                        break
        out.append(result)
    return out
