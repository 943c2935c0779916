"""Chunk, embed and index sources (entries and memories) inside the caller's transaction.

Every chunk records the embedder that made it and the similarity of its nearest neighbour
already in the index when it was written, which is what the duplicate health signal reads
later instead of comparing all pairs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import Connection, text

from store import vec
from store.chunker import split
from store.embed import Embedder
from store.timeutil import now_iso

# Below this many new vectors, nearest neighbours come from vec0 KNN; above, from one matrix.
_BULK = 64


def sha256_text(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Source:
    """Something to index: an entry or a memory, with its full text and content hash."""

    source_type: str
    source_id: int
    text: str
    content_hash: str


@dataclass
class IndexResult:
    chunks: int = 0
    failed: int = 0
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


class Indexer:
    """Writes chunks, vectors and FTS rows for sources, with one embedder."""

    def __init__(self, embedder: Embedder, max_tokens: int, batch_size: int,
                 writer: str, writer_version: str) -> None:
        self.embedder = embedder
        self.max_tokens = max_tokens
        self.batch_size = max(1, batch_size)
        self.writer = writer
        self.writer_version = writer_version

    def _embed(self, pending: list[_Pending]) -> None:
        for i in range(0, len(pending), self.batch_size):
            batch = pending[i:i + self.batch_size]
            try:
                vectors = self.embedder.embed([p.body for p in batch])
                for p, v in zip(batch, vectors, strict=True):
                    p.vector = v
            except Exception:  # one bad text must not sink its batch: retry one by one
                for p in batch:
                    try:
                        p.vector = self.embedder.embed([p.body])[0]
                    except Exception as exc:  # recorded on the chunk as status 'failed'
                        p.error = f"{type(exc).__name__}: {exc}"[:500]

    def _neighbours(self, conn: Connection, pending: list[_Pending]) -> list[tuple[int | None,
                                                                                 float | None]]:
        """Nearest already-indexed chunk for each pending vector (earlier ones in the batch
        count as already indexed)."""
        with_vec = [p for p in pending if p.vector is not None]
        out: list[tuple[int | None, float | None]] = []
        if not with_vec:
            return [(None, None)] * len(pending)
        if len(with_vec) >= _BULK:
            ids, matrix = vec.all_vectors(conn)
            existing: list[tuple[int, float]] | None = None
        else:
            ids, matrix = np.zeros(0, dtype=np.int64), np.zeros((0, 384), dtype=np.float32)
            existing = []
        new_vectors: list[np.ndarray] = []
        new_ids: list[int] = []
        for p in pending:
            if p.vector is None:
                out.append((None, None))
                continue
            best_id: int | None = None
            best: float | None = None
            if existing is not None:
                hit = vec.knn(conn, p.vector, 1)
                if hit:
                    best_id, best = hit[0]
            elif len(ids):
                sims = matrix @ p.vector
                j = int(np.argmax(sims))
                best_id, best = int(ids[j]), float(sims[j])
            if new_vectors:
                sims = np.stack(new_vectors) @ p.vector
                j = int(np.argmax(sims))
                if best is None or float(sims[j]) > best:
                    best_id, best = new_ids[j], float(sims[j])
            out.append((best_id, None if best is None else round(min(1.0, best), 6)))
            new_vectors.append(p.vector)
            new_ids.append(id(p))  # replaced by the real chunk id below
        # map placeholder ids of same-batch neighbours to real ids after insertion
        return out

    def index(self, conn: Connection, sources: list[Source]) -> IndexResult:
        """Chunk, embed and write every source; failures are recorded, never raised."""
        result = IndexResult()
        pending: list[_Pending] = []
        for source in sources:
            for span in split(source.text, self.max_tokens):
                pending.append(_Pending(source, span.start, span.end, span.tokens,
                                        source.text[span.start:span.end]))
        if not pending:
            return result
        self._embed(pending)
        neighbours = self._neighbours(conn, pending)
        next_id = int(conn.exec_driver_sql("SELECT COALESCE(MAX(id), 0) FROM chunk")
                      .scalar_one()) + 1
        placeholder_to_id: dict[int, int] = {}
        created = now_iso()
        rows = []
        vectors: list[tuple[int, np.ndarray]] = []
        fts_rows: list[tuple[int, str]] = []
        for p, (nn_id, nn_sim) in zip(pending, neighbours, strict=True):
            cid = next_id
            next_id += 1
            placeholder_to_id[id(p)] = cid
            if nn_id is not None and nn_id in placeholder_to_id:
                nn_id = placeholder_to_id[nn_id]
            ok = p.vector is not None
            rows.append({
                "id": cid, "st": p.source.source_type, "sid": p.source.source_id,
                "a": p.start, "b": p.end, "t": p.body, "h": sha256_text(p.body),
                "sh": p.source.content_hash, "m": self.embedder.name, "d": self.embedder.dim,
                "s": "ok" if ok else "failed", "e": p.error, "tok": p.tokens,
                "nn": nn_sim, "nnid": nn_id, "w": self.writer, "wv": self.writer_version,
                "c": created,
            })
            fts_rows.append((cid, p.body))
            if ok:
                vectors.append((cid, p.vector))  # type: ignore[arg-type]
                result.chunks += 1
            else:
                result.failed += 1
                result.errors.append(f"{p.source.source_type} {p.source.source_id} "
                                     f"[{p.start}:{p.end}]: {p.error}")
        conn.execute(text(
            "INSERT INTO chunk (id, source_type, source_id, span_start, span_end, text, "
            "content_hash, source_hash, model, dim, status, error, tokens, nn_similarity, "
            "nn_chunk_id, writer, writer_version, created_at) VALUES (:id, :st, :sid, :a, :b, "
            ":t, :h, :sh, :m, :d, :s, :e, :tok, :nn, :nnid, :w, :wv, :c)"), rows)
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
