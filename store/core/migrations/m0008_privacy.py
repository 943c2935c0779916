"""Privacy (LCA §12.2): entry and session sensitivity, a review flag for memories that lost
part of their evidence, erasure fingerprints, content-free tombstones, and the stored
verification of every erasure or redaction, probe by probe.

An erasure fingerprint is a keyed hash (HMAC-SHA256 with the per-store secret kept in
``store_meta``) of what an importer would write again: an entry's idempotency key, a memory's
content hash, a recall trace's time and query (restored from an export). Without the secret it
reveals nothing; with it, every importer refuses to bring
erased content back. A tombstone holds the scope kind, counts, time and actor, never content
and never a plain hash of content.
"""

VERSION = 8
NAME = "privacy"

_WHO = "writer TEXT NOT NULL, writer_version TEXT NOT NULL, created_at TEXT NOT NULL"
_LEVEL = "CHECK (sensitivity IN ('public', 'private', 'secret'))"

STATEMENTS = [
    f"ALTER TABLE session ADD COLUMN sensitivity TEXT NOT NULL DEFAULT 'public' {_LEVEL}",
    f"ALTER TABLE entry ADD COLUMN sensitivity TEXT NOT NULL DEFAULT 'public' {_LEVEL}",
    "ALTER TABLE memory ADD COLUMN review_reason TEXT",
    f"""CREATE TABLE tombstone (
        id INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('erase', 'redact')),
        scope_kind TEXT NOT NULL CHECK (scope_kind IN ('session', 'entry', 'memory', 'match',
            'regex')),
        counts TEXT NOT NULL DEFAULT '{{}}',
        actor TEXT NOT NULL,
        reason TEXT,
        verified INTEGER,
        {_WHO})""",
    f"""CREATE TABLE erasure_fingerprint (
        fingerprint TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('entry', 'memory', 'trace')),
        tombstone_id INTEGER,
        {_WHO})""",
    f"""CREATE TABLE erasure_verification (
        id INTEGER PRIMARY KEY,
        tombstone_id INTEGER NOT NULL REFERENCES tombstone(id) ON DELETE CASCADE,
        ts TEXT NOT NULL,
        passed INTEGER NOT NULL,
        duration_ms REAL,
        {_WHO})""",
    "CREATE INDEX erasure_verification_by_tombstone ON erasure_verification (tombstone_id)",
    f"""CREATE TABLE erasure_probe (
        id INTEGER PRIMARY KEY,
        verification_id INTEGER NOT NULL REFERENCES erasure_verification(id)
            ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        name TEXT NOT NULL,
        passed INTEGER NOT NULL,
        detail TEXT NOT NULL,
        {_WHO},
        UNIQUE (verification_id, seq))""",
]
