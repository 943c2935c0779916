"""What imports leave out, and Claude Code's session titles.

- ``import_skip``: per imported file, line type and reason (``by-design``: known housekeeping;
  ``unknown``: a type no importer knows yet), how many lines were left out, so ``stats`` can
  show them after the import report is gone. A file read again from its start replaces its rows.
- ``claude_code_summary``: Claude Code's ``summary`` lines (``{summary, leafUuid}``). They may
  sit in another file than the session whose leaf they name, and arrive before it; the latest
  one naming a leaf of a session is that session's title.
- ``entry_by_uuid``: finds the entry of a line id (a summary's leaf, a sidechain's parent).
"""

VERSION = 9
NAME = "import_skips"

_WHO = "writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL"

STATEMENTS = [
    f"""CREATE TABLE import_skip (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL,
        line_type TEXT NOT NULL,
        reason TEXT NOT NULL CHECK (reason IN ('by-design', 'unknown')),
        count INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        {_WHO},
        UNIQUE (path, line_type, reason))""",
    f"""CREATE TABLE claude_code_summary (
        id INTEGER PRIMARY KEY,
        leaf_uuid TEXT NOT NULL,
        summary TEXT NOT NULL,
        path TEXT NOT NULL,
        line INTEGER NOT NULL,
        {_WHO},
        UNIQUE (path, line))""",
    "CREATE INDEX claude_code_summary_by_leaf ON claude_code_summary (leaf_uuid)",
    "CREATE INDEX entry_by_uuid ON entry (uuid)",
]
