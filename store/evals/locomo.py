"""Evidence recall on LoCoMo (snap-research/LoCoMo, ``data/locomo10.json``).

Each conversation is imported into a scratch store of its own (never the user's): one session
per LoCoMo session, dated by its ``session_N_date_time``, one transcript entry per turn with
its speaker. Every labelled question of categories 1–4 (in locomo10.json's numbering: 1
multi-hop, 2 temporal, 3 open-domain, 4 single-hop — the mapping the LoCoMo evaluations use;
category 5, adversarial, has no answer in the conversation) is then asked through
the real ``Store.recall`` and the trace's candidates, in rank order, are compared with the
question's evidence turns: a question is *found at k* when any of its evidence turns is among
the first k candidates. The report gives R@1/5/10/20 per conversation and overall, and the
recall latencies the traces recorded.

The data file is not shipped with lca-tui (it is CC BY-NC 4.0 and another repository's):
``DATA_HINT`` says where to get it.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store.core.embed import Embedder
from store.core.errors import StoreError
from store.core.settings import Settings
from store.core.vocab import Progress, percentiles
from store.core.writes import NewEntry, NewSession
from store.facade import Store

DATA_HINT = ("LoCoMo's data is not shipped with lca-tui (CC BY-NC 4.0): get data/locomo10.json "
             "from the snap-research/LoCoMo repository on GitHub")
KS = (1, 5, 10, 20)
CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}



class LocomoError(StoreError):
    """The file is not LoCoMo data (missing, not JSON, or not its shape)."""


@dataclass(frozen=True)
class Question:
    conversation: str
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Asked:
    """One question asked: the rank (1-based) of its first evidence turn among the trace's
    candidates (None: not among them), and the recall's latency."""

    question: Question
    first_rank: int | None
    latency_ms: float


@dataclass
class ConversationResult:
    id: str
    turns: int
    sessions: int
    asked: list[Asked] = field(default_factory=list)
    import_s: float = 0.0

    def recall_at(self, k: int) -> float:
        return recall_at(self.asked, k)


@dataclass
class LocomoReport:
    file: str
    model: str
    settings: dict[str, Any]
    conversations: list[ConversationResult]
    started: str

    @property
    def asked(self) -> list[Asked]:
        return [a for c in self.conversations for a in c.asked]

    def recall_at(self, k: int) -> float:
        return recall_at(self.asked, k)

    def latency(self) -> dict[str, float]:
        return percentiles([a.latency_ms for a in self.asked]) or \
            {"p50": 0.0, "p95": 0.0, "max": 0.0, "mean": 0.0}

    def by_category(self) -> dict[int, dict[str, float]]:
        out: dict[int, dict[str, float]] = {}
        for cat in CATEGORIES:
            asked = [a for a in self.asked if a.question.category == cat]
            if asked:
                out[cat] = {"questions": len(asked),
                            **{f"R@{k}": recall_at(asked, k) for k in KS}}
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file, "model": self.model, "settings": self.settings,
            "started": self.started, "questions": len(self.asked),
            **{f"R@{k}": round(self.recall_at(k), 4) for k in KS},
            "latency_ms": self.latency(),
            "by_category": {CATEGORY_NAMES[c]: {k: (round(v, 4) if k != "questions" else v)
                                                for k, v in row.items()}
                            for c, row in self.by_category().items()},
            "conversations": [
                {"id": c.id, "sessions": c.sessions, "turns": c.turns,
                 "questions": len(c.asked), "import_s": round(c.import_s, 2),
                 **{f"R@{k}": round(c.recall_at(k), 4) for k in KS}}
                for c in self.conversations],
        }


def recall_at(asked: Sequence[Asked], k: int) -> float:
    if not asked:
        return 0.0
    return sum(1 for a in asked if a.first_rank is not None and a.first_rank <= k) / len(asked)


# "1:56 pm on 8 May, 2023"
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})",
                   re.IGNORECASE)


def parse_session_date(text: str) -> str | None:
    """A LoCoMo session's date (``1:56 pm on 8 May, 2023``) as ISO 8601 UTC, or None."""
    m = _DATE.search(text or "")
    if not m:
        return None
    hour, minute, ampm, day, month, year = m.groups()
    try:
        dt = datetime.strptime(f"{day} {month[:3]} {year} {hour}:{minute} {ampm.upper()}",
                               "%d %b %Y %I:%M %p")
    except ValueError:
        return None
    return dt.replace(tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def load(path: Path) -> list[dict[str, Any]]:
    """The conversations of a LoCoMo file, checked for the keys the evaluation reads."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise LocomoError(f"{path}: no such file. {DATA_HINT}") from exc
    except OSError as exc:
        raise LocomoError(f"{path}: cannot be read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise LocomoError(f"{path}: not UTF-8 text at byte {exc.start}") from exc
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise LocomoError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(data, list) or not data:
        raise LocomoError(f"{path}: expected a JSON list of conversations (LoCoMo's "
                          "locomo10.json)")
    for i, conv in enumerate(data):
        if not isinstance(conv, dict) or not isinstance(conv.get("conversation"), dict) \
                or not isinstance(conv.get("qa"), list) or not conv.get("sample_id"):
            raise LocomoError(f"{path}: item {i} is not a LoCoMo conversation (needs "
                              "sample_id, conversation and qa)")
        cid = str(conv["sample_id"])
        if not _sessions(conv):
            raise LocomoError(f"{path}: conversation {cid} has no session_N turns")
        for j, qa in enumerate(conv["qa"]):
            problem = _qa_problem(qa)
            if problem:
                raise LocomoError(f"{path}: conversation {cid}, qa {j}: {problem}")
    return data


def _qa_problem(qa: Any) -> str | None:
    """Why a qa item cannot be asked as LoCoMo writes them, or None."""
    if not isinstance(qa, dict):
        return f"a JSON {type(qa).__name__}, not an object"
    cat = qa.get("category")
    if isinstance(cat, bool) or not isinstance(cat, int):
        return f"category must be a whole number, got {cat!r}"[:200]
    if cat not in CATEGORIES:
        return None  # adversarial (5) or another category: not asked
    if not isinstance(qa.get("question"), str) or not qa["question"].strip():
        return "an empty question"
    ev = qa.get("evidence")
    if not isinstance(ev, list) or not all(isinstance(e, str) for e in ev):
        return f"evidence must be a list of turn ids (D1:3), got {ev!r}"[:200]
    return None


def evidence_ids(evidence: Iterable[str]) -> tuple[str, ...]:
    """Turn ids as LoCoMo writes them, a few written as one string (``D8:6; D9:17``)."""
    out: list[str] = []
    for item in evidence:
        out.extend(p.strip() for p in str(item).split(";") if p.strip())
    return tuple(out)


def _sessions(conv: dict[str, Any]) -> list[tuple[int, str | None, list[dict[str, Any]]]]:
    body = conv["conversation"]
    out = []
    for key, turns in body.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list):
            n = int(m.group(1))
            out.append((n, parse_session_date(str(body.get(f"{key}_date_time", ""))), turns))
    return sorted(out, key=lambda s: s[0])


def turn_text(turn: dict[str, Any]) -> str:
    """A turn as stored: its speaker, its words, and the caption of a photo it shares."""
    text = str(turn.get("text") or "").strip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {str(caption).strip()}]".strip()
    return f"{turn.get('speaker', '?')}: {text}"


def import_conversation(store: Store, conv: dict[str, Any]) -> tuple[dict[int, str], int, int]:
    """Import one conversation; returns (entry id → dia_id, turns, sessions)."""
    sid = str(conv["sample_id"])
    speaker_a = conv["conversation"].get("speaker_a")
    sessions = _sessions(conv)
    dia_of: dict[int, str] = {}
    turns = 0
    for n, date, items in sessions:
        session = NewSession(id=f"{sid}-s{n}", format="locomo", agent="locomo",
                             project=sid, title=f"{sid} session {n}", started_at=date,
                             source=f"locomo:{sid}")
        entries = []
        for i, turn in enumerate(items):
            if not isinstance(turn, dict) or not turn.get("dia_id"):
                continue
            key = f"locomo:{sid}:{turn['dia_id']}"
            entries.append(NewEntry(
                kind="user", content=turn_text(turn), source_key=key, ts=date,
                source_line=i + 1, line_id=str(turn["dia_id"]),
                meta={"speaker": turn.get("speaker"), "dia_id": turn["dia_id"],
                      "speaker_role": "a" if turn.get("speaker") == speaker_a else "b"}))
        turns += len(entries)
        store.append_entries(session, entries)
        for entry in store.entries(session.id):
            dia = entry.meta.get("dia_id")
            if dia:
                dia_of[entry.id] = str(dia)
    return dia_of, turns, len(sessions)


def questions(conv: dict[str, Any], limit: int | None = None) -> list[Question]:
    out = []
    for qa in conv["qa"]:
        if not isinstance(qa, dict):
            continue
        cat, ev = qa.get("category"), qa.get("evidence") or []
        if cat not in CATEGORIES or not qa.get("question") or not ev:
            continue
        out.append(Question(str(conv["sample_id"]), str(qa["question"]), int(cat),
                            evidence_ids(ev)))
    return out[:limit] if limit else out


def first_evidence_rank(candidates: Iterable[Any], dia_of: dict[int, str],
                        evidence: tuple[str, ...]) -> int | None:
    """The 1-based rank of the first candidate that is one of ``evidence``'s turns."""
    wanted = set(evidence)
    ordered = sorted(candidates, key=lambda c: c.rank)
    for pos, cand in enumerate(ordered, start=1):
        if cand.source_type == "entry" and dia_of.get(cand.source_id) in wanted:
            return pos
    return None


def run(path: Path, conversations: Sequence[str] | None = None,
        per_conversation: int | None = None, overrides: dict[str, Any] | None = None,
        embedder: Embedder | None = None, settings: Settings | None = None,
        progress: Progress | None = None, workdir: Path | None = None) -> LocomoReport:
    """Evaluate evidence recall on ``path`` (see the module docstring)."""
    data = load(path)
    known = [str(c["sample_id"]) for c in data]
    if conversations:
        missing = [c for c in conversations if c not in known]
        if missing:
            raise LocomoError(f"{path}: no conversation {', '.join(missing)} (it has "
                              f"{', '.join(known)})")
        data = [c for c in data if str(c["sample_id"]) in set(conversations)]
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    results: list[ConversationResult] = []
    model = ""
    cfg: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lca-locomo-", dir=workdir) as tmp:
        for position, conv in enumerate(data):
            cid = str(conv["sample_id"])
            # named by position, never by the file's id (which could name a path anywhere)
            store = Store(Path(tmp) / f"conversation-{position}.db", settings or Settings.load(),
                          embedder=embedder, writer="lca-tui eval")
            try:
                t0 = time.perf_counter()
                dia_of, turns, sessions = import_conversation(store, conv)
                result = ConversationResult(cid, turns, sessions,
                                            import_s=time.perf_counter() - t0)
                qs = questions(conv, per_conversation)
                for i, q in enumerate(qs):
                    if progress:
                        progress(cid, i, len(qs))
                    got = store.recall(q.text, overrides=overrides)
                    trace = got.trace
                    model, cfg = trace.model or model, dict(trace.settings or {})
                    result.asked.append(Asked(
                        q, first_evidence_rank(trace.candidates, dia_of, q.evidence),
                        float(trace.latency_ms or 0.0)))
                results.append(result)
            finally:
                store.close()
    if not any(r.asked for r in results):
        raise LocomoError(f"{path}: no question of categories 1-4 with evidence to ask")
    return LocomoReport(str(path), model, cfg, results, started)
