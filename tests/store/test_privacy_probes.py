"""The erasure's probes and their re-verification, proofs that never lie: the semantic probe
measures what a match or regex removed (the text around each span), so a near-copy without
the word is no leak while a paraphrase kept elsewhere still fails; re-verification reruns the
lexical probes from keyed fingerprints and never turns a failed verdict into a pass from fewer
probes; a FAIL is cleared by erasing what leaked (``after_tombstone``)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from store import Store
from tests.helpers_recall import add_entries

HEAD = ("The build server reads its configuration from the deploy folder on every start and "
        "writes the release notes into the changelog before the image is tagged; the staging "
        "database is migrated first, then the smoke tests run against the public endpoint, "
        "and only then the production rollout begins with one canary instance per region")
SECRET_LINE = ("the private key for the tidewave relay sits in the second drawer of the desk "
               "next to the window")
PARAPHRASE = ("the private key for the relay sits in the second drawer of the desk "
              "next to the window")
SENTENCE = r"the private key for the tidewave relay[^.]*"
"""A regex scope removing the whole sentence: PARAPHRASE restates what it removed."""


def _probe(result, name: str):
    return next(p for p in result.verification.probes if p.name == name)


def test_a_near_copy_without_the_word_is_no_semantic_leak(store: Store) -> None:
    """The tidewave case: another record whose text equals the redacted entry's head but does
    not hold the word; every probe passes (the old probe failed semantic at cosine ≥ 0.98)."""
    add_entries(store, "s1", [("tool_result", f"{HEAD}. Also, {SECRET_LINE}.")])
    add_entries(store, "s2", [("tool_result", f"{HEAD}.")])
    result = store.redact(match="tidewave")
    assert result.verification.passed, [(p.name, p.detail) for p in
                                        result.verification.probes if not p.passed]
    assert "removed span" in _probe(result, "semantic").detail


def test_a_hit_near_only_the_context_that_stays_is_no_leak(store: Store) -> None:
    """The real-transcript case: a sibling path (another controller in the same folder) is
    near the line the matched file name was removed from, but not near the name itself."""
    add_entries(store, "s1", [("tool_result", "- `lib/spotter_web/controllers/"
                               "session_hook_controller.ex`\n- `config/config.exs`")])
    add_entries(store, "s2", [("tool_result", "The file /home/USER/spotter/lib/spotter_web/"
                               "controllers/hooks_controller.ex has been updated.")])
    result = store.erase(match="session_hook_controller")
    semantic = _probe(result, "semantic")
    assert semantic.passed, semantic.detail


def test_a_paraphrase_kept_elsewhere_fails_the_semantic_probe(store: Store) -> None:
    """The sentence a regex removed, restated in another entry without its rare word: the
    substring and FTS probes cannot see it, the semantic probe does, and names it."""
    add_entries(store, "s1", [("user", f"Remember: {SECRET_LINE}.")])
    (leak,) = add_entries(store, "s2", [("assistant", f"Noted: {PARAPHRASE}.")])
    result = store.redact(regex=SENTENCE)
    semantic = _probe(result, "semantic")
    assert not semantic.passed and not result.verification.passed
    assert f"(entry {leak})" in semantic.detail and "--after-tombstone" in semantic.detail
    assert _probe(result, "substring").passed  # the word itself is gone everywhere


def test_an_erased_entry_seeded_into_an_unrelated_chunk_still_fails(store: Store) -> None:
    (gone,) = add_entries(store, "s1", [("user", f"{HEAD}. {SECRET_LINE}.")])
    add_entries(store, "s2", [("assistant", f"{HEAD}. {PARAPHRASE}.")])
    result = store.erase(entry=gone)
    assert not _probe(result, "semantic").passed


def test_reverification_never_turns_a_failed_verdict_into_a_pass(store: Store) -> None:
    add_entries(store, "s1", [("user", f"Remember: {SECRET_LINE}.")])
    (leak,) = add_entries(store, "s2", [("assistant", f"Noted: {PARAPHRASE}.")])
    first = store.redact(regex=SENTENCE)
    tid = first.tombstone_id
    assert not first.verification.passed
    ((_, again),) = store.verify_tombstones(tid)
    assert not again.passed
    carried = next(p for p in again.probes if p.name == "earlier-verdict")
    assert "semantic" in carried.detail and "cannot run again" in carried.detail
    (tomb,) = [t for t in store.tombstones() if t.id == tid]
    assert tomb.verified is False
    # every verdict is kept, with its time
    with store.read() as conn:
        rows = conn.execute(text("SELECT passed, ts FROM erasure_verification WHERE "
                                 "tombstone_id = :t ORDER BY id"), {"t": tid}).all()
    assert [r[0] for r in rows] == [0, 0] and all(r[1] for r in rows)
    # erasing what leaked, linked to the earlier tombstone, clears it
    fixed = store.erase(entry=leak, after_tombstone=tid)
    assert fixed.verification.passed
    (tomb,) = [t for t in store.tombstones(with_probes=True) if t.id == tid]
    assert tomb.verified is True
    assert tomb.probes[0][0] == "cleared-by" and f"tombstone {fixed.tombstone_id}" in \
        tomb.probes[0][2]
    ((_, later),) = store.verify_tombstones(tid)  # a clear is not undone by re-verifying
    assert later.passed


def test_reverification_reruns_the_lexical_probes_from_fingerprints(store: Store) -> None:
    add_entries(store, "s1", [("user", f"Remember: {SECRET_LINE}.")])
    result = store.redact(match="tidewave")
    assert result.verification.passed
    ((_, clean),) = store.verify_tombstones(result.tombstone_id)
    assert clean.passed and {"fts", "substring"} <= {p.name for p in clean.probes}
    with store.read() as conn:  # the erased word is kept nowhere, only keyed fingerprints
        meta = conn.execute(text("SELECT value FROM store_meta WHERE key LIKE :k"),
                            {"k": "privacy.terms.%"}).scalar_one()
    assert "tidewave" not in meta
    add_entries(store, "s3", [("user", "the Tidewave relay is back")])
    ((_, dirty),) = store.verify_tombstones(result.tombstone_id)
    failed = {p.name for p in dirty.probes if not p.passed}
    assert {"fts", "substring"} <= failed and not dirty.passed


def test_a_compound_word_whose_tokens_live_elsewhere_reverifies_clean(store: Store) -> None:
    """The demo's ``ledgerline_test`` case: FTS indexes the match as ``ledgerlin`` and
    ``test``, both held by other rows that stay. The erasure passes, and so must its
    re-verification: only stems no remaining row held after the erasure are fingerprinted."""
    add_entries(store, "s1", [("user", "run the ledgerline_test suite before merging")])
    add_entries(store, "s2", [("assistant", "the ledgerline service has a test for it")])
    result = store.redact(match="ledgerline_test")
    assert result.verification.passed
    ((_, again),) = store.verify_tombstones(result.tombstone_id)
    fts = next(p for p in again.probes if p.name == "fts")
    assert again.passed and fts.passed, [(p.name, p.detail) for p in again.probes]
    # the compound word coming back is still caught (by the substring probe)
    add_entries(store, "s3", [("user", "ledgerline_test is back")])
    ((_, dirty),) = store.verify_tombstones(result.tombstone_id)
    assert not dirty.passed and "substring" in {p.name for p in dirty.probes if not p.passed}


def test_a_passing_reverification_names_the_probes_it_did_not_rerun(store: Store) -> None:
    add_entries(store, "s1", [("user", f"Remember: {SECRET_LINE}.")])
    result = store.redact(match="tidewave")
    ((_, again),) = store.verify_tombstones(result.tombstone_id)
    assert again.passed and again.not_rerun is not None
    assert {"semantic", "traces"} <= set(again.not_rerun)
    assert not {"fts", "substring", "rows", "exports"} & set(again.not_rerun)
    assert any(n.startswith("raw-bytes by content") for n in again.not_rerun)
    assert again.to_json()["not_rerun"] == again.not_rerun
    assert "not_rerun" not in result.verification.to_json()  # the erasure's own ran them all


def test_the_verify_command_says_what_it_did_not_rerun(
        store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    add_entries(store, "s1", [("user", f"Remember: {SECRET_LINE}.")])
    tid = store.redact(match="tidewave").tombstone_id
    path = str(store.opened_as)  # the file, or the server's URL
    store.close()
    assert main(["tombstones", "--store", path, "--verify", str(tid)]) == 0
    text = capsys.readouterr().out
    assert "not rerun (they need the erased text, kept nowhere): " in text
    assert "semantic" in text.split("not rerun")[1]
    assert main(["tombstones", "--store", path, "--verify", str(tid), "--json"]) == 0
    (done,) = json.loads(capsys.readouterr().out)["verified"]
    assert done["passed"] and "semantic" in done["not_rerun"]


def test_the_fts_probe_counts_its_queries_in_words_that_agree(store: Store) -> None:
    """Issue 22 nit: "1 phrase and 1 distinctive-word queries"."""
    add_entries(store, "s1", [("user", f"Remember: {SECRET_LINE}.")])
    fts = _probe(store.redact(match="tidewave"), "fts")
    assert "1 phrase query and 1 distinctive-word query:" in fts.detail, fts.detail
