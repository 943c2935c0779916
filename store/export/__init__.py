"""Export: a scope written as MindStone-Agent NDJSON plus a JSON manifest of memories,
evidence, lineage, checkpoints and lca-tui's own traces; every export is recorded.

May import: ``store.core``; ``store.ingest.mindstone`` (the wire format) and
``store.recall.traces`` (the public trace records) through their public names.
"""
