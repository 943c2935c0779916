"""Adjacent support in recall: each trace candidate records ``adj``, the best own S of the
transcript entries just before and after it, which raised its S (``recall.adjacent_weight``)."""

VERSION = 15
NAME = "recall_adjacent"

STATEMENTS = [
    "ALTER TABLE recall_candidate ADD COLUMN adj REAL",
]
