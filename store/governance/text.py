"""Text helpers the checks share: sentences with their character spans, content words, and
the cues the contradiction heuristic compares (negation, numbers, dates, "X is Y" values)."""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Iterator
from dataclasses import dataclass

from store.core.vec import STOP_WORDS

_SENTENCE = re.compile(r"\S.*?(?:[.!?]+(?=\s|$)|$)")
_WORD = re.compile(r"[\w][\w'-]*", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.-])\d+(?:[.,]\d+)*(?:\s?%|\s?(?:ms|s|kb|mb|gb|tb))?(?![\w-])",
                     re.IGNORECASE)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|"
                   r"nov|dec)[a-z]*\.?\s+\d{1,2}(?:,\s*\d{4})?\b", re.IGNORECASE)
NEGATIONS = frozenset("""not no never none nobody nothing neither nor cannot can't don't doesn't
didn't isn't aren't wasn't weren't won't wouldn't shouldn't mustn't without
""".split())
_KEY_VALUE = re.compile(
    r"^(?P<key>[\w`'\"./ -]{2,80}?)\s+(?:is|are|was|were|=|:|uses|use|runs on|run on|"
    r"should be|must be|lives in|live in|defaults to|default to|goes through|go through|"
    r"moved to|deploys? with|deploy via)\s+(?P<value>.+?)\s*[.!]?$", re.IGNORECASE)
_MARKUP = re.compile(r"^[\s>#*\-+]+|\d+\.\s+")


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str


def sentences(text: str, min_words: int = 3) -> list[Sentence]:
    """The sentences (and list items, lines) of ``text`` with their spans; headings, code
    fences and fragments shorter than ``min_words`` words are left out."""
    out: list[Sentence] = []
    in_fence = False
    offset = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and stripped and not stripped.startswith("#"):
            for m in _SENTENCE.finditer(line):
                raw = m.group()
                lead = len(raw) - len(raw.lstrip())
                body = raw.strip()
                cut = _MARKUP.match(body)
                if cut:
                    lead += cut.end()
                    body = body[cut.end():]
                if len(words(body)) >= min_words:
                    start = offset + m.start() + lead
                    out.append(Sentence(start, start + len(body), body))
        offset += len(line) + 1
    return out


def normalise(text: str | None) -> str:
    """Text as compared for de-duplication: case, spacing and punctuation ignored."""
    return " ".join(re.sub(r"[^\w\s]", " ", (text or "").lower()).split())


def words(text: str) -> list[str]:
    """Lower-case words, stop words dropped, a plural ``s`` trimmed (``tests`` ~ ``test``)."""
    out = []
    for w in _WORD.findall(text.lower()):
        w = w.strip("'-")
        if not w or w in STOP_WORDS:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


_KEPT: contextvars.ContextVar[dict[str, frozenset[str]] | None] = contextvars.ContextVar(
    "word_sets", default=None)


@contextlib.contextmanager
def word_sets_kept() -> Iterator[None]:
    """Inside this block (this thread only), each text's ``word_set`` is worked out once:
    the duplicate sweep compares each memory's body and sentences with many others' (1,458
    comparisons on the demo store, 45 ms of a health scan when worked out each time). The
    texts are forgotten when it ends: nothing a later erasure removes stays in memory."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def word_set(text: str) -> frozenset[str]:
    """``words`` as a set (kept inside ``word_sets_kept``)."""
    kept = _KEPT.get()
    if kept is None:
        return frozenset(words(text))
    found = kept.get(text)
    if found is None:
        found = kept[text] = frozenset(words(text))
    return found


def overlap(sentence: str, other: set[str]) -> float:
    """Share of ``sentence``'s content words found in ``other``."""
    mine = word_set(sentence)
    return len(mine & other) / len(mine) if mine else 0.0


def jaccard(a: str, b: str) -> float:
    wa, wb = word_set(a), word_set(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


def contained(a: str, b: str, min_words: int = 4) -> float:
    """The share of the shorter sentence's content words found in the longer one (0 when the
    shorter has fewer than ``min_words``): a short statement restating one clause of a long
    list item ("X starts PostgreSQL 16 on port 5434" in "… PostgreSQL 16 in docker compose,
    port 5433 (`docker compose up -d db`), databases …") is about the same thing even when the
    long one's other clauses keep their Jaccard low."""
    wa, wb = word_set(a), word_set(b)
    small = min(len(wa), len(wb))
    return len(wa & wb) / small if small >= min_words else 0.0


def negated(text: str) -> bool:
    tokens = set(re.findall(r"[\w']+", text.lower()))
    return bool(tokens & NEGATIONS) or any(t.endswith("n't") for t in tokens)


def numbers(text: str) -> set[str]:
    without_dates = _DATE.sub(" ", text)
    return {m.group().replace(" ", "").lower() for m in _NUMBER.finditer(without_dates)}


def dates(text: str) -> set[str]:
    return {m.group().lower() for m in _DATE.finditer(text)}


def key_value(text: str) -> tuple[str, str] | None:
    """("x", "y") for a sentence of the form "X is Y" (or uses / = / runs on / ...): the key
    as content words, the value as written (lower case)."""
    m = _KEY_VALUE.match(text.strip().strip("`"))
    if not m:
        return None
    key = " ".join(words(m["key"]))
    value = m["value"].strip().strip("`'\".,;:!").strip().lower()
    return (key, value) if key and words(value) else None


def cues(candidate: str, memory: str) -> list[dict[str, str]]:
    """How two similar sentences disagree: a negation on one side only, different numbers,
    different dates, or values for the same key that share no word ("X is Y" / "X is Z"; a
    value that only adds detail is not a conflict). Empty when they agree."""
    found: list[dict[str, str]] = []
    if negated(candidate) != negated(memory):
        found.append({"kind": "negation",
                      "candidate": "negated" if negated(candidate) else "affirmed",
                      "memory": "negated" if negated(memory) else "affirmed"})
    na, nb = numbers(candidate), numbers(memory)
    if na and nb and na != nb:
        found.append({"kind": "number", "candidate": ", ".join(sorted(na - nb) or sorted(na)),
                      "memory": ", ".join(sorted(nb - na) or sorted(nb))})
    da, db = dates(candidate), dates(memory)
    if da and db and da != db:
        found.append({"kind": "date", "candidate": ", ".join(sorted(da)),
                      "memory": ", ".join(sorted(db))})
    ka, kb = key_value(candidate), key_value(memory)
    if (ka and kb and not set(words(ka[1])) & set(words(kb[1]))
            and (ka[0] == kb[0] or _same_key(ka[0], kb[0]))):
        found.append({"kind": "value", "candidate": ka[1], "memory": kb[1], "key": ka[0]})
    return found


def same_subject(a: str, b: str) -> bool:
    """Both sentences say "X is ..." about the same X (so they are about the same thing even
    when their values share no word)."""
    ka, kb = key_value(a), key_value(b)
    return bool(ka and kb and (ka[0] == kb[0] or _same_key(ka[0], kb[0])))


def _same_key(a: str, b: str) -> bool:
    wa, wb = set(a.split()), set(b.split())
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.6
