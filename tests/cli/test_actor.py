"""A person behind every decision: ``--actor``, ``LCA_ACTOR``, the ``identity.name``
setting, else the OS account (``pwd``), never the program's name — on proposal decisions,
audit events and tombstones, through the CLI, the API and the daemon; and ``r`` on a secret
memory: a confirmation, an audit event (no text), hidden again on leaving the screen."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.core import actor
from store.governance import approve, parse_proposal, submit
from store.governance.views import audit_events
from tests.conftest import make_store
from tests.helpers_recall import add_entries, import_memories
from tests.helpers_shell import FIXED_NOW, rendered_text, wait_until
from tests.helpers_shell import load_count, load_log

ACCOUNT = pwd.getpwuid(os.getuid()).pw_name


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


def _propose(store: Store, text: str) -> Any:
    return submit(store, parse_proposal({"op": "add", "type": "feedback", "content": text},
                                        "cli"), auto_apply=False)


def test_the_order_of_who_is_recorded(monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
    monkeypatch.delenv("LCA_ACTOR", raising=False)
    monkeypatch.setenv("USER", "someone-else")  # $USER is not read: cron and CI leave it wrong
    assert actor.resolve(None, store.settings) == ACCOUNT
    assert actor.resolve(None, store.settings) != store.writer
    named = make_store(store.path.with_name("named.db"), **{"identity.name": "Dana Ruiz"})
    try:
        assert actor.resolve(None, named.settings) == "Dana Ruiz"
        monkeypatch.setenv("LCA_ACTOR", "ci-bot for Sam")
        assert actor.resolve(None, named.settings) == "ci-bot for Sam"
        assert actor.resolve("Ana", named.settings) == "Ana"
    finally:
        named.close()
    with actor.acting_as(None, account="remote-user"):  # a daemon answering another account
        assert actor.resolve(None, store.settings) == "remote-user"  # not the daemon's env
    with actor.acting_as("Kim", account="remote-user"):
        assert actor.resolve(None, store.settings) == "Kim"


def test_lca_actor_names_the_person_on_decisions_audit_and_tombstones(
        monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
    monkeypatch.setenv("LCA_ACTOR", "Dana Ruiz")
    info = _propose(store, "Keep commit subjects under fifty characters.")
    done = approve(store, info.id, reason="I asked for it")
    assert {d.actor for d in done.decisions} == {"Dana Ruiz"}
    add_entries(store, "s1", [("user", "my address is 12 Via Roma")])
    result = store.erase(match="Via Roma")
    (tomb,) = [t for t in store.tombstones() if t.id == result.tombstone_id]
    assert tomb.actor == "Dana Ruiz"
    actors = {(e.action, e.actor) for e in audit_events(store)}
    assert ("proposal_approved", "Dana Ruiz") in actors and ("erase", "Dana Ruiz") in actors
    assert all(a != store.writer for _, a in actors)


def test_cli_actor_flag_shown_by_audit_tombstones_and_proposal(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    doc = tmp_path / "p.json"
    doc.write_text(json.dumps({"op": "add", "type": "feedback",
                               "content": "Run the linters before every push."}))
    env = {"LCA_ACTOR": "", "USER": "not-me"}
    done = _cli("--store", str(db), "propose", str(doc), "--no-auto-apply", "--json", env=env)
    assert done.returncode == 0, done.stderr
    pid = str(json.loads(done.stdout)["id"])
    done = _cli("--store", str(db), "--actor", "Sam Okafor", "approve", pid, env=env)
    assert done.returncode == 0, done.stderr
    shown = _cli("--store", str(db), "proposal", pid, env=env).stdout
    assert "by Sam Okafor" in shown
    audit = _cli("--store", str(db), "audit", "--json", env=env)
    who = {e["action"]: e["actor"] for e in json.loads(audit.stdout)["events"]}
    assert who["proposal_approved"] == "Sam Okafor"
    assert who["proposal_submitted"] == ACCOUNT  # no name given: the OS account, not lca-tui
    s = make_store(db)
    try:
        add_entries(s, "s1", [("user", "the door code is 4417")])
    finally:
        s.close()
    erased = _cli("--store", str(db), "erase", "--match", "door code", "--yes", "--actor",
                  "Sam Okafor", env=env)
    assert erased.returncode == 0, erased.stdout + erased.stderr
    assert "recall --no-trace" in erased.stdout
    tombs = _cli("--store", str(db), "tombstones", env={**env, "COLUMNS": "160"}).stdout
    assert "Sam Okafor" in tombs
    assert _cli("--store", str(db), "--actor", " ", "audit", env=env).returncode == 2


def test_recall_no_trace_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    s = make_store(db)
    try:
        add_entries(s, "s1", [("user", "the tidewave relay runs on the second host")])
    finally:
        s.close()
    done = _cli("--store", str(db), "recall", "--no-trace", "tidewave relay", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["trace_written"] is False and data["trace_id"] is None
    text = _cli("--store", str(db), "recall", "--no-trace", "tidewave relay").stdout
    assert "no trace written" in text
    s = make_store(db)
    try:
        with s.read() as conn:
            n = conn.exec_driver_sql("SELECT COUNT(*) FROM recall_trace").scalar_one()
        assert n == 0
    finally:
        s.close()


async def test_reveal_asks_audits_and_hides_again_on_leaving(store: Store,
                                                             tmp_path: Path) -> None:
    from lca_tui.app import make_app
    from screens.memories import MemoriesScreen
    from screens.proposal_modals import ConfirmModal

    ids = import_memories(store, tmp_path / "mem", [
        ("vault", "Staging credentials live in vault at secret/ledgerline/staging.",
         {"name": "Where the staging credentials live", "type": "reference",
          "sensitivity": "secret"})])
    secret = next(iter(ids.values()))
    app = make_app(store=store, now=FIXED_NOW, mode="memories")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, MemoriesScreen)
                         and load_count(app.screen) >= 1, what="memories")
        screen = app.screen
        screen.open_memory(secret)
        await wait_until(pilot, lambda: screen.detail is not None
                         and screen.detail.row.id == secret, what="the secret")
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), what="asked")
        await pilot.press("n")  # declined: nothing shown, nothing recorded
        await pilot.pause()
        assert not screen.revealed and not audit_events(store, action="reveal-secret")
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), what="asked")
        await pilot.press("y")
        await wait_until(pilot, lambda: secret in screen.revealed, what="revealed")
        body = screen.query_one("#md-body")
        assert "secret/ledgerline/staging" in rendered_text(body)
        (event,) = audit_events(store, action="reveal-secret")
        assert event.target_ids == (secret,) and event.actor == actor.resolve(None,
                                                                              store.settings)
        assert "ledgerline" not in json.dumps([event.counts, event.target_ids])
        await pilot.press("?")  # another screen on top: leaving hides it
        await pilot.pause()
        assert not screen.revealed
        assert "secret/ledgerline" not in rendered_text(body)


def test_an_in_process_run_s_actor_ends_with_it(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    """``lca_tui.cli.main(["--actor", …])`` run in a program's own process: the next thing
    that process records is not that person's (the suite ran into this: one test's ``--act
    bob`` was recorded on later tests' decisions)."""
    from lca_tui.cli import main

    monkeypatch.delenv("LCA_ACTOR", raising=False)
    make_store(tmp_path / "s.db").close()
    assert main(["--actor", "bob", "--store", str(tmp_path / "s.db"), "stats"],
                settings={"embed.backend": "fallback"}) == 0
    assert actor.resolve(None) == ACCOUNT
