"""Preview, then act on exactly what the preview listed: the one mechanism.

A preview (an erasure's closure, a health fix's plan) lists what an action will touch; the
person confirms that list. The action is handed the preview, lists again at the moment it
acts, and never touches anything the preview did not list. What it does with a difference
depends on whether the action is whole or made of independent parts:

- **whole** (an erasure or a redaction: incomplete is wrong): ``digest`` is the listing's
  fingerprint (sha256 of a canonical JSON: sets sorted, keys sorted); ``confirm_unchanged``
  refuses with ``PlanStale`` — before changing anything — when the fingerprints differ;
- **by parts** (a health fix: each index row or source stands alone, and a hook may keep
  writing while the person reads): ``narrow`` keeps the listed items that still need the
  action, and counts the listed ones that no longer do (left as they are) and the ones that
  appeared since (left for the next preview); ``Narrowed.lines`` says both.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from store.core.errors import StoreError
from store.core.vocab import plural

STALE = "the store changed since the preview: preview again (nothing changed)"
K = TypeVar("K", bound=Hashable)


class PlanStale(StoreError):
    """The store no longer matches the preview the action was given; nothing was changed."""

    def __init__(self, what: str = "") -> None:
        super().__init__(f"{what}: {STALE}" if what else STALE)


def _canonical(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, set | frozenset):
        return sorted((_canonical(v) for v in value), key=repr)
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def digest(listing: object) -> str:
    """The fingerprint of what a preview listed (ids, counts, paths: JSON-able values)."""
    text = json.dumps(_canonical(listing), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def confirm_unchanged(previewed: str, current: str, what: str = "") -> None:
    """Raise ``PlanStale`` unless the preview's digest is the current listing's."""
    if previewed != current:
        raise PlanStale(what)


@dataclass(frozen=True)
class Narrowed(Generic[K]):
    """What an action by parts acts on: the listed items that are current still, in the
    current listing's order, with how many listed ones are not (``gone``) and how many
    current ones were not listed (``new``)."""

    items: list[K]
    gone: int = 0
    new: int = 0

    @property
    def unchanged(self) -> bool:
        return not (self.gone or self.new)

    def lines(self, what: str) -> list[str]:
        """The difference said (never acted on silently); nothing when there is none."""
        return moved(self.gone, self.new, what)


def moved(gone: int, new: int, what: str) -> list[str]:
    """What changed between a preview and the action by parts that was handed it."""
    out = []
    if gone:
        out.append(f"{plural(gone, 'previewed ' + what)} changed or no longer "
                   "needed it since the preview: left as they are")
    if new:
        out.append(f"{plural(new, what)} needing it appeared since the "
                   "preview: left for the next one")
    return out


def narrow(previewed: Iterable[K], current: Iterable[K]) -> Narrowed[K]:
    """``current`` restricted to the items ``previewed`` listed (an item is its identity and
    what the action will do to it: a removed row *and* the row kept in its place)."""
    listed = set(previewed)
    now = list(dict.fromkeys(current))
    items = [k for k in now if k in listed]
    return Narrowed(items, len(listed) - len(items), len(now) - len(items))
