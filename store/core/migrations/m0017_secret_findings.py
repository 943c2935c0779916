"""Secrets caught at capture (issue 30): what the detector found in an entry or a memory.

A finding row records the kind of value found (``aws-key``, ``private-key``, ``password-url``,
``private-span`` for a ``<private>`` span redacted at import, ...) and how many — never the
value, nor where in the text it was. ``via`` says when it was found: as the record was
written (``write``) or by ``lca-tui scan-secrets`` over a store imported before the detector
existed (``scan``); ``store_meta`` keys ``secrets.unscanned_*_through`` keep the highest
entry and memory ids written before this migration, until a scan has run.
``mark --unmark-detected`` keeps the row and stamps ``dismissed_at`` /
``dismissed_by`` (a false positive: the record is no longer secret, and no later scan marks
it again). No schema change is needed for the index: the store rewrites a queued secret
entry's ``embed_queue_fts`` row (which migration 12's trigger copies from the stored text)
with placeholders in place of the values (``store.core.vec.mask_queue_fts``).
"""

VERSION = 17
NAME = "secret_findings"

STATEMENTS = [
    """CREATE TABLE secret_finding (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source_type TEXT NOT NULL CHECK (source_type IN ('entry', 'memory')),
        source_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 1,
        via TEXT NOT NULL CHECK (via IN ('write', 'scan')),
        found_at TEXT NOT NULL,
        dismissed_at TEXT,
        dismissed_by TEXT,
        writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL)""",
    "CREATE INDEX secret_finding_by_source ON secret_finding (source_type, source_id)",
    "CREATE INDEX secret_finding_by_time ON secret_finding (found_at)",
    # what was written before the detector existed and was never scanned: the health signal
    # ``secrets_found`` names it until ``lca-tui scan-secrets`` runs (which drops the keys)
    """INSERT INTO store_meta (key, value) SELECT 'secrets.unscanned_entries_through',
        CAST(MAX(id) AS TEXT) FROM entry HAVING COUNT(*) > 0""",
    """INSERT INTO store_meta (key, value) SELECT 'secrets.unscanned_memories_through',
        CAST(MAX(id) AS TEXT) FROM memory HAVING COUNT(*) > 0""",
]
