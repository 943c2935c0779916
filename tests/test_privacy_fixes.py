"""Issue 12, after review: text scopes match content only, exports named by what they hold,
erasure leftovers cleaned later, secret text masked in the CLI, the demo's private detail,
tombstones verified again, ids never reused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from store import Store
from store.privacy import apply
from store.privacy.api import preview, run, scope_from
from store.privacy.content import METADATA, is_content
from store.privacy.tables import relational_tables


def _open(path: Path) -> Store:
    return Store(path)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from lca_tui.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _entries_with(store: Store, needle: str) -> set[int]:
    with store.read() as conn:
        return {int(r[0]) for r in conn.execute(text(
            "SELECT id FROM entry WHERE instr(lower(content), :n)"), {"n": needle.lower()})}


# -- 1. content columns only ---------------------------------------------------------------
def test_text_scopes_match_content_not_metadata(demo_path: Path) -> None:
    """``main`` is every entry's agent, ``lca-tui`` every row's writer, ``claude-opus`` the
    model in meta and a date every ``ts``: only the entries whose text holds them match."""
    with _open(demo_path) as store:
        main = preview(store, scope_from(match="main"))
        assert main.delete.get("entry") and len(main.delete["entry"]) == len(
            _entries_with(store, "main"))
        assert preview(store, scope_from(match="lca-tui")).counts() == {}
        opus = preview(store, scope_from(match="claude-opus"))
        assert len(opus.delete["entry"]) == len(_entries_with(store, "claude-opus")) == 1
        with store.read() as conn:
            day = str(conn.execute(text("SELECT substr(ts, 1, 10) FROM entry WHERE id = 1"))
                      .scalar_one())
        dated = preview(store, scope_from(match=day)).delete.get("entry", set())
        assert len(dated) == len(_entries_with(store, day))
        # mark uses the same definition
        counts = store.mark("private", match="main")
        assert counts["entry"] == len(main.delete["entry"])


def test_redact_never_rewrites_metadata(demo_path: Path) -> None:
    with _open(demo_path) as store:
        with store.read() as conn:
            before = conn.execute(text("SELECT id, agent, kind, ts, writer, session_id "
                                       "FROM entry ORDER BY id")).all()
        result = run(store, scope_from(match="main"), "redact")
        assert result.tombstone_id is not None
        with store.read() as conn:
            after = conn.execute(text("SELECT id, agent, kind, ts, writer, session_id "
                                      "FROM entry ORDER BY id")).all()
            models = conn.execute(text("SELECT count(*) FROM entry WHERE meta LIKE "
                                       "'%claude-opus%'")).scalar_one()
        assert before == after and models > 100
        # `tool_result` is an entry kind (a CHECK guards it): only texts holding it change
        result = run(store, scope_from(match="tool_result"), "redact")
        with store.read() as conn:
            kinds = conn.execute(text("SELECT count(*) FROM entry WHERE kind = 'tool_result'"))
            assert kinds.scalar_one() > 0


def test_a_database_error_in_redact_is_one_line_and_changes_nothing(
        demo_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewrite the schema refuses (a CHECK on ``entry.kind``) rolls back: ErasureFailed,
    and the CLI says so on one line."""
    with _open(demo_path) as store:
        c = preview(store, scope_from(match="dana.r@example.com"), "redact")
        row = next(iter(c.scrub["entry"]))
        c.scrub["entry"][row]["kind"] = "[REDACTED]"
        with store.read() as conn:
            before = conn.execute(text("SELECT id, kind, content FROM entry")).all()
        with pytest.raises(apply.ErasureFailed, match="nothing was changed"):
            run(store, scope_from(match="dana.r@example.com"), "redact", closure=c)
        with store.read() as conn:
            assert conn.execute(text("SELECT id, kind, content FROM entry")).all() == before
            assert conn.execute(text("SELECT count(*) FROM tombstone")).scalar_one() == 0
    from store.privacy import redaction

    real = redaction.redact_text

    def with_kind(conn: Any, c: Any, matcher: Any) -> None:
        real(conn, c, matcher)
        for values in c.scrub.get("entry", {}).values():
            values["kind"] = "[REDACTED]"

    monkeypatch.setattr(redaction, "redact_text", with_kind)
    code, out, err = _cli(capsys, "redact", "--match", "dana.r@example.com", "--yes",
                          "--store", str(demo_path))
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "nothing was changed" in err


def test_every_column_of_the_schema_is_classified(store: Store) -> None:
    """A new column is content until named metadata: this lists the tables the
    classification has not seen, so that someone decides (content is the safe default)."""
    with store.read() as conn:
        tables = relational_tables(conn)
    unknown = sorted(set(tables) - set(METADATA))
    assert unknown == [], f"classify the text columns of {unknown} in store/privacy/content.py"
    assert is_content("entry", "content") and not is_content("entry", "agent")
    assert is_content("memory", "body") and not is_content("entry", "writer")
    assert is_content("session", "title") and is_content("session", "project")


# -- 2. exports: only the files that hold it -------------------------------------------------
EMAIL = "dana.r@example.com"
DANA_SESSION = "bd8ec9a1-f803-45ed-bd7c-9ec7081ab44d"


def _grep(folder: Path, needle: str) -> set[str]:
    return {str(f) for f in folder.rglob("*") if f.is_file()
            and needle.lower() in f.read_text("utf-8", errors="replace").lower()}


def test_exports_named_and_deleted_are_only_those_holding_it(demo_path: Path,
                                                             tmp_path: Path) -> None:
    with _open(demo_path) as store:
        out = tmp_path / "exp"
        store.export(out)
        every = {str(f) for f in out.rglob("*") if f.is_file()}
        holding = _grep(out, EMAIL)
        assert 0 < len(holding) < len(every)
        c = preview(store, scope_from(match=EMAIL))
        assert set(c.export_files()) == holding
        by_entry = preview(store, scope_from(entry=next(iter(_entries_with(store, EMAIL)))))
        assert len(by_entry.export_files()) == 1  # the transcript that entry was written to
        result = run(store, scope_from(match=EMAIL), "erase")
        probe = {p.name: p for p in result.verification.probes}["exports"]
        assert not probe.passed and f"{len(holding)} export files" in probe.detail
        result = run(store, scope_from(match=EMAIL), "erase", delete_exports=True)
        assert set(result.exports_deleted) == holding
        left = {str(f) for f in out.rglob("*") if f.is_file()}
        assert left == every - holding and not _grep(out, EMAIL)
        assert {p.name: p for p in result.verification.probes}["exports"].passed


# -- 3. an erased session's exports, cleaned afterwards; never re-imported --------------------
def test_exports_of_a_tombstone_are_deleted_later_and_reimport_brings_nothing(
        demo_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _open(demo_path) as store:
        out = tmp_path / "exp"
        store.export(out)
        every = {str(f) for f in out.rglob("*") if f.is_file()}
    code, stdout, err = _cli(capsys, "erase", "--session", DANA_SESSION, "--yes", "--json",
                             "--store", str(demo_path))
    report = json.loads(stdout)
    assert code == 1 and len(report["exports"]) == 1  # its transcript, not the 6 others
    probe = {p["name"]: p for p in report["verification"]["probes"]}["exports"]
    tomb = report["tombstone_id"]
    assert f"--exports-of-tombstone {tomb}" in probe["detail"]
    shutil.copytree(out, tmp_path / "copy")  # the export as it was, transcript included
    code, stdout, err = _cli(capsys, "erase", "--exports-of-tombstone", str(tomb), "--json",
                             "--store", str(demo_path))
    assert code == 0 and json.loads(stdout)["deleted"] == report["exports"]
    assert {str(f) for f in out.rglob("*") if f.is_file()} == every - set(report["exports"])
    # re-importing the export (its manifest and transcript): not even the session row
    with _open(demo_path) as store:
        result = store.ingest([tmp_path / "copy"])
        with store.read() as conn:
            n = conn.execute(text("SELECT count(*) FROM session WHERE id = :s"),
                             {"s": DANA_SESSION}).scalar_one()
        assert n == 0 and result.entries_added == 0 and result.erased_earlier > 0


# -- 5. secret text masked in the CLI ---------------------------------------------------------
def test_secret_entries_are_masked_in_cli_entries_and_older_traces(
        demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _open(demo_path) as store:
        trace = store.recall("what is Dana's email address").trace
        assert any(EMAIL in (c.excerpt or "") for c in trace.candidates)
        trace_id = trace.id
    code, out, _ = _cli(capsys, "mark", "--match", EMAIL, "--as", "secret",
                        "--store", str(demo_path))
    assert code == 0
    for argv in (["entries", DANA_SESSION], ["entries", DANA_SESSION, "--json"],
                 ["trace", str(trace_id), "--json"], ["trace", str(trace_id)]):
        code, out, _ = _cli(capsys, *argv, "--store", str(demo_path))
        assert code == 0 and out and EMAIL not in out, argv
    code, out, _ = _cli(capsys, "entries", DANA_SESSION, "--json", "--store", str(demo_path))
    assert "[secret entry: text withheld]" in out


# -- 6. the demo's private detail is never injected into a public channel ----------------------
def test_the_demo_email_is_never_injected_into_a_public_recall(demo_path: Path) -> None:
    """The issue's motivating leak: the demo user's e-mail, in a transcript, is private (the
    demo marks it as its story says), so a public recall injects none of it while a private
    one still may."""
    query = "what is Dana's email address"
    with _open(demo_path) as store:
        with store.read() as conn:
            levels = {r[0] for r in conn.execute(text(
                "SELECT sensitivity FROM entry WHERE instr(content, :e)"), {"e": EMAIL})}
        assert levels == {"private"}
        public = store.recall(query, channel="public")
        assert not any(EMAIL in (i.text or "") for i in public.items)
        held = {c.source_id for c in public.trace.candidates
                if c.source_type == "entry" and c.decision == "policy_filtered"}
        assert held  # the entries were candidates and the channel rule held them back
        private = store.recall(query, channel="private")
        assert not any(c.source_id in held and c.decision == "policy_filtered"
                       for c in private.trace.candidates if c.source_type == "entry")
