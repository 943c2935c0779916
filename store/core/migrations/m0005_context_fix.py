"""Context pressure, live updates: a snapshot updated in place (a repeated message id, e.g. a
message whose lines arrived in two import batches) gets the next ``revision``, so that a live
reader that remembers the highest id and revision it has seen also sees updated rows. New rows
have revision 0 (their id is new)."""

VERSION = 5
NAME = "context_fix"

STATEMENTS = [
    "ALTER TABLE context_snapshot ADD COLUMN revision INTEGER NOT NULL DEFAULT 0",
    "CREATE INDEX context_snapshot_by_revision ON context_snapshot (revision)",
]
