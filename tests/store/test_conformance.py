"""The Anamnesis conformance suite (``lca-tui conformance``, ``store.conformance``): the whole
bundle runs on scratch stores and every case passes or is not applicable with its reason; every
seeded defect is caught by a case of its family; the bundle is checked against its manifest;
the command's table, JSON and exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lca_tui.cli import main
from store.conformance import MUTANTS, BundleError, load_bundle, run_bundle, run_mutants
from store.conformance.bundle import FAMILIES, default_root

# cases whose failure is another engineer's fix, merged by the lead (see docs/conformance.md):
# an explicit expected failure. When issue 23 (bound-directory erasure) lands, del-05 passes,
# this test fails, and the lead empties the set.
KNOWN_ELSEWHERE: set[str] = set()


@pytest.fixture(scope="module")
def suite():  # type: ignore[no-untyped-def]
    return run_bundle()


def test_the_bundle_has_eight_families_of_at_least_eight_cases() -> None:
    bundle = load_bundle()
    assert bundle.contract.startswith("Anamnesis conformance")
    assert len(bundle.cases) >= 64
    for family in FAMILIES:
        cases = [c for c in bundle.cases if c["family"] == family]
        assert len([c for c in cases if "not_applicable" not in c]) >= 8, family
    # "not applicable" only where lca-tui has no such mechanism: graph traversal
    for c in bundle.cases:
        if "not_applicable" in c:
            assert "graph" in c["not_applicable"], c["id"]


def test_every_case_passes_or_is_not_applicable(suite) -> None:  # type: ignore[no-untyped-def]
    failed = {c.id: c.reasons for c in suite.failed}
    assert set(failed) == KNOWN_ELSEWHERE, failed
    assert all(c.checks > 0 for c in suite.cases if c.status == "pass")
    assert all(c.reasons for c in suite.cases if c.status == "not_applicable")


def test_every_seeded_defect_is_caught(suite) -> None:  # type: ignore[no-untyped-def]
    base = {c.id: c.status for c in suite.cases}
    results = run_mutants(baseline=base, first_only=True)
    assert {m.family for m in MUTANTS} == set(FAMILIES)
    missed = [m.name for m in results if not m.caught]
    assert missed == []
    family_of = {c["id"]: c["family"] for c in load_bundle().cases}
    for m in results:  # a case of the mutant's own family caught it
        assert [family_of[cid] for cid in m.caught_by] == [m.family]


def test_a_changed_case_file_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "conformance"
    shutil.copytree(default_root(), root)
    victim = sorted((root / "cases").glob("*.json"))[0]
    victim.write_text(victim.read_text(encoding="utf-8").replace("a", "b", 1), encoding="utf-8")
    with pytest.raises(BundleError, match="differs from the manifest"):
        load_bundle(root)
    (root / "cases" / "extra.json").write_text("{}", encoding="utf-8")
    with pytest.raises(BundleError, match="does not list"):
        load_bundle(root)


def test_a_wrong_expected_outcome_fails_the_case(tmp_path: Path) -> None:
    """The runner is not a rubber stamp: the same case with its expectation turned around
    fails, naming the check."""
    case = next(c for c in load_bundle().cases if c["id"] == "auth-06-reinforce-ignores-"
                "claimed-authority")
    wrong = json.loads(json.dumps(case))
    wrong["expect"][1]["fields"]["authority"] = "approved"
    from store.conformance import run_case

    result = run_case(wrong)
    assert result.status == "fail"
    assert "authority is 'unreviewed', expected 'approved'" in result.reasons[0]


def test_the_command_json_and_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conformance", "--family", "termination_and_audit", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["bundle_version"] == load_bundle().version
    assert doc["manifest_sha256"] == load_bundle().digest
    assert doc["families"] == {"termination_and_audit": {"pass": 10, "fail": 0,
                                                         "not_applicable": 0}}


def test_the_command_table_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--case", "scope-09-graph-traversal"]) == 0
    out = capsys.readouterr().out
    assert "not applicable" in out and "no graph traversal" in out
    assert load_bundle().digest in out
    assert main(["conformance", "--family", "nonsense"]) == 2
    assert "--family must be one of" in capsys.readouterr().err
    assert main(["conformance", "--case", "no-such-case"]) == 2
    assert "no case 'no-such-case'" in capsys.readouterr().err


def test_a_failing_case_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    from store.conformance import bundle as bundle_mod

    root = tmp_path / "conformance"
    shutil.copytree(default_root(), root)
    path = root / "cases" / "term-07-probe-writes-nothing.json"
    case = json.loads(path.read_text(encoding="utf-8"))
    case["expect"][0]["equals"] = 1  # a probe that wrote a trace: not what happens
    path.write_text(json.dumps(case), encoding="utf-8")
    m = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    bundle_mod.write_manifest(root, m["contract"], m["version"])
    monkeypatch.setattr(bundle_mod, "default_root", lambda: root)
    assert main(["conformance", "--case", "term-07-probe-writes-nothing"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "traces: 0, expected 1" in out
