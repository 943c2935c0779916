"""Ids of erasable records are never given to another record (issue 12, after review).

Without ``AUTOINCREMENT`` SQLite gives a new row the largest id in the table plus one: erase
recall trace 5 when it is the newest and the next recall becomes trace 5, so feedback, an
audit event or a reference by id would point at a different record. The tables an erasure
deletes from and that others name by id (entry, memory, chunk, proposal, recall_trace,
recall_candidate) are rebuilt with ``INTEGER PRIMARY KEY AUTOINCREMENT``: ``sqlite_sequence``
keeps the highest id ever used, also across explicit ids (the chunk writer asks for it).

SQLite's table rebuild (https://sqlite.org/lang_altertable.html#otheralter): create the new
table, copy every row by column name (ids kept, so every foreign key, the FTS5 external
content of ``chunk_fts`` and the vectors of ``chunk_vec`` still point at the same rows), drop
the old one, rename, recreate its indexes and triggers. ``FOREIGN_KEYS_OFF``: the runner turns
foreign keys off for this migration (a DROP would otherwise cascade into the children), with
``legacy_alter_table`` on (the rename must not trip over triggers naming the table), and runs
``PRAGMA foreign_key_check`` before it commits.
"""

VERSION = 13
NAME = "ids_never_reused"
FOREIGN_KEYS_OFF = True

_COLUMNS = {
    "entry": """
        id session_id agent seq ts kind content content_hash tokens source_path
        source_offset source_line block idem_key uuid parent_uuid message_id tool_name
        tool_use_id meta writer writer_version created_at sensitivity""",
    "memory": """
        id name description type body tags projects role created last_applied hits prevented
        half_life_days critical evergreen invariant authority sensitivity valid_from
        valid_to supersedes_ref supersedes_id superseded_by_id status source_file loadable
        load_error front_matter content_hash updated_at writer writer_version created_at
        review_reason""",
    "chunk": """
        id source_type source_id span_start span_end text content_hash source_hash model dim
        status error tokens nn_similarity nn_chunk_id writer writer_version created_at
        lexical_only""",
    "proposal": """
        id op type targets target_snapshot name content meta rationale evidence origin
        proposer status status_reason revision ts updated_at decided_at actor memory_id
        verified verification external_id kind entry_id idem_key writer writer_version
        created_at""",
    "recall_trace": """
        id ts query role project channel historical settings latency_ms model degraded
        origin entry_id rerun_of considered injected writer writer_version created_at""",
    "recall_candidate": """
        id trace_id rank source_type source_id external_id chunk_id session_id seq kind
        label excerpt masked s e t a q k cos lex contributions score decision reason hits
        prevented writer writer_version created_at""",
}


def _copy(table: str) -> str:
    """Every row of ``table`` into its rebuilt copy, by column name (ids kept)."""
    names = ", ".join(_COLUMNS[table].split())
    return f"INSERT INTO {table}_new ({names}) SELECT {names} FROM {table}"


STATEMENTS = [
    # -- entry -----------------------------------------------------------------
    """CREATE TABLE entry_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES session(id),
        agent TEXT NOT NULL DEFAULT 'main',
        seq INTEGER NOT NULL,
        ts TEXT,
        kind TEXT NOT NULL CHECK (kind IN ('user', 'assistant', 'tool_call', 'tool_result',
            'reasoning', 'system', 'compaction', 'checkpoint', 'event')),
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        source_path TEXT,
        source_offset INTEGER,
        source_line INTEGER,
        block INTEGER NOT NULL DEFAULT 0,
        idem_key TEXT NOT NULL UNIQUE,
        uuid TEXT,
        parent_uuid TEXT,
        message_id TEXT,
        tool_name TEXT,
        tool_use_id TEXT,
        meta TEXT,
        writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL,
        sensitivity TEXT NOT NULL DEFAULT 'public'
        CHECK (sensitivity IN ('public', 'private', 'secret')),
        UNIQUE (session_id, seq))""",
    _copy("entry"),
    "DROP TABLE entry",
    "ALTER TABLE entry_new RENAME TO entry",
    "CREATE INDEX entry_by_kind ON entry (kind)",
    "CREATE INDEX entry_by_session ON entry (session_id, agent, seq)",
    "CREATE INDEX entry_by_uuid ON entry (uuid)",
    """CREATE TRIGGER embed_queue_rewritten AFTER UPDATE OF content ON entry
        WHEN EXISTS (SELECT 1 FROM embed_queue WHERE entry_id = new.id) BEGIN
        DELETE FROM embed_queue_fts WHERE rowid = new.id;
        INSERT INTO embed_queue_fts (rowid, text) VALUES (new.id, new.content);
        END""",
    # -- memory ----------------------------------------------------------------
    """CREATE TABLE memory_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        description TEXT,
        type TEXT,
        body TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',
        projects TEXT NOT NULL DEFAULT '[]',
        role TEXT,
        created TEXT,
        last_applied TEXT,
        hits INTEGER NOT NULL DEFAULT 0,
        prevented INTEGER NOT NULL DEFAULT 0,
        half_life_days REAL,
        critical INTEGER NOT NULL DEFAULT 0,
        evergreen INTEGER NOT NULL DEFAULT 0,
        invariant TEXT,
        authority TEXT NOT NULL DEFAULT 'unreviewed',
        sensitivity TEXT NOT NULL DEFAULT 'public'
            CHECK (sensitivity IN ('public', 'private', 'secret')),
        valid_from TEXT,
        valid_to TEXT,
        supersedes_ref TEXT,
        supersedes_id INTEGER REFERENCES memory(id),
        superseded_by_id INTEGER REFERENCES memory(id),
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded',
            'disputed', 'quarantined', 'expired')),
        source_file TEXT UNIQUE,
        loadable INTEGER NOT NULL DEFAULT 1,
        load_error TEXT,
        front_matter TEXT,
        content_hash TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL,
        review_reason TEXT)""",
    _copy("memory"),
    "DROP TABLE memory",
    "ALTER TABLE memory_new RENAME TO memory",
    "CREATE INDEX memory_by_name ON memory (name)",
    # -- chunk -----------------------------------------------------------------
    """CREATE TABLE chunk_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source_type TEXT NOT NULL CHECK (source_type IN ('entry', 'memory')),
        source_id INTEGER NOT NULL,
        span_start INTEGER NOT NULL,
        span_end INTEGER NOT NULL,
        text TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        source_hash TEXT NOT NULL,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'truncated')),
        error TEXT,
        tokens INTEGER NOT NULL,
        nn_similarity REAL,
        nn_chunk_id INTEGER,
        writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL,
        lexical_only INTEGER NOT NULL DEFAULT 0)""",
    _copy("chunk"),
    "DROP TABLE chunk",
    "ALTER TABLE chunk_new RENAME TO chunk",
    "CREATE INDEX chunk_by_source ON chunk (source_type, source_id, span_start)",
    # -- proposal --------------------------------------------------------------
    """CREATE TABLE proposal_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        op TEXT CHECK (op IN ('add', 'reinforce', 'revise', 'supersede', 'merge', 'noop',
            'quarantine')),
        type TEXT,
        targets TEXT NOT NULL DEFAULT '[]',
        target_snapshot TEXT,
        name TEXT,
        content TEXT,
        meta TEXT NOT NULL DEFAULT '{}',
        rationale TEXT,
        evidence TEXT NOT NULL DEFAULT '[]',
        origin TEXT NOT NULL CHECK (origin IN ('api', 'cli', 'file', 'consolidation',
            'proposer', 'mindstone-event')),
        proposer TEXT,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved',
            'applied', 'failed', 'rejected')),
        status_reason TEXT,
        revision INTEGER NOT NULL DEFAULT 0,
        ts TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        decided_at TEXT,
        actor TEXT,
        memory_id INTEGER REFERENCES memory(id) ON DELETE SET NULL,
        verified INTEGER,
        verification TEXT,
        external_id TEXT,
        kind TEXT,
        entry_id INTEGER REFERENCES entry(id) ON DELETE CASCADE,
        idem_key TEXT UNIQUE,
        writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL)""",
    _copy("proposal"),
    "DROP TABLE proposal",
    "ALTER TABLE proposal_new RENAME TO proposal",
    "CREATE INDEX proposal_by_entry ON proposal (entry_id)",
    "CREATE INDEX proposal_by_external ON proposal (external_id)",
    "CREATE INDEX proposal_by_status ON proposal (status, ts)",
    # -- recall_trace ----------------------------------------------------------
    """CREATE TABLE recall_trace_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts TEXT NOT NULL,
        query TEXT NOT NULL,
        role TEXT,
        project TEXT,
        channel TEXT NOT NULL DEFAULT 'private',
        historical INTEGER NOT NULL DEFAULT 0,
        settings TEXT NOT NULL DEFAULT '{}',
        latency_ms REAL,
        model TEXT,
        degraded INTEGER NOT NULL DEFAULT 0,
        origin TEXT NOT NULL DEFAULT 'lca-tui' CHECK (origin IN ('lca-tui', 'mindstone-event')),
        entry_id INTEGER REFERENCES entry(id) ON DELETE CASCADE,
        rerun_of INTEGER REFERENCES recall_trace(id) ON DELETE SET NULL,
        considered INTEGER NOT NULL DEFAULT 0,
        injected INTEGER NOT NULL DEFAULT 0,
        writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL)""",
    _copy("recall_trace"),
    "DROP TABLE recall_trace",
    "ALTER TABLE recall_trace_new RENAME TO recall_trace",
    "CREATE INDEX recall_trace_by_entry ON recall_trace (entry_id)",
    "CREATE INDEX recall_trace_by_ts ON recall_trace (ts)",
    # -- recall_candidate ------------------------------------------------------
    """CREATE TABLE recall_candidate_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        trace_id INTEGER NOT NULL REFERENCES recall_trace(id) ON DELETE CASCADE,
        rank INTEGER NOT NULL,
        source_type TEXT NOT NULL,
        source_id INTEGER,
        external_id TEXT,
        chunk_id INTEGER,
        session_id TEXT,
        seq INTEGER,
        kind TEXT,
        label TEXT,
        excerpt TEXT,
        masked INTEGER NOT NULL DEFAULT 0,
        s REAL, e REAL, t REAL, a REAL, q REAL, k REAL,
        cos REAL,
        lex REAL,
        contributions TEXT NOT NULL DEFAULT '{}',
        score REAL,
        decision TEXT NOT NULL CHECK (decision IN ('injected', 'below_floor', 'superseded',
            'policy_filtered', 'duplicate', 'over_budget', 'not_selected')),
        reason TEXT NOT NULL,
        hits INTEGER,
        prevented INTEGER,
        writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL,
        UNIQUE (trace_id, rank))""",
    _copy("recall_candidate"),
    "DROP TABLE recall_candidate",
    "ALTER TABLE recall_candidate_new RENAME TO recall_candidate",
    "CREATE INDEX recall_candidate_by_source ON recall_candidate (source_type, source_id)",
]
