"""Every vector and full-text statement lives here: sqlite-vec and FTS5 on a SQLite file, and
beside them (``store.core.pg``) pgvector's HNSW index and PostgreSQL's own text search on a
server. Each function asks the connection which backend it is on; nothing else in the store
needs to know."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from store.core import pg
from store.core.vocab import SENSITIVITIES


def on_server(conn: Connection) -> bool:
    """Is ``conn`` a PostgreSQL connection (else a SQLite file)?"""
    return conn.dialect.name == "postgresql"


def backend(conn: Connection) -> str:
    """What ranks the search: ``sqlite-vec+fts5`` or ``pgvector+tsvector``."""
    return "pgvector+tsvector" if on_server(conn) else "sqlite-vec+fts5"


if TYPE_CHECKING:
    import numpy as np

_FTS_WORD = re.compile(r"\w+", re.UNICODE)
STOP_WORDS = frozenset("""
a an and are as at be but by did do does for from had has have how i if in into is it its me my
no not of on or our so that the their them then there these they this to us was we were what
when where which who why will with would you your
""".split())


def to_blob(vector: np.ndarray) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype=np.float32).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    import numpy as np

    return np.frombuffer(blob, dtype=np.float32)


def insert_vector(conn: Connection, chunk_id: int, vector: np.ndarray) -> None:
    if on_server(conn):
        return pg.insert_vectors(conn, [(chunk_id, vector)])
    conn.execute(text("INSERT INTO chunk_vec (rowid, embedding) VALUES (:id, :v)"),
                 {"id": chunk_id, "v": to_blob(vector)})


def insert_vectors(conn: Connection, rows: list[tuple[int, np.ndarray]]) -> None:
    if on_server(conn):
        return pg.insert_vectors(conn, rows)
    if rows:
        conn.execute(text("INSERT INTO chunk_vec (rowid, embedding) VALUES (:id, :v)"),
                     [{"id": cid, "v": to_blob(vec)} for cid, vec in rows])


def insert_fts(conn: Connection, rows: list[tuple[int, str]]) -> None:
    if on_server(conn):
        return  # the chunk's generated tsvector column indexes it
    if rows:
        conn.execute(text("INSERT INTO chunk_fts (rowid, text) VALUES (:id, :t)"),
                     [{"id": cid, "t": body} for cid, body in rows])


def mask_queue_fts(conn: Connection, rows: list[tuple[int, str]]) -> None:
    """Rewrite queued entries' ``embed_queue_fts`` rows (migration 12's trigger copied the
    stored text) with the text given: a secret entry's, its values replaced by placeholders."""
    if rows:
        conn.execute(text("DELETE FROM embed_queue_fts WHERE rowid = :id"),
                     [{"id": i} for i, _ in rows])
        conn.execute(text("INSERT INTO embed_queue_fts (rowid, text) VALUES (:id, :t)"),
                     [{"id": i, "t": body} for i, body in rows])


# Above this many rows, FTS rows are deleted plainly and the index merged ('optimize')
# instead of secure-deleting each: erasing a 1,118-chunk session took 1.0 s one by one and
# 0.07 s merged (merging rewrites the index without the deleted rows; the pages it frees are
# zeroed by PRAGMA secure_delete, so no term is left either way).
_MERGE_OVER = 200

# ``vectors_of``: up to this many chunks looked up one by one, up to ``_LOOKED_UP`` in one
# ``rowid IN`` (a vec0 lookup costs a fixed ~13 ms at 50,000 chunks, then ~8 µs a row: 582
# memory chunks of the demo store 61 ms one by one, 4.7 ms at once; 5,000 of the 50,000 54
# ms against 0.9 s one by one and 1.1 s reading them all), more by reading every vector
_ONE_BY_ONE = 64
_LOOKED_UP = 20_000


def delete_chunks_index(conn: Connection, rows: list[tuple[int, str]]) -> None:
    """Remove chunks' vectors and FTS rows (FTS5 external content needs the old text)."""
    if not rows:
        return
    if on_server(conn):
        return pg.delete_vectors(conn, [cid for cid, _ in rows])
    if len(rows) > _MERGE_OVER:
        conn.exec_driver_sql("INSERT INTO chunk_fts (chunk_fts, rank) VALUES ('secure-delete', 0)")
        conn.execute(text("DELETE FROM chunk_vec WHERE rowid = :id"),
                     [{"id": cid} for cid, _ in rows])
        conn.execute(text("INSERT INTO chunk_fts (chunk_fts, rowid, text) VALUES ('delete', "
                          ":id, :t)"), [{"id": cid, "t": body} for cid, body in rows])
        conn.exec_driver_sql("INSERT INTO chunk_fts (chunk_fts) VALUES ('optimize')")
        conn.exec_driver_sql("INSERT INTO chunk_fts (chunk_fts, rank) VALUES ('secure-delete', 1)")
        return
    conn.execute(text("DELETE FROM chunk_vec WHERE rowid = :id"), [{"id": cid} for cid, _ in rows])
    conn.execute(text("INSERT INTO chunk_fts (chunk_fts, rowid, text) VALUES ('delete', :id, :t)"),
                 [{"id": cid, "t": body} for cid, body in rows])


def clear_index(conn: Connection) -> None:
    """Drop every vector and FTS row (``reindex`` rebuilds them)."""
    if on_server(conn):
        return pg.clear_vectors(conn)
    conn.exec_driver_sql("DELETE FROM chunk_vec")
    conn.exec_driver_sql("INSERT INTO chunk_fts (chunk_fts) VALUES ('delete-all')")


def knn(conn: Connection, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """(chunk id, cosine similarity) of the ``k`` nearest vectors, nearest first."""
    if on_server(conn):
        return pg.knn(conn, vector, k)
    rows = conn.execute(
        text("SELECT rowid, distance FROM chunk_vec WHERE embedding MATCH :q AND k = :k "
             "ORDER BY distance"),
        {"q": to_blob(vector), "k": int(k)},
    ).all()
    return [(int(r[0]), 1.0 - float(r[1])) for r in rows]


def indexed_knn(conn: Connection) -> bool:
    """Does an index answer nearest-neighbour queries (the server's HNSW), so that many
    queries cost less than reading every vector into this process? (sqlite-vec scans.)"""
    return on_server(conn)


def all_vectors(conn: Connection) -> tuple[np.ndarray, np.ndarray]:
    """Every stored vector: (chunk ids, matrix). For bulk nearest-neighbour work."""
    if on_server(conn):
        return pg.all_vectors(conn)
    import numpy as np

    rows = conn.exec_driver_sql("SELECT rowid, embedding FROM chunk_vec").all()
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 384), dtype=np.float32)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    # one join and one buffer, not an array per row: at 50,000 vectors 4x less CPU than
    # np.stack over 50,000 frombuffer views (the first recall after opening pays it)
    blobs = b"".join(r[1] for r in rows)
    if len(blobs) != 4 * 384 * len(rows):  # a vector of another width: row by row, as stored
        return ids, np.stack([from_blob(r[1]) for r in rows])
    return ids, np.frombuffer(blobs, dtype=np.float32).reshape(len(rows), 384).copy()


def vectors_of(conn: Connection, chunk_ids: list[int]) -> dict[int, np.ndarray]:
    """chunk id → vector for those of ``chunk_ids`` that have one (many: one scan)."""
    if on_server(conn):
        return pg.vectors_of(conn, chunk_ids)
    if len(chunk_ids) <= _ONE_BY_ONE:
        found = {cid: vector_of(conn, cid) for cid in chunk_ids}
        return {cid: v for cid, v in found.items() if v is not None}
    if len(chunk_ids) <= _LOOKED_UP:
        rows = conn.execute(
            text("SELECT rowid, embedding FROM chunk_vec WHERE rowid IN "
                 "(SELECT value FROM json_each(:ids))"),
            {"ids": "[" + ",".join(str(int(i)) for i in chunk_ids) + "]"}).all()
        return {int(r[0]): from_blob(r[1]) for r in rows}
    ids, matrix = all_vectors(conn)
    wanted = set(chunk_ids)
    return {int(i): matrix[j] for j, i in enumerate(ids) if int(i) in wanted}


def vector_of(conn: Connection, chunk_id: int) -> np.ndarray | None:
    if on_server(conn):
        return pg.vector_of(conn, chunk_id)
    row = conn.execute(text("SELECT embedding FROM chunk_vec WHERE rowid = :id"),
                       {"id": chunk_id}).first()
    return from_blob(row[0]) if row else None


def query_words(query: str) -> list[str]:
    """The words of ``query`` to match, stop words dropped (all kept when nothing else is
    left), each once."""
    every = _FTS_WORD.findall(query)
    words = [w for w in every if w.lower() not in STOP_WORDS] or every
    return list(dict.fromkeys(words))


def fts_query(query: str) -> str | None:
    """A safe FTS5 MATCH expression: the words of ``query`` quoted, joined with OR.

    Common English stop words are dropped (all are kept when nothing else is left): an OR over
    "the", "we", "and" matches nearly every chunk, costs tens of milliseconds at 50,000 chunks
    and adds no signal to BM25.
    """
    every = _FTS_WORD.findall(query)
    words = [w for w in every if w.lower() not in STOP_WORDS] or every
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in dict.fromkeys(words))




def _levels(levels: tuple[str, ...]) -> str:
    bad = [lv for lv in levels if lv not in SENSITIVITIES]
    if bad:
        raise ValueError(f"unknown sensitivity {bad[0]!r}")
    return ", ".join(f"'{lv}'" for lv in levels)


def fts_search(conn: Connection, query: str, limit: int, deny: tuple[str, ...] = (),
               denied: bool = False, denied_ids: list[int] | None = None
               ) -> list[tuple[int, float]]:
    """(chunk id, BM25 relevance ≥ 0, higher is better) for the best ``limit`` FTS matches,
    equal scores by chunk id.

    ``deny``: sensitivities left out inside the query (the channel rule applied where the
    rows are found, so held-back records never take the ``limit``); ``denied=True`` gives
    only those instead (the few the operator's trace shows masked). ``denied_ids``: every
    chunk of a denied level (``chunks_of_levels``), when the caller knows them: the allowed
    rows are then read from the plain ranking, each looked up, and the denied ones ranked
    among those chunks only — the same rows as the join over every match
    (``fts_search_joined``) at a third of its cost."""
    if on_server(conn):
        words = query_words(query)
        return pg.fts_search(conn, words, limit, _levels(deny) if deny else None,
                             denied) if words else []
    match = fts_query(query)
    if match is None:
        return []
    if not deny:
        return _fts_ranked(conn, match, limit)
    if denied_ids is None:
        return fts_search_joined(conn, query, limit, deny, denied)
    _levels(deny)  # an unknown level is refused, as in the joined query
    levels = set(deny)
    if denied:
        # only the chunks the caller knows to be of a denied level: BM25 for those rows only
        if not denied_ids:
            return []
        rows = conn.execute(
            text("SELECT rowid, bm25(chunk_fts) AS score FROM chunk_fts WHERE chunk_fts MATCH "
                 ":m AND rowid IN (SELECT value FROM json_each(:ids)) ORDER BY score, rowid "
                 "LIMIT :n"),
            {"m": match, "ids": "[" + ",".join(str(int(i)) for i in denied_ids) + "]",
             "n": int(limit)}).all()
        return [(int(r[0]), -float(r[1])) for r in rows]
    # the plain ranking read until ``limit`` allowed rows (each row's chunk and sensitivity
    # looked up, as the join below does for every match): the join costs ~25 ms at 50,000
    # chunks for a query matching 4,500 of them, the plain ranking ~8 ms
    fetch = int(limit) + 16
    while True:
        ranked = _fts_ranked(conn, match, fetch)
        levels_of = chunk_sensitivities(conn, [cid for cid, _ in ranked])
        kept = [(cid, score) for cid, score in ranked
                if cid in levels_of and levels_of[cid] not in levels]
        if len(kept) >= limit or len(ranked) < fetch:
            return kept[:int(limit)]
        fetch *= 4


def _fts_ranked(conn: Connection, match: str, limit: int) -> list[tuple[int, float]]:
    """The best ``limit`` FTS rows for a MATCH expression, BM25 then row id (ties in order)."""
    rows = conn.execute(
        text("SELECT rowid, bm25(chunk_fts) AS score FROM chunk_fts WHERE chunk_fts MATCH "
             ":m ORDER BY score, rowid LIMIT :n"),
        {"m": match, "n": int(limit)},
    ).all()
    return [(int(r[0]), -float(r[1])) for r in rows]


def fts_search_joined(conn: Connection, query: str, limit: int, deny: tuple[str, ...],
                      denied: bool = False) -> list[tuple[int, float]]:
    """``fts_search`` with the channel rule as one join over every match: what the faster
    path (``denied_ids`` given) is held equal to (``tests/store/test_recall_vector_file.py``),
    and what runs without a known set of denied chunks."""
    match = fts_query(query)
    if match is None:
        return []
    rows = conn.execute(
        text("SELECT chunk_fts.rowid, bm25(chunk_fts) AS score FROM chunk_fts "
             "JOIN chunk c ON c.id = chunk_fts.rowid "
             "LEFT JOIN entry e ON c.source_type = 'entry' AND e.id = c.source_id "
             "LEFT JOIN memory m ON c.source_type = 'memory' AND m.id = c.source_id "
             "WHERE chunk_fts MATCH :m AND COALESCE(e.sensitivity, m.sensitivity, 'public') "
             f"{'' if denied else 'NOT '}IN ({_levels(deny)}) ORDER BY score, chunk_fts.rowid "
             "LIMIT :n"),
        {"m": match, "n": int(limit)},
    ).all()
    return [(int(r[0]), -float(r[1])) for r in rows]


def chunks_of_levels(conn: Connection, levels: tuple[str, ...]) -> list[int]:
    """Ids of the chunks whose source (entry or memory) has one of these sensitivities."""
    if on_server(conn) or not levels:
        return []
    rows = conn.exec_driver_sql(
        "SELECT c.id FROM entry e JOIN chunk c ON c.source_type = 'entry' AND "
        f"c.source_id = e.id WHERE e.sensitivity IN ({_levels(levels)}) UNION ALL "
        "SELECT c.id FROM memory m JOIN chunk c ON c.source_type = 'memory' AND "
        f"c.source_id = m.id WHERE m.sensitivity IN ({_levels(levels)})").all()
    return sorted(int(r[0]) for r in rows)


def chunk_sensitivities(conn: Connection, ids: list[int] | None = None) -> dict[int, str]:
    """chunk id → its source's sensitivity (entry or memory; ``public`` when unset)."""
    where = "" if ids is None else \
        f"WHERE c.id IN ({', '.join(str(int(i)) for i in ids)})" if ids else "WHERE 1 = 0"
    rows = conn.exec_driver_sql(
        "SELECT c.id, COALESCE(e.sensitivity, m.sensitivity, 'public') FROM chunk c "
        "LEFT JOIN entry e ON c.source_type = 'entry' AND e.id = c.source_id "
        f"LEFT JOIN memory m ON c.source_type = 'memory' AND m.id = c.source_id {where}").all()
    return {int(r[0]): str(r[1]) for r in rows}


def index_counts(conn: Connection) -> tuple[int, int]:
    """(vectors, FTS rows) currently indexed."""
    if on_server(conn):
        return pg.index_counts(conn)
    vectors = conn.exec_driver_sql("SELECT COUNT(*) FROM chunk_vec").scalar_one()
    fts = conn.exec_driver_sql("SELECT COUNT(*) FROM chunk_fts_docsize").scalar_one()
    return int(vectors), int(fts)


def waiting_search(conn: Connection, query: str, limit: int, deny: tuple[str, ...] = (),
                   denied: bool = False) -> list[tuple[int, float]]:
    """(entry id, BM25 relevance ≥ 0) of entries waiting for embedding that match ``query``
    (``embed_queue_fts``, filled by the queue's triggers), best first; ``deny`` / ``denied``
    as in ``fts_search``."""
    if on_server(conn):
        words = query_words(query)
        return pg.waiting_search(conn, words, limit, _levels(deny) if deny else None,
                                 denied) if words else []
    match = fts_query(query)
    if match is None:
        return []
    if not deny:
        rows = conn.execute(
            text("SELECT rowid, bm25(embed_queue_fts) AS score FROM embed_queue_fts WHERE "
                 "embed_queue_fts MATCH :m ORDER BY score LIMIT :n"),
            {"m": match, "n": int(limit)},
        ).all()
        return [(int(r[0]), -float(r[1])) for r in rows]
    rows = conn.execute(
        text("SELECT embed_queue_fts.rowid, bm25(embed_queue_fts) AS score FROM embed_queue_fts "
             "JOIN entry e ON e.id = embed_queue_fts.rowid WHERE embed_queue_fts MATCH :m AND "
             f"COALESCE(e.sensitivity, 'public') {'' if denied else 'NOT '}IN "
             f"({_levels(deny)}) ORDER BY score LIMIT :n"),
        {"m": match, "n": int(limit)},
    ).all()
    return [(int(r[0]), -float(r[1])) for r in rows]




def ensure_secure_delete(conn: Connection) -> None:
    """FTS5 ``secure-delete``: a deleted row's terms are removed from the index pages, not
    only marked deleted (migration 1 sets it; an erasure asserts it again). On a server the
    text search lives in the chunk row: deleting the row deletes it."""
    if on_server(conn):
        return
    conn.exec_driver_sql("INSERT INTO chunk_fts (chunk_fts, rank) VALUES ('secure-delete', 1)")


def fts_phrase(conn: Connection, words: list[str], limit: int = 50) -> list[int]:
    """Chunk ids whose FTS row matches ``words`` as one phrase (a privacy probe)."""
    if not words:
        return []
    if on_server(conn):
        return pg.fts_phrase(conn, words, limit)
    phrase = '"' + " ".join(w.replace('"', '""') for w in words) + '"'
    rows = conn.execute(text("SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH :m LIMIT :n"),
                        {"m": phrase, "n": int(limit)}).all()
    return [int(r[0]) for r in rows]


def fts_indexed(conn: Connection, chunk_ids: list[int]) -> list[int]:
    """Which of ``chunk_ids`` still have a row in the FTS index (its docsize table)."""
    if not chunk_ids:
        return []
    if on_server(conn):
        return sorted(pg.indexed(conn, chunk_ids)[1])
    rows = conn.execute(text("SELECT id FROM chunk_fts_docsize WHERE id IN (SELECT value FROM "
                             "json_each(:i))"), {"i": "[" + ",".join(map(str, chunk_ids)) + "]"})
    return [int(r[0]) for r in rows]


def vectors_present(conn: Connection, chunk_ids: list[int]) -> list[int]:
    """Which of ``chunk_ids`` still have a vector."""
    if on_server(conn):
        return sorted(pg.indexed(conn, chunk_ids)[0])
    return [cid for cid in chunk_ids if vector_of(conn, cid) is not None]


def fts_terms(conn: Connection) -> set[str]:
    """Every term in the FTS index (porter stems of what remains indexed)."""
    if on_server(conn):
        return pg.fts_terms(conn)
    conn.exec_driver_sql("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lca_fts_vocab USING "
                         "fts5vocab(main, chunk_fts, row)")
    return {str(r[0]) for r in conn.exec_driver_sql("SELECT term FROM temp.lca_fts_vocab")}


def version(conn: Connection) -> str | None:
    """sqlite-vec's (or pgvector's) version on this connection, or None when the extension is
    not loaded."""
    if on_server(conn):
        return pg.version(conn)
    try:
        return str(conn.exec_driver_sql("SELECT vec_version()").scalar_one())
    except DBAPIError:
        return None


def delete_chunks_bulk(conn: Connection, rows: list[tuple[int, str]]) -> None:
    """``delete_chunks_index`` for many chunks at once (one executemany per table)."""
    if not rows:
        return
    if on_server(conn):
        return pg.delete_vectors(conn, [c for c, _ in rows])
    conn.execute(text("DELETE FROM chunk_vec WHERE rowid = :id"), [{"id": c} for c, _ in rows])
    conn.execute(text("INSERT INTO chunk_fts (chunk_fts, rowid, text) VALUES ('delete', :id, "
                      ":t)"), [{"id": c, "t": body} for c, body in rows])


def indexed(conn: Connection, chunk_ids: list[int]) -> tuple[set[int], set[int]]:
    """(ids with a vector, ids with an FTS row) among ``chunk_ids``: did a write land in both
    indexes?"""
    if not chunk_ids:
        return set(), set()
    if on_server(conn):
        return pg.indexed(conn, chunk_ids)
    marks = ", ".join(str(int(i)) for i in chunk_ids)
    vectors = {int(r[0]) for r in conn.exec_driver_sql(
        f"SELECT rowid FROM chunk_vec WHERE rowid IN ({marks})").all()}
    fts = {int(r[0]) for r in conn.exec_driver_sql(
        f"SELECT id FROM chunk_fts_docsize WHERE id IN ({marks})").all()}
    return vectors, fts


def index_orphans(conn: Connection) -> tuple[int, int]:
    """(vectors, FTS rows) whose chunk is gone: what an erasure must never leave behind (the
    check an interrupted erasure's verification runs, knowing no chunk ids)."""
    if on_server(conn):
        return pg.index_orphans(conn)
    vectors = int(conn.exec_driver_sql(
        "SELECT COUNT(*) FROM chunk_vec WHERE rowid NOT IN (SELECT id FROM chunk)").scalar_one())
    fts = int(conn.exec_driver_sql(
        "SELECT COUNT(*) FROM chunk_fts_docsize WHERE id NOT IN (SELECT id FROM chunk)")
        .scalar_one())
    return vectors, fts


def fts_stems(conn: Connection, words: list[str]) -> set[str]:
    """The FTS terms (porter stems, as ``chunk_fts`` indexes) of ``words``: a temporary FTS
    table tokenises them, nothing reaches the database file."""
    if on_server(conn):
        return pg.fts_stems(conn, words)
    conn.exec_driver_sql("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lca_stem USING "
                         "fts5(w, tokenize='porter unicode61')")
    conn.exec_driver_sql("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lca_stem_vocab USING "
                         "fts5vocab(temp, lca_stem, row)")
    try:
        for w in words:
            conn.exec_driver_sql("INSERT INTO temp.lca_stem (w) VALUES (?)", (w,))
        return {str(r[0]) for r in conn.exec_driver_sql("SELECT term FROM temp.lca_stem_vocab")}
    finally:
        conn.exec_driver_sql("DROP TABLE IF EXISTS temp.lca_stem_vocab")
        conn.exec_driver_sql("DROP TABLE IF EXISTS temp.lca_stem")
