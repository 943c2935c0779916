"""The checks run on every submitted (and edited) proposal, each kept with its evidence and a
result ``pass`` / ``warn`` / ``fail`` (DESIGN "Consolidation proposals and the approval gate").

- ``duplicate``: the nearest active memories by vector similarity (every chunk of a memory,
  made by the current embedder); at or above ``governance.duplicate_cos`` an ``add`` is a
  ``warn`` suggesting ``reinforce`` of that memory (``noop`` when verbatim). The same text
  (case and whitespace ignored) is always compared, whatever embedded the memories; memories
  with no vector from the current embedder make the check a ``warn`` that says how many
  could not be compared by meaning.
- ``contradiction``: a heuristic, and it says so. An active memory that shares a tag or project
  with the candidate (any memory when the candidate names none) with a sentence similar to one
  of the candidate's — cosine at least ``governance.contradiction_cos``, or half their words in
  common, or 80 % of the shorter one's words in the longer (a clause of a long list item; so
  the heuristic still works under the fallback embedder) — that differs in a
  negation, a number, a date or the value given to the same key ("X is Y" / "X is Z"):
  ``fail``, suggesting ``supersede`` (or ``keep-both`` with a reason).
- ``source_support``: each sentence of the candidate is traced to its evidence (word overlap
  and cosine to the evidence's sentences); an unsupported one is marked as inference: ``warn``.
  Overlap with an evidence sentence that gives another number, date, negation or "X is Y"
  value (``text.cues``, as the contradiction check) is no support: ``fail``.
- ``budget``: a write that takes the always-loaded critical set past
  ``health.critical_budget_chars`` (alias ``governance.critical_budget_chars``): ``fail``, and
  past ``health.critical_budget_warn_percent`` of it ``warn``, as Health's ``critical_budget``
  grades it (LCA Appendix D); approving a ``fail`` needs a reason, recorded with the decision.
- ``procedure_risk``: every ``procedure`` or ``identity`` write: ``warn``, a person decides.
- ``verifier`` (``store.governance.verifier``) when a command is configured.

The targets of a ``revise`` / ``supersede`` / ``merge`` are left out of the duplicate and
contradiction checks: replacing them is the point of the proposal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func
from sqlmodel import col

from store.core.vocab import plural
from store.core import vec
from store.core.db import columns
from store.core.models import Chunk, Entry, Memory
from store.governance import text as tx
from store.governance.records import MASK, PERSON_ONLY_TYPES, CheckInfo

if TYPE_CHECKING:
    import numpy as np
    from store.core.base import StoreBase as Store

NEW_MEMORY_OPS = ("add", "revise", "supersede", "merge")
_EVIDENCE_SENTENCES = 400
_CANDIDATE_SENTENCES = 300  # a pasted log of thousands of lines: its head is traced
_CONTAINED = 0.8  # the shorter sentence's words found in the longer: the same subject
_SENTENCE_GATE = 0.5  # whole-memory cosine below which sentence pairs are compared by words
_FILE_CHARS = 200_000


@dataclass
class Candidate:
    """What the checks read: the proposal's candidate, its targets and its evidence texts."""

    op: str
    type: str | None
    name: str
    content: str
    metadata: dict[str, Any]
    targets: list[dict[str, Any]]  # memory rows: id, name, type, body, critical, ...
    evidence: list[dict[str, Any]]  # {"entry_id", "span", "file", "text"}
    rationale: str | None = None
    sensitivity: str = "public"

    @property
    def index_text(self) -> str:
        """What is embedded for the memory the proposal would write."""
        md = self.metadata
        parts = [self.name, md.get("description") or "", md.get("invariant") or "",
                 self.content]
        return "\n\n".join(p.strip() for p in parts if p and str(p).strip())

    @property
    def tags(self) -> set[str]:
        return {str(t).lower() for t in (self.metadata.get("tags") or [])}

    @property
    def projects(self) -> set[str]:
        return {str(p).lower() for p in (self.metadata.get("projects") or [])}

    @property
    def target_ids(self) -> set[int]:
        return {int(t["id"]) for t in self.targets}


@dataclass
class _Memory:
    id: int
    name: str
    type: str | None
    body: str
    tags: set[str]
    projects: set[str]
    sensitivity: str
    cos: float = -1.0
    text: str = ""
    vectors: list[np.ndarray] = field(default_factory=list)


def _active_memories(conn: Connection, model: str, exclude: set[int]) -> list[_Memory]:
    """Active (and disputed) memories with the vectors of their chunks made by ``model``."""
    rows = conn.execute(columns(
        col(Memory.id), col(Memory.name), col(Memory.type), col(Memory.body), col(Memory.tags),
        col(Memory.projects), col(Memory.sensitivity), col(Memory.description),
        col(Memory.invariant)).where(col(Memory.status).in_(("active", "disputed")))
        .order_by(col(Memory.id))).all()
    mems: dict[int, _Memory] = {}
    for r in rows:
        if int(r[0]) in exclude:
            continue
        parts = [r[1], r[7] or "", r[8] or "", r[3] or ""]
        mems[int(r[0])] = _Memory(int(r[0]), r[1], r[2], r[3] or "", _json_set(r[4]),
                                  _json_set(r[5]), r[6],
                                  text="\n\n".join(p.strip() for p in parts if p.strip()))
    if not mems:
        return []
    chunks = conn.execute(columns(col(Chunk.id), col(Chunk.source_id)).where(
        col(Chunk.source_type) == "memory", col(Chunk.status) == "ok",
        col(Chunk.model) == model)).all()
    for cid, mid in chunks:
        mem = mems.get(int(mid))
        if mem is not None:
            v = vec.vector_of(conn, int(cid))
            if v is not None:
                mem.vectors.append(v)
    return list(mems.values())


def _norm(text: str | None) -> str:
    """Text as the same-text comparison sees it: case and runs of whitespace ignored."""
    return " ".join((text or "").lower().split())


def _json_set(raw: str | None) -> set[str]:
    try:
        return {str(v).lower() for v in json.loads(raw or "[]")}
    except (ValueError, TypeError):
        return set()


class Checker:
    """Runs the checks for one store (its settings and embedder)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.settings = store.settings
        self._vectors: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for ``texts``, each text embedded once per run (checks share sentences)."""
        import numpy as np

        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            for t, v in zip(missing, self.store.embedder.embed(missing), strict=True):
                self._vectors[t] = v
        if not texts:
            return np.zeros((0, self.store.embedder.dim), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def run(self, cand: Candidate) -> list[CheckInfo]:
        """Every check for ``cand`` (the verifier's only when a command is configured)."""
        from store.governance.verifier import verify_with_command

        embedder = self.store.embedder
        qvec = self.embed([cand.index_text])[0]
        with self.store.read() as conn:
            mems = _active_memories(conn, embedder.name, cand.target_ids)
            for m in mems:
                m.cos = max((float(v @ qvec) for v in m.vectors), default=-1.0)
            budget = self.budget(conn, cand)
        conflicts = self._conflicts(cand, mems)
        secret = cand.sensitivity == "secret"
        checks = [self.duplicate(cand, mems, conflicts), self._contradiction(conflicts, secret),
                  self.source_support(cand), budget, self.procedure_risk(cand)]
        command = str(self.settings["governance.verifier_command"] or "").strip()
        if command:
            touched = [m for m in mems if m.cos >= float(self.settings["governance."
                                                                        "contradiction_cos"])]
            checks.append(verify_with_command(
                command, float(self.settings["governance.verifier_timeout_s"]), cand,
                [{"id": m.id, "name": m.name, "type": m.type, "cos": round(m.cos, 4),
                  "body": None if m.sensitivity == "secret" else m.body} for m in touched]))
        return checks

    # -- duplicate ---------------------------------------------------------------------
    def duplicate(self, cand: Candidate, mems: list[_Memory],
                  conflicts: dict[int, dict[str, Any]]) -> CheckInfo:
        """Near-duplicates by meaning (cosine to the chunks the current embedder made) and,
        always, the same text (normalised: case and whitespace) — so a memory embedded by
        another model is still caught when it says the same, and a check that could compare
        nothing by meaning says so (``warn``) instead of passing."""
        if cand.op not in NEW_MEMORY_OPS:
            return CheckInfo("duplicate", "pass", f"not checked: a {cand.op} writes no new text")
        threshold = float(self.settings["governance.duplicate_cos"])
        mine = {_norm(cand.content), _norm(cand.index_text)} - {""}
        same = [m for m in mems if {_norm(m.body), _norm(m.text)} & mine]
        blind = [m for m in mems if not m.vectors]
        near = sorted((m for m in mems if m.cos >= 0), key=lambda m: -m.cos)[:5]
        matches = [{"memory_id": m.id, "name": m.name, "cos": round(m.cos, 4),
                    "conflicting": m.id in conflicts} for m in near]
        evidence: dict[str, Any] = {
            "matches": matches, "threshold": threshold,
            "same_text": [{"memory_id": m.id, "name": m.name} for m in same],
            "compared_by_meaning": len(mems) - len(blind), "active": len(mems),
            "not_comparable": [m.id for m in blind][:50],
            "embedder": self.store.embedder.name}
        dupes = [m for m in near if m.cos >= threshold]
        if not dupes and not same:
            best = f" (nearest: memory {near[0].id}, cos {near[0].cos:.2f})" if near else ""
            if blind:
                return CheckInfo(
                    "duplicate", "warn",
                    f"compared against {len(mems) - len(blind)} of "
                    f"{plural(len(mems), 'memory', 'memories')} by "
                    f"meaning: {len(blind)} embedded by another model (not "
                    f"{self.store.embedder.name}) or not at all were compared by exact text "
                    f"only; none is the same text{best} — `lca-tui reindex` embeds them again",
                    evidence)
            return CheckInfo("duplicate", "pass",
                             f"no active memory at cos ≥ {threshold:.2f} or with the same text"
                             f"{best}", evidence)
        top = same[0] if same else dupes[0]
        verbatim = top in same
        how = "same text" if top.cos < 0 else f"cos {top.cos:.2f}"
        suggestion = "noop" if verbatim else "reinforce"
        evidence["memory_id"] = top.id
        if cand.op != "add":
            return CheckInfo("duplicate", "warn",
                             f"near-duplicate of memory {top.id} '{top.name}' ({how})",
                             evidence, None)
        note = " — but it may contradict it (see contradiction)" if top.id in conflicts else ""
        what = "the same text as" if verbatim else "a near-duplicate of"
        return CheckInfo("duplicate", "warn",
                         f"{what} memory {top.id} '{top.name}' ({how}): "
                         f"consider {suggestion} instead of add{note}", evidence, suggestion)

    # -- contradiction -----------------------------------------------------------------
    def _conflicts(self, cand: Candidate, mems: list[_Memory]) -> dict[int, dict[str, Any]]:
        """memory id → the conflict found with it (see the module docstring).

        Sentence pairs are compared by words first; sentences are embedded only for memories
        whose nearest chunk is at least ``_SENTENCE_GATE`` similar to the candidate as a whole,
        so a proposal costs a few embeddings, not one per sentence of every memory."""
        if cand.op not in NEW_MEMORY_OPS:
            return {}
        threshold = float(self.settings["governance.contradiction_cos"])
        scope = cand.tags | cand.projects
        pool = [m for m in mems if not scope or (m.tags | m.projects) & scope]
        mine = (tx.sentences(cand.content, min_words=2)
                or [tx.Sentence(0, len(cand.content), cand.content)])[:_CANDIDATE_SENTENCES]
        theirs = {m.id: tx.sentences(m.text, min_words=2) for m in pool}
        close = [m for m in pool if m.cos >= _SENTENCE_GATE and theirs[m.id]]
        texts = [s.text for s in mine] + [s.text for m in close for s in theirs[m.id]]
        vectors = self.embed(texts) if close else None
        sims_of: dict[int, np.ndarray] = {}
        if vectors is not None:
            at = len(mine)
            for m in close:
                n = len(theirs[m.id])
                sims_of[m.id] = vectors[:len(mine)] @ vectors[at:at + n].T
                at += n
        found: dict[int, dict[str, Any]] = {}
        for m in pool:
            ss = theirs[m.id]
            sims = sims_of.get(m.id)
            best: dict[str, Any] | None = None
            for i, a in enumerate(mine):
                for j, b in enumerate(ss):
                    sim = float(sims[i, j]) if sims is not None else None
                    close_enough = ((sim is not None and sim >= threshold)
                                    or tx.jaccard(a.text, b.text) >= 0.5
                                    or tx.same_subject(a.text, b.text))
                    if not close_enough and tx.contained(a.text, b.text) < _CONTAINED:
                        continue
                    cues = tx.cues(a.text, b.text)
                    if not close_enough:
                        # paired only because one clause restates the other's words: a
                        # differing number, date or value says they disagree, but a "never"
                        # elsewhere in a long sentence says nothing about the shared clause
                        cues = [c for c in cues if c.get("kind") != "negation"]
                    if cues and (best is None or (sim or 0.0) > (best["sentence_cos"] or 0.0)):
                        secret = m.sensitivity == "secret"
                        if secret:
                            cues = [{**c, "memory": MASK} for c in cues]
                        best = {"memory_id": m.id, "name": m.name, "cos": round(m.cos, 4),
                                "sentence_cos": None if sim is None else round(sim, 4),
                                "cues": cues, "candidate_sentence": a.text,
                                "candidate_span": [a.start, a.end],
                                "memory_sentence": None if secret else b.text,
                                "memory_span": [b.start, b.end]}
            if best is not None:
                found[m.id] = best
        return found

    def _contradiction(self, conflicts: dict[int, dict[str, Any]], secret: bool) -> CheckInfo:
        heuristic = "heuristic (negation, number, date, 'X is Y' values), not a verdict"
        if not conflicts:
            return CheckInfo("contradiction", "pass",
                             f"no conflicting active memory found — {heuristic}",
                             {"heuristic": True, "conflicts": []})
        ordered = sorted(conflicts.values(), key=lambda c: (-(c["sentence_cos"] or 0.0),
                                                             -c["cos"]))
        top = ordered[0]
        cue = top["cues"][0]
        said = (cue["kind"] if secret or top["memory_sentence"] is None
                else f"{cue['kind']}: '{cue['candidate']}' vs '{cue['memory']}'")
        more = f" and {len(ordered) - 1} more" if len(ordered) > 1 else ""
        return CheckInfo(
            "contradiction", "fail",
            f"may contradict memory {top['memory_id']} '{top['name']}' ({said}){more} — "
            f"{heuristic}; approve --as supersede or --as keep-both with a reason",
            {"heuristic": True, "conflicts": ordered, "memory_id": top["memory_id"]},
            "supersede")

    # -- source support ----------------------------------------------------------------
    def source_support(self, cand: Candidate) -> CheckInfo:
        if cand.op not in NEW_MEMORY_OPS:
            return CheckInfo("source_support", "pass",
                             f"not checked: a {cand.op} writes no new text")
        every = tx.sentences(cand.content)
        sents = every[:_CANDIDATE_SENTENCES]
        if not sents:
            return CheckInfo("source_support", "pass", "no sentence to support",
                             {"sentences": []})
        pieces: list[tuple[int, dict[str, Any], tx.Sentence]] = []
        for k, ev in enumerate(cand.evidence):
            body = ev.get("text") or ""
            base = ev["span"][0] if ev.get("span") else 0
            for s in tx.sentences(body, min_words=2)[:_EVIDENCE_SENTENCES]:
                pieces.append((k, ev, tx.Sentence(base + s.start, base + s.end, s.text)))
        marked: list[dict[str, Any]] = []
        min_overlap = float(self.settings["governance.support_overlap"])
        min_cos = float(self.settings["governance.support_cos"])
        if pieces:
            vectors = self.embed([s.text for s in sents] + [p[2].text for p in pieces])
            sims = vectors[:len(sents)] @ vectors[len(sents):].T
        for i, s in enumerate(sents):
            best: dict[str, Any] = {"overlap": 0.0, "cos": None, "entry_id": None,
                                    "file": None, "span": None}
            best_score = -1.0
            against: dict[str, Any] | None = None
            for j, (_, ev, piece) in enumerate(pieces):
                ov = tx.overlap(s.text, set(tx.words(piece.text)))
                cos = float(sims[i, j])
                score = max(ov / min_overlap, cos / min_cos)  # ≥ 1: supported
                if score >= 1.0 or ov >= _CONTRADICTED_OVERLAP or tx.same_subject(
                        s.text, piece.text):
                    # Word overlap is no support when the evidence gives another number,
                    # date, negation or "X is Y" value: it contradicts the sentence (half
                    # its words in common, as the contradiction check pairs sentences).
                    cues = tx.cues(s.text, piece.text)
                    if cues and tx.jaccard(s.text, piece.text) < 0.5:
                        # a negation may belong to another clause of a longer evidence
                        # sentence: it counts only between sentences of the same words
                        cues = [c for c in cues if c["kind"] != "negation"]
                    if cues:
                        if against is None:
                            against = {"entry_id": ev.get("entry_id"), "file": ev.get("file"),
                                       "span": [piece.start, piece.end], "cues": cues,
                                       "overlap": round(ov, 3), "cos": round(cos, 3)}
                        continue
                if score > best_score:
                    best_score = score
                    best = {"overlap": round(ov, 3), "cos": round(cos, 3),
                            "entry_id": ev.get("entry_id"), "file": ev.get("file"),
                            "span": [piece.start, piece.end]}
            supported = best["overlap"] >= min_overlap or (best["cos"] or 0.0) >= min_cos
            mark = {"start": s.start, "end": s.end, "text": s.text,
                    "supported": supported, "inference": not supported, **best}
            if against is not None and not supported:
                mark["contradicted_by"] = against
            marked.append(mark)
        unsupported = [m for m in marked if m["inference"]]
        contradicted = [m for m in marked if m.get("contradicted_by")]
        evidence = {"sentences": marked, "min_overlap": min_overlap, "min_cos": min_cos,
                    "sentences_total": len(every)}
        if len(every) > len(sents):
            evidence["note"] = (f"the first {len(sents)} of {plural(len(every), 'sentence')} "
                                "were traced")
        if not cand.evidence:
            return CheckInfo("source_support", "warn",
                             f"no evidence given: {_every(len(sents), 'sentence')} marked as "
                             "inference", evidence)
        if contradicted:
            first = contradicted[0]
            by = first["contradicted_by"]
            where = (f"entry {by['entry_id']}" if by.get("entry_id") is not None
                     else f"file {by.get('file')}")
            cue = by["cues"][0]
            said = (cue["kind"] if cand.sensitivity == "secret"
                    else f"{cue['kind']}: '{cue['candidate']}' vs '{cue['memory']}'")
            what = ("" if cand.sensitivity == "secret"
                    else f" ('{tx_excerpt(first['text'])}')")
            return CheckInfo("source_support", "fail",
                             f"{len(contradicted)} of {_n_sentences(len(sents))} contradicted "
                             f"by the evidence{what}: {where} gives another {said}; correct "
                             "the text or the evidence", evidence)
        if unsupported:
            first_note = ("" if cand.sensitivity == "secret"
                          else f" (first: '{tx_excerpt(unsupported[0]['text'])}')")
            return CheckInfo("source_support", "warn",
                             f"{len(unsupported)} of {_n_sentences(len(sents))} not found in "
                             f"the evidence, marked as inference{first_note}", evidence)
        return CheckInfo("source_support", "pass",
                         f"{_every(len(sents), 'sentence')} traced to the evidence", evidence)

    # -- budget ------------------------------------------------------------------------
    def budget(self, conn: Connection, cand: Candidate) -> CheckInfo:
        limit = int(self.settings["health.critical_budget_chars"])  # Health's, one setting
        warn_at = round(limit * float(self.settings["health.critical_budget_warn_percent"])
                        / 100)
        critical = bool(cand.metadata.get("critical"))
        replaced = [t for t in cand.targets if t.get("critical") and t.get("status") == "active"]
        promotion = critical and (cand.op in ("add", "merge", "supersede")
                                  or (cand.op == "revise" and not replaced))
        current = int(conn.execute(columns(func.coalesce(func.sum(
            func.length(col(Memory.body)) + func.coalesce(func.length(col(Memory.invariant)),
                                                          0)), 0))
            .where(col(Memory.critical) == 1, col(Memory.status) == "active",
                   col(Memory.loadable) == 1)).scalar_one())
        adding = len(cand.content) + len(cand.metadata.get("invariant") or "")
        removing = sum(len(t.get("body") or "") + len(t.get("invariant") or "")
                       for t in replaced) if cand.op in ("revise", "supersede", "merge") else 0
        evidence = {"current": current, "adding": adding if critical else 0,
                    "removing": removing if critical else 0, "budget": limit,
                    "promotion": promotion}
        if not critical or cand.op not in NEW_MEMORY_OPS:
            return CheckInfo("budget", "pass",
                             f"not a critical write (critical set {current:,} of {limit:,} "
                             "chars)", evidence)
        after = current + adding - removing
        evidence["after"] = after
        if after > limit:  # graded as Health's critical_budget grades it: over is a fail
            return CheckInfo("budget", "fail",
                             f"critical set would be {after:,} chars, over its {limit:,}-char "
                             f"budget (now {current:,}; this adds {adding - removing:,}): the "
                             "loader would truncate it; approving needs a reason (an override, "
                             "recorded)", evidence)
        if after > warn_at:  # and past Health's warn percent, a warn as there
            return CheckInfo("budget", "warn",
                             f"critical set would be {after:,} of {limit:,} chars, past "
                             f"Health's warn level ({warn_at:,} chars)", evidence)
        return CheckInfo("budget", "pass",
                         f"critical set {after:,} of {limit:,} chars after this write",
                         evidence)

    # -- procedure risk ----------------------------------------------------------------
    @staticmethod
    def procedure_risk(cand: Candidate) -> CheckInfo:
        """``warn`` when the declared type or any target's type is ``procedure`` /
        ``identity`` (declaring another type does not dodge the rule), and when a write
        changes a target's type."""
        targets = {int(t["id"]): (t.get("type") or "") for t in cand.targets}
        types = {(cand.type or "").lower()} | {v.lower() for v in targets.values()}
        risky = sorted(types & set(PERSON_ONLY_TYPES))
        changed = {mid: was for mid, was in targets.items()
                   if cand.type and was and was.lower() != cand.type.lower()}
        evidence: dict[str, Any] = {"type": cand.type, "target_types": {
            str(k): v or None for k, v in targets.items()}}
        notes = []
        if risky:
            whose = ("" if (cand.type or "").lower() in risky
                     else f" (a target is a {risky[0]}; declared {cand.type or 'no type'})")
            notes.append(f"a {'/'.join(risky)} write{whose}: a person decides (never applied "
                         "automatically)")
        if changed and cand.op in ("revise", "reinforce"):
            evidence["type_change"] = {str(k): [v, cand.type] for k, v in changed.items()}
            mid, was = next(iter(changed.items()))
            notes.append(f"changes memory {mid}'s type from {was} to {cand.type}")
        if notes:
            return CheckInfo("procedure_risk", "warn", "; ".join(notes), evidence)
        return CheckInfo("procedure_risk", "pass",
                         f"type {cand.type or 'unset'}: not a procedure or identity write",
                         evidence)


_CONTRADICTED_OVERLAP = 0.5


def _n_sentences(n: int) -> str:
    return plural(n, "sentence")


def _every(n: int, word: str) -> str:
    """"the one sentence is" / "all 3 sentences are" — never "all 1 sentences"."""
    return f"the one {word} is" if n == 1 else f"all {plural(n, word)} are"


def tx_excerpt(value: str, width: int = 60) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def evidence_texts(conn: Connection, pointers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The text each evidence pointer names (an entry, its span, or a readable file)."""
    out = []
    for p in pointers:
        body = ""
        if p.get("entry_id") is not None:
            row = conn.execute(columns(col(Entry.content)).where(
                col(Entry.id) == int(p["entry_id"]))).first()
            body = row[0] if row else ""
            if p.get("span"):
                a, b = p["span"]
                body = body[a:b]
        elif p.get("file"):
            try:
                body = Path(p["file"]).read_text(encoding="utf-8", errors="replace")[:_FILE_CHARS]
            except OSError:
                body = ""
        out.append({**p, "text": body})
    return out
