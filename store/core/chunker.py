"""Split text into chunks that fit the embedding model, at natural boundaries, never cutting.

Token counts come from the model's own tokenizer (``assets/model/tokenizer.json``), loaded
through the ``tokenizers`` library, so the limit holds for what the model actually sees. Each
chunk is a character span of the source; the spans tile the text exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from tokenizers import Tokenizer

from store.core.assets import asset_path

SPECIAL_TOKENS = 2  # [CLS] and [SEP]


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    tokens: int


@lru_cache(maxsize=1)
def tokenizer() -> Tokenizer:
    tok = Tokenizer.from_file(str(asset_path("model", "tokenizer.json")))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    """Model tokens of ``text`` including [CLS] and [SEP]."""
    return len(tokenizer().encode(text, add_special_tokens=False).ids) + SPECIAL_TOKENS


def _boundary_score(text: str, pos: int) -> int:
    """How good a place ``pos`` (a token's start) is to begin a new chunk."""
    before = text[max(0, pos - 2):pos]
    if before.endswith("\n\n"):
        return 4
    if before.endswith("\n"):
        return 3
    if before[-1:] == " " and text[max(0, pos - 2):pos - 1] in {".", "!", "?", ":", ";"}:
        return 2
    if before[-1:].isspace():
        return 1
    return 0


def split(text: str, max_tokens: int = 256) -> list[Span]:
    """Spans of ``text`` of at most ``max_tokens`` model tokens each (specials included)."""
    if not text.strip():
        return []
    budget = max(8, max_tokens - SPECIAL_TOKENS)
    offsets = tokenizer().encode(text, add_special_tokens=False).offsets
    if len(offsets) <= budget:
        return [Span(0, len(text), len(offsets) + SPECIAL_TOKENS)]
    spans: list[Span] = []
    first = 0  # index of the first token of the current chunk
    start_char = 0
    while first < len(offsets):
        last = min(first + budget, len(offsets))  # exclusive
        if last < len(offsets):
            # Prefer the best boundary in the second half of the window.
            best, best_score = last, -1
            for i in range(last, first + budget // 2, -1):
                score = _boundary_score(text, offsets[i][0])
                if score > best_score:
                    best, best_score = i, score
                    if score == 4:
                        break
            last = best
            end_char = offsets[last][0]
        else:
            end_char = len(text)
        spans.append(Span(start_char, end_char, last - first + SPECIAL_TOKENS))
        first, start_char = last, end_char
    return spans
