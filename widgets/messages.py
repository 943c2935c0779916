"""What a widget asks of the app: ``Show(subject)`` shows the screen about a part of the store
(``store.Subject``: the health signals, a context series), never a screen by name; the app maps
the subject to its screen (``screens.registry.ABOUT``)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from store import Subject


@dataclass
class Show(Message):
    """Show the screen about ``subject`` (handled by the app)."""

    subject: Subject
