"""The near-duplicate sweep: active memories that say the same thing become one
``merge`` proposal a group (kept text, union of tags / projects / evidence, summed hits and
prevented, the others superseded), memories differing in a number, date, negation or "X is Y"
value never merge, a second sweep proposes nothing, and Health's ``memory_duplicates``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store import Store
from store.governance import approve, find_groups, get_proposal
from store.governance import sweep_duplicates as sweep
from store.health.scan import scan

from tests.conftest import needs_shared_data
from tests.helpers_gov_seed import _propose
from tests.helpers_recall import add_entries, import_memories


def _add(store: Store, content: str, mtype: str = "reference",
         **extra: Any) -> int:
    """A memory written through the gate (approved by a person)."""
    info = _propose(store, {"op": "add", "type": mtype, "content": content, **extra})
    # a seeded near-miss contradicts what is there: kept both, as a person would
    as_ = "keep-both" if info.check("contradiction").result == "fail" else None
    done = approve(store, info.id, as_=as_, reason="seeded for the sweep test")
    assert done.status == "applied", done
    assert done.memory_id is not None
    return done.memory_id


def _signal(store: Store) -> Any:
    return scan(store, save="never").signal("memory_duplicates")


def _seed_five_groups(store: Store, tmp_path: Path) -> dict[str, Any]:
    files = import_memories(store, tmp_path / "mem", [
        ("pytest-x", "Run the test suite with pytest -x.",
         {"name": "pytest -x", "type": "feedback", "tags": ["testing"]}),
        ("pytest-x-commit", "Always run the test suite with pytest -x before committing.",
         {"name": "pytest -x before commit", "type": "feedback", "tags": ["git"]}),
        ("release", "Release only with make release, never with a raw docker push.",
         {"name": "Release process", "type": "procedure", "tags": ["release"]}),
        # near-misses of each other: a number, a negation, a value, a date
        ("port-a", "The staging database listens on port 5432.",
         {"name": "staging port", "type": "project"}),
        ("port-b", "The staging database listens on port 5433.",
         {"name": "staging port (b)", "type": "project"}),
        ("forks-a", "Deploy previews are built for pull requests from forks.",
         {"name": "fork previews", "type": "project"}),
        ("forks-b", "Deploy previews are not built for pull requests from forks.",
         {"name": "fork previews (b)", "type": "project"}),
    ])
    entries = add_entries(store, "s-sweep", [
        ("user", "Remember: invoices go out on the first Monday of the month."),
        ("user", "Remember: the office wifi network is ledger-guest.")])
    ids: dict[str, Any] = {"files": files}
    release_again = _add(store, "release only with make release, never with a raw docker "
                         "push", "procedure", metadata={"projects": ["shop"]})
    cache = [_add(store, "The CI cache lives in the ci-cache bucket."),
             _add(store, "the CI cache lives in the CI-cache bucket!",
                  metadata={"tags": ["ci"]}),
             _add(store, "Note: the CI cache lives in the ci-cache bucket on S3.")]
    span = [0, len("Remember: invoices go out on the first Monday of the month.")]
    invoices = [_add(store, "Invoices go out on the first Monday of the month.",
                     evidence=[{"entry": entries[0], "span": span}]),
                _add(store, "Invoices are sent out on the first Monday of each month.",
                     evidence=[{"entry": entries[0], "span": span}])]
    wifi = [_add(store, "The office wifi network is ledger-guest."),
            _add(store, "Office wifi network: the office wifi network is ledger-guest")]
    # what stays alone: a contradiction of the invoices (a date), another value for the wifi
    _add(store, "Invoices go out on the first Monday of the month, from 2026-01-05.",
         "project")
    _add(store, "The office wifi network is ledger-staff.", "project")
    ids.update(release=[files["Release process"], release_again], cache=cache,
               invoices=invoices, wifi=wifi,
               pytest=[files["pytest -x"], files["pytest -x before commit"]])
    with store.write() as conn:  # used: the merge sums these
        conn.exec_driver_sql("UPDATE memory SET hits = 3, prevented = 1 WHERE id = ?",
                             (cache[0],))
        conn.exec_driver_sql("UPDATE memory SET hits = 2 WHERE id = ?", (cache[2],))
    return ids


def test_five_groups_five_merges_a_second_sweep_nothing_approved_duplicates_zero(
        store: Store, tmp_path: Path) -> None:
    ids = _seed_five_groups(store, tmp_path)
    before = _signal(store)
    assert before.status == "warn" and before.value == 6  # 1 + 1 + 2 + 1 + 1 repeats
    groups = {frozenset(g.members) for g in find_groups(store)}
    assert groups == {frozenset(ids[k]) for k in ("pytest", "release", "cache", "invoices",
                                                  "wifi")}
    first = sweep(store)
    assert (first.groups, first.proposals_added, first.errors) == (5, 5, [])
    infos = [get_proposal(store, pid) for pid in first.proposal_ids]
    assert all(i.summary.op == "merge" and i.status == "pending" for i in infos)
    cache = next(i for i in infos if set(i.summary.targets) == set(ids["cache"]))
    # the fullest text is kept; tags are the union
    assert cache.content == "Note: the CI cache lives in the ci-cache bucket on S3."
    assert "ci" in cache.metadata["tags"]
    pytest_merge = next(i for i in infos if set(i.summary.targets) == set(ids["pytest"]))
    assert pytest_merge.content == "Always run the test suite with pytest -x before committing."
    assert set(pytest_merge.metadata["tags"]) == {"testing", "git"}
    invoices = next(i for i in infos if set(i.summary.targets) == set(ids["invoices"]))
    assert len(invoices.evidence) == 1  # the shared span, once

    again = sweep(store)
    assert (again.proposals_added, again.skipped) == (0, 5)

    for info in infos:
        done = approve(store, info.id, reason="the same thing")
        assert done.status == "applied", done
    merged = store.memory(get_proposal(store, cache.id).memory_id)
    assert (merged.hits, merged.prevented) == (5, 1)
    for old in ids["cache"]:
        assert store.memory(old).status == "superseded"
    release = store.memory(get_proposal(store, next(
        i.id for i in infos if set(i.summary.targets) == set(ids["release"]))).memory_id)
    assert (list(release.projects), list(release.tags)) == (["shop"], ["release"])
    after = _signal(store)
    assert (after.status, after.value) == ("ok", 0)
    assert sweep(store).proposals_added == 0


def test_memories_differing_in_a_number_negation_value_or_date_never_merge(
        store: Store, tmp_path: Path) -> None:
    import_memories(store, tmp_path / "mem", [
        ("a", "The staging database listens on port 5432.", {"name": "a", "type": "project"}),
        ("b", "The staging database listens on port 5433.", {"name": "b", "type": "project"}),
        ("c", "Deploy previews are built for forks.", {"name": "c", "type": "feedback"}),
        ("d", "Deploy previews are never built for forks.", {"name": "d", "type": "feedback"}),
        ("e", "The default branch is main.", {"name": "e", "type": "user"}),
        ("f", "The default branch is trunk.", {"name": "f", "type": "user"}),
        ("g", "The freeze starts on 2026-12-20.", {"name": "g", "type": "reference"}),
        ("h", "The freeze starts on 2026-12-21.", {"name": "h", "type": "reference"}),
    ])
    assert find_groups(store) == []
    assert sweep(store).proposals_added == 0
    assert _signal(store).status == "ok"


def test_a_memory_that_agrees_with_one_member_but_contradicts_another_stays_out(
        store: Store, tmp_path: Path) -> None:
    a = _add(store, "The build cache is kept for 7 days.")
    b = _add(store, "the build cache is kept for 7 days")
    _add(store, "The build cache is kept for 14 days.")
    assert [set(g.members) for g in find_groups(store)] == [{a, b}]


def test_the_consolidation_pass_runs_the_sweep_as_a_step(store: Store, tmp_path: Path
                                                         ) -> None:
    a = _add(store, "The CI cache lives in the ci-cache bucket.")
    b = _add(store, "the CI cache lives in the ci-cache bucket")
    report = store.consolidate()
    assert report.by_kind["sweep"] == 1
    merge = get_proposal(store, report.proposal_ids[-1])
    assert merge.summary.op == "merge" and set(merge.summary.targets) == {a, b}
    assert store.consolidate().by_kind.get("sweep", 0) == 0


def test_secret_memories_are_never_compared(store: Store) -> None:
    _add(store, "The deploy token is kept in the vault.", metadata={"sensitivity": "secret"})
    _add(store, "The deploy token is kept in the vault.")
    assert find_groups(store) == []


@needs_shared_data
def test_memory_duplicates_is_ok_on_the_real_transcripts(cc_store: Store) -> None:
    result = _signal(cc_store)
    assert result.status == "ok", result.rows
