"""The continuity store: pure Python, no UI imports anywhere below this package.

Packages by capability, each saying in its ``__init__`` what it owns and may import:
``core`` (the bottom: db, migrations, models, settings, writes, index, embedder, vec/FTS),
``ingest``, ``recall``, ``context``, ``export``, ``health``. ``facade.Store`` is the top: the harness API
with every capability's operations. ``open_store`` is the entry point.
"""

from __future__ import annotations

from store.facade import Store, open_store

__all__ = ["Store", "open_store"]
