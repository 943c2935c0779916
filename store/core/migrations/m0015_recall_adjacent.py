"""Adjacent support in recall: each trace candidate records ``adj``, the best own S of the
transcript entries just before and after it (``recall.adjacent_weight``: S is raised towards
it when it is higher than the candidate's own; None when the candidate has no neighbour)."""

VERSION = 15
NAME = "recall_adjacent"

STATEMENTS = [
    "ALTER TABLE recall_candidate ADD COLUMN adj REAL",
]
