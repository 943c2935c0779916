"""One way between screens: a screen (or the palette) posts ``OpenRecord(ref)``; the app
switches to the screen whose registry entry opens ``ref.kind`` and hands it the reference
through the ``Opens`` protocol. No screen calls another by name."""

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
