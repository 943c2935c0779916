"""The continuity store: pure Python, no UI imports anywhere below this package.

Packages by capability, each saying in its ``__init__`` what it owns and may import:
``core`` (the bottom: db, migrations, models, settings, writes, index, embedder, vec/FTS),
``ingest``, ``recall``, ``context``, ``export``, ``governance``, ``health``, ``privacy``,
``harness``. ``facade.Store`` is the top: the harness API with every capability's operations
(documented in ``store/facade.py``). ``open_store`` is the entry point; ``NewSession`` /
``NewEntry`` are what a harness appends; a ``RecordRef`` (kind, id) is how the store points
at a record (the app opens it on the screen that shows that kind).

These names are imported on first use, so that a module such as ``store.harness.client``
(what a hook runs when the daemon answers it) costs no more than itself: importing the facade
pulls in SQLAlchemy and NumPy (~0.45 s).

Importing ``store`` itself (``from store import open_store`` / ``Store``) is importing the
facade: capabilities must not (they take a ``store.core.base.StoreBase``). Only what sits on top
of the facade, like the CLI, may: ``store.harness``, ``store.bench`` and ``store.demo``.
Capabilities import ``store.core`` and other capabilities' public names; a ``_name`` is private
to its module. ``tests/project/test_import_graph.py`` enforces all of this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from store.core.records import RecordKind, RecordRef
    from store.core.writes import NewEntry, NewSession
    from store.facade import Store, open_store

__all__ = ["NewEntry", "NewSession", "RecordKind", "RecordRef", "Store", "open_store"]


def __getattr__(name: str) -> Any:
    if name in ("Store", "open_store"):
        from store import facade

        return getattr(facade, name)
    if name in ("NewEntry", "NewSession"):
        from store.core import writes

        return getattr(writes, name)
    if name in ("RecordKind", "RecordRef"):
        from store.core import records

        return getattr(records, name)
    raise AttributeError(f"module 'store' has no attribute {name!r}")
