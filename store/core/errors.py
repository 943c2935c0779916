"""Errors the store raises; each message says what to do."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class StoreTooNew(StoreError):
    """The store file was written by a newer lca-tui than this one."""


class StoreLocked(StoreError):
    """Another process holds the store's write lock for longer than the busy timeout."""


class ReadOnly(StoreError):
    """A write asked of a store opened read-only (``--read-only``, ``store.read_only``)."""

    def __init__(self, action: str = "writing to the store") -> None:
        self.action = action
        super().__init__(f"read-only: {action} is refused (the store was opened with "
                         "--read-only; open it without to change it)")


class NotFound(StoreError):
    """A record named on the command line or in the API does not exist."""


class StoreUnavailable(StoreError):
    """SQLite refused to read or write the store (locked past every retry, read-only, disk
    full, corrupt, ...): ``reason`` is SQLite's own words. ``StoreBase.read`` / ``write`` raise
    it in place of SQLAlchemy's ``OperationalError``, so no caller needs SQLAlchemy's errors."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"the store could not be used: {reason}")
