"""Chunk, embed and index sources (entries and memories) inside the caller's transaction.

Every chunk records the embedder that made it and the similarity of its nearest neighbour
already in the index when it was written, which is what the duplicate health signal reads
later instead of comparing all pairs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import Connection, text

from store.core import vec
from store.core.chunker import split
from store.core.embed import Embedder
from store.core.timeutil import now_iso

# Below this many new vectors, nearest neighbours come from vec0 KNN; above, from the stored
# matrix, compared in blocks so memory stays bounded.
_BULK = 64
_BLOCK = 512
# Texts handed to the embedder at once: sorted by length first, so each group is of like
# lengths, and small enough that one bad text costs a retry of its group only.
_GROUP = 256
# Entry kinds whose long texts embed their head only (``embed.tool_head_tokens``): machine
# input and output, where the rest of a 40-window file listing or diff is for FTS to find.
TOOL_KINDS = frozenset({"tool_call", "tool_result"})

Progress = Callable[[str, int, int], None]
# (connection, new vectors) → (for each: id of the most similar vector already indexed, its
# similarity), or None to use the index itself: a warm process (the daemon) hands in its
# in-memory copy, where ``vec0`` would scan the whole table once per new vector.
NeighbourFinder = Callable[[Connection, np.ndarray], "tuple[np.ndarray, np.ndarray] | None"]


def sha256_text(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Source:
    """Something to index: an entry or a memory, with its full text and content hash."""

    source_type: str
    source_id: int
    text: str
    content_hash: str
    kind: str | None = None  # an entry's kind: tool calls and results embed their head only


@dataclass
class IndexResult:
    chunks: int = 0  # written ok: embedded, or lexical only
    failed: int = 0
    lexical: int = 0  # of ``chunks``: written for FTS only, by design
    errors: list[str] = field(default_factory=list)


@dataclass
class _Pending:
    source: Source
    start: int
    end: int
    tokens: int
    body: str
    vector: np.ndarray | None = None
    error: str | None = None
    lexical: bool = False  # past the embedded head: FTS only, never embedded


@dataclass(frozen=True)
class Prepared:
    """A text already chunked and embedded, ready to be written for any source holding it."""

    start: int
    end: int
    tokens: int
    body: str
    vector: np.ndarray | None
    error: str | None
    lexical: bool = False


class Indexer:
    """Writes chunks, vectors and FTS rows for sources, with one embedder.

    ``prepare`` (chunk + embed) needs no database, so callers run it before they take the
    write lock; ``index`` then only computes neighbours and inserts. A tool call or result
    longer than ``head_tokens`` tokens embeds its head and keeps the rest in FTS only
    (``chunk.lexical_only``); 0 embeds every window.
    """

    def __init__(self, embedder: Embedder, max_tokens: int, batch_size: int,
                 writer: str, writer_version: str, head_tokens: int = 0,
                 progress: Progress | None = None,
                 finder: NeighbourFinder | None = None) -> None:
        self.embedder = embedder
        self.max_tokens = max_tokens
        self.batch_size = max(1, batch_size)
        self.writer = writer
        self.writer_version = writer_version
        self.head_tokens = max(0, min(head_tokens, max_tokens))
        self.progress = progress
        self.finder = finder

    def _spans(self, text: str, head_only: bool) -> list[tuple[int, int, int, bool]]:
        """(start, end, tokens, lexical only?) of each window of ``text``: with ``head_only``
        its first ``head_tokens`` tokens are one embedded window and the rest is split into
        FTS-only windows; otherwise every window is embedded."""
        if not (head_only and self.head_tokens):
            return [(sp.start, sp.end, sp.tokens, False) for sp in split(text, self.max_tokens)]
        head = split(text, self.head_tokens)
        if len(head) <= 1:
            return [(sp.start, sp.end, sp.tokens, False) for sp in head]
        cut = head[0].end
        rest = split(text[cut:], self.max_tokens)
        return [(head[0].start, cut, head[0].tokens, False)] + [
            (cut + sp.start, cut + sp.end, sp.tokens, True) for sp in rest]

    def prepare(self, texts: dict[str, str], head_only: set[str] | frozenset[str] = frozenset()
                ) -> dict[str, list[Prepared]]:
        """content hash → its embedded chunks, for each text (keyed by its content hash);
        texts whose hash is in ``head_only`` (tool calls and results) embed their head only."""
        spans: list[tuple[str, _Pending]] = []
        dummy = Source("entry", 0, "", "")
        for key, body in texts.items():
            for start, end, tokens, lexical in self._spans(body, key in head_only):
                spans.append((key, _Pending(dummy, start, end, tokens, body[start:end],
                                            lexical=lexical)))
        self._embed([p for _, p in spans])
        out: dict[str, list[Prepared]] = {key: [] for key in texts}
        for key, p in spans:
            out[key].append(Prepared(p.start, p.end, p.tokens, p.body, p.vector, p.error,
                                     p.lexical))
        return out

    def _embed(self, pending: list[_Pending]) -> None:
        """Vectors for every window not lexical only: shortest first, in groups."""
        todo = sorted((p for p in pending if not p.lexical), key=lambda p: p.tokens)
        total = len(todo)
        for i in range(0, total, _GROUP):
            group = todo[i:i + _GROUP]
            try:
                vectors = self.embedder.embed([p.body for p in group])
                for p, v in zip(group, vectors, strict=True):
                    p.vector = v
            except Exception:  # one bad text must not sink its group: retry one by one
                for p in group:
                    try:
                        p.vector = self.embedder.embed([p.body])[0]
                    except Exception as exc:  # recorded on the chunk as status 'failed'
                        p.error = f"{type(exc).__name__}: {exc}"[:500]
            if self.progress:
                self.progress("embed", min(i + _GROUP, total), total)

    def _neighbours(self, conn: Connection, vectors: np.ndarray) -> list[tuple[int | None,
                                                                             float | None]]:
        """For row i of ``vectors``: the most similar vector already indexed or earlier in
        ``vectors`` (as (index into the store, or -1-j for row j of the batch), similarity)."""
        n = len(vectors)
        best_sim = np.full(n, -np.inf, dtype=np.float32)
        best_ref = np.full(n, 0, dtype=np.int64)
        has = np.zeros(n, dtype=bool)
        found = self.finder(conn, vectors) if self.finder is not None and n else None
        if found is not None:
            ids, sims = found
            best_ref[:], best_sim[:] = ids, sims
            has[:] = True
        elif n < _BULK:
            for i in range(n):
                hit = vec.knn(conn, vectors[i], 1)
                if hit:
                    best_ref[i], best_sim[i], has[i] = hit[0][0], hit[0][1], True
        else:
            ids, matrix = vec.all_vectors(conn)
            for a in range(0, len(ids), _BLOCK):
                sims = vectors @ matrix[a:a + _BLOCK].T  # n × block
                j = sims.argmax(axis=1)
                top = sims[np.arange(n), j]
                better = top > best_sim
                best_sim[better], best_ref[better] = top[better], ids[a + j[better]]
                has |= better
        for a in range(0, n, _BLOCK):
            block = vectors[a:a + _BLOCK]
            sims = block @ vectors[: a + len(block)].T  # rows a.., columns 0..a+len
            rows = np.arange(len(block))
            sims[rows[:, None] <= (np.arange(sims.shape[1])[None, :] - a)] = -np.inf
            j = sims.argmax(axis=1)
            top = sims[rows, j]
            better = top > best_sim[a:a + len(block)]
            idx = a + rows[better]
            best_sim[idx], best_ref[idx] = top[better], -1 - j[better]
            has[idx] = True
        return [(int(best_ref[i]), round(min(1.0, float(best_sim[i])), 6)) if has[i]
                else (None, None) for i in range(n)]

    def index(self, conn: Connection, sources: list[Source],
              prepared: dict[str, list[Prepared]] | None = None) -> IndexResult:
        """Write every source's chunks; texts not in ``prepared`` are chunked and embedded
        here. Failures are recorded on the chunk, never raised."""
        result = IndexResult()
        pending: list[_Pending] = []
        missing: list[_Pending] = []
        for source in sources:
            ready = prepared.get(source.content_hash) if prepared else None
            if ready is not None:
                pending.extend(_Pending(source, r.start, r.end, r.tokens, r.body, r.vector,
                                        r.error, r.lexical) for r in ready)
                continue
            for start, end, tokens, lexical in self._spans(source.text,
                                                           source.kind in TOOL_KINDS):
                p = _Pending(source, start, end, tokens, source.text[start:end],
                             lexical=lexical)
                pending.append(p)
                missing.append(p)
        if not pending:
            return result
        self._embed(missing)
        vectors_in = [p.vector for p in pending if p.vector is not None]
        matrix = (np.stack(vectors_in).astype(np.float32) if vectors_in
                  else np.zeros((0, 384), dtype=np.float32))
        found = iter(self._neighbours(conn, matrix))
        next_id = int(conn.exec_driver_sql("SELECT COALESCE(MAX(id), 0) FROM chunk")
                      .scalar_one()) + 1
        batch_ids: list[int] = []
        created = now_iso()
        rows = []
        vectors: list[tuple[int, np.ndarray]] = []
        fts_rows: list[tuple[int, str]] = []
        for p in pending:
            cid = next_id
            next_id += 1
            ok = p.vector is not None or p.lexical
            nn_id: int | None = None
            nn_sim: float | None = None
            if p.vector is not None:
                ref, nn_sim = next(found)
                nn_id = batch_ids[-1 - ref] if ref is not None and ref < 0 else ref
                batch_ids.append(cid)
            rows.append({
                "id": cid, "st": p.source.source_type, "sid": p.source.source_id,
                "a": p.start, "b": p.end, "t": p.body, "h": sha256_text(p.body),
                "sh": p.source.content_hash, "m": self.embedder.name, "d": self.embedder.dim,
                "s": "ok" if ok else "failed", "e": p.error, "tok": p.tokens,
                "nn": nn_sim, "nnid": nn_id, "lo": int(p.lexical), "w": self.writer,
                "wv": self.writer_version, "c": created,
            })
            fts_rows.append((cid, p.body))
            if p.vector is not None:
                vectors.append((cid, p.vector))
                result.chunks += 1
            elif ok:
                result.chunks += 1
                result.lexical += 1
            else:
                result.failed += 1
                result.errors.append(f"{p.source.source_type} {p.source.source_id} "
                                     f"[{p.start}:{p.end}]: {p.error}")
        conn.execute(text(
            "INSERT INTO chunk (id, source_type, source_id, span_start, span_end, text, "
            "content_hash, source_hash, model, dim, status, error, tokens, nn_similarity, "
            "nn_chunk_id, lexical_only, writer, writer_version, created_at) VALUES (:id, :st, "
            ":sid, :a, :b, :t, :h, :sh, :m, :d, :s, :e, :tok, :nn, :nnid, :lo, :w, :wv, :c)"),
            rows)
        vec.insert_vectors(conn, vectors)
        vec.insert_fts(conn, fts_rows)
        return result


def drop_chunks_of(conn: Connection, source_type: str, source_id: int) -> int:
    """Remove a source's chunks with their vectors and FTS rows; returns how many."""
    rows = conn.execute(text("SELECT id, text FROM chunk WHERE source_type = :t AND "
                             "source_id = :i"), {"t": source_type, "i": source_id}).all()
    vec.delete_chunks_index(conn, [(int(r[0]), str(r[1])) for r in rows])
    conn.execute(text("DELETE FROM chunk WHERE source_type = :t AND source_id = :i"),
                 {"t": source_type, "i": source_id})
    return len(rows)
