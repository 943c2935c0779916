"""``lca-tui proposals``, ``memories``, ``audit`` and their JSON: every target of a merge
listed, never NaN or Infinity, a limit below one refused, empty filters say so, an unknown type
names the types there are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import Store

from tests.helpers_gov_seed import _propose, _seed


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    from lca_tui.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, json.loads(out.out) if "--json" in argv and out.out else out.out, out.err


def test_proposals_json_lists_every_target_of_a_merge(store: Store, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    ids = _seed(store, tmp_path)
    both = [ids["Tax reminders"], ids["Run tests with pytest -x"]]
    _propose(store, {"op": "merge", "targets": both, "content": "Taxes and tests."})
    code, doc, _ = _cli(capsys, "proposals", "--store", str(store.path), "--json")
    assert code == 0 and doc["proposals"][0]["targets"] == both
    assert doc["proposals"][0]["target"] == both[0]


def test_json_output_never_has_nan_or_infinity(store: Store, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from store.governance.models import Proposal
    from store.core.db import orm

    info = _propose(store, {"op": "add", "content": "Long-lived note.",
                            "metadata": {"half_life_days": 30}})
    with store.write() as conn:  # a row written before validation refused infinity
        with orm(conn) as s:
            row = s.get(Proposal, info.id)
            assert row is not None
            row.meta = '{"half_life_days": Infinity, "name": "old"}'
            s.add(row)
            s.flush()
    from lca_tui.cli import main

    code = main(["proposal", str(info.id), "--store", str(store.path), "--json"])
    out = capsys.readouterr().out
    assert code == 0 and "Infinity" not in out and "NaN" not in out
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert doc["metadata"]["half_life_days"] is None


def test_audit_and_proposals_refuse_a_limit_below_one(store: Store,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    for cmd in ("audit", "proposals"):
        code = main([cmd, "--store", str(store.path), "--limit", "0"])
        err = capsys.readouterr().err
        assert code != 0 and "--limit must be 1 or more (got 0)" in err


def test_empty_filters_say_so_and_an_unknown_type_names_the_types(
        store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    _seed(store, tmp_path)
    st = ["--store", str(store.path)]
    code = main(["memories", *st, "--type", "nope"])
    err = capsys.readouterr().err
    assert code != 0 and "no memories of type 'nope' (types: feedback, procedure, reference)" \
        in err
    assert main(["memories", *st, "--type", "feedback", "--status", "expired"]) == 0
    assert "no memories with status expired of type feedback" in capsys.readouterr().out
    assert main(["proposals", *st, "--status", "failed"]) == 0
    assert "no proposals with status failed" in capsys.readouterr().out
    assert main(["audit", *st, "--action", "nothing_like_it"]) == 0
    assert "no audit events with action nothing_like_it" in capsys.readouterr().out
