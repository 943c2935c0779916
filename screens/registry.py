"""The app's screens, in DESIGN order: number key, mode name, title, the Screen class as
"module:Class", and the kinds of record (``store.RecordRef.kind``) the screen opens.

``opens`` is the one table from a record to the screen that shows it: the app routes an
``OpenRecord`` message by it, and ``lca-tui health --show --json`` names a row's screen from
it. A screen that opens a kind implements ``screens.navigation.Opens``.
"""

from __future__ import annotations

from dataclasses import dataclass

from store import Subject


@dataclass(frozen=True)
class ScreenSpec:
    key: str
    mode: str
    title: str
    target: str
    summary: str
    opens: frozenset[str] = frozenset()


SCREENS: tuple[ScreenSpec, ...] = (
    ScreenSpec("1", "overview", "Overview", "screens.overview:OverviewScreen",
               "The store at a glance: path, size, counts, embedder, latest sessions."),
    ScreenSpec("2", "context", "Context", "screens.context:ContextScreen",
               "Live context pressure: tokens in the window against the thresholds.",
               frozenset({"series"})),
    ScreenSpec("3", "recall", "Recall", "screens.recall:RecallScreen",
               "Recall traces: every candidate's six score terms and its decision.",
               frozenset({"trace"})),
    ScreenSpec("4", "proposals", "Proposals", "screens.proposals:ProposalsScreen",
               "The approval queue for consolidation proposals.", frozenset({"proposal"})),
    ScreenSpec("5", "memories", "Memories", "screens.memories:MemoriesScreen",
               "Durable memories and their supersession chains.", frozenset({"memory"})),
    ScreenSpec("6", "health", "Health", "screens.health:HealthScreen",
               "Health signals: the continuity machinery that silently stopped working."),
    ScreenSpec("7", "privacy", "Privacy", "screens.privacy:PrivacyScreen",
               "Redact and erase with a preview of the closure, and proof afterwards."),
    ScreenSpec("8", "transcript", "Transcript", "screens.transcript:TranscriptScreen",
               "Sessions and their entries, verbatim; search.", frozenset({"session"})),
)


def screen_for(kind: str) -> ScreenSpec | None:
    """The screen that opens records of ``kind`` (None: no screen shows it)."""
    return next((spec for spec in SCREENS if kind in spec.opens), None)


ABOUT: dict[Subject, str] = {
    "store": "overview", "session": "transcript", "series": "context", "trace": "recall",
    "proposal": "proposals", "memory": "memories", "signal": "health", "erasure": "privacy"}
"""The screen (its mode) that shows each part of the store (``store.Subject``): a tour step
and a widget asking to show more name a subject, the app maps it here. A record kind's
screen is the one that opens it (a test holds ``ABOUT`` and ``opens`` in agreement)."""


def screen_about(subject: Subject) -> ScreenSpec:
    """The screen that shows ``subject``."""
    return next(spec for spec in SCREENS if spec.mode == ABOUT[subject])
