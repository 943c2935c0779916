"""The fixes of the independent review of the Anamnesis conformance suite (issue 24,
``lca-tui conformance``): the runner's own index probe (vec0 and FTS5 queried directly after
an erasure), poison-07 holding the harness guard on its own, and the supersession chain after
erasing one of its members."""

from __future__ import annotations

import json
from typing import Any

from store.conformance import load_bundle, run_case
from store.conformance.mutants import _index_rows_kept


def _case(prefix: str) -> dict[str, Any]:
    return json.loads(json.dumps(next(c for c in load_bundle().cases
                                      if c["id"].startswith(prefix))))


def test_the_index_probe_sees_kept_rows_without_the_stores_own_verification() -> None:
    """With the store's self-check taken out of the case, leftover vec0 / FTS rows are still
    found: by the runner querying the tables itself."""
    case = _case("del-01-")
    case["expect"] = [c for c in case["expect"] if c["check"] != "erasure"]
    case.pop("final", None)
    assert run_case(case).status == "pass"
    with _index_rows_kept():
        result = run_case(case)
    assert result.status == "fail"
    assert result.reasons == ["index:e holds 'quokka-5521'"]


def test_poison_07_fails_when_harness_text_is_read_as_typed() -> None:
    from store.conformance.mutants import _harness_as_typed

    case = _case("poison-07-")
    assert run_case(case).status == "pass"
    # the defect: the harness guard removed from is_typed_turn
    with _harness_as_typed():
        result = run_case(case)
    assert result.status == "fail", result.reasons
