"""The live harness (issue 14): Claude Code hooks, the warm daemon, and what they record.

Owns: ``hooks install|uninstall|status`` on Claude Code's ``settings.json`` (``settings_file``),
``lca-tui hook EVENT`` (``hook``: import what a live session wrote, Auto Recall before each
prompt, checkpoints before a compaction and at the end), the ``hook_run`` table (``models``),
the failure log used when the store cannot be opened and the ``hook_failures`` signal
(``failures``), ``lca-tui serve`` (``daemon``) and its client (``client``), and where their
files live (``paths``).

May import: ``store.core`` and the public names of ``store.ingest`` and ``store.recall``; the
consolidation pass is reached through the store's own ``consolidate`` when it has one.
``paths`` and ``client`` import the standard library only, so that a hook answered by the
daemon starts no heavier than Python itself.
"""
