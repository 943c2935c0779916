"""A supersession link may say it was made by an erasure (issue 24, after review).

Erasing the middle of a chain (A → B → C) used to leave two chains of one: ``chain`` showed
neither side of the gap and nothing said a member had been erased. The erasure now keeps the
chain whole with a link A → C of source ``erasure`` (ids only: nothing of what was erased), so
``chain`` shows both sides and marks the gap. SQLite cannot change a CHECK constraint in place:
the table is rebuilt as in migration 13 (create, copy every row by column name with ids kept,
drop, rename, recreate the index), now with ``AUTOINCREMENT``: the erasure deletes the links
of the erased memory and writes the bridge in one transaction, and the bridge must not take
the id of a link just erased (the erasure's verification counts the erased rows by id).
Nothing references ``supersession_link``.
"""

VERSION = 16
NAME = "erasure_links"
FOREIGN_KEYS_OFF = True

_NAMES = "id, old_id, new_id, proposal_id, ts, source, writer, writer_version, created_at"

STATEMENTS = [
    """CREATE TABLE supersession_link_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        old_id INTEGER NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        new_id INTEGER NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        proposal_id INTEGER REFERENCES proposal(id) ON DELETE SET NULL,
        ts TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('proposal', 'import', 'pointer', 'erasure')),
        writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL,
        UNIQUE (old_id, new_id))""",
    f"INSERT INTO supersession_link_new ({_NAMES}) SELECT {_NAMES} FROM supersession_link",
    "DROP TABLE supersession_link",
    "ALTER TABLE supersession_link_new RENAME TO supersession_link",
    "CREATE INDEX supersession_link_by_new ON supersession_link (new_id)",
]
