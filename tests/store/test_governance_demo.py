"""The demo's proposals: a three-link supersession chain made through the gate, and pending
proposals that set off every check — under the fallback embedder and under the real model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from store import open_store
from store.core.settings import Settings
from store.governance import chain, integrity, list_proposals
from store.governance.replay import replay_proposals
from tests.helpers_shell import DEMO_NAME, build_demo_template

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
EVERY_CHECK = {"duplicate", "contradiction", "source_support", "budget", "procedure_risk"}


def _flagged(store) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    """Pending proposal name → the checks that did not pass."""
    return {p.name or "": {c.kind for c in p.checks if c.result != "pass"}
            for p in list_proposals(store, "pending")}


def test_demo_chain_and_queue(tmp_path: Path) -> None:
    build_demo_template(tmp_path)
    store = open_store(tmp_path / DEMO_NAME, Settings.load({"embed.backend": "fallback"}))
    try:
        flagged = _flagged(store)
        assert set().union(*flagged.values()) >= EVERY_CHECK
        assert "duplicate" in flagged["Run tests with pytest -x"]
        assert "contradiction" in flagged["Local dev database port"]
        assert "budget" in flagged["Test inventory of 0.3.0"]
        assert "procedure_risk" in flagged["Release checklist"]
        assert "source_support" in flagged["Short signed commits"]
        sqlite = next(m for m in store.memories() if m.name == "Local dev on SQLite")
        links = chain(store, sqlite.id)
        names = [c.name for c in links if c.name != "Use psycopg 3, not psycopg2"]
        assert names == ["Local dev on SQLite", "Local dev on Postgres in docker compose",
                         "Local dev on Postgres 16", "Database setup"]
        assert [c.depth for c in links if c.name in names] == [0, 1, 2, 3]
        assert sum(1 for c in links if c.proposal_id) == 2  # two links made by proposals
        assert [c.status for c in links][-1] == "active"
        assert integrity(store) == []
        statuses = sorted(p.status for p in list_proposals(store))
        assert statuses == ["applied"] * 3 + ["pending"] * 5 + ["rejected"]
        assert store.stats(with_embedder=False).proposals_pending == 5
        # every pending budget figure is the critical set as stored now (the incidents seeded
        # after the proposals were made are counted)
        stored = sum(len(m.body or "") + len(m.invariant or "") for m in store.memories()
                     if m.critical and m.status == "active" and m.loadable)
        for p in list_proposals(store, "pending"):
            assert next(c for c in p.checks if c.kind == "budget").evidence["current"] == stored
    finally:
        store.close()


@pytest.mark.model
def test_demo_proposals_set_off_every_check_with_the_real_model(tmp_path: Path) -> None:
    """The same checks fire with all-MiniLM-L6-v2 (only the sessions the pending proposals'
    evidence names are imported, to keep the model's work small)."""
    store = open_store(tmp_path / "real.db", Settings.load({"embed.backend": "model"}))
    try:
        assert not store.embedder.degraded
        shutil.copytree(DEMO / "memory", tmp_path / "memory")
        sessions = [DEMO / "claude-code" / f"{s}.jsonl" for s in (
            "5ccec58f-0e70-4378-a129-7842bc337b8d", "780c4b16-a510-49fa-a2b2-bbd1c38dbe31")]
        store.ingest([tmp_path / "memory", *sessions])
        pending = tmp_path / "proposals"  # the pending ones (the others need more sessions)
        pending.mkdir()
        for path in sorted((DEMO / "proposals").iterdir()):
            if path.suffix == ".md" or path.name[:2] in ("05", "06", "07", "08", "09"):
                shutil.copy(path, pending / path.name)
        replay_proposals(store, pending)
        flagged = _flagged(store)
        assert "duplicate" in flagged["Run tests with pytest -x"]
        assert "contradiction" in flagged["Local dev database port"]
        assert "budget" in flagged["Test inventory of 0.3.0"]
        assert "procedure_risk" in flagged["Release checklist"]
        assert "source_support" in flagged["Short signed commits"]
    finally:
        store.close()
