"""Resonance-weighted recall: decisions, the six terms, traces, feedback, derived traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lca_tui.cli import main
from store import Store
from store.recall.run import recall, rerun
from store.governance.feedback import feedback
from store.recall.traces import get_trace, list_traces
from tests.helpers_recall import NOW, add_entries, by_name, import_memories

BODY = ("Deploy the service with the helm chart: run the canary rollout in staging first, "
        "watch the error budget for ten minutes, then promote the release to production.")
QUERY = "how do we deploy the service with the helm canary rollout"
SECRET_WORD = "zebracorn4471"


def with_adjacent(own: float, adj: float | None, mu: float = 0.5) -> float:
    """S as recall computes it: the blend, raised by adjacent support (never lowered)."""
    return own if adj is None else max(own, (own + mu * adj) / (1 + mu))


def _rank_of(result: Any, memory_id: int) -> int:
    return next(c.rank for c in result.trace.candidates
                if c.source_type == "memory" and c.source_id == memory_id)


def _pair(store: Store, tmp_path: Path, worse: dict[str, Any], better: dict[str, Any],
          **recall_kwargs: Any) -> tuple[int, int, Any]:
    """Two memories with the same text (same S), differing only in the given fields; the
    worse one is imported first, so it would win a tie on chunk id."""
    ids = import_memories(store, tmp_path / "mem", [
        ("a-worse", BODY, dict({"name": "deploy guide"}, **worse)),
        ("b-better", BODY, dict({"name": "deploy guide"}, **better)),
    ])
    del ids
    mems = sorted(store.memories(), key=lambda m: m.source_file or "")
    worse_id, better_id = mems[0].id, mems[1].id
    result = recall(store, QUERY, now=NOW, probe=True, **recall_kwargs)
    return worse_id, better_id, result


# -- the six terms: changing only one term's input reorders as the formula says -----------

@pytest.mark.parametrize("term, worse, better, kwargs", [
    ("E", {"hits": 0}, {"hits": 20, "prevented": 2}, {}),
    ("T", {"last_applied": "2025-06-01"}, {"last_applied": "2026-05-31"}, {}),
    ("A", {"authority": "unreviewed"}, {"authority": "approved"}, {}),
    ("Q", {"projects": ["billing"]}, {"projects": ["lca-tui"]}, {"project": "lca-tui"}),
    ("K", {"status": "disputed"}, {"status": "active"}, {}),
])
def test_each_term_reorders(store: Store, tmp_path: Path, term: str, worse: dict[str, Any],
                            better: dict[str, Any], kwargs: dict[str, Any]) -> None:
    worse_id, better_id, result = _pair(store, tmp_path, worse, better, **kwargs)
    cands = {c.source_id: c for c in result.trace.candidates if c.source_type == "memory"}
    w, b = cands[worse_id], cands[better_id]
    assert w.terms["S"] == pytest.approx(b.terms["S"])
    for other in "SETAQK":
        if other != term and not (term == "E" and other == "T"):  # E slows T's decay
            assert w.terms[other] == pytest.approx(b.terms[other]), other
    if term == "K":
        assert w.terms["K"] > b.terms["K"]
    else:
        assert b.terms[term] > w.terms[term]
    assert _rank_of(result, better_id) < _rank_of(result, worse_id)
    weights = result.trace.settings
    expected = (weights["alpha"] * b.terms["S"] + weights["beta"] * b.terms["E"]
                + weights["gamma"] * b.terms["T"] + weights["delta"] * b.terms["A"]
                + weights["epsilon"] * b.terms["Q"] - weights["lambda"] * b.terms["K"])
    assert b.score == pytest.approx(expected, abs=1e-5)
    assert sum(b.contributions.values()) == pytest.approx(b.score, abs=1e-5)


def test_term_tie_without_the_difference(store: Store, tmp_path: Path) -> None:
    """Control for the term tests: with no difference the first imported wins the tie."""
    worse_id, better_id, result = _pair(store, tmp_path, {}, {})
    assert _rank_of(result, worse_id) < _rank_of(result, better_id)


def test_similarity_term_reorders(store: Store, tmp_path: Path) -> None:
    ids = import_memories(store, tmp_path / "mem", [
        ("close", BODY, {"name": "close"}),
        ("far", "Quarterly tax filing deadlines and invoice reminders for the accountant.",
         {"name": "far"}),
    ])
    result = recall(store, QUERY, now=NOW, probe=True)
    close, far = by_name(result)["close"], by_name(result).get("far")
    assert far is not None  # both are in the pool (KNN takes every vector of a tiny store)
    assert close.terms["S"] > far.terms["S"]
    assert _rank_of(result, ids["close"]) < _rank_of(result, ids["far"])


def _keyword_case(store: Store) -> tuple[Any, Any]:
    keyword = "ERRPROXYHANDSHAKE"
    add_entries(store, "s1", [
        ("tool_result", f"{keyword} raised by gateway; long log follows: " + " ".join(
            f"line{i} status ok elapsed {i}ms worker pool idle" for i in range(12))),
        ("tool_result", ("What does it do for us when the upstream link cannot be set up? "
                         "The tunnel could not be established with the remote side.")),
    ])
    result = recall(store, f"what does {keyword} do for us", probe=True, now=NOW)
    cands = [c for c in result.trace.candidates if c.source_type == "entry"]
    exact = next(c for c in cands if keyword in (c.excerpt or ""))
    vague = next(c for c in cands if "tunnel" in (c.excerpt or ""))
    return exact, vague


def test_exact_keyword_beats_vague_paraphrase_through_lex(store: Store) -> None:
    """An exact keyword with low cosine outranks a paraphrase with higher cosine."""
    exact, vague = _keyword_case(store)
    assert exact.cos < vague.cos
    assert exact.lex > vague.lex
    assert exact.rank < vague.rank
    assert exact.terms["S"] == pytest.approx(with_adjacent(0.7 * exact.cos + 0.3 * exact.lex,
                                                           exact.adj), abs=1e-5)
    assert vague.terms["S"] == pytest.approx(with_adjacent(0.7 * vague.cos + 0.3 * vague.lex,
                                                           vague.adj), abs=1e-5)


@pytest.mark.model
def test_exact_keyword_beats_paraphrase_with_the_real_model(tmp_path: Path) -> None:
    """The same with all-MiniLM-L6-v2: the lexical part of S carries the exact match."""
    from tests.conftest import make_store

    try:
        real = make_store(tmp_path / "model.db", **{"embed.backend": "model"})
    except RuntimeError as exc:  # the model cannot load on this machine
        pytest.skip(str(exc))
    try:
        add_entries(real, "s1", [
            ("tool_result", ("gateway log 10:32:01 retry=3 upstream=10.0.0.4 code X7Q2 "
                             "elapsed 420ms pool idle")),
            ("assistant", ("An error like that usually means something went wrong on the "
                           "server side.")),
        ] + [("tool_result", (f"build {i}: error count {i}, which means the lint step "
                              f"reported {i} issues in module m{i}")) for i in range(8)])
        result = recall(real, "what does the error X7Q2 mean", probe=True, now=NOW)
        cands = [c for c in result.trace.candidates if c.source_type == "entry"]
        exact = next(c for c in cands if "X7Q2" in (c.excerpt or ""))
        vague = next(c for c in cands if "server side" in (c.excerpt or ""))
        assert exact.cos < vague.cos and exact.lex > vague.lex
        assert exact.rank < vague.rank
    finally:
        real.close()


# -- decisions -----------------------------------------------------------------------------

def _decisions_store(store: Store, tmp_path: Path) -> dict[str, int]:
    return import_memories(store, tmp_path / "mem", [
        ("current", BODY, {"name": "current", "authority": "approved"}),
        ("old", BODY + " Old flow.", {"name": "old", "status": "superseded"}),
        ("secret", BODY + f" Token {SECRET_WORD}.", {"name": "secret-token",
                                                      "sensitivity": "secret"}),
        ("private", BODY + " Private note.", {"name": "private-note",
                                              "sensitivity": "private"}),
        ("tax", "Quarterly tax filing deadlines and invoice reminders.", {"name": "tax"}),
    ])


def test_decision_superseded_and_historical(store: Store, tmp_path: Path) -> None:
    ids = _decisions_store(store, tmp_path)
    now = recall(store, QUERY, now=NOW)
    old = next(c for c in now.trace.candidates if c.source_id == ids["old"])
    assert old.decision == "superseded" and "historical" in old.reason
    assert old.terms["S"] > 0 and old.excerpt  # still in the trace with its terms
    past = recall(store, QUERY, now=NOW, historical=True)
    assert next(c for c in past.trace.candidates
                if c.source_id == ids["old"]).decision != "superseded"


def test_decision_policy_filtered(store: Store, tmp_path: Path) -> None:
    ids = _decisions_store(store, tmp_path)
    private = recall(store, QUERY, now=NOW, channel="private")
    decided = {c.source_id: c for c in private.trace.candidates}
    assert decided[ids["secret-token"]].decision == "policy_filtered"
    assert decided[ids["private-note"]].decision != "policy_filtered"
    public = recall(store, QUERY, now=NOW, channel="public")
    decided = {c.source_id: c for c in public.trace.candidates}
    assert decided[ids["private-note"]].decision == "policy_filtered"
    assert decided[ids["private-note"]].excerpt is None
    shared = recall(store, QUERY, now=NOW, channel="shared")
    note = next(c for c in shared.trace.candidates if c.source_id == ids["private-note"])
    assert note.terms["K"] == 0.5 and note.decision != "policy_filtered"


def test_decisions_floor_duplicate_budget(store: Store, tmp_path: Path) -> None:
    import_memories(store, tmp_path / "mem", [
        ("one", BODY, {"name": "one"}),
        ("two", BODY, {"name": "one"}),  # the same text: a near-duplicate
        ("three", BODY + " Also check the dashboards.", {"name": "three"}),
        ("four", BODY + " Page the on-call if it fails.", {"name": "four"}),
        ("tax", "Quarterly tax filing deadlines and invoice reminders.", {"name": "tax"}),
    ])
    add_entries(store, "s1", [("user", "how do we deploy with helm canary rollout?")])
    result = recall(store, QUERY, now=NOW, overrides={"memory_items": 2})
    decisions = [c.decision for c in result.trace.candidates]
    assert "duplicate" in decisions
    assert "over_budget" in decisions  # memory slots full, a transcript slot still free
    assert "below_floor" in decisions  # the tax memory
    injected = [c for c in result.trace.candidates if c.decision == "injected"]
    assert sum(c.source_type == "memory" for c in injected) == 2
    floor = result.trace.settings["floor"]
    assert all(c.terms["S"] >= floor for c in injected)
    assert all((c.terms["S"] or 0) < floor for c in result.trace.candidates
               if c.decision == "below_floor")
    full = recall(store, QUERY, now=NOW, overrides={"memory_items": 1, "transcript_items": 0})
    assert "not_selected" in [c.decision for c in full.trace.candidates]
    assert [c.decision for c in full.trace.candidates].count("injected") == 1


def test_budget_and_item_size(store: Store, tmp_path: Path) -> None:
    import_memories(store, tmp_path / "mem", [
        (f"m{i}", BODY + f" Variant {i}: " + "extra words " * (60 + 9 * i), {"name": f"m{i}"})
        for i in range(7)])
    add_entries(store, "s1", [("user", BODY + f" question {i} " + "x " * 500) for i in range(4)])
    result = recall(store, QUERY, now=NOW)
    assert len(result.items) <= 6
    assert sum(i.source_type == "memory" for i in result.items) <= 4
    assert sum(i.source_type == "entry" for i in result.items) <= 2
    assert all(len(i.text) <= 800 for i in result.items)
    assert all(i.source_id > 0 for i in result.items)
    assert all(i.session_id for i in result.items if i.source_type == "entry")


# -- traces --------------------------------------------------------------------------------

def test_secret_text_never_in_a_trace_or_json(store: Store, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _decisions_store(store, tmp_path)
    assert main(["recall", "--store", str(store.opened_as), QUERY + " token", "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert SECRET_WORD not in out
    masked = [c for c in data["candidates"] if c["decision"] == "policy_filtered"]
    assert masked and all(c["text"] is None and c["label"] is None for c in masked)
    assert main(["trace", "--store", str(store.opened_as), str(data["trace_id"]), "--json"]) == 0
    assert SECRET_WORD not in capsys.readouterr().out
    assert main(["trace", "--store", str(store.opened_as), str(data["trace_id"])]) == 0
    assert SECRET_WORD not in capsys.readouterr().out
    with store.read() as conn:
        rows = conn.exec_driver_sql("SELECT * FROM recall_candidate").all()
    assert rows and not any(SECRET_WORD in str(v) for r in rows for v in r)


def test_trace_records_everything(store: Store, tmp_path: Path) -> None:
    _decisions_store(store, tmp_path)
    result = recall(store, QUERY, role="ops", project="lca-tui", channel="shared", now=NOW)
    trace = get_trace(store, result.trace_id)
    assert (trace.query, trace.role, trace.project, trace.channel) == (
        QUERY, "ops", "lca-tui", "shared")
    assert trace.model == store.embedder.name and trace.latency_ms >= 0
    assert trace.settings["floor"] == store.settings["recall.floor"]
    assert trace.considered == len(trace.candidates) == len(result.trace.candidates)
    assert [c.rank for c in trace.candidates] == list(range(1, len(trace.candidates) + 1))
    for c in trace.candidates:
        assert set(c.terms) == set("SETAQK") and all(v is not None for v in c.terms.values())
        assert c.reason and c.decision
    assert list_traces(store)[0].id == trace.id


def test_probe_writes_no_trace(store: Store, tmp_path: Path) -> None:
    _decisions_store(store, tmp_path)
    result = recall(store, QUERY, probe=True)
    assert result.trace_id is None and result.trace.candidates
    assert list_traces(store) == []


def test_feedback_raises_weight_and_trace_keeps_old(store: Store, tmp_path: Path) -> None:
    ids = _decisions_store(store, tmp_path)
    first = recall(store, QUERY, now=NOW)
    item = next(c for c in first.trace.candidates if c.source_id == ids["current"])
    assert item.decision == "injected" and item.terms["E"] == 0
    out = feedback(store, first.trace_id, f"memory:{ids['current']}", "used")
    assert out.recorded and out.hits == 1
    again = feedback(store, first.trace_id, str(item.rank), "used")
    assert not again.recorded
    assert feedback(store, first.trace_id, str(item.rank), "prevented").prevented == 1
    assert store.memory(ids["current"]).hits == 1
    kept = get_trace(store, first.trace_id)
    kept_item = next(c for c in kept.candidates if c.source_id == ids["current"])
    assert kept_item.terms["E"] == 0 and set(kept_item.feedback) == {"used", "prevented"}
    later = recall(store, QUERY, now=NOW)
    assert next(c for c in later.trace.candidates
                if c.source_id == ids["current"]).terms["E"] > 0
    not_injected = next(c for c in first.trace.candidates if c.decision != "injected")
    with pytest.raises(ValueError):
        feedback(store, first.trace_id, str(not_injected.rank), "used")


def test_feedback_cli(store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _decisions_store(store, tmp_path)
    result = recall(store, QUERY, now=NOW)
    assert main(["feedback", "--store", str(store.opened_as), str(result.trace_id),
                 f"memory:{ids['current']}", "--prevented", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["prevented"] == 1


def test_rerun_shows_what_moved(store: Store, tmp_path: Path) -> None:
    ids = _decisions_store(store, tmp_path)
    first = recall(store, QUERY, now=NOW)
    feedback(store, first.trace_id, f"memory:{ids['current']}", "used")
    with store.write() as conn:
        conn.exec_driver_sql(f"UPDATE memory SET status = 'active' WHERE id = {ids['old']}")
    new, moves = rerun(store, first.trace_id, now=NOW)
    assert new.trace.rerun_of == first.trace_id
    old_move = next(m for m in moves if m.pointer == f"memory {ids['old']}")
    assert old_move.old_decision == "superseded" and old_move.new_decision != "superseded"
    assert old_move.changed


def test_recall_json_contract(store: Store, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    _decisions_store(store, tmp_path)
    assert main(["recall", "--store", str(store.opened_as), QUERY, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"trace_id", "latency_ms", "settings", "items", "candidates"} <= set(data)
    assert data["items"] and {"source_type", "source_id", "text", "score"} <= set(
        data["items"][0])
    cand = data["candidates"][0]
    assert {"rank", "source_type", "source_id", "text", "terms", "similarity",
            "contributions", "score", "decision", "reason"} <= set(cand)
    assert set(cand["terms"]) == set("SETAQK") and set(cand["similarity"]) == {"cos", "lex",
                                                                                  "adjacent"}
    assert main(["traces", "--store", str(store.opened_as), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["trace_id"] == data["trace_id"]


# -- MindStone events ----------------------------------------------------------------------

def _event(hits: list[dict[str, Any]]) -> Any:
    from store.core.writes import NewEntry

    meta = {"event": "memory_recall_injected", "role": "event", "runId": "run_abc_12345678",
            "sessionKey": "agent:default:main",
            "metadata": {"event": "memory_recall_injected", "query": "deploy steps",
                         "hitCount": len(hits), "promptTokens": 321, "hits": hits}}
    return NewEntry("event", "memory recall injected", source_key="ms", source_offset=1,
                    ts="2026-05-30T09:00:00Z", meta=meta)


def test_mindstone_event_becomes_trace_and_reindex_rebuilds(store: Store,
                                                             tmp_path: Path) -> None:
    from store.core.writes import NewSession

    ids = _decisions_store(store, tmp_path)
    own = recall(store, QUERY, now=NOW)
    store.append_entries(NewSession(id="ms", format="mindstone-ndjson"), [_event([
        {"id": "deploy-1", "title": "current", "score": 0.81, "providerScore": 0.77,
         "recallMode": "hybrid"},
        {"id": "x", "title": "secret-token", "score": 0.6}])])
    derived = [t for t in list_traces(store) if t.origin == "mindstone-event"]
    assert len(derived) == 1
    trace = get_trace(store, derived[0].id)
    assert trace.query == "deploy steps" and trace.settings["promptTokens"] == 321
    first, second = trace.candidates
    assert (first.source_type, first.source_id, first.score) == ("memory", ids["current"], 0.81)
    assert first.decision == "injected" and "0.770" in first.reason
    assert second.masked and second.label is None
    store.reindex()
    after = list_traces(store)
    assert sum(t.origin == "mindstone-event" for t in after) == 1
    assert any(t.id == own.trace_id for t in after)  # lca-tui's own traces are kept


# -- bench and calibrate -------------------------------------------------------------------

def test_bench_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui import hook_client

    assert main(["bench", "--chunks", "400", "--sample", "100", "--queries", "50",
                 "--embedder", "fallback", "--hook-runs", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    harness = data["harness"]
    assert harness["hook_runs"] == 2
    for key in ("hook_cold_ms", "hook_daemon_ms", "hook_daemon_importing_ms",
                "statusline_cold_ms", "statusline_daemon_ms", "mcp_recall_cold_ms",
                "mcp_recall_daemon_ms"):
        assert 0 < harness[key]["p50"] <= harness[key]["p95"] <= harness[key]["max"]
    assert harness["mcp_recall_cold_ms"]["via"] == "in-process"
    assert harness["mcp_recall_daemon_ms"]["via"] == "daemon"
    assert harness["hook_command"][1:] == ["-S", str(Path(hook_client.__file__).resolve())]
    assert harness["embedding"]["grouped_tokens_per_s"] > 0
    assert data["chunks"] == 400 and data["sample_chunks"] == 100
    assert set(data["recall_ms"]) >= {"p50", "p95", "max"}
    assert data["recall_ms"]["p50"] <= data["recall_ms"]["p95"] <= data["recall_ms"]["max"]
    assert 0 < data["recall_cpu_ms"]["p50"] <= data["recall_cpu_ms"]["p95"]
    assert data["first_recall_cpu_ms"] > 0
    assert data["ingest_per_s"] > 0 and data["bytes_per_1k_chunks"] > 0
    assert data["index_to_raw"] > 0 and data["queries"] == 50
    assert "not computed by the embedder" in data["method"]
    assert "model vectors" not in data["method"]  # the fallback made them
    assert set(data["health_scan_ms"]) >= {"first", "p50", "max"}
    assert data["health_status"] in ("ok", "warn", "fail", "unknown")


def test_calibrate_on_real_transcripts(cc_store: Store,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from store.recall.calibrate import calibrate

    result = calibrate(cc_store)
    assert result.cues > 3
    p = result.answer_S
    assert p["p10"] <= p["p25"] <= p["p50"] <= p["p75"] <= p["p90"]
    assert result.suggested_floor is not None and p["p25"] is not None
    assert 0 <= result.suggested_floor <= p["p25"]
    assert main(["calibrate", "--store", str(cc_store.opened_as), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cues"] == result.cues


# -- review fixes: embedders, pool size, harness figures, bench storage ---------------------

def test_other_embedders_vectors_are_not_compared(tmp_path: Path) -> None:
    """Chunks another embedder wrote keep cos None (S from lex only) and say why; the
    vector copy holds only the current embedder's vectors."""
    from store.core.embed import HashEmbedder
    from store.recall.pool import cache_for
    from tests.conftest import make_store, store_target

    class Other(HashEmbedder):
        name = "some-other-model"

    first = Store(store_target(tmp_path / "mix.db"), embedder=Other())
    add_entries(first, "old", [("user", "the quokka migration runbook for the ledger"),
                               ("assistant", "run the quokka migration after the backup")])
    first.close()
    store = make_store(tmp_path / "mix.db")
    try:
        add_entries(store, "new", [("user", "quokka migration notes from today")])
        result = recall(store, "quokka migration", probe=True, now=NOW)
        entries = [c for c in result.trace.candidates if c.source_type == "entry"]
        foreign = [c for c in entries if c.session_id == "old"]
        own = [c for c in entries if c.session_id == "new"]
        assert len(foreign) == 2 and len(own) == 1
        for c in foreign:
            assert c.cos is None and c.lex > 0
            assert c.terms["S"] == pytest.approx(with_adjacent(0.3 * c.lex, c.adj), abs=1e-5)
            assert ("vector from another embedder (some-other-model): cosine not comparable"
                    in c.reason)
        assert own[0].cos is not None and "another embedder" not in own[0].reason
        with store.read() as conn:
            theirs = {int(r[0]) for r in conn.exec_driver_sql(
                "SELECT id FROM chunk WHERE model = 'some-other-model'").all()}
        assert theirs
        if not store.on_server:  # a server's recall asks its index: no copy in this process
            held = set(cache_for(store).ids.tolist())
            assert not theirs & held and held
    finally:
        store.close()


def test_interleave_takes_rankings_in_turn_until_pool_sources() -> None:
    from store.recall.pool import _interleave

    knn = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6)]
    fts = [(10, 9.0), (2, 8.0), (11, 7.0), (12, 6.0)]
    src = {c: (("entry", c), "m") for c in (1, 2, 3, 4, 10, 11, 12)}
    src[3] = (("entry", 1), "m")  # a second chunk of chunk 1's source
    taken, sources, full = _interleave(knn, fts, src, 4)
    # 1 (cos), 10 (bm25), 2 (cos), 2 again skipped, 3 (same source as 1: kept, not counted),
    # 11 (bm25) makes four sources; 4 would be a fifth
    assert taken == [1, 10, 2, 3, 11] and sources == 4 and full


def test_pool_is_at_most_pool_sources(store: Store) -> None:
    from store.core import vec

    add_entries(store, "s1", [("user", (f"deploy note {i}: helm canary rollout step {i} "
                                       f"for service{i}")) for i in range(40)]
                + [("tool_result", "zorblax handshake failed during deploy")])
    query = "helm canary rollout zorblax"
    result = recall(store, query, probe=True, now=NOW, overrides={"pool": 10})
    assert result.trace.considered == len(result.trace.candidates) == 10
    qvec = store.embedder.embed([query])[0]
    with store.read() as conn:
        best_cos = vec.knn(conn, qvec, 1)[0][0]  # the backend's own vector search
        best_bm25 = vec.fts_search(conn, query, 1)[0][0]
    chunks = {c.chunk_id for c in result.trace.candidates}
    assert best_cos in chunks and best_bm25 in chunks
    assert recall(store, query, probe=True, now=NOW).trace.considered == 41  # all, under 50


def test_a_deeper_pool_reads_a_ranking_it_has_whole_only_once(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The asking session's live window holds every entry, so the pool is read deeper and
    deeper until the vectors run out; the one FTS match was all there was after the first
    read: it is not searched again (each search cost ~0.4 ms of a hook)."""
    from store.core import vec
    from store.recall import pool
    from store.recall.pool import LiveWindow

    add_entries(store, "s1", [("user", f"deploy note {i}: helm canary rollout step {i}")
                              for i in range(40)]
                + [("tool_result", "zorblax handshake failed during deploy")])
    calls = {"fts": 0, "knn": 0}
    real_fts, real_knn, real_cached = vec.fts_search, vec.knn, pool.VectorCache.knn

    def fts(*args: Any, **kwargs: Any) -> Any:
        calls["fts"] += 1
        return real_fts(*args, **kwargs)

    def knn(*args: Any, **kwargs: Any) -> Any:  # a server's (its index)
        calls["knn"] += 1
        return real_knn(*args, **kwargs)

    def cached(self: Any, *args: Any, **kwargs: Any) -> Any:  # a file's (the warm copy)
        calls["knn"] += 1
        return real_cached(self, *args, **kwargs)

    monkeypatch.setattr(vec, "fts_search", fts)
    monkeypatch.setattr(vec, "knn", knn)
    monkeypatch.setattr(pool.VectorCache, "knn", cached)
    result = recall(store, "zorblax", probe=True, now=NOW, overrides={"pool": 10},
                    live=LiveWindow("s1"), channel="private")
    assert result.trace.considered == 0  # all of it in the live window
    # read deeper 3+ times (a file's copy also searches the held-back rows once); FTS: the
    # allowed ranking once, the held-back rows once
    assert calls["knn"] >= 3 and calls["fts"] == 1 + 1


def test_a_sources_best_chunk_gone_its_next_best_is_the_candidate(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only each source's best chunk is read; when it is gone by then (a server reads each
    statement afresh), the source's next best chunk is its candidate, as when every chunk
    was read."""
    from store.recall import run

    add_entries(store, "s1", [("user", f"deploy note {i}: helm canary rollout step {i}")
                              for i in range(5)])
    plain = recall(store, "helm canary rollout", probe=True, now=NOW)
    real = run.pool_candidates
    gone = 10 ** 9

    def with_a_gone_chunk(*args: Any, **kwargs: Any) -> Any:
        got = real(*args, **kwargs)
        first = min(got.found)
        got.found[gone] = (1.0, 1.0)  # better than any: that source's best, if it existed
        got.source[gone] = got.source[first]
        return got

    monkeypatch.setattr(run, "pool_candidates", with_a_gone_chunk)
    again = recall(store, "helm canary rollout", probe=True, now=NOW)
    assert [(c.source_type, c.source_id, c.chunk_id, c.score)
            for c in again.trace.candidates] == [
        (c.source_type, c.source_id, c.chunk_id, c.score) for c in plain.trace.candidates]


def test_harness_scores_are_not_cosines(store: Store, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from store.core.writes import NewSession

    store.append_entries(NewSession(id="ms", format="mindstone-ndjson"), [_event([
        {"id": "deploy-1", "title": "deploy", "score": 0.81, "providerScore": 0.77,
         "recallMode": "hybrid", "scri": 0.42}])])
    trace_id = list_traces(store)[0].id
    cand = get_trace(store, trace_id).candidates[0]
    assert cand.cos is None and cand.harness == {"score": 0.81, "providerScore": 0.77,
                                                 "scri": 0.42, "recallMode": "hybrid"}
    assert main(["trace", "--store", str(store.opened_as), str(trace_id), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["candidates"][0]
    assert data["similarity"]["cos"] is None and data["harness"]["providerScore"] == 0.77
    assert main(["trace", "--store", str(store.opened_as), str(trace_id)]) == 0
    out = capsys.readouterr().out
    assert "latency unknown (harness trace)" in out and "latency  ms" not in out
    assert "harness's own figures: score 0.810, provider score 0.770" in out
    assert "hits=" not in out


def test_find_candidate_names_the_trace(store: Store, tmp_path: Path) -> None:
    from store.core.errors import NotFound

    _decisions_store(store, tmp_path)
    result = recall(store, QUERY, now=NOW)
    with pytest.raises(NotFound, match=rf"`lca-tui trace {result.trace_id}` lists them"):
        feedback(store, result.trace_id, "memory:99999", "used")


@pytest.mark.sqlite_only("the WAL and page counts of the bench's SQLite file")
def test_bench_storage_is_measured_before_recalls_without_wal(tmp_path: Path) -> None:
    from store.bench import run_bench

    keep = tmp_path / "bench"
    keep.mkdir()
    r = run_bench(chunks=400, queries=50, sample=100, embedder="fallback", keep=keep)
    db = keep / "bench.db"
    wal = Path(f"{db}-wal")
    final = db.stat().st_size
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed after the recalls
    assert r.trace_bytes > 0
    assert r.bytes_total < final  # the bench's own traces came after the measurement
    reopened = Store(db)
    try:
        with reopened.write() as conn:
            conn.exec_driver_sql("DELETE FROM recall_trace")
        with reopened.read() as conn:
            page = int(conn.exec_driver_sql("PRAGMA page_size").scalar_one())
            used = int(conn.exec_driver_sql("PRAGMA page_count").scalar_one()) - int(
                conn.exec_driver_sql("PRAGMA freelist_count").scalar_one())
    finally:
        reopened.close()
    assert abs(used * page - r.bytes_total) <= 8 * page  # the store without its traces
    assert "lca-hash-fallback-v1 vectors (the fallback" in r.method
    assert "model vectors" not in r.method


def test_bench_refuses_store(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["bench", "--store", str(tmp_path / "mine.db"), "--chunks", "400",
                 "--embedder", "fallback"]) != 0
    assert "--store is not accepted" in capsys.readouterr().err
    assert not (tmp_path / "mine.db").exists()
