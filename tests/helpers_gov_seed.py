"""What the governance feature tests share: a proposal submitted through the gate, a seeded
store of memories."""

from __future__ import annotations

from pathlib import Path
from typing import Any


from store import Store
from store.governance import parse_proposal, submit

from tests.helpers_recall import import_memories


TAX = "Quarterly tax filing deadlines and invoice reminders."


def _propose(store: Store, doc: dict[str, Any], **kw: Any) -> Any:
    return submit(store, parse_proposal(doc, "cli"), **kw)


def _seed(store: Store, tmp_path: Path) -> dict[str, int]:
    return import_memories(store, tmp_path / "mem", [
        ("tax", TAX, {"name": "Tax reminders", "type": "reference", "tags": ["finance"]}),
        ("release", "Release only with make release, never with a raw docker push.",
         {"name": "Release process", "type": "procedure", "tags": ["release"]}),
        ("pytest-x", "Always run the test suite with pytest -x.",
         {"name": "Run tests with pytest -x", "type": "feedback", "tags": ["testing"]}),
    ])
