"""Health scans (LCA §6.1, §10.6): every scan with its worst status, and each signal's status,
value, thresholds, explanation and offending row ids, so that every signal has a trend.

Rows hold figures, ids and writer names, never stored content: an erasure has nothing to
remove here.
"""

VERSION = 7
NAME = "health"

_WHO = "writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL"

STATEMENTS = [
    f"""CREATE TABLE health_scan (
        id INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'warn', 'fail', 'unknown')),
        duration_ms REAL,
        {_WHO})""",
    "CREATE INDEX health_scan_by_ts ON health_scan (ts)",
    f"""CREATE TABLE health_signal (
        id INTEGER PRIMARY KEY,
        scan_id INTEGER NOT NULL REFERENCES health_scan(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'warn', 'fail', 'unknown')),
        value REAL,
        warn REAL,
        fail REAL,
        explanation TEXT NOT NULL,
        offending_count INTEGER NOT NULL DEFAULT 0,
        offending TEXT NOT NULL DEFAULT '[]',
        {_WHO},
        UNIQUE (scan_id, name))""",
    "CREATE INDEX health_signal_by_name ON health_signal (name, scan_id)",
]
