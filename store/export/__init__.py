"""Export: a scope written as MindStone-Agent NDJSON plus a JSON manifest of memories,
evidence, lineage, checkpoints and lca-tui's own traces; every export is recorded.

May import: ``store.core``; ``store.recall.traces`` (the public trace records) through its
public names. The MindStone-Agent wire format is defined here (``wire_format``), and the
importer (``store.ingest.mindstone``) reads with it: ``store.ingest`` imports ``store.export``,
never the other way.
"""
