"""Health signals (LCA §6.1, §10.6, Appendix D): what silently stopped working.

Owns the signal registry (``registry``: one ``SignalSpec`` per signal, a module per group —
``signals_index``, ``signals_memory``, ``signals_context``, ``signals_writers``), scans and
their storage and trends (``scan``), the drill-down from offending rows to the records that
show them (``drill``), the fixes with their previews (``fixes``: compact duplicates, re-embed,
index lagging sources) and the Appendix D incidents as stored rows for the demo
(``incidents``).

May import: ``store.core``; by their public names ``store.context`` (its models and
``series`` for compactions), ``store.governance`` (``integrity``, ``list_proposals``),
``store.recall.terms`` (the experiential weight that orders the critical set),
``store.recall.models`` (the compaction re-points recall candidates) and
``store.ingest`` (the demo incidents import memory files).
"""
