"""The consolidation pass: a checkpoint records the highest entry it covers, so the next pass
over a session starts after it (trigger ``consolidation``)."""

VERSION = 11
NAME = "consolidation"

STATEMENTS = [
    "ALTER TABLE checkpoint ADD COLUMN through_entry_id INTEGER",
]
