"""A small governance store for the Proposals and Memories screen tests: memories read from
files (one supersession read from them, a memory the loader cannot read, a secret one), a
session whose turns are evidence, a chain of three links made by approved proposals, and a
pending proposal for each check that can trip (duplicate, contradiction, inference, budget,
procedure) plus a revise with a diff."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store import Store
from store.governance import approve, parse_proposal, submit
from tests.helpers_recall import add_entries, import_memories, memory_file

SESSION = "5e55a0e1-0000-4000-8000-00000000a11c"
PYTEST_BODY = "Always run the test suite with pytest -x so it stops at the first failure."
SQLITE_BODY = "Local dev runs on SQLite: the file is ledger.db in the project folder."
POSTGRES_BODY = "Local dev and tests run on PostgreSQL 16 in docker compose on port 5433."


def _propose(store: Store, doc: dict[str, Any], origin: str = "cli") -> Any:
    return submit(store, parse_proposal(doc, origin), auto_apply=False)


def build_gov_store(store: Store, folder: Path) -> dict[str, Any]:
    """Fill ``store`` (with memory files written under ``folder``); the ids worth naming."""
    mem = folder / "memory"
    ids = import_memories(store, mem, [
        ("pytest-x", PYTEST_BODY, {"name": "Run tests with pytest -x", "type": "feedback",
                                   "tags": ["testing"], "hits": 3}),
        ("local-dev-sqlite", SQLITE_BODY, {"name": "Local dev on SQLite", "type": "project",
                                           "tags": ["local-dev"], "status": "superseded",
                                           "valid_from": "2026-01-05",
                                           "valid_to": "2026-01-20"}),
        ("local-dev-postgres", POSTGRES_BODY,
         {"name": "Local dev database", "type": "project", "tags": ["local-dev"],
          "supersedes": "project_local-dev-sqlite", "valid_from": "2026-01-20"}),
        ("psycopg", "Use psycopg 3, never psycopg2, for every database connection.",
         {"name": "Use psycopg 3", "type": "feedback", "tags": ["database"]}),
        ("vault", "Staging credentials live in vault at secret/ledgerline/staging.",
         {"name": "Where the staging credentials live", "type": "reference",
          "sensitivity": "secret"}),
    ])
    (mem / "feedback_broken.md").write_text(
        '---\nname: "Short commit messages\ntype: feedback\n---\nKeep commit subjects short.\n',
        encoding="utf-8")
    memory_file(mem, "release", "Release only with make release, never a raw docker push.",
                name="Release process", type="procedure", tags=["release"])
    store.ingest([mem])
    ids = {m.name: m.id for m in store.memories()}
    entries = add_entries(store, SESSION, [
        ("user", "Remember that the ledger stores money as integer cents, not floats."),
        ("assistant", "Understood: amounts are integer cents everywhere."),
        ("user", "We moved local dev to PostgreSQL 16 in docker compose."),
        ("user", "Commit messages stay short, one line in the imperative mood."),
    ], project="/home/dana/projects/ledgerline")
    # the chain: SQLite → Local dev database (read from the files) → Postgres 16 → merged
    pg16 = _propose(store, {"op": "supersede", "target": ids["Local dev database"],
                            "type": "project", "content": POSTGRES_BODY.replace("5433", "5434"),
                            "metadata": {"name": "Local dev on Postgres 16",
                                         "tags": ["local-dev"]},
                            "evidence": [{"entry": entries[2]}]})
    pg16 = approve(store, pg16.id, reason="moved in session 5")
    merged = _propose(store, {"op": "merge", "targets": [pg16.memory_id, ids["Use psycopg 3"]],
                              "type": "project", "content": "Database setup: " +
                              POSTGRES_BODY.replace("5433", "5434") +
                              " Connect with psycopg 3.",
                              "metadata": {"name": "Database setup", "tags": ["local-dev"]},
                              "evidence": [{"entry": entries[2]}]})
    merged = approve(store, merged.id, reason="one memory for the database")
    pending = {
        "duplicate": _propose(store, {"op": "add", "type": "feedback",
                                      "content": PYTEST_BODY + " Really.",
                                      "metadata": {"name": "Run tests with pytest -x",
                                                   "tags": ["testing"]}}, "consolidation"),
        "contradiction": _propose(store, {
            "op": "add", "type": "project", "content": "Database setup: Local dev and tests run "
            "on PostgreSQL 16 in docker compose on port 5432. Connect with psycopg 3.",
            "metadata": {"name": "Local dev port", "tags": ["local-dev"]}}, "api"),
        "inference": _propose(store, {
            "op": "add", "type": "feedback", "content": "Commit messages stay short, one line "
            "in the imperative mood. Every commit is signed with a GPG key.",
            "metadata": {"name": "Commit style"},
            "evidence": [{"entry": entries[3]}]}, "consolidation"),
        "budget": _propose(store, {"op": "add", "type": "reference",
                                   "content": "Test inventory.\n" + "x " * 26_000,
                                   "metadata": {"name": "Test inventory", "critical": True}},
                           "proposer"),
        "procedure": _propose(store, {"op": "add", "type": "procedure",
                                      "content": "Before a release run make check, then make "
                                      "release; never push images by hand.",
                                      "metadata": {"name": "Release checklist"}}, "file"),
        "revise": _propose(store, {"op": "revise", "target": ids["Run tests with pytest -x"],
                                   "content": PYTEST_BODY.replace("-x", "-x -q"),
                                   "evidence": [{"entry": entries[0]}]}, "file"),
    }
    return {"ids": ids, "entries": entries, "pending": {k: v.id for k, v in pending.items()},
            "chain": [ids["Local dev on SQLite"], ids["Local dev database"], pg16.memory_id,
                      merged.memory_id], "merged": merged.memory_id}
