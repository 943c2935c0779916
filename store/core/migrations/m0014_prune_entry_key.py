"""``prune_entry`` gets a primary key of its own (issue 21).

Until now its rows were addressed by SQLite's implicit ``rowid``, which its model declared as
its key: a table only SQLite could hold. It is rebuilt with ``id INTEGER PRIMARY KEY`` (in
SQLite an alias of the rowid), each row keeping its rowid as its id, so the order of a prune's
entries (by id, as before by rowid) and every row are unchanged. No table references
``prune_entry``: the rebuild runs in an ordinary transaction.
"""

VERSION = 14
NAME = "prune_entry_key"

STATEMENTS = [
    """CREATE TABLE prune_entry_new (
        id INTEGER PRIMARY KEY,
        prune_id INTEGER NOT NULL REFERENCES prune_event(id) ON DELETE CASCADE,
        ref TEXT,
        entry_id INTEGER REFERENCES entry(id) ON DELETE SET NULL)""",
    "INSERT INTO prune_entry_new (id, prune_id, ref, entry_id) "
    "SELECT rowid, prune_id, ref, entry_id FROM prune_entry",
    "DROP TABLE prune_entry",
    "ALTER TABLE prune_entry_new RENAME TO prune_entry",
    "CREATE INDEX prune_entry_by_prune ON prune_entry (prune_id)",
    "CREATE INDEX prune_entry_by_entry ON prune_entry (entry_id)",
]
