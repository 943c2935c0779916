"""The app's screens, in DESIGN order: number key, mode name, title, and the Screen class as
"module:Class" (None until its capability lands: the app then shows a plain "not built yet"
screen, never placeholder numbers)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScreenSpec:
    key: str
    mode: str
    title: str
    target: str | None
    summary: str


SCREENS: tuple[ScreenSpec, ...] = (
    ScreenSpec("1", "overview", "Overview", "screens.overview:OverviewScreen",
               "The store at a glance: path, size, counts, embedder, latest sessions."),
    ScreenSpec("2", "context", "Context", "screens.context:ContextScreen",
               "Live context pressure: tokens in the window against the thresholds."),
    ScreenSpec("3", "recall", "Recall", "screens.recall:RecallScreen",
               "Recall traces: every candidate's six score terms and its decision."),
    ScreenSpec("4", "proposals", "Proposals", "screens.proposals:ProposalsScreen",
               "The approval queue for consolidation proposals."),
    ScreenSpec("5", "memories", "Memories", "screens.memories:MemoriesScreen",
               "Durable memories and their supersession chains."),
    ScreenSpec("6", "health", "Health", "screens.health:HealthScreen",
               "Health signals: the continuity machinery that silently stopped working."),
    ScreenSpec("7", "privacy", "Privacy", "screens.privacy:PrivacyScreen",
               "Redact and erase with a preview of the closure, and proof afterwards."),
    ScreenSpec("8", "transcript", "Transcript", "screens.transcript:TranscriptScreen",
               "Sessions and their entries, verbatim; search."),
)
