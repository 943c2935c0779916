"""Recall (LCA §5): the candidate pool, the six terms, the decisions, traces and feedback,
MindStone ``memory_recall_injected`` events read as traces, and ``calibrate``.

May import: ``store.core``, and ``store.governance.files`` (feedback rewrites a bound memory
file). ``run.recall`` is the entry point.
"""
