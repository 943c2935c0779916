"""Preview, then act on exactly what the preview listed: the one mechanism.

A preview (an erasure's closure, a health fix's plan) lists what an action will touch; the
person confirms that list. ``digest`` is the list's fingerprint (sha256 of a canonical JSON:
sets sorted, keys sorted). The action, handed the preview, lists again at the moment it acts
and refuses with ``PlanStale`` — before changing anything — when the fingerprints differ:
what it would touch now is not what was confirmed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from store.core.errors import StoreError

STALE = "the store changed since the preview: preview again (nothing changed)"


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
