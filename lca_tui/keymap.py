"""Key bindings of your own: every binding of the app, its screens, dialogs and widgets has an
id; the settings file's ``[keys]`` table remaps them by id (``App.set_keymap``), and the
``app.theme`` setting (``--theme``) picks the light or the dark theme."""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.dom import DOMNode

from store import SettingsError

if TYPE_CHECKING:
    from store import Settings

THEMES = {"dark": "textual-dark", "light": "textual-light"}
"""``app.theme`` -> the Textual theme it selects."""

OURS = ("lca_tui.", "screens.", "widgets.")


def _our_classes() -> list[type[DOMNode]]:
    import screens
    import widgets

    for package in (screens, widgets):
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    # lca_tui.app's own bindings count once it is imported (it imports this module to use it)
    found: list[type[DOMNode]] = []
    todo: list[type[DOMNode]] = [DOMNode]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith(OURS) and "BINDINGS" in cls.__dict__:
            found.append(cls)
    return sorted(set(found), key=lambda c: (c.__module__, c.__qualname__))


def bindings() -> list[tuple[str, Binding]]:
    """(class, binding) for every binding lca-tui declares, in module order."""
    out: list[tuple[str, Binding]] = []
    for cls in _our_classes():
        for b in cls.__dict__["BINDINGS"]:
            if isinstance(b, Binding):
                out.append((f"{cls.__module__}.{cls.__qualname__}", b))
    return out


def binding_ids() -> set[str]:
    return {b.id for _, b in bindings() if b.id}


def keymap_from(settings: Settings) -> dict[str, str]:
    """The settings' ``[keys]`` keymap, every id checked: an id no binding has is refused with
    the place it was set and the ids there are (a typo would otherwise do nothing)."""
    keymap = settings.keymap()
    if not keymap:
        return {}
    known = binding_ids()
    for binding in keymap:
        if binding not in known:
            raise SettingsError(f"{settings.key_source(binding)}: keys.{binding}: no key "
                                f"binding has the id {binding!r} (the ids: "
                                f"{', '.join(sorted(known))})")
    return keymap
