"""One way between screens: a screen (or the palette) posts ``OpenRecord(ref)``; the app
switches to the screen whose registry entry opens ``ref.kind`` and hands it the reference
through the ``Opens`` protocol. No screen calls another by name, and nothing reads a screen's
attribute by name (``getattr``): the guided tour asks which record a screen shows through
``Shows`` and fills in a scope through ``PreviewsScope`` (``tests/project/
test_screen_boundaries.py`` holds it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from textual.message import Message

from store import RecordRef


@dataclass
class OpenRecord(Message):
    """Show ``ref`` on the screen that opens its kind (handled by the app)."""

    ref: RecordRef


@runtime_checkable
class Opens(Protocol):
    """A screen that shows records by reference: ``OPENS`` says which kinds (the registry's
    ``opens`` for its mode says the same, a test holds them equal), ``open_record`` how."""

    OPENS: ClassVar[frozenset[str]]

    def open_record(self, ref: RecordRef) -> None:
        """Select and show ``ref`` (its data loads in the screen's own workers)."""


@runtime_checkable
class Shows(Protocol):
    """A screen that says which record it has selected (the guided tour waits until the
    record it opened is the one shown)."""

    def shown(self) -> RecordRef | None:
        """The record selected on the screen now (None: none yet)."""


@runtime_checkable
class PreviewsScope(Protocol):
    """A screen that previews what a scope holds before acting on it (Privacy; the guided
    tour's erase step fills one in)."""

    def preview_scope(self, kind: str, value: str) -> None:
        """Fill in the scope (``kind`` of the kind box, ``value``) and show what it holds."""
