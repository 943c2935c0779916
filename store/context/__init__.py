"""Context pressure (LCA §4.5, §6.2): snapshots, prunes, compactions, handoffs and
checkpoints — recorded through the API (``api``), derived from stored entries (``derive``),
and read as series (``series``).

May import: ``store.core``.
"""
