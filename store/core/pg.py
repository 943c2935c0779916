"""The store on a PostgreSQL server with pgvector: the counterpart of ``db.py`` (the engine),
``vec.py`` (sqlite-vec and FTS5) and ``pragmas.py`` (SQLite's own statements) for that backend.

``vec``, ``pragmas`` and ``db`` dispatch here when a connection's dialect is ``postgresql``;
nothing else in ``store/`` knows which backend it is on. Like those modules this one holds raw
SQL by design (``tests/project/test_raw_sql.py``).

The schema: the SQLModel classes (``SQLModel.metadata.create_all``), stamped at the current
schema version, plus what no class describes —

- ``chunk_vec (chunk_id bigint primary key, embedding vector(384))`` with an HNSW index
  (``vector_cosine_ops``); recall asks that index (``ORDER BY embedding <=> :q LIMIT k``), with
  ``hnsw.ef_search`` set on every connection (``store.pg_ef_search``);
- ``chunk.tsv``, a generated ``tsvector`` column (``to_tsvector('english', text)``) with a GIN
  index: lexical search is ``websearch_to_tsquery`` ranked by ``ts_rank_cd``; entries waiting
  for embedding are matched through the same expression over their text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy import types as sa_types
from sqlalchemy.pool import QueuePool

from store.core.errors import StoreError
from store.core.location import mask_url

if TYPE_CHECKING:  # NumPy is imported where vectors are used (a listing has no use for it)
    import numpy as np

DIM = 384
TS_CONFIG = "english"
SCHEMA_LOCK = 0x1CA_7001  # advisory lock: one process creates the schema, others wait


# -- opening -----------------------------------------------------------------------------------
def driver_url(url: str) -> str:
    """SQLAlchemy's URL for psycopg 3 (``postgresql+psycopg://``)."""
    rest = url.split("://", 1)[1]
    return f"postgresql+psycopg://{rest}"


def _libpq_url(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1]


def _one_line(exc: BaseException) -> str:
    """The server's or libpq's reason on one line, with no password in it."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    reason = lines[0] if lines else type(exc).__name__
    reason = re.sub(r"password=\S+", "password=***", reason)
    return reason.removeprefix("connection failed: ")


def check_server(url: str) -> tuple[str, str]:
    """Connect once, make sure the ``vector`` extension is there (creating it when this role
    may); (server version, pgvector version). A clear one-line ``StoreError`` otherwise."""
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError("a store on PostgreSQL needs its drivers: pip install "
                         "'lca-tui[postgres]' (psycopg and pgvector)") from exc
    masked = mask_url(url)
    try:
        conn = psycopg.connect(_libpq_url(url), autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to the store {masked}: {_one_line(exc)}") from exc
    try:
        server = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                           ).fetchone()
        if row is None:
            available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = "
                                     "'vector'").fetchone()
            if available is None:
                raise StoreError(f"the server of {masked} (PostgreSQL {server}) has no pgvector:"
                                 " install the `vector` extension there (the pgvector/pgvector "
                                 "image has it), then try again")
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                raise StoreError(f"the database of {masked} lacks the `vector` extension and "
                                 f"this role cannot create it ({_one_line(exc)}): ask its owner "
                                 "to run CREATE EXTENSION vector") from exc
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                               ).fetchone()
        return server, str(row[0])  # type: ignore[index]
    finally:
        conn.close()


READ_ONLY_OPTIONS = "-c default_transaction_read_only=on"
"""The connection option of a read-only session: every transaction the server starts on it
is read-only, so the server itself refuses a write (SQLSTATE 25006) whatever the client runs.
(A session may still ``SET`` it off: a role granted ``SELECT`` only is the boundary against a
client that means harm — docs/postgres.md.)"""


def make_engine(url: str, keep: int = 0, ef_search: int = 100,
                read_only: bool = False) -> Engine:
    """An engine on the server: psycopg 3, pgvector's type registered on every connection,
    ``hnsw.ef_search`` set. ``keep`` as for SQLite (0: no pool kept between checkouts).
    ``read_only``: every connection opened with ``default_transaction_read_only=on``
    (``READ_ONLY_OPTIONS``), as a libpq option of the login — not a ``SET`` run after it."""
    from pgvector.psycopg import register_vector

    # A server connection costs far more than a file's (a login, pgvector's type looked up,
    # ef_search set): even a short-lived process keeps two between its transactions (they
    # close when it exits); ``keep`` raises that for a warm process (the daemon).
    engine = create_engine(driver_url(url), hide_parameters=True, poolclass=QueuePool,
                           pool_size=max(2, keep), max_overflow=32, pool_timeout=60,
                           pool_pre_ping=True,
                           connect_args={"options": READ_ONLY_OPTIONS} if read_only else {})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
        register_vector(dbapi_conn)
        autocommit = dbapi_conn.autocommit
        dbapi_conn.autocommit = True
        with dbapi_conn.cursor() as cur:
            cur.execute(f"SET hnsw.ef_search = {int(ef_search)}")
        dbapi_conn.autocommit = autocommit

    return engine


def server_versions(conn: Connection) -> tuple[str, str | None]:
    """(PostgreSQL's version, pgvector's version or None)."""
    server = str(conn.exec_driver_sql("SHOW server_version").scalar_one())
    ext = conn.exec_driver_sql("SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                               ).scalar()
    return server, None if ext is None else str(ext)


# -- schema ------------------------------------------------------------------------------------
EXTRA_DDL = (
    f"CREATE TABLE IF NOT EXISTS chunk_vec (chunk_id BIGINT PRIMARY KEY, "
    f"embedding vector({DIM}) NOT NULL)",
    "CREATE INDEX IF NOT EXISTS chunk_vec_hnsw ON chunk_vec USING hnsw "
    "(embedding vector_cosine_ops)",
    f"ALTER TABLE chunk ADD COLUMN IF NOT EXISTS tsv tsvector GENERATED ALWAYS AS "
    f"(to_tsvector('{TS_CONFIG}', text)) STORED",
    "CREATE INDEX IF NOT EXISTS chunk_tsv ON chunk USING gin (tsv)",
)


# SQLite's JSON functions as the store's queries call them (json_each's ``value``,
# json_extract with a ``$.key`` path, json_valid), so those queries run unchanged on a server;
# and ``=`` between an integer column and a JSON item's text (json_each yields text).
COMPAT_DDL = (
    "CREATE OR REPLACE FUNCTION json_valid(x text) RETURNS boolean LANGUAGE sql IMMUTABLE "
    "AS $$ SELECT x IS JSON $$",
    "CREATE OR REPLACE FUNCTION json_extract(x text, p text) RETURNS text LANGUAGE sql "
    "IMMUTABLE AS $$ SELECT jsonb_path_query_first(x::jsonb, p::jsonpath) #>> '{}' $$",
    "CREATE OR REPLACE FUNCTION json_type(x text, p text) RETURNS text LANGUAGE sql "
    "IMMUTABLE AS $$ SELECT CASE jsonb_typeof(v) WHEN 'boolean' THEN v::text WHEN 'string' "
    "THEN 'text' WHEN 'number' THEN CASE WHEN v::text ~ '^-?[0-9]+$' THEN 'integer' ELSE "
    "'real' END ELSE jsonb_typeof(v) END FROM jsonb_path_query_first(x::jsonb, p::jsonpath) "
    "AS v $$",
    "CREATE OR REPLACE FUNCTION typeof(x anyelement) RETURNS text LANGUAGE sql IMMUTABLE AS "
    "$$ SELECT CASE WHEN x IS NULL THEN 'null' WHEN pg_typeof(x) IN ('smallint'::regtype, "
    "'integer'::regtype, 'bigint'::regtype) THEN 'integer' WHEN pg_typeof(x) IN "
    "('real'::regtype, 'double precision'::regtype, 'numeric'::regtype) THEN 'real' WHEN "
    "pg_typeof(x) = 'bytea'::regtype THEN 'blob' ELSE 'text' END $$",
    "CREATE OR REPLACE FUNCTION julianday(x text) RETURNS double precision LANGUAGE plpgsql "
    "IMMUTABLE AS $$ BEGIN RETURN extract(epoch FROM x::timestamptz) / 86400.0 + 2440587.5; "
    "EXCEPTION WHEN others THEN RETURN NULL; END $$",
    "CREATE OR REPLACE FUNCTION json_each(x text) RETURNS TABLE(value text) LANGUAGE sql "
    "IMMUTABLE AS $$ SELECT jsonb_array_elements_text(x::jsonb) $$",
    "CREATE OR REPLACE FUNCTION lca_int_eq_text(a bigint, b text) RETURNS boolean "
    "LANGUAGE sql IMMUTABLE AS $$ SELECT a::text = b $$",
    "CREATE OR REPLACE FUNCTION lca_text_eq_int(a text, b bigint) RETURNS boolean "
    "LANGUAGE sql IMMUTABLE AS $$ SELECT a = b::text $$",
    "CREATE OPERATOR = (LEFTARG = bigint, RIGHTARG = text, FUNCTION = lca_int_eq_text)",
    "CREATE OPERATOR = (LEFTARG = text, RIGHTARG = bigint, FUNCTION = lca_text_eq_int)",
)


def rowid_ddl(metadata: Any) -> list[str]:
    """A ``rowid`` column on every table, as SQLite has (the privacy code addresses rows by
    it): the integer primary key itself where there is one (a stored copy of ``id``), else
    an identity column; indexed either way."""
    out = []
    for name, table in sorted(metadata.tables.items()):
        pk = list(table.primary_key.columns)
        if len(pk) == 1 and pk[0].name == "id" and pk[0].type.python_type is int:
            out.append(f'ALTER TABLE "{name}" ADD COLUMN rowid bigint GENERATED ALWAYS AS '
                       "(id) STORED")
        else:
            out.append(f'ALTER TABLE "{name}" ADD COLUMN rowid bigint GENERATED ALWAYS AS '
                       "IDENTITY")
        out.append(f'CREATE UNIQUE INDEX "{name}_rowid" ON "{name}" (rowid)')
    return out


def ensure_rowids(conn: Connection) -> list[str]:
    """Give every table of the schema that lacks one the ``rowid`` column ``rowid_ddl`` gives
    the tables a store is created with (a table a later migration adds: the privacy code
    addresses every table's rows by it); the tables changed."""
    rows = conn.exec_driver_sql(
        "SELECT t.table_name, (SELECT array_agg(k.column_name::text) FROM "
        "information_schema.table_constraints c JOIN information_schema.key_column_usage k "
        "ON k.constraint_name = c.constraint_name AND k.table_schema = c.table_schema WHERE "
        "c.table_schema = t.table_schema AND c.table_name = t.table_name AND "
        "c.constraint_type = 'PRIMARY KEY'), (SELECT data_type FROM information_schema.columns "
        "i WHERE i.table_schema = t.table_schema AND i.table_name = t.table_name AND "
        "i.column_name = 'id') FROM information_schema.tables t WHERE t.table_schema = "
        "current_schema() AND t.table_type = 'BASE TABLE' AND NOT EXISTS (SELECT 1 FROM "
        "information_schema.columns r WHERE r.table_schema = t.table_schema AND r.table_name "
        "= t.table_name AND r.column_name = 'rowid') ORDER BY t.table_name").all()
    done = []
    for name, pk, id_type in rows:
        if name in INDEX_TABLES:
            continue
        keyed = list(pk or []) == ["id"] and id_type in ("integer", "bigint", "smallint")
        source = "(id) STORED" if keyed else "IDENTITY"
        conn.exec_driver_sql(f'ALTER TABLE "{name}" ADD COLUMN rowid bigint GENERATED ALWAYS AS '
                             f"{source}")
        conn.exec_driver_sql(f'CREATE UNIQUE INDEX "{name}_rowid" ON "{name}" (rowid)')
        done.append(str(name))
    return done


def default_ddl(metadata: Any) -> list[str]:
    """The column defaults a model field declares (``tags = "[]"``, ``hits = 0``) as the
    server's own ``DEFAULT``, as every SQLite migration writes them (``tests/store/
    test_schema.py`` holds those equal to the models): a raw ``INSERT`` that leaves such a
    column out, from an older writer or a tool, gets the same value on both backends."""
    out = []
    for name, table in sorted(metadata.tables.items()):
        for column in table.columns:
            held = column.default
            value = getattr(held, "arg", None)
            if held is None or not getattr(held, "is_scalar", False) or value is None \
                    or column.server_default is not None:
                continue
            kind = column.type
            if isinstance(kind, sa_types.TypeDecorator):  # SQLModel's AutoString: a String
                kind = kind.impl_instance
            if isinstance(kind, sa_types.Boolean):
                literal = "true" if value else "false"
            elif isinstance(value, int | float) and isinstance(kind, sa_types.Integer):
                literal = str(int(value))
            elif isinstance(value, int | float) and isinstance(kind, sa_types.Float
                                                               | sa_types.Numeric):
                literal = repr(float(value))
            elif isinstance(value, str) and isinstance(kind, sa_types.String):
                literal = "'" + value.replace("'", "''") + "'"
            else:
                continue
            out.append(f'ALTER TABLE "{name}" ALTER COLUMN "{column.name}" SET DEFAULT {literal}')
    return out


def store_uncompressed(conn: Connection) -> list[str]:
    """Every column PostgreSQL would compress (text, jsonb, tsvector, vector: storage
    ``extended`` or ``main``) set to ``STORAGE EXTERNAL``: kept as its bytes, in the row or in
    TOAST, never compressed. A compressed value's bytes are not its text: pglz splits words
    with its control bytes (a live row's "import" stored as ``im\\x00port`` held the erased
    word "port" for the raw-bytes probe) and hides an erased text's residue from a byte search
    alike; SQLite stores text as it is, and so does the store on a server. (table.column)
    changed. Only values written afterwards are stored so."""
    rows = conn.exec_driver_sql(
        "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
        "AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped "
        "AND a.attstorage IN ('x', 'm') ORDER BY c.relname, a.attnum").all()
    for table, column in rows:
        conn.exec_driver_sql(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" SET STORAGE '
                             "EXTERNAL")
    return [f"{t}.{c}" for t, c in rows]


HIDDEN_COLUMNS = ("rowid", "tsv")  # columns no model declares (``rowid_ddl``, ``EXTRA_DDL``)
INDEX_TABLES = ("chunk_vec",)  # what SQLite keeps in virtual tables


def schema_exists(conn: Connection) -> bool:
    return conn.exec_driver_sql("SELECT to_regclass('schema_migration') IS NOT NULL"
                                ).scalar_one() is True


def current_version(conn: Connection) -> int:
    if not schema_exists(conn):
        return 0
    return int(conn.exec_driver_sql("SELECT COALESCE(MAX(version), 0) FROM schema_migration")
               .scalar_one())


def applied(conn: Connection) -> set[int]:
    if not schema_exists(conn):
        return set()
    return {int(r[0]) for r in conn.exec_driver_sql("SELECT version FROM schema_migration")}


def lock_schema(conn: Connection) -> None:
    """Serialise schema work between processes opening one new store at once (held to the
    end of the transaction)."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK})


def create_schema(conn: Connection, metadata: Any, stamp: Sequence[tuple[int, str]],
                  applied_at: str, code_version: str) -> bool:
    """Create every table of ``metadata`` and the vector/text-search objects, and record
    ``stamp`` (every known migration) as applied; False when the schema was there already.
    Runs in the caller's transaction, under ``lock_schema``."""
    lock_schema(conn)
    if schema_exists(conn):
        return False
    metadata.create_all(conn)
    for statement in (*rowid_ddl(metadata), *default_ddl(metadata), *EXTRA_DDL, *COMPAT_DDL):
        conn.exec_driver_sql(statement)
    store_uncompressed(conn)
    conn.execute(text("INSERT INTO schema_migration (version, name, applied_at, code_version) "
                      "VALUES (:v, :n, :t, :c)"),
                 [{"v": v, "n": n, "t": applied_at, "c": code_version} for v, n in stamp])
    return True


# -- vectors -----------------------------------------------------------------------------------
def _vec(vector: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.asarray(vector, dtype=np.float32)


def _arr(value: Any) -> np.ndarray:
    """A stored vector as float32 (pgvector's loader gives its ``Vector``)."""
    import numpy as np

    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def insert_vectors(conn: Connection, rows: list[tuple[int, np.ndarray]]) -> None:
    if rows:
        conn.execute(text("INSERT INTO chunk_vec (chunk_id, embedding) VALUES (:id, :v)"),
                     [{"id": cid, "v": _vec(v)} for cid, v in rows])


def delete_vectors(conn: Connection, chunk_ids: list[int]) -> None:
    if chunk_ids:
        conn.execute(text("DELETE FROM chunk_vec WHERE chunk_id = ANY(:ids)"),
                     {"ids": [int(i) for i in chunk_ids]})


def clear_vectors(conn: Connection) -> None:
    conn.exec_driver_sql("DELETE FROM chunk_vec")


def set_ef_search(conn: Connection, ef: int) -> None:
    """This connection's HNSW search breadth (``hnsw.ef_search``) from now on."""
    conn.exec_driver_sql(f"SET hnsw.ef_search = {int(ef)}")


def knn(conn: Connection, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The server's HNSW index: (chunk id, cosine similarity), nearest first."""
    rows = conn.execute(text("SELECT chunk_id, embedding <=> :q AS d FROM chunk_vec "
                             "ORDER BY embedding <=> :q LIMIT :k"),
                        {"q": _vec(vector), "k": int(k)}).all()
    return [(int(r[0]), 1.0 - float(r[1])) for r in rows]


def exact_knn(conn: Connection, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The same ranking by a full scan (the index switched off for this transaction): what
    HNSW is measured against."""
    conn.exec_driver_sql("SET LOCAL enable_indexscan = off")
    try:
        return knn(conn, vector, k)
    finally:
        conn.exec_driver_sql("SET LOCAL enable_indexscan = on")


def _array(value: Any) -> np.ndarray:
    """A vector as the driver loaded it (pgvector 0.5: a ``Vector``; 0.4: an array) as
    float32."""
    held = value.to_numpy() if hasattr(value, "to_numpy") else value
    return np.asarray(held, dtype=np.float32)


def all_vectors(conn: Connection) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    rows = conn.exec_driver_sql("SELECT chunk_id, embedding FROM chunk_vec").all()
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, DIM), dtype=np.float32)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    return ids, np.stack([_arr(r[1]) for r in rows])


def vectors_of(conn: Connection, chunk_ids: list[int]) -> dict[int, np.ndarray]:
    if not chunk_ids:
        return {}
    rows = conn.execute(text("SELECT chunk_id, embedding FROM chunk_vec WHERE chunk_id = "
                             "ANY(:ids)"), {"ids": [int(i) for i in chunk_ids]}).all()
    return {int(r[0]): _arr(r[1]) for r in rows}


def vector_of(conn: Connection, chunk_id: int) -> np.ndarray | None:
    return vectors_of(conn, [chunk_id]).get(int(chunk_id))


# -- text search -------------------------------------------------------------------------------
def ts_query(words: list[str]) -> str:
    """A ``websearch_to_tsquery`` input: the words joined with ``or`` (each quoted, so no
    word is read as an operator)."""
    return " or ".join(_quoted(words))


def _sensitivity_filter(levels: str, denied: bool, entry_only: bool = False) -> str:
    expr = ("COALESCE(e.sensitivity, 'public')" if entry_only
            else "COALESCE(e.sensitivity, m.sensitivity, 'public')")
    return f" AND {expr} {'' if denied else 'NOT '}IN ({levels})"


# Each query word's weight, as BM25 gives it (FTS5 ranks with BM25): its inverse document
# frequency over the chunks, ``ln(1 + (N - df + 0.5) / (df + 0.5))``. ``ts_rank_cd`` alone has
# no IDF — a passage with two common words of the query outranks one with its single rare word
# (an error code) — so a candidate's score is the IDF-weighted sum of ``ts_rank_cd`` per word.
# The document frequencies come from the GIN index, one count per word of the query: once
# per query, so ``terms`` is MATERIALIZED — left to itself PostgreSQL inlines it into the
# per-candidate subquery of ``_score`` and counts every word's matches again for each
# candidate (one text search at 50,000 chunks took 60–72 s instead of 40–80 ms).
_TERMS = (f"WITH words AS (SELECT websearch_to_tsquery('{TS_CONFIG}', w) AS q "
          "FROM unnest(CAST(:ws AS text[])) AS w), "
          "total AS (SELECT count(*) AS n FROM chunk), "
          "terms AS MATERIALIZED (SELECT words.q, "
          "ln(1 + (total.n - d.df + 0.5) / (d.df + 0.5)) AS idf "
          "FROM words CROSS JOIN total CROSS JOIN LATERAL (SELECT count(*) AS df FROM chunk "
          "WHERE tsv @@ words.q) d WHERE numnode(words.q) > 0) ")


def _quoted(words: list[str]) -> list[str]:
    return ['"' + w.replace('"', " ") + '"' for w in words]


def _score(tsv: str) -> str:
    """The IDF-weighted ``ts_rank_cd`` of the tsvector expression ``tsv`` (``_TERMS``)."""
    return f"(SELECT COALESCE(sum(t.idf * ts_rank_cd({tsv}, t.q)), 0) FROM terms t)"


def fts_search(conn: Connection, words: list[str], limit: int, levels: str | None,
               denied: bool) -> list[tuple[int, float]]:
    """(chunk id, IDF-weighted ts_rank_cd ≥ 0, higher is better) of the best ``limit``
    matches."""
    where = ""
    joins = ""
    if levels is not None:
        joins = ("LEFT JOIN entry e ON c.source_type = 'entry' AND e.id = c.source_id "
                 "LEFT JOIN memory m ON c.source_type = 'memory' AND m.id = c.source_id ")
        where = _sensitivity_filter(levels, denied)
    rows = conn.execute(
        text(f"{_TERMS}SELECT c.id, {_score('c.tsv')} AS score FROM chunk c {joins}"
             f"CROSS JOIN websearch_to_tsquery('{TS_CONFIG}', :m) q WHERE c.tsv @@ q{where} "
             "ORDER BY score DESC, c.id LIMIT :n"),
        {"m": ts_query(words), "ws": _quoted(words), "n": int(limit)}).all()
    return [(int(r[0]), float(r[1])) for r in rows]


def waiting_search(conn: Connection, words: list[str], limit: int, levels: str | None,
                   denied: bool) -> list[tuple[int, float]]:
    """(entry id, IDF-weighted ts_rank_cd, the frequencies those of the chunks) of entries
    waiting for embedding that match (their text is matched as it is: the queue is
    short-lived and small)."""
    where = _sensitivity_filter(levels, denied, entry_only=True) if levels is not None else ""
    doc = f"to_tsvector('{TS_CONFIG}', e.content)"
    rows = conn.execute(
        text(f"{_TERMS}SELECT e.id, {_score(doc)} AS score "
             f"FROM embed_queue w JOIN entry e ON e.id = w.entry_id CROSS JOIN "
             f"websearch_to_tsquery('{TS_CONFIG}', :m) q WHERE {doc} @@ q{where} "
             "ORDER BY score DESC, e.id LIMIT :n"),
        {"m": ts_query(words), "ws": _quoted(words), "n": int(limit)}).all()
    return [(int(r[0]), float(r[1])) for r in rows]


def fts_phrase(conn: Connection, words: list[str], limit: int) -> list[int]:
    rows = conn.execute(
        text(f"SELECT id FROM chunk WHERE tsv @@ phraseto_tsquery('{TS_CONFIG}', :p) "
             "LIMIT :n"), {"p": " ".join(words), "n": int(limit)}).all()
    return [int(r[0]) for r in rows]


def fts_terms(conn: Connection) -> set[str]:
    return {str(r[0]) for r in conn.exec_driver_sql(
        "SELECT word FROM ts_stat('SELECT tsv FROM chunk')").all()}


def fts_stems(conn: Connection, words: list[str]) -> set[str]:
    if not words:
        return set()
    rows = conn.execute(text(f"SELECT unnest(tsvector_to_array(to_tsvector('{TS_CONFIG}', "
                             ":w)))"), {"w": " ".join(words)}).all()
    return {str(r[0]) for r in rows}


def index_counts(conn: Connection) -> tuple[int, int]:
    vectors = int(conn.exec_driver_sql("SELECT COUNT(*) FROM chunk_vec").scalar_one())
    fts = int(conn.exec_driver_sql("SELECT COUNT(*) FROM chunk WHERE tsv IS NOT NULL")
              .scalar_one())
    return vectors, fts


def indexed(conn: Connection, chunk_ids: list[int]) -> tuple[set[int], set[int]]:
    ids = [int(i) for i in chunk_ids]
    vectors = {int(r[0]) for r in conn.execute(text(
        "SELECT chunk_id FROM chunk_vec WHERE chunk_id = ANY(:ids)"), {"ids": ids}).all()}
    fts = {int(r[0]) for r in conn.execute(text(
        "SELECT id FROM chunk WHERE tsv IS NOT NULL AND id = ANY(:ids)"), {"ids": ids}).all()}
    return vectors, fts


def index_orphans(conn: Connection) -> tuple[int, int]:
    """(vectors whose chunk is gone, 0): text search lives in the chunk row itself, so no
    lexical row can outlive its chunk."""
    vectors = int(conn.exec_driver_sql(
        "SELECT COUNT(*) FROM chunk_vec v WHERE NOT EXISTS (SELECT 1 FROM chunk c WHERE "
        "c.id = v.chunk_id)").scalar_one())
    return vectors, 0


def version(conn: Connection) -> str | None:
    return server_versions(conn)[1]


# -- what pragmas.py says for SQLite -----------------------------------------------------------
def reserve_ids(conn: Connection, table: str, n: int) -> list[int]:
    """``n`` new ids of ``table`` from its own sequence: concurrent writers never pick the
    same, and an erased id is never given again."""
    if n <= 0:
        return []
    rows = conn.execute(text("SELECT nextval(pg_get_serial_sequence(:t, 'id')) FROM "
                             "generate_series(1, :n)"), {"t": table, "n": int(n)}).all()
    return [int(r[0]) for r in rows]


def commit_counter(conn: Connection) -> int:
    """A number that grows whenever a transaction that wrote anything commits (or aborts)
    anywhere on the server: the snapshot's xmax (one past the latest completed transaction
    id). One cheap query, no trigger and no table: the app's "did anything change?"."""
    return int(conn.exec_driver_sql("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint"
                                    ).scalar_one())


def begin(conn: Connection) -> None:
    """A write on PostgreSQL takes no store-wide lock: READ COMMITTED, rows locked as they are
    written, unique constraints and ``ON CONFLICT`` keep concurrent writers apart."""
    conn.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")


def size_bytes(conn: Connection) -> int:
    return int(conn.exec_driver_sql("SELECT pg_database_size(current_database())").scalar_one())


# -- the server's catalogue, as pragmas.py reads SQLite's --------------------------------------
def schema_tables(conn: Connection) -> list[tuple[str, str | None]]:
    """(name, None) of every table of the store's schema; the vector table is listed as
    SQLite lists its virtual tables (``CREATE VIRTUAL TABLE ...``), so callers skip it."""
    rows = conn.exec_driver_sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = "
        "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name").all()
    return [(str(r[0]), "CREATE VIRTUAL TABLE -- pgvector" if r[0] in INDEX_TABLES else None)
            for r in rows]


def table_info(conn: Connection, table: str) -> list[tuple[Any, ...]]:
    """(position, name, type, not null, default, primary-key position) per column, as
    ``PRAGMA table_info`` gives them (the hidden ``rowid`` / ``tsv`` left out)."""
    rows = conn.execute(text(
        "SELECT c.ordinal_position, c.column_name, upper(c.data_type), c.is_nullable = 'NO', "
        "c.column_default, COALESCE(k.ordinal_position, 0) "
        "FROM information_schema.columns c LEFT JOIN (SELECT kcu.column_name, "
        "kcu.ordinal_position FROM information_schema.table_constraints tc JOIN "
        "information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name "
        "AND kcu.table_schema = tc.table_schema WHERE tc.table_schema = current_schema() AND "
        "tc.table_name = :t AND tc.constraint_type = 'PRIMARY KEY') k ON k.column_name = "
        "c.column_name WHERE c.table_schema = current_schema() AND c.table_name = :t "
        "ORDER BY c.ordinal_position"), {"t": table}).all()
    return [tuple(r) for r in rows if r[1] not in HIDDEN_COLUMNS]


def foreign_key_list(conn: Connection, table: str) -> list[tuple[Any, ...]]:
    """(id, seq, parent, column, parent column, on update, on delete, match) per foreign key
    column, as ``PRAGMA foreign_key_list`` gives them."""
    rows = conn.execute(text(
        "SELECT con.oid, k.n, pt.relname, a.attname, pa.attname, "
        "CASE con.confupdtype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN "
        "'SET DEFAULT' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END, "
        "CASE con.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN "
        "'SET DEFAULT' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END, 'NONE' "
        "FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid "
        "JOIN pg_class pt ON pt.oid = con.confrelid "
        "CROSS JOIN LATERAL unnest(con.conkey, con.confkey) WITH ORDINALITY AS k(c, pc, n) "
        "JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.c "
        "JOIN pg_attribute pa ON pa.attrelid = con.confrelid AND pa.attnum = k.pc "
        "WHERE con.contype = 'f' AND t.relname = :t AND t.relnamespace = "
        "current_schema()::regnamespace ORDER BY con.oid, k.n"), {"t": table}).all()
    return [tuple(r) for r in rows]


def foreign_key_check(conn: Connection) -> list[tuple[Any, ...]]:
    """Dangling references: none can exist, the server enforces every foreign key at
    commit (SQLite checks them only when asked)."""
    return []


def vacuum_tables(engine: Engine, tables: Sequence[str]) -> tuple[list[str], list[str]]:
    """Plain ``VACUUM (ANALYZE)`` of each table, outside any transaction: after a mass delete
    the HNSW index still holds the dead rows' entries until a vacuum removes them and repairs
    the graph, and an index scan spends its ``ef_search`` on them (a recall then misses live
    neighbours until autovacuum comes by). Only a table's owner (or a superuser) may vacuum
    it — for anyone else PostgreSQL skips it with a warning — so the others are left out and
    named. (vacuumed, skipped)."""
    done: list[str] = []
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        owned = {str(r[0]) for r in conn.execute(text(
            "SELECT relname FROM pg_class WHERE relname = ANY(:t) AND relkind = 'r' "
            "AND relnamespace = current_schema()::regnamespace "
            "AND pg_has_role(relowner, 'MEMBER')"), {"t": list(tables)}).all()}
        for name in tables:
            if name in owned:
                conn.exec_driver_sql(f'VACUUM (ANALYZE) "{name}"')
                done.append(name)
    return done, [t for t in tables if t not in done]


# -- erasure on a server -----------------------------------------------------------------------
def vacuum_full(engine: Engine, tables: Sequence[str]) -> list[tuple[str, float]]:
    """``VACUUM FULL`` of each table (its TOAST table and indexes are rebuilt with it): the
    freed tuples' bytes, which plain VACUUM leaves in place, are not copied to the new
    files. Each takes an ACCESS EXCLUSIVE lock on its table while it runs (readers and
    writers of that table wait). (table, milliseconds) each."""
    import time

    out = []
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        for name in tables:
            started = time.perf_counter()
            conn.exec_driver_sql(f'VACUUM FULL "{name}"')
            out.append((name, round((time.perf_counter() - started) * 1000.0, 1)))
        try:  # write the rebuilt pages out now (needs pg_checkpoint or superuser)
            conn.exec_driver_sql("CHECKPOINT")
        except Exception:  # noqa: BLE001 - a right this role lacks: the files are flushed later
            pass
    return out


def table_files(conn: Connection, tables: Sequence[str]) -> tuple[list[str], str | None]:
    """The files of ``tables`` on the server's disk (heap, TOAST, every index, all
    segments), when its data directory can be read by this process (a local server);
    else ([], why not)."""
    import os

    try:
        data = str(conn.exec_driver_sql("SHOW data_directory").scalar_one())
    except Exception as exc:  # noqa: BLE001 - a role without pg_read_all_settings
        return [], f"the server does not tell this role its data directory ({_one_line(exc)})"
    if not os.access(data, os.R_OK | os.X_OK):
        return [], f"the server's data directory {data} is not readable here (another machine?)"
    rows = conn.execute(text(
        "SELECT pg_relation_filepath(c.oid) FROM pg_class c WHERE c.oid IN ("
        "SELECT t.oid FROM pg_class t WHERE t.relname = ANY(:names) AND t.relnamespace = "
        "current_schema()::regnamespace "
        "UNION SELECT t.reltoastrelid FROM pg_class t WHERE t.relname = ANY(:names) AND "
        "t.reltoastrelid <> 0 "
        "UNION SELECT i.indexrelid FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
        "WHERE t.relname = ANY(:names) "
        "UNION SELECT i.indexrelid FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
        "JOIN pg_class h ON h.reltoastrelid = t.oid WHERE h.relname = ANY(:names))"),
        {"names": list(tables)}).all()
    files: list[str] = []
    for (rel,) in rows:
        if rel is None:
            continue
        base = os.path.join(data, str(rel))
        for suffix in ("", *(f".{i}" for i in range(1, 1000))):
            if not os.path.exists(base + suffix):
                break
            files.append(base + suffix)
    return files, None
