"""Recall (LCA §5): the candidate pool, the six terms, the decisions, traces and feedback,
MindStone ``memory_recall_injected`` events read as traces, and ``calibrate``.

May import: ``store.core`` only. Feedback on a trace is a governed memory write and lives in
``store.governance.feedback`` (governance reads recall's traces; recall never imports
governance). ``run.recall`` is the entry point.
"""
