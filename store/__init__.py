"""The continuity store: pure Python, no UI imports anywhere below this package.

Import what you need from the submodules; ``open_store`` is the entry point.
"""

from __future__ import annotations

from store.facade import Store, open_store

__all__ = ["Store", "open_store"]
