"""Preview, then act on exactly what the preview listed (``store.core.plan``): an erasure or
redaction handed its confirmed closure lists again when it acts and refuses, changing nothing,
when the store no longer holds exactly those records — the same for the CLI (``lca-tui erase``
passes the closure it printed) and the Privacy screen. A health fix (an action by parts) handed
its plan acts on the listed targets that still need it and says what moved (``narrow``)."""

from __future__ import annotations

import pytest

from store import NewEntry, NewSession, PlanStale, Store
from store.core.plan import confirm_unchanged, digest, narrow


def _session(store: Store, n: int, word: str, start: int = 0) -> None:
    session = NewSession(id="s-plan", format="harness")
    store.append_entries(session, [NewEntry("user", f"turn {i} mentions {word}", "s-plan",
                                            line_id=f"t{i}") for i in range(start, start + n)])


def test_the_digest_is_of_the_listing_not_its_order() -> None:
    assert digest({"delete": {"entry": {3, 1, 2}}}) == digest({"delete": {"entry": {1, 2, 3}}})
    assert digest({"delete": {"entry": {1, 2}}}) != digest({"delete": {"entry": {1, 2, 3}}})
    confirm_unchanged("a", "a")
    with pytest.raises(PlanStale, match="preview again"):
        confirm_unchanged("a", "b")


def test_narrowing_keeps_only_what_was_listed_and_counts_the_rest() -> None:
    previewed = {10: 1, 11: 1, 12: 2}.items()  # removed row -> the row kept in its place
    now = {12: 2, 11: 3, 13: 1}.items()  # 10 went, 11 is now kept for another row, 13 is new
    moved = narrow(previewed, now)
    assert moved.items == [(12, 2)] and (moved.gone, moved.new) == (2, 2)
    assert moved.lines("row") == [
        "2 previewed rows changed or no longer needed it since the preview: left as they are",
        "2 rows needing it appeared since the preview: left for the next one"]
    same = narrow([("entry", 2), ("entry", 1)], [("entry", 1), ("entry", 2)])
    assert same.unchanged and same.items == [("entry", 1), ("entry", 2)] and same.lines("x") == []


def test_an_erasure_refuses_when_the_store_moved_since_its_preview(store: Store) -> None:
    _session(store, 2, "zebra-token")
    scope = store.scope(match="zebra-token")
    preview = store.privacy_closure(scope, "erase")
    assert preview.counts()["entry"] == 2
    _session(store, 1, "zebra-token", start=2)  # a hook wrote one more while the person read
    with pytest.raises(PlanStale, match="the store changed since the preview"):
        store.privacy_run(scope, "erase", closure=preview)
    assert store.session("s-plan").entries == 3 and store.tombstones() == []  # nothing changed
    fresh = store.privacy_closure(scope, "erase")
    result = store.privacy_run(scope, "erase", closure=fresh)
    assert result.tombstone_id is not None and result.verification.passed
    assert result.closure["entry"] == 3


def test_an_unchanged_store_is_acted_on_as_previewed(store: Store) -> None:
    _session(store, 2, "quokka-word")
    scope = store.scope(match="quokka-word")
    preview = store.privacy_closure(scope, "redact")
    result = store.privacy_run(scope, "redact", closure=preview)
    assert result.closure == preview.counts() and result.verification.passed
