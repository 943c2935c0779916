"""`lca-tui eval locomo`: evidence recall on LoCoMo-shaped data, and recall's adjacent support.

The conversations here are the project's own (``tests/data/locomo/mini.json``, written in
LoCoMo's shape); LoCoMo's data itself is never shipped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from store import NewEntry, NewSession, Store
from store.evals import locomo
from store.recall.traces import Candidate

MINI = Path(__file__).resolve().parents[1] / "data" / "locomo" / "mini.json"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lca_tui.cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_questions_keep_categories_one_to_four_with_evidence() -> None:
    conv = locomo.load(MINI)[0]
    qs = locomo.questions(conv)
    # category 5 (adversarial) and a question without evidence are left out
    assert [q.category for q in qs] == [4, 4, 1, 3, 2]
    assert qs[2].evidence == ("D1:4", "D2:3")
    assert len(locomo.questions(conv, limit=2)) == 2


def test_session_dates_and_turn_text() -> None:
    assert locomo.parse_session_date("9:15 am on 3 March, 2024") == "2024-03-03T09:15:00.000Z"
    assert locomo.parse_session_date("6:40 pm on 21 April, 2024") == "2024-04-21T18:40:00.000Z"
    assert locomo.parse_session_date("sometime") is None
    turn = {"speaker": "Ada", "text": "Look at this!", "blip_caption": "a grey dog"}
    assert locomo.turn_text(turn) == "Ada: Look at this! [shares a photo: a grey dog]"


def test_first_evidence_rank_counts_positions_in_rank_order() -> None:
    def cand(rank: int, source_id: int, source_type: str = "entry") -> Candidate:
        return Candidate(rank=rank, source_type=source_type, source_id=source_id,
                         decision="", reason="")

    dia_of = {10: "D1:1", 11: "D1:2", 12: "D1:3"}
    cands = [cand(3, 12), cand(1, 10), cand(2, 7, "memory")]
    assert locomo.first_evidence_rank(cands, dia_of, ("D1:3",)) == 3
    assert locomo.first_evidence_rank(cands, dia_of, ("D1:1", "D1:3")) == 1
    assert locomo.first_evidence_rank(cands, dia_of, ("D9:9",)) is None
    asked = [locomo.Asked(locomo.Question("c", "q", 4, ()), r, 1.0) for r in (1, 4, None, 12)]
    assert [locomo.recall_at(asked, k) for k in locomo.KS] == [0.25, 0.5, 0.5, 0.75]


def test_run_imports_each_conversation_and_asks_through_recall(tmp_path: Path) -> None:
    report = locomo.run(MINI, workdir=tmp_path)
    assert [c.id for c in report.conversations] == ["mini-1", "mini-2"]
    first = report.conversations[0]
    assert (first.sessions, first.turns, len(first.asked)) == (2, 9, 5)
    # nine turns: every one is a candidate, so every question is found within 20
    assert report.recall_at(20) == 1.0
    # and each question's first evidence turn at the rank the fallback embedder gives it
    assert [a.first_rank for c in report.conversations for a in c.asked] == [3, 2, 1, 2, 1, 1]
    assert report.recall_at(1) == pytest.approx(3 / 6)
    assert all(a.latency_ms > 0 for a in report.asked)
    assert 0.0 <= report.recall_at(1) <= report.recall_at(5) <= report.recall_at(10)
    # the scratch stores are gone: nothing is left beside the work folder (but the test
    # user's own config folder, which the isolation put there)
    assert [p.name for p in tmp_path.iterdir()] == ["xdg_config_home"]


def test_cli_json_and_table(tmp_path: Path) -> None:
    got = _cli("eval", "locomo", str(MINI), "--conversations", "mini-2", "--json")
    assert got.returncode == 0, got.stderr
    data = json.loads(got.stdout)
    assert data["questions"] == 1 and [c["id"] for c in data["conversations"]] == ["mini-2"]
    assert set(data) >= {"R@1", "R@5", "R@10", "R@20", "latency_ms", "by_category", "model"}
    assert data["R@20"] == 1.0
    table = _cli("eval", "locomo", str(MINI), "--per-conversation", "1")
    assert table.returncode == 0, table.stderr
    assert "mini-1" in table.stdout and "recall latency" in table.stdout


@pytest.mark.parametrize("content, expected", [
    (None, "no such file"),
    ("{not json", "not JSON"),
    ('{"a": 1}', "expected a JSON list"),
    ('[{"sample_id": "x"}]', "is not a LoCoMo conversation"),
])
def test_bad_files_give_one_line(tmp_path: Path, content: str | None, expected: str) -> None:
    path = tmp_path / "data.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    got = _cli("eval", "locomo", str(path))
    assert got.returncode == 2
    assert expected in got.stderr and "Traceback" not in got.stderr
    assert len(got.stderr.strip().splitlines()) == 1


def test_unknown_conversation_is_named() -> None:
    got = _cli("eval", "locomo", str(MINI), "--conversations", "conv-99")
    assert got.returncode == 2 and "no conversation conv-99" in got.stderr
    assert "mini-1, mini-2" in got.stderr


def _dialogue(store: Store) -> None:
    store.append_entries(NewSession(id="s1", format="test"), [
        NewEntry(kind="user", content=text, source_key=f"t:{i}")
        for i, text in enumerate([
            "The weather in the valley was cold all week.",
            "Which database did the team pick for the billing service?",
            "They went with the one they already run everywhere else.",
            "Lunch was noodles again.",
        ])])


def test_adjacent_support_raises_the_answer_after_its_question(store: Store) -> None:
    _dialogue(store)
    query = "which database did the team pick for billing"
    on = {c.seq: c for c in store.recall(query).trace.candidates}
    off = {c.seq: c for c in store.recall(query, overrides={"adjacent_weight": 0.0}
                                          ).trace.candidates}
    answer_on, answer_off = on[2], off[2]
    assert answer_off.adj is None
    assert answer_on.adj is not None and answer_on.adj == pytest.approx(on[1].terms["S"])
    mu = 0.5
    own = answer_off.terms["S"]
    assert answer_on.terms["S"] == pytest.approx(max(own, (own + mu * answer_on.adj) / (1 + mu)),
                                                 abs=1e-5)
    assert answer_on.terms["S"] > own
    # never lowered: the question itself keeps at least its own S
    assert on[1].terms["S"] >= off[1].terms["S"] - 1e-9
    # the figure is in the stored trace and its JSON
    stored = store.trace(store.recall(query).trace_id or 0)
    assert any(c.adj is not None for c in stored.candidates)
    assert "adjacent" in stored.candidates[0].to_json()["similarity"]


def test_a_held_back_neighbour_lends_no_support(store: Store) -> None:
    """A secret entry never enters the ranking, not even by raising the entry beside it."""
    store.append_entries(NewSession(id="s2", format="test"), [
        NewEntry(kind="user", content="Which database did the team pick for billing?",
                 source_key="t:0", sensitivity="secret"),
        NewEntry(kind="assistant", content="They went with the one they already run.",
                 source_key="t:1"),
    ])
    cands = {c.seq: c for c in store.recall("which database did the team pick for billing"
                                            ).trace.candidates}
    assert cands[1].adj is None
    assert cands[0].decision == "policy_filtered"


def test_a_conversation_id_never_names_a_path(tmp_path: Path) -> None:
    """The scratch stores are named by position: an id like ``../x`` or an absolute path
    writes nothing outside the temporary folder, and never the user's store."""
    data = json.loads(MINI.read_text(encoding="utf-8"))[1:]
    target = tmp_path / "userstore"
    data[0]["sample_id"] = str(target)
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    report = locomo.run(path, workdir=work)
    assert [c.id for c in report.conversations] == [str(target)]
    assert not (tmp_path / "userstore.db").exists() and list(work.iterdir()) == []


@pytest.mark.parametrize("change, expected", [
    ({"question": "  "}, "qa 0: an empty question"),
    ({"evidence": "D1:1"}, "qa 0: evidence must be a list of turn ids"),
    ({"category": "4"}, "qa 0: category must be a whole number"),
    ({"category": True}, "qa 0: category must be a whole number"),
])
def test_a_malformed_question_is_named(tmp_path: Path, change: dict[str, object],
                                       expected: str) -> None:
    data = json.loads(MINI.read_text(encoding="utf-8"))[1:]
    data[0]["qa"][0].update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    got = _cli("eval", "locomo", str(path))
    assert got.returncode == 2 and "conversation mini-2, " + expected in got.stderr
    assert "Traceback" not in got.stderr


def test_a_conversation_without_turns_is_refused(tmp_path: Path) -> None:
    data = json.loads(MINI.read_text(encoding="utf-8"))[1:]
    data[0]["conversation"] = {}
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(locomo.LocomoError, match="conversation mini-2 has no session_N turns"):
        locomo.run(path)


def test_evidence_written_as_one_string_is_split() -> None:
    assert locomo.evidence_ids(["D8:6; D9:17", " D1:2 "]) == ("D8:6", "D9:17", "D1:2")


def test_a_neighbour_of_another_embedder_lends_no_cosine(store: Store) -> None:
    """A neighbour whose vector another embedder made is not comparable: it lends its
    lexical part only (as the pool treats such a chunk), never its cosine."""
    _dialogue(store)
    query = "which database did the team pick for billing"
    with store.write() as conn:
        conn.exec_driver_sql("UPDATE chunk SET model = 'another-model' WHERE source_id = ("
                             "SELECT id FROM entry WHERE seq = 1)")
    store.drop_vector_cache()
    cands = {c.seq: c for c in store.recall(query).trace.candidates}
    w = 0.7
    if 1 in cands:
        assert cands[1].cos is None
        assert cands[2].adj == pytest.approx((1 - w) * (cands[1].lex or 0.0), abs=1e-5)
    else:  # the neighbour found by no search: its lexical part is 0
        assert cands[2].adj in (None, 0.0)
