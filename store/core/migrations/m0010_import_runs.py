"""Import runs: every ``lca-tui ingest`` (or ``Store.ingest``) is recorded when it starts, and
each problem it meets (file, line, field, reason) is stored as it is met, in the same
transaction as the import position of the file it concerns. So ``lca-tui ingest --problems``
and ``lca-tui imports`` show a batch's problems again later, even when the batch was aborted
(a run still ``running`` whose process is gone was aborted)."""

VERSION = 10
NAME = "import_runs"

_WHO = "writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL"

STATEMENTS = [
    f"""CREATE TABLE import_run (
        id INTEGER PRIMARY KEY,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done',
            'aborted')),
        paths TEXT NOT NULL DEFAULT '[]',
        format TEXT,
        pid INTEGER,
        host TEXT,
        counts TEXT NOT NULL DEFAULT '{{}}',
        error TEXT,
        {_WHO})""",
    f"""CREATE TABLE import_problem (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES import_run(id) ON DELETE CASCADE,
        kind TEXT NOT NULL DEFAULT 'problem' CHECK (kind IN ('problem', 'note')),
        path TEXT NOT NULL,
        line INTEGER,
        field TEXT,
        reason TEXT NOT NULL,
        {_WHO})""",
    "CREATE INDEX import_problem_by_run ON import_problem (run_id, id)",
]
