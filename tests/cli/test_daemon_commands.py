"""Hand-run commands answered by the warm daemon: `lca-tui recall` and `lca-tui
search` go to `lca-tui serve` when it runs, with the caller's `--set` (never the daemon's
settings for what the request names) and `--read-only`, and give what the same command gives
in-process; a `--set` the daemon cannot apply per request runs in-process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import lca_tui.output
from lca_tui.cli import main
from store.harness import client, paths
from store.harness.daemon import Daemon
from tests.conftest import CLAUDE_CODE, with_user_config
from tests.helpers_harness import runtime_dir, serving  # noqa: F401


@pytest.fixture
def daemon(tmp_path: Path, runtime_dir: Path) -> Iterator[Daemon]:  # noqa: F811
    with serving(tmp_path / "store.db", **{"embed.backend": "fallback"}) as d:
        assert d.store is not None
        d.store.ingest([CLAUDE_CODE / "short.jsonl"])
        yield d


def _json(capsys: pytest.CaptureFixture[str], *words: str) -> object:
    capsys.readouterr()
    assert main(list(words)) == 0
    return json.loads(capsys.readouterr().out)


def _no_store_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening the store in this process fails the test: the daemon must answer alone."""
    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("the command opened the store itself")

    monkeypatch.setattr(lca_tui.output, "open_from", refuse)


def test_search_through_the_daemon_gives_the_in_process_hits(
        daemon: Daemon, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    st = ["--store", str(daemon.store_path)]
    for mode in ("hybrid", "fts", "semantic"):
        with monkeypatch.context() as m:
            _no_store_here(m)
            warm = _json(capsys, "search", "spotter hooks", "--mode", mode, *st, "--json")
        count = daemon.counts["searches"]
        assert count >= 1
        cold = _json(capsys, "--set", "embed.backend=fallback", "search", "spotter hooks",
                     "--mode", mode, *st, "--json")  # a --set it cannot apply: in-process
        assert daemon.counts["searches"] == count
        assert warm == cold and warm, mode
    # the text output too, and the caller's search.limit, not the daemon's
    with monkeypatch.context() as m:
        _no_store_here(m)
        capsys.readouterr()
        assert main(["search", "spotter hooks", *st, "--set", "search.limit=1"]) == 0
        text = capsys.readouterr().out
    assert daemon.counts["searches"] == count + 1
    one = _json(capsys, "search", "spotter hooks", *st, "--set", "search.limit=1",
                "--json")
    assert isinstance(one, list) and len(one) == 1 and one[0]["text"][:20] in text


def test_recall_through_the_daemon_prints_its_trace_without_opening_the_store(
        daemon: Daemon, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    st = ["--store", str(daemon.store_path)]
    _no_store_here(monkeypatch)
    capsys.readouterr()
    assert main(["recall", "what did we change", *st]) == 0
    out = capsys.readouterr().out
    assert daemon.counts["recalls"] == 1
    assert daemon.store is not None
    newest = daemon.store.traces()[0]
    assert f"trace {newest.id} " in out and "query: what did we change" in out
    assert "pool=" in out and "considered" in out


def test_recall_carries_the_callers_set_to_the_daemon(
        daemon: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    st = ["--store", str(daemon.store_path)]
    assert daemon.store is not None and daemon.store.settings["recall.pool"] != 7
    warm = _json(capsys, "recall", "what did we change", *st, "--set", "recall.pool=7",
                 "--json")
    assert daemon.counts["recalls"] == 1
    assert isinstance(warm, dict) and warm["settings"]["pool"] == 7
    cold = _json(capsys, "--set", "embed.backend=fallback", "recall", "what did we change",
                 *st, "--set", "recall.pool=7", "--json")
    assert daemon.counts["recalls"] == 1  # embed.* is not per request: in this process
    assert isinstance(cold, dict)
    assert [(c["source_id"], c["decision"], c["score"]) for c in warm["candidates"]] == \
        [(c["source_id"], c["decision"], c["score"]) for c in cold["candidates"]]
    assert warm["items"] == cold["items"] and warm["trace_id"] != cold["trace_id"]


def test_a_read_only_request_is_not_recalled_by_the_daemon(daemon: Daemon) -> None:
    sock = paths.socket_path(daemon.store_path)
    base = {"op": "recall", "store": str(daemon.store_path), "query": "what did we change"}
    reply = client.request(sock, dict(base, read_only=True))
    assert reply["ok"] is False and "read-only" in reply["error"]
    assert daemon.counts["recalls"] == 0
    reply = client.request(sock, dict(base, set=["recall.nope=1"]))
    assert reply["ok"] is False
    reply = client.request(sock, dict(base, set=["recall.pool=nonsense"]))
    assert reply["ok"] is False and "recall.pool" in reply["error"]


def _pending(daemon: Daemon, content: str) -> int:
    from tests.helpers_gov import _propose

    assert daemon.store is not None
    return int(_propose(daemon.store, {"op": "add", "type": "feedback", "content": content,
                                       "metadata": {"name": content[:20]}}).id)


def test_approve_through_the_daemon_records_the_callers_actor(
        daemon: Daemon, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon approves (its model warm for the verify step) as the person who ran the
    command — `--actor` here, never the daemon's own LCA_ACTOR — and the command prints what
    it prints in-process; a `--set` runs it in-process, with the same outcome."""
    st = ["--store", str(daemon.store_path)]
    monkeypatch.setenv("LCA_ACTOR", "the-daemons-own")  # the daemon runs in this process
    warm_id = _pending(daemon, "Always run the linter before pushing a branch.")
    cold_id = _pending(daemon, "Keep release notes in the CHANGELOG file.")
    with monkeypatch.context() as m:
        _no_store_here(m)
        doc = _json(capsys, "--actor", "alice", "approve", str(warm_id), *st, "--json")
    assert daemon.counts["approvals"] == 1
    assert isinstance(doc, dict) and doc["status"] == "applied" and doc["verified"] is True
    assert daemon.store is not None
    info = daemon.store.proposal(warm_id)
    assert info.actor == "alice" and info.decisions[-1].actor == "alice"
    cold = _json(capsys, "--actor", "bob", "approve", str(cold_id), *st,
                 "--set", "embed.batch_size=8", "--json")
    assert daemon.counts["approvals"] == 1  # a --set: in this process
    assert isinstance(cold, dict) and cold["status"] == "applied" and cold["verified"] is True
    assert set(cold) == set(doc)
    assert daemon.store.proposal(cold_id).actor == "bob"
    # the text output through the daemon is the in-process one
    third = _pending(daemon, "Prefer small focused commits over large ones.")
    with monkeypatch.context() as m:
        _no_store_here(m)
        capsys.readouterr()
        assert main(["--actor", "alice", "approve", str(third), *st]) == 0
        warm_text = capsys.readouterr().out
    import lca_tui.commands.proposals as cmd

    capsys.readouterr()
    cmd.print_proposal(daemon.store.proposal(third))
    assert warm_text == capsys.readouterr().out


def test_approve_of_what_is_not_pending_fails_the_same_way(
        daemon: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    st = ["--store", str(daemon.store_path)]
    pid = _pending(daemon, "Document every public function in the module.")
    assert main(["approve", str(pid), *st, "--json"]) == 0
    capsys.readouterr()
    assert main(["approve", str(pid), *st]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lca-tui:") and str(pid) in err and "Traceback" not in err


def test_a_read_only_approve_is_not_done_by_the_daemon(daemon: Daemon) -> None:
    pid = _pending(daemon, "Name branches after the issue they fix.")
    sock = paths.socket_path(daemon.store_path)
    reply = client.request(sock, {"op": "approve", "store": str(daemon.store_path),
                                  "proposal_id": pid, "read_only": True})
    assert reply["ok"] is False and "read-only" in reply["error"]
    assert daemon.counts["approvals"] == 0
    assert daemon.store is not None and daemon.store.proposal(pid).status == "pending"


def _scan_doc(doc: object) -> dict[str, object]:
    """A `health --json` document without what differs from one scan to the next (its time,
    duration and id)."""
    assert isinstance(doc, dict) and doc["signals"]
    return {k: v for k, v in doc.items() if k not in ("scanned_at", "duration_ms", "scan_id")}


def _asked(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every reply `lca-tui health` had from the daemon (None: it ran in-process)."""
    import lca_tui.warm

    replies: list[object] = []
    ask = lca_tui.warm.ask

    def recorded(*a: object, **k: object) -> object:
        reply = ask(*a, **k)  # type: ignore[arg-type]
        replies.append(reply)
        return reply

    monkeypatch.setattr(lca_tui.warm, "ask", recorded)
    return replies


def test_health_through_the_daemon_gives_the_in_process_scan(
        daemon: Daemon, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`lca-tui health` goes to the daemon when it runs (the store never opened here) and
    prints what the scan in this process prints: the JSON equal but for the scan's time,
    duration and id, the text equal but for those, `--show` rows included."""
    st = ["--store", str(daemon.store_path)]
    asked = _asked(monkeypatch)
    show = ["--show", "index_lag", "--show", "vector_support"]
    with monkeypatch.context() as m:
        _no_store_here(m)
        warm = _json(capsys, "health", "--no-save", *show, *st, "--json")
    assert asked[-1] is not None
    cold = _json(capsys, "--set", "embed.backend=fallback", "health", "--no-save", *show,
                 *st, "--json")  # a --set the daemon cannot apply: in this process
    assert asked[-1] is None
    assert _scan_doc(warm) == _scan_doc(cold)
    assert isinstance(warm, dict) and warm["scan_id"] is None

    import re

    def text(*words: str) -> str:
        capsys.readouterr()
        main([*words])
        out = capsys.readouterr().out
        out = re.sub(r"health at [0-9-]+ [0-9:]+", "health at T", out)
        return re.sub(r"\(scan [0-9]+ ms", "(scan N ms", out)

    with monkeypatch.context() as m:
        _no_store_here(m)
        warm_text = text("health", "--no-save", *show, *st)
    assert asked[-1] is not None
    cold_text = text("--set", "embed.backend=fallback", "health", "--no-save", *show, *st)
    assert asked[-1] is None
    assert warm_text == cold_text and "index_lag" in warm_text and "not stored" in warm_text


def test_health_through_the_daemon_carries_the_callers_set_read_only_and_writer(
        daemon: Daemon, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller's `--set health.*` thresholds apply to the daemon's scan (never the
    daemon's own); a stored scan is recorded as the caller's (`lca-tui`, not the daemon's
    `lca-tui:serve`); `--read-only` is measured and never stored; a `--set` the daemon
    cannot apply per request runs in-process."""
    from sqlmodel import col, select

    from store.core.db import orm
    from store.health.models import HealthScan

    assert daemon.store is not None
    st = ["--store", str(daemon.store_path)]
    asked = _asked(monkeypatch)
    default = daemon.store.settings["health.duplicate_warn_percent"]
    with monkeypatch.context() as m:
        _no_store_here(m)
        doc = _json(capsys, "health", *st, "--set", "health.duplicate_warn_percent=1.5",
                    "--set", "health.duplicate_fail_percent=2.5", "--json")
        assert asked[-1] is not None
        dup = next(s for s in doc["signals"] if s["name"] == "duplicate_ratio")  # type: ignore
        assert dup["thresholds"] == {"warn": 1.5, "fail": 2.5} and default != 1.5
        assert isinstance(doc, dict) and isinstance(doc["scan_id"], int)
        with daemon.store.read() as conn, orm(conn) as session:
            row = session.exec(select(HealthScan).where(
                col(HealthScan.id) == doc["scan_id"])).one()
        assert row.writer == "lca-tui"
        ro = _json(capsys, "--read-only", "health", *st, "--json")
        assert asked[-1] is not None
        assert isinstance(ro, dict) and ro["scan_id"] is None
    # a bad threshold: one clear line, nothing scanned or stored
    capsys.readouterr()
    stored = len(daemon.store.health_trends().get("duplicate_ratio", []))
    assert main(["health", *st, "--set", "health.duplicate_warn_percent=lots"]) == 2
    assert all(reply is None for reply in asked[3:])
    assert len(daemon.store.health_trends().get("duplicate_ratio", [])) == stored
    assert "health.duplicate_warn_percent" in capsys.readouterr().err
    cold = _json(capsys, "health", "--no-save", *st, "--set", "embed.batch_size=8", "--json")
    assert asked[-1] is None and isinstance(cold, dict) and cold["scan_id"] is None


def test_a_read_only_health_request_is_scanned_and_not_stored(daemon: Daemon) -> None:
    assert daemon.store is not None
    before = daemon.store.health_trends()
    reply = client.request(paths.socket_path(daemon.store_path), {
        "op": "health", "store": str(daemon.store_path), "read_only": True})
    assert reply["ok"] is True and reply["result"]["scan_id"] is None
    assert reply["result"]["signals"] and daemon.store.health_trends() == before


@pytest.mark.parametrize("words", [["health", "--no-save"], ["health", "--show", "index_lag"],
                                   ["recall", "what did we change"],
                                   ["search", "spotter hooks"]])
def test_what_the_daemon_answers_imports_no_store_machinery(daemon: Daemon,
                                                             words: list[str]) -> None:
    """A command the daemon answers costs this process the parser, the socket and the
    printing: neither SQLAlchemy, NumPy, pandas, the model nor the app (a fresh process, its
    import set; the daemon in this one answers it)."""
    from tests.cli.test_lazy_cli import _loaded, _tops

    before = dict(daemon.counts)
    code, loaded = _loaded(*words, "--store", str(daemon.store_path))
    assert code in (0, 1)  # health: exit 1 when a signal fails
    assert daemon.counts["requests"] > before["requests"]
    assert _tops(loaded, ("sqlalchemy", "sqlmodel", "numpy", "pandas", "onnxruntime",
                          "fastembed", "tokenizers", "textual", "detect_secrets")) == set()


def test_health_show_of_an_unknown_signal_fails_as_in_process_and_stores_nothing(
        daemon: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    assert daemon.store is not None
    st = ["--store", str(daemon.store_path)]
    before = daemon.store.health_trends()
    capsys.readouterr()
    assert main(["health", *st, "--show", "no_such_signal"]) == 2
    err = capsys.readouterr().err
    assert "no health signal 'no_such_signal'" in err and "index_lag" in err
    assert daemon.store.health_trends() == before and daemon.counts["errors"] == 0


# -- the caller's settings file goes with the request, never the daemon's own ---------------
def _caller_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """The calling command's settings file (the daemon loaded its own when it started)."""
    cfg = tmp_path / "caller.toml"
    cfg.write_text(with_user_config(text), encoding="utf-8")
    monkeypatch.setenv("LCA_CONFIG", str(cfg))


def test_a_read_only_settings_file_refuses_approve_through_the_daemon(
        daemon: Daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    pid = _pending(daemon, "Name branches after the issue they fix.")
    _caller_config(tmp_path, monkeypatch, "[store]\nread_only = true\n")
    code = main(["approve", str(pid), "--store", str(daemon.store_path)])
    assert code == 2 and "read-only" in capsys.readouterr().err
    assert daemon.store is not None and daemon.store.proposal(pid).status == "pending"
    assert daemon.counts["approvals"] == 0


def test_the_callers_health_thresholds_from_its_settings_file_apply_through_the_daemon(
        daemon: Daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    asked = _asked(monkeypatch)
    _caller_config(tmp_path, monkeypatch,
                   "[health]\nduplicate_warn_percent = 1.5\nduplicate_fail_percent = 2.5\n")
    capsys.readouterr()
    main(["health", "--no-save", "--store", str(daemon.store_path), "--json"])
    warm = json.loads(capsys.readouterr().out)
    assert asked[-1] is not None  # the daemon answered, with the caller's thresholds
    dup = next(s for s in warm["signals"] if s["name"] == "duplicate_ratio")
    assert dup["thresholds"] == {"warn": 1.5, "fail": 2.5}, dup["thresholds"]


def test_a_setting_the_daemon_cannot_apply_per_request_runs_the_command_here(
        daemon: Daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The caller's file sets what the daemon's store was opened with (the pool): the
    daemon declines and the search runs in the caller's process, with the caller's file."""
    asked = _asked(monkeypatch)
    _caller_config(tmp_path, monkeypatch, "[recall]\npool = 7\n")
    assert main(["search", "postgres", "--store", str(daemon.store_path)]) == 0
    assert asked[-1] is None and daemon.counts["searches"] == 0


def test_the_callers_identity_name_is_recorded_through_the_daemon(
        daemon: Daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LCA_ACTOR", raising=False)
    pid = _pending(daemon, "Keep the changelog current.")
    _caller_config(tmp_path, monkeypatch, '[identity]\nname = "carol"\n')
    assert main(["approve", str(pid), "--store", str(daemon.store_path)]) == 0
    assert daemon.store is not None and daemon.counts["approvals"] == 1
    assert daemon.store.proposal(pid).actor == "carol"
