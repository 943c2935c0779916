"""Context pressure (LCA §4.5, §6.2): snapshots of the live window, prune events and the
entries that left, compactions, and handoffs.

A row with ``source_entry_id`` set was derived from a stored entry and is rebuilt by
``reindex``; one with ``source_entry_id`` NULL was recorded by a harness and is history, kept.
Window size and thresholds are NULL when the harness did not report them: readers then apply
the settings ``context.*`` in force.
"""

VERSION = 2
NAME = "context"

_WHO = "writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL"

STATEMENTS = [
    f"""CREATE TABLE context_snapshot (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES session(id),
        agent TEXT NOT NULL DEFAULT 'main',
        ts TEXT NOT NULL,
        window_tokens INTEGER,
        used_tokens INTEGER NOT NULL,
        segments TEXT,
        checkpoint_threshold INTEGER,
        auto_compact_threshold INTEGER,
        event TEXT NOT NULL DEFAULT 'turn'
            CHECK (event IN ('turn', 'prune', 'checkpoint', 'compaction')),
        source_entry_id INTEGER REFERENCES entry(id) ON DELETE CASCADE,
        message_id TEXT,
        {_WHO},
        UNIQUE (session_id, agent, message_id))""",
    "CREATE INDEX context_snapshot_by_series ON context_snapshot (session_id, agent, ts, id)",
    "CREATE INDEX context_snapshot_by_source ON context_snapshot (source_entry_id)",
    f"""CREATE TABLE prune_event (
        id INTEGER PRIMARY KEY,
        snapshot_id INTEGER REFERENCES context_snapshot(id) ON DELETE CASCADE,
        session_id TEXT NOT NULL REFERENCES session(id),
        agent TEXT NOT NULL DEFAULT 'main',
        ts TEXT NOT NULL,
        tokens_before INTEGER,
        tokens_after INTEGER,
        entries_pruned INTEGER NOT NULL DEFAULT 0,
        preserved INTEGER,
        verified INTEGER,
        mode TEXT,
        source_entry_id INTEGER REFERENCES entry(id) ON DELETE CASCADE,
        {_WHO})""",
    "CREATE INDEX prune_event_by_series ON prune_event (session_id, agent, ts, id)",
    "CREATE INDEX prune_event_by_source ON prune_event (source_entry_id)",
    """CREATE TABLE prune_entry (
        prune_id INTEGER NOT NULL REFERENCES prune_event(id) ON DELETE CASCADE,
        ref TEXT,
        entry_id INTEGER REFERENCES entry(id) ON DELETE SET NULL)""",
    "CREATE INDEX prune_entry_by_prune ON prune_entry (prune_id)",
    "CREATE INDEX prune_entry_by_entry ON prune_entry (entry_id)",
    f"""CREATE TABLE handoff (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES session(id),
        agent TEXT NOT NULL DEFAULT 'main',
        ts TEXT NOT NULL,
        action TEXT NOT NULL DEFAULT 'written' CHECK (action IN ('written', 'replayed')),
        path TEXT,
        sha256 TEXT,
        token_estimate INTEGER,
        source_entry_id INTEGER REFERENCES entry(id) ON DELETE CASCADE,
        {_WHO})""",
    "CREATE INDEX handoff_by_series ON handoff (session_id, agent, ts, id)",
    "CREATE INDEX handoff_by_source ON handoff (source_entry_id)",
    f"""CREATE TABLE compaction (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES session(id),
        agent TEXT NOT NULL DEFAULT 'main',
        ts TEXT NOT NULL,
        pre_tokens INTEGER,
        trigger TEXT,
        summary_entry_id INTEGER REFERENCES entry(id) ON DELETE SET NULL,
        handoff_id INTEGER REFERENCES handoff(id) ON DELETE SET NULL,
        handoff_path TEXT,
        source_entry_id INTEGER REFERENCES entry(id) ON DELETE CASCADE,
        {_WHO})""",
    "CREATE INDEX compaction_by_series ON compaction (session_id, agent, ts, id)",
    "CREATE INDEX compaction_by_source ON compaction (source_entry_id)",
    "CREATE INDEX checkpoint_by_session_ts ON checkpoint (session_id, ts)",
]
