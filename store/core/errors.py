"""Errors the store raises; each message says what to do."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class StoreTooNew(StoreError):
    """The store file was written by a newer lca-tui than this one."""


class StoreLocked(StoreError):
    """Another process holds the store's write lock for longer than the busy timeout."""


class NotFound(StoreError):
    """A record named on the command line or in the API does not exist."""
