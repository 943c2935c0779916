"""The store defects the Anamnesis conformance suite found (``lca-tui conformance``), each
fixed and held here on its own: the pool filled after the channel rule (scope closure), the
hook's text numbering items among themselves (trace non-leakage), and a write applied by policy
granting no authority (authority non-amplification)."""

from __future__ import annotations

from pathlib import Path

from store import Store
from store.governance import approve, parse_proposal, submit
from store.harness.hook import context_text
from tests.conftest import make_store
from tests.helpers_recall import NOW, import_memories

SECRETS = [(f"kestrel-{i}", f"Kestrel signing key rotation {i} kestrel quarter schedule.",
            {"name": f"rotation key {i}", "sensitivity": "secret"}) for i in range(3)]
RUNBOOK = ("runbook", "The signing key rotation runbook is docs/rotate.md.",
           {"name": "rotation runbook"})


def test_held_back_memories_take_no_pool_slot(store: Store, tmp_path: Path) -> None:
    ids = import_memories(store, tmp_path / "mem", [*SECRETS, RUNBOOK])
    result = store.recall("kestrel signing key rotation", now=NOW,
                          overrides={"pool": 3, "floor": 0.0})
    by_id = {c.source_id: c for c in result.trace.candidates if c.source_type == "memory"}
    assert by_id[ids["rotation runbook"]].decision == "injected"
    assert [i.source_id for i in result.items] == [ids["rotation runbook"]]
    # the operator's trace still shows what was held back, masked
    held = [c for c in result.trace.candidates if c.decision == "policy_filtered"]
    assert len(held) == 3 and all(c.masked and c.excerpt is None for c in held)


def test_a_public_channel_pool_counts_only_what_it_may_serve(tmp_path: Path) -> None:
    s = make_store(tmp_path / "s.db")
    try:
        ids = import_memories(s, tmp_path / "mem", [
            (f"p{i}", f"Heron migration notes {i}: heron flock counts.",
             {"name": f"private heron {i}", "sensitivity": "private"}) for i in range(4)] + [
            ("pub", "Heron watching spots are listed in the club wiki.",
             {"name": "heron spots"})])
        pub = s.recall("heron migration flock counts", channel="public", now=NOW,
                       overrides={"pool": 2, "floor": 0.0})
        assert ids["heron spots"] in [i.source_id for i in pub.items]
        allowed = [c for c in pub.trace.candidates if c.decision != "policy_filtered"]
        assert len({(c.source_type, c.source_id) for c in allowed}) <= 2
    finally:
        s.close()


def test_the_agent_text_numbers_items_among_themselves(store: Store, tmp_path: Path) -> None:
    import_memories(store, tmp_path / "mem", [
        ("vault", "Payroll export runs on the fifth via payroll-cli export.",
         {"name": "payroll export", "sensitivity": "secret"}),
        ("cal", "The payroll calendar is shared in the finance drive.",
         {"name": "payroll calendar"})])
    result = store.recall("payroll export calendar", now=NOW)
    assert result.items and result.items[0].rank > 1  # something ranked above it was held back
    text = context_text(result)
    assert "\n[1] memory" in text and "[2]" not in text
    assert "payroll-cli" not in text


def _policy(store: Store, doc: dict) -> object:
    return submit(store, parse_proposal(doc, "consolidation"))


def test_a_write_applied_by_policy_grants_no_authority(tmp_path: Path) -> None:
    s = make_store(tmp_path / "s.db", **{"governance.auto_apply": "add,merge,revise,noop"})
    try:
        ids = import_memories(s, tmp_path / "mem", [
            ("ttl", "The API cache TTL is 60 seconds.", {"name": "cache ttl", "type": "project"}),
            ("ttl2", "The staging cache TTL is 60 seconds.",
             {"name": "cache ttl staging", "type": "project"}),
            ("log", "Production logs at INFO.", {"name": "log level", "type": "project"})])
        merged = _policy(s, {"op": "merge", "targets": [ids["cache ttl"],
                                                        ids["cache ttl staging"]],
                             "type": "project", "content": "Cache TTL is 60 s everywhere.",
                             "metadata": {"name": "cache ttl merged"}})
        added = _policy(s, {"op": "add", "type": "project", "content": "Logs rotate daily.",
                            "metadata": {"name": "log rotation", "authority": "approved"}})
        revised = _policy(s, {"op": "revise", "target": ids["log level"],
                              "content": "Production logs at WARN.",
                              "metadata": {"authority": "approved"}})
        for info in (merged, added, revised):
            assert info.status == "applied"
        by_name = {m.name: m for m in s.list_memories()}
        assert by_name["cache ttl merged"].authority == "unreviewed"
        assert by_name["log rotation"].authority == "unreviewed"
        assert by_name["log level"].authority == "unreviewed"
    finally:
        s.close()


def test_a_person_approval_still_grants_authority(store: Store) -> None:
    info = submit(store, parse_proposal({"op": "add", "type": "project",
                                         "content": "Standup is at 9:30.",
                                         "metadata": {"name": "standup"}}, "cli"),
                  auto_apply=False)
    approve(store, info.id, actor="dana")
    assert {m.name: m.authority for m in store.list_memories()}["standup"] == "approved"


def test_held_back_sources_beside_the_pool_are_capped(store: Store, tmp_path: Path) -> None:
    ids = import_memories(store, tmp_path / "mem", [
        (f"s{i}", f"Osprey nest camera feed {i} osprey nest.", {"name": f"osprey secret {i}",
                                                               "sensitivity": "secret"})
        for i in range(5)] + [("pub", "Osprey nest season opens in April.",
                                {"name": "osprey season"})])
    result = store.recall("osprey nest camera", now=NOW, overrides={"pool": 2, "floor": 0.0})
    held = [c for c in result.trace.candidates if c.decision == "policy_filtered"]
    assert 1 <= len(held) <= 2
    assert ids["osprey season"] in [i.source_id for i in result.items]
