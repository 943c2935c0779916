"""Split text into chunks that fit the embedding model, at natural boundaries, never cutting.

Token counts come from the model's own tokenizer (``assets/model/tokenizer.json``), loaded
through the ``tokenizers`` library, so the limit holds for what the model actually sees. Each
chunk is a character span of the source; the spans tile the text exactly. Text is read in
windows (bounded memory for a 10 MB entry) and words longer than WordPiece reads are cut
inside (``model_view``), so a text without spaces still gives bounded chunks whose counts are
the tokens the model is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from store.core.assets import asset_path

if TYPE_CHECKING:  # imported when chunking first runs: opening a store to read needs none
    from tokenizers import Tokenizer

SPECIAL_TOKENS = 2  # [CLS] and [SEP]


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    tokens: int


@lru_cache(maxsize=1)
def tokenizer() -> Tokenizer:
    from tokenizers import Tokenizer

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


WORD_CHARS = 100
"""WordPiece reads a word of more than 100 characters as one ``[UNK]``: longer runs of letters
and digits (a base64 blob, a minified line) are cut every 100 characters, inside the word."""
WINDOW_CHARS = 16_384
"""Characters tokenized at a time: memory stays bounded whatever the size of the text."""
_LONG_RUN = re.compile(rf"[^\W_]{{{WORD_CHARS + 1},}}")


def _cuts(text: str) -> list[int]:
    """Where ``text``'s runs of more than ``WORD_CHARS`` letters and digits are cut."""
    return [p for m in _LONG_RUN.finditer(text)
            for p in range(m.start() + WORD_CHARS, m.end(), WORD_CHARS)]


def model_view(text: str) -> str:
    """``text`` as the embedder is given it: a space at each cut inside an over-long word,
    so the model sees word pieces (as counted) instead of one ``[UNK]``."""
    cuts = _cuts(text)
    if not cuts:
        return text
    parts, last = [], 0
    for p in cuts:
        parts.append(text[last:p])
        last = p
    parts.append(text[last:])
    return " ".join(parts)


def _token_starts(text: str, start: int, end: int) -> list[int]:
    """The start offset (in ``text``) of every model token of ``text[start:end]``, cutting
    over-long words as ``model_view`` does."""
    window = text[start:end]
    bounds = [0, *_cuts(window), len(window)]
    pieces = [window[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    starts: list[int] = []
    for offset, encoding in zip(bounds, tokenizer().encode_batch(pieces,
                                                                 add_special_tokens=False),
                                strict=False):
        starts.extend(start + offset + a for a, _ in encoding.offsets)
    return starts


def _window_end(text: str, start: int) -> int:
    """Where the window from ``start`` ends: at a whitespace in its second half when there is
    one (tokens never straddle it), else at the window's size (a cut inside a word)."""
    end = start + WINDOW_CHARS
    if end >= len(text):
        return len(text)
    for i in range(end, start + WINDOW_CHARS // 2, -1):
        if text[i - 1].isspace():
            return i
    return end


def split(text: str, max_tokens: int = 256) -> list[Span]:
    """Spans of ``text`` of at most ``max_tokens`` model tokens each (specials included),
    tiling it exactly. The text is read a window at a time, so a 10 MB entry costs the memory
    of its spans, not of its tokenization; a chunk is never longer than ``WINDOW_CHARS``."""
    if not text.strip():
        return []
    budget = max(8, max_tokens - SPECIAL_TOKENS)
    spans: list[Span] = []
    start = 0
    while start < len(text):
        end = _window_end(text, start)
        offsets = _token_starts(text, start, end)
        last_window = end >= len(text)
        taken = _chunks(text, start, end, offsets, budget, last_window, spans)
        if taken == start:  # the window held less than one chunk's tokens: take it whole
            spans.append(Span(start, end, len(offsets) + SPECIAL_TOKENS))
            taken = end
        start = taken
    return [s for s in spans if s.end > s.start]


def _chunks(text: str, start: int, end: int, offsets: list[int], budget: int,
            last_window: bool, spans: list[Span]) -> int:
    """Append the chunks of one window to ``spans``; returns where the next window starts (a
    non-final window keeps its last, partial chunk for the next one)."""
    if not offsets:
        if last_window:
            spans.append(Span(start, end, SPECIAL_TOKENS))
            return end
        return start
    first = 0  # index of the first token of the current chunk
    start_char = start
    while first < len(offsets):
        last = min(first + budget, len(offsets))  # exclusive
        if last == len(offsets) and not last_window:
            return start_char  # a partial chunk: read again with what follows
        if last < len(offsets):
            best, best_score = last, -1
            for i in range(last, first + budget // 2, -1):
                score = _boundary_score(text, offsets[i])
                if score > best_score:
                    best, best_score = i, score
                    if score == 4:
                        break
            last = best
            end_char = offsets[last]
        else:
            end_char = end
        spans.append(Span(start_char, end_char, last - first + SPECIAL_TOKENS))
        first, start_char = last, end_char
    return end
