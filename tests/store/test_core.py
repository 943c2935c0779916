"""The store's core: migrations, import hygiene, settings, chunking, reindex, the CLI's JSON
contract."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from store import Store
from store.core.chunker import count_tokens, split
from store.core.errors import StoreTooNew
from store.core.migrations import known_migrations
from store.core.settings import Settings, SettingsError
from tests.conftest import CLAUDE_CODE, make_store, needs_shared_data

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@needs_shared_data
def test_store_written_by_first_migration_opens_and_upgrades(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "store_v1.db", path)
    s = make_store(path)
    with s.read() as conn:
        versions = [r[0] for r in conn.exec_driver_sql(
            "SELECT version FROM schema_migration ORDER BY version")]
    assert versions == [m.version for m in known_migrations()]
    assert s.stats().entries == 11
    assert [m.name for m in s.memories()] == ["use-integer-cents"]
    assert s.search("phoenix server", 3, "fts")
    s.ingest([CLAUDE_CODE / "tool_heavy.jsonl"])  # the upgraded store takes new data
    assert s.stats().sessions == 2
    s.close()


def test_newer_store_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    make_store(path).close()
    import sqlean

    conn = sqlean.connect(str(path))
    conn.execute("INSERT INTO schema_migration VALUES (9999, 'future', 'x', '99.0')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreTooNew, match="upgrade lca-tui"):
        make_store(path)
    assert path.read_bytes() == before


def test_store_imports_neither_textual_nor_rich() -> None:
    code = ("import sys, store, store.ingest, store.core.search, store.ingest.reindex; "
            "print(sorted(m for m in ('textual', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_no_store_module_imports_the_ui() -> None:
    root = Path(__file__).resolve().parents[2] / "store"
    offenders = [str(p) for p in root.rglob("*.py")
                 if any(line.strip().startswith(("import textual", "from textual",
                                                 "import rich", "from rich"))
                        for line in p.read_text(encoding="utf-8").splitlines())]
    assert offenders == []


def test_settings_toml_and_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[recall]\nalpha = 0.6\n[embed]\nmax_tokens = 128\nbackend = "fallback"\n',
                   encoding="utf-8")
    monkeypatch.setenv("LCA_CONFIG", str(cfg))
    s = Settings.load({"recall.alpha": "0.5"})
    assert s["recall.alpha"] == 0.5 and s.source("recall.alpha") == "command line"
    assert s["embed.max_tokens"] == 128 and s.source("embed.max_tokens") == str(cfg)
    assert s.source("recall.beta") == "default"
    with pytest.raises(SettingsError, match="unknown setting"):
        Settings.load({"recall.nope": 1})
    with pytest.raises(SettingsError, match="must be int"):
        Settings.load({"embed.max_tokens": "many"})
    cfg.write_text("[embed\nbroken", encoding="utf-8")
    with pytest.raises(SettingsError, match="cannot read settings"):
        Settings.load()


def test_chunker_splits_never_cuts() -> None:
    text = ("The ledger stores integer cents. " * 300) + "\n\n" + ("word " * 900)
    spans = split(text, 256)
    assert len(spans) > 4
    assert "".join(text[s.start:s.end] for s in spans) == text  # tiles the text exactly
    assert all(count_tokens(text[s.start:s.end]) <= 256 for s in spans)
    assert split("short", 256)[0].end == 5
    assert split("   \n ", 256) == []


def test_oversized_entry_becomes_several_chunks(store: Store, tmp_path: Path) -> None:
    from store.core.writes import NewEntry, NewSession

    body = "\n\n".join(f"Paragraph {i}: " + "tokens and more tokens " * 40 for i in range(20))
    ids = store.append_entries(NewSession("s1", "api"), [
        NewEntry("tool_result", body, "api:s1", ts="2026-01-01T00:00:00.000Z")])
    with store.read() as conn:
        spans = conn.exec_driver_sql(
            f"SELECT span_start, span_end, tokens, status FROM chunk WHERE source_id = {ids[0]} "
            "ORDER BY span_start").all()
    assert len(spans) > 5 and all(s[3] == "ok" and s[2] <= 256 for s in spans)
    assert spans[0][0] == 0 and spans[-1][1] == len(body)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_embedding_failure_recorded_not_raised(tmp_path: Path) -> None:
    from store.core.embed import HashEmbedder
    from store.core.writes import NewEntry, NewSession

    class Flaky(HashEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            if any("poison" in t for t in texts):
                raise ValueError("cannot embed this")
            return super().embed(texts)

    s = Store(tmp_path / "f.db", embedder=Flaky())
    s.append_entries(NewSession("s", "api"), [
        NewEntry("user", "fine text", "api:s", source_offset=0),
        NewEntry("user", "poison pill", "api:s", source_offset=1)])
    with s.read() as conn:
        rows = dict(conn.exec_driver_sql("SELECT text, status FROM chunk").all())
    assert rows == {"fine text": "ok", "poison pill": "failed"}
    s.close()


def _search_ids(s: Store, queries: list[str]) -> list[list[tuple[str, int | None]]]:
    out = []
    for q in queries:
        out.append([(h.session_id or str(h.source_id), h.seq)
                    for h in s.search(q, 8, "hybrid")])
    return out


def test_reindex_gives_the_same_search_results(cc_store: Store) -> None:
    queries = ["phoenix server does not start", "hex.pm package versions", "compaction summary",
               "mix test failures"]
    before = _search_ids(cc_store, queries)
    chunks_before = cc_store.stats().chunks
    with cc_store.write() as conn:  # drop the index
        conn.exec_driver_sql("DELETE FROM chunk_vec")
        conn.exec_driver_sql("INSERT INTO chunk_fts (chunk_fts) VALUES ('delete-all')")
        conn.exec_driver_sql("DELETE FROM chunk")
    assert cc_store.search("phoenix server", 5) == []
    report = cc_store.reindex()
    assert report.entries == 723 and report.chunks == chunks_before
    assert _search_ids(cc_store, queries) == before


@needs_shared_data
def test_cli_json_contracts(tmp_path: Path) -> None:
    exe = [sys.executable, "-m", "lca_tui.cli", "--store", str(tmp_path / "cli.db")]
    out = subprocess.run(exe + ["ingest", str(CLAUDE_CODE), "--json"], capture_output=True,
                         text=True, check=True)
    report = json.loads(out.stdout)
    assert {k: report[k] for k in ("sessions_added", "entries_added", "memories_added")} == {
        "sessions_added": 3, "entries_added": 723, "memories_added": 0}
    assert report["skipped_by_design"] > 0 and report["errors"] == []
    stats = json.loads(subprocess.run(exe + ["stats", "--json"], capture_output=True, text=True,
                                      check=True).stdout)
    for key in ("sessions", "entries", "entries_by_kind", "memories", "chunks",
                "proposals_pending", "traces", "embedder"):
        assert key in stats
    assert stats["embedder"] == {"model": "lca-hash-fallback-v1", "dim": 384, "degraded": True}
    bad = subprocess.run(exe + ["entries", "no-such-session"], capture_output=True, text=True)
    assert bad.returncode != 0 and "no session" in bad.stderr and bad.stdout == ""
    missing = subprocess.run(exe + ["ingest", str(tmp_path / "nope"), "--json"],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr == (f"lca-tui: {tmp_path / 'nope'}: no such file or directory; "
                              "nothing was imported\n")


def test_an_int_setting_out_of_range_says_so_and_recall_pool_is_bounded() -> None:
    with pytest.raises(SettingsError, match=r"must be int, got '9{20}': out of range"):
        Settings.load({"recall.pool": "9" * 20})
    with pytest.raises(SettingsError, match="recall.pool must be at most 10000"):
        Settings.load({"recall.pool": "99999999999"})
    with pytest.raises(SettingsError, match="recall.pool must be at least 1"):
        Settings.load({"recall.pool": "0"})
    assert Settings.load({"recall.pool": "10000"})["recall.pool"] == 10000


def test_the_newest_version_is_read_from_the_migrations_file_names() -> None:
    """What says cheaply whether a store is current (no module imported) agrees with the
    modules themselves, each of whose VERSION is the number its name starts with."""
    from store.core.migrations import newest_version

    assert newest_version() == known_migrations()[-1].version
