"""The harness API's one place of documentation: ``store.facade``'s docstring names every public
``Store`` method and property (docs/api.md sends a reader there), so one added without a line in
it fails here."""

from __future__ import annotations

import re

import store.facade


def public_names() -> list[str]:
    return sorted(name for name in dir(store.facade.Store) if not name.startswith("_"))


def unnamed(doc: str, names: list[str]) -> list[str]:
    """The names ``doc`` does not mention as a whole word."""
    return [name for name in names if not re.search(rf"\b{re.escape(name)}\b", doc)]


def test_every_public_store_method_is_named_in_the_facade_docstring() -> None:
    names = public_names()
    assert len(names) > 100  # the surface really was found (about 113 names today)
    doc = store.facade.__doc__ or ""
    assert unnamed(doc, names) == []


def test_the_check_fails_when_a_method_is_left_out() -> None:
    doc = store.facade.__doc__ or ""
    for left_out in ("memory_history", "undo_last_approval", "copy_to"):
        stripped = re.sub(rf"\b{left_out}\b", "", doc)
        assert unnamed(stripped, public_names()) == [left_out]
    # a name that only contains another's is not taken for it (``record`` in ``record_prune``)
    assert unnamed("record_prune", ["record"]) == ["record"]
