"""Exports: every export lca-tui wrote (time, scope, path, files, counts) and what each holds,
so that a privacy closure can name the exports that contain an erased record."""

VERSION = 4
NAME = "export"

_WHO = "writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL"

STATEMENTS = [
    f"""CREATE TABLE export (
        id INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        scope TEXT NOT NULL,
        path TEXT NOT NULL,
        files TEXT NOT NULL DEFAULT '[]',
        counts TEXT NOT NULL DEFAULT '{{}}',
        format TEXT NOT NULL DEFAULT 'lca-export',
        {_WHO})""",
    f"""CREATE TABLE export_item (
        export_id INTEGER NOT NULL REFERENCES export(id) ON DELETE CASCADE,
        item_type TEXT NOT NULL CHECK (item_type IN ('session', 'entry', 'memory',
            'evidence')),
        item_id TEXT NOT NULL,
        file TEXT,
        {_WHO},
        PRIMARY KEY (export_id, item_type, item_id))""",
    "CREATE INDEX export_item_by_item ON export_item (item_type, item_id)",
]
