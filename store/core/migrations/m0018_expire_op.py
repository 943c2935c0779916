"""A proposal may be an ``expire`` (issue 30, retention): the gate's operation that marks a
memory past ``memory.retention_days.<type>`` ``expired``.

SQLite cannot change a CHECK constraint in place: the ``proposal`` table is rebuilt as in
migration 13 (create, copy every row by column name with ids kept, drop, rename, recreate the
indexes) with ``expire`` among the operations; ``AUTOINCREMENT`` kept, so ``sqlite_sequence``
still holds the highest id ever used. Foreign keys are off for the rebuild (the children —
checks, edits, decisions, links, flags — keep pointing at the same ids) and checked before the
commit.
"""

VERSION = 18
NAME = "expire_op"
FOREIGN_KEYS_OFF = True

_NAMES = ", ".join("""
    id op type targets target_snapshot name content meta rationale evidence origin
    proposer status status_reason revision ts updated_at decided_at actor memory_id
    verified verification external_id kind entry_id idem_key writer writer_version
    created_at""".split())

STATEMENTS = [
    """CREATE TABLE proposal_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        op TEXT CHECK (op IN ('add', 'reinforce', 'revise', 'supersede', 'merge', 'noop',
            'quarantine', 'expire')),
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
    f"INSERT INTO proposal_new ({_NAMES}) SELECT {_NAMES} FROM proposal",
    "DROP TABLE proposal",
    "ALTER TABLE proposal_new RENAME TO proposal",
    "CREATE INDEX proposal_by_entry ON proposal (entry_id)",
    "CREATE INDEX proposal_by_external ON proposal (external_id)",
    "CREATE INDEX proposal_by_status ON proposal (status, ts)",
]

# On a server the ``proposal`` table is the SQLModel class's (``create_all``), which declares no
# CHECK on ``op``: ``expire`` is accepted there already, nothing to change.
POSTGRES_STATEMENTS: list[str] = []
