"""The Anamnesis conformance runner's own checks (``lca-tui conformance``): its index probe
(vec0 and FTS5 queried directly after an erasure), poison-07 holding the harness guard on its
own, and the supersession chain after erasing one of its members."""

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


def test_many_secret_matches_never_crowd_out_the_public_ones(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Past the fetch ceiling (pool 2: 128 hits per ranking) 300 secret memories that match
    better used to leave no public one in the pool; with the channel rule inside the FTS and
    KNN searches the three public memories are candidates and one is injected."""
    from tests.conftest import make_store
    from tests.helpers_recall import NOW, import_memories

    s = make_store(tmp_path / "s.db")
    try:
        secret = [(f"s{i}", f"Osprey nest camera osprey feed osprey key {i} osprey osprey.",
                   {"name": f"osprey key {i}", "sensitivity": "secret"}) for i in range(300)]
        public = [(f"p{i}", f"Birding club notes {i}: an osprey was seen at the lake.",
                   {"name": f"club note {i}"}) for i in range(3)]
        ids = import_memories(s, tmp_path / "mem", secret + public)
        result = s.recall("osprey nest camera osprey feed", now=NOW,
                          overrides={"pool": 2, "floor": 0.0})
        cands = {c.source_id: c for c in result.trace.candidates if c.source_type == "memory"}
        pub = {ids[f"club note {i}"] for i in range(3)}
        assert len(pub & set(cands)) >= 2
        assert {i.source_id for i in result.items} & pub
        held = [c for c in result.trace.candidates if c.decision == "policy_filtered"]
        assert 1 <= len(held) <= 2 and all(c.masked and c.excerpt is None for c in held)
    finally:
        s.close()


def test_a_malformed_manifest_is_a_bundle_error_exit_2(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """A manifest that is not an object, lists a file without its digest, or names a path
    outside cases/*.json is refused naming the manifest; the command exits 2, no traceback."""
    import re
    import shutil

    import pytest

    from lca_tui.cli import main
    from store.conformance import BundleError
    from store.conformance import bundle as bundle_mod

    root = tmp_path / "conformance"
    shutil.copytree(bundle_mod.default_root(), root)
    mpath = root / "manifest.json"
    good = json.loads(mpath.read_text(encoding="utf-8"))
    (tmp_path / "outside.json").write_text("{}", encoding="utf-8")
    bad = [([1, 2], "not a JSON object"),
           ({**good, "files": {"a": 1}}, "'files' must be a list"),
           ({**good, "files": [{"path": "cases/x.json"}]}, "needs a 'path' and a 'sha256'"),
           ({**good, "files": [{"path": "../outside.json", "sha256": "0" * 64}]},
            "is not a path cases/<name>.json"),
           ({**good, "files": [{"path": "manifest.json", "sha256": "0" * 64}]},
            "is not a path cases/<name>.json")]
    monkeypatch.setattr(bundle_mod, "default_root", lambda: root)
    for doc, message in bad:
        mpath.write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(BundleError, match=re.escape(message)):
            bundle_mod.load_bundle(root)
        assert main(["conformance", "--family", "scope_isolation"]) == 2
        err = capsys.readouterr().err
        assert "manifest.json" in err and message in err and "Traceback" not in err


def test_a_check_with_an_unknown_key_or_nothing_to_assert_fails_the_case() -> None:
    """A typo ('equal' for 'equals') used to make a count check that asserts nothing pass."""
    case = _case("poison-07-")
    typo = json.loads(json.dumps(case))
    typo["expect"][0] = {"check": "count", "what": "consolidated:c", "equal": 5}
    result = run_case(typo)
    assert result.status == "fail"
    assert result.reasons[0].startswith("check count: unknown key 'equal'")
    empty = json.loads(json.dumps(case))
    empty["expect"][0] = {"check": "count", "what": "consolidated:c"}
    result = run_case(empty)
    assert result.status == "fail"
    assert result.reasons == ["check count asserts nothing: give one of equals, max, min"]


# A released bundle version never changes: its manifest digest is pinned here. A change to a
# case is a new bundle version (write_manifest(..., version)) and a new line, never an edit.
PINNED_MANIFESTS = {
    "0.2.0": "214a3c9c914fd2437040343575b50d12ce0edd3cf5fed31c1378c46989525184",
    "0.2.1": "4cc7dc6e9e16bdeb0bbf9b230ba61f74b3c08a6a8112a36781f09c77843c6b3f",
}


def test_the_bundle_version_pins_its_manifest_digest() -> None:
    bundle = load_bundle()
    assert bundle.version in PINNED_MANIFESTS, f"bundle {bundle.version} is not pinned"
    assert bundle.digest == PINNED_MANIFESTS[bundle.version]
