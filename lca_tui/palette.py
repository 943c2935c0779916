"""Command-palette entries: every screen by name (with its number key), then help; and the
store's sessions, traces and memories by id prefix or title.

The screens are given to the palette through ``App.get_system_commands`` so they come first in
the list, above Textual's own (theme, keys, screenshot, quit); ``StoreCommands`` is a provider
of its own, read from the store in a thread when the palette opens.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from textual.app import SystemCommand
from textual.command import Hit, Hits, Matcher, Provider
from textual.content import Content

from screens.base import StoreScreen
from screens.registry import SCREENS
from store import RecordRef, one_line, plural, visible, when
from widgets.fmt import agents_mark, project_tail

if TYPE_CHECKING:
    from lca_tui.app import LcaApp


def screen_commands(app: LcaApp) -> Iterator[SystemCommand]:
    """One command per screen of the registry, and help for the current screen."""
    for spec in SCREENS:
        yield SystemCommand(f"{spec.title} screen ({spec.key})", spec.summary,
                            partial(app.switch_mode, spec.mode))
    yield SystemCommand("Help for this screen (?)", "What this screen shows, and its keys.",
                        app.action_help)


@dataclass(frozen=True)
class Target:
    """One thing the palette can open: what is matched, what it opens, a line of help."""

    text: str
    ident: str
    help: str
    open: Callable[[], Awaitable[None]]


class StoreCommands(Provider):
    """Sessions, recall traces and memories, found by id prefix or by title (project, query,
    memory name); choosing one opens it on its screen."""

    TRACES = 200

    async def startup(self) -> None:
        self.targets = await asyncio.to_thread(self._read)

    def _read(self) -> list[Target]:
        app: LcaApp = self.app  # type: ignore[assignment]
        store = app.store
        out: list[Target] = []
        for s in store.sessions():
            title = one_line(s.title or project_tail(s.project, 40), 60)
            out.append(Target(f"session {s.id} {title}", s.id,
                              f"{when(s.started_at)} · {plural(s.entries, 'entry', 'entries')}"
                              f" · {agents_mark(s)} · opens it on Transcript",
                              partial(app.open_record, RecordRef("session", s.id))))
        for t in store.traces(self.TRACES):
            out.append(Target(f"trace {t.id} {one_line(t.query, 70)}", str(t.id),
                              f"{when(t.ts, with_seconds=True)} · {t.origin} · injected "
                              f"{t.injected} of {t.considered} · opens it on Recall",
                              partial(app.open_record, RecordRef("trace", int(t.id or 0)))))
        for m in store.memories():
            out.append(Target(f"memory {m.id} {one_line(m.name or '', 60)}", str(m.id),
                              f"{m.type or 'memory'} · {m.status} · "
                              f"{one_line(m.description or '', 60)}",
                              partial(app.open_record, RecordRef("memory", m.id))))
        return out

    PREFIX_SCORE = 1_000_000.0
    """An id-prefix hit's score: above any fuzzy score (Textual's grow with the query, a few
    per character), so ``e40`` opens the session whose id starts with ``e40``, not one whose
    text merely contains an e, a 4 and a 0."""

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        words = query.split()
        for target in getattr(self, "targets", []):
            # an id prefix ("5ccec", "trace 12") is the surest match; the whole id ranks above
            # longer ids it starts ("memory 2" before memory 20)
            prefix = bool(words) and target.ident.startswith(words[-1]) and (
                len(words) == 1 or target.text.startswith(" ".join(words[:-1])))
            score = (self.PREFIX_SCORE + (target.ident == words[-1]) if prefix
                     else matcher.match(target.text))
            if score > 0:
                yield Hit(score, highlight(matcher, target.text), target.open,
                          help=visible(target.help))


def highlight(matcher: Matcher, text: str) -> Content:
    """``text`` (stored data: never read as markup) with the matched characters styled;
    ``Matcher.highlight`` would parse it as markup."""
    shown = visible(text)
    content = Content(shown)
    score, offsets = matcher.fuzzy_search.match(matcher.query, shown)
    if score:
        for offset in offsets:
            if not shown[offset].isspace():
                content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class ScreenActions(Provider):
    """Every action of the current screen (approve, consolidate, erase, export…), from its key
    bindings and those of the focused pane, with their descriptions and keys; an action that
    cannot act now (``check_action`` says so, or it writes and the store is read-only) is not
    offered."""

    def actions(self) -> list[tuple[str, str, Callable[[], Awaitable[object]]]]:
        """(text, help, run) for each action the screen can run now."""
        screen = self.screen
        app = screen.app
        read_only = isinstance(screen, StoreScreen) and screen.lca.store.read_only
        writes = screen.WRITES if isinstance(screen, StoreScreen) else frozenset()
        out: list[tuple[str, str, Callable[[], Awaitable[object]]]] = []
        seen: set[str] = set()
        for active in screen.active_bindings.values():
            binding, node = active.binding, active.node
            if binding.system or not binding.description or node is app:
                continue  # the app's own (screens, help, quit) are the system commands
            name, params = _action_name(binding.action)
            if binding.action in seen or not active.enabled:
                continue
            if node.check_action(name, params) is not True:
                continue
            if read_only and node is screen and name in writes:
                continue
            seen.add(binding.action)
            key = app.get_key_display(binding)
            out.append((f"{binding.description} ({key})",
                        binding.tooltip or f"on {screen.title or type(screen).__name__}",
                        partial(app.run_action, binding.action, node)))
        return out

    async def discover(self) -> Hits:
        for text, help_, run in self.actions():
            yield Hit(1.0, Content(text), run, help=help_)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, help_, run in self.actions():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, highlight(matcher, text), run, help=help_)


def _action_name(action: str) -> tuple[str, tuple[object, ...]]:
    """``change('erase')`` -> ("change", ("erase",)) (Textual's own parser)."""
    from textual.actions import parse

    _, name, params = parse(action)
    return name, params
