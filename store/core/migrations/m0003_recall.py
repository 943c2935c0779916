"""Recall traces (LCA §5): one row per recall with the settings in force, and one row per
candidate with its six terms, weighted contributions, score, rank and decision.

A candidate stores pointers and a short excerpt; the excerpt and label are NULL for secret or
policy-filtered candidates (trace non-leakage). Traces derived from a harness's
``memory_recall_injected`` events have origin 'mindstone-event' and the entry they came from;
``reindex`` rebuilds those, while lca-tui's own traces are history and are kept. No foreign key
points at ``chunk``: chunks are rebuilt by ``reindex``, a trace must survive that.
"""

VERSION = 3
NAME = "recall"

_WHO = "writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL"

STATEMENTS = [
    f"""CREATE TABLE recall_trace (
        id INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        query TEXT NOT NULL,
        role TEXT,
        project TEXT,
        channel TEXT NOT NULL DEFAULT 'private',
        historical INTEGER NOT NULL DEFAULT 0,
        settings TEXT NOT NULL DEFAULT '{{}}',
        latency_ms REAL,
        model TEXT,
        degraded INTEGER NOT NULL DEFAULT 0,
        origin TEXT NOT NULL DEFAULT 'lca-tui' CHECK (origin IN ('lca-tui', 'mindstone-event')),
        entry_id INTEGER REFERENCES entry(id) ON DELETE CASCADE,
        rerun_of INTEGER REFERENCES recall_trace(id) ON DELETE SET NULL,
        considered INTEGER NOT NULL DEFAULT 0,
        injected INTEGER NOT NULL DEFAULT 0,
        {_WHO})""",
    "CREATE INDEX recall_trace_by_ts ON recall_trace (ts)",
    "CREATE INDEX recall_trace_by_entry ON recall_trace (entry_id)",
    f"""CREATE TABLE recall_candidate (
        id INTEGER PRIMARY KEY,
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
        contributions TEXT NOT NULL DEFAULT '{{}}',
        score REAL,
        decision TEXT NOT NULL CHECK (decision IN ('injected', 'below_floor', 'superseded',
            'policy_filtered', 'duplicate', 'over_budget', 'not_selected')),
        reason TEXT NOT NULL,
        hits INTEGER,
        prevented INTEGER,
        {_WHO},
        UNIQUE (trace_id, rank))""",
    "CREATE INDEX recall_candidate_by_source ON recall_candidate (source_type, source_id)",
    f"""CREATE TABLE recall_feedback (
        id INTEGER PRIMARY KEY,
        trace_id INTEGER NOT NULL REFERENCES recall_trace(id) ON DELETE CASCADE,
        candidate_id INTEGER NOT NULL REFERENCES recall_candidate(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('used', 'prevented')),
        ts TEXT NOT NULL,
        {_WHO},
        UNIQUE (candidate_id, kind))""",
]
