"""Claude Code's own memory: ``ingest ~/.claude`` and ``ingest <project>``
import the CLAUDE.md hierarchy, rules, ``@imports``, auto memory and subagent memory as
memories with their scope and how Claude Code loads them; its loading rules as health signals
(``store/health/signals_claude.py``), each failing on a seeded store and ok on a clean one; the
fixture home folder (``tests/data/home-fixture``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from helpers_health import consistent, scan
from store import RecordRef, Store

HOME = Path(__file__).resolve().parents[1] / "data" / "home-fixture"
CLAUDE_SIGNALS = ("claude_index_cut", "claude_imports", "claude_rule_paths",
                  "claude_always_loaded", "claude_scope_conflicts")


def _meta(store: Store) -> dict[str, tuple[str, str | None, dict[str, Any]]]:
    """source file relative to the fixture → (name, type, claude_code metadata)."""
    from sqlmodel import Session, select

    from store.core.models import Memory

    out = {}
    with store.read() as conn:
        for m in Session(conn).exec(select(Memory)):
            rel = m.source_file.split("home-fixture/", 1)[-1] if m.source_file else ""
            out[rel] = (m.name, m.type, json.loads(m.front_matter or "{}").get("claude_code"))
    return out


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the fixture home folder, HOME pointing at it (so ``~/`` imports resolve
    there), no managed policy unless a test writes one."""
    copy = tmp_path / "home-fixture"
    shutil.copytree(HOME, copy, symlinks=True)
    monkeypatch.setenv("HOME", str(copy))
    monkeypatch.setenv("LCA_TUI_CLAUDE_MANAGED", str(tmp_path / "no-managed" / "CLAUDE.md"))
    return copy


def test_the_fixture_home_folder_imports_every_harness_and_every_memory_once(
        store: Store, home: Path) -> None:
    report = store.ingest([home])
    assert report.errors == []
    assert sorted(s.format for s in store.sessions()) == ["claude-code", "codex", "gemini"]
    meta = _meta(store)
    want = {  # file → (scope, load, type)
        ".claude/CLAUDE.md": ("user", "launch", "claude-md"),
        ".claude/shared/tone.md": ("user", "import", "instructions"),
        ".claude/rules/git.md": ("user", "launch", "rule"),
        ".claude/agent-memory/reviewer/MEMORY.md": ("agent", "cut", "memory-index"),
        ".claude/projects/-home-ana-shop/memory/MEMORY.md": ("auto", "cut", "memory-index"),
        ".claude/projects/-home-ana-shop/memory/debugging.md": ("auto", "topic", "project"),
        "shop/CLAUDE.md": ("project", "launch", "claude-md"),
        "shop/docs/conventions.md": ("project", "import", "instructions"),
        "shop/CLAUDE.local.md": ("local", "launch", "claude-md"),
        "shop/.claude/rules/api.md": ("project", "paths", "rule"),
        "shop/.claude/agent-memory/tester/MEMORY.md": ("agent", "cut", "memory-index"),
        "shop/src/legacy/CLAUDE.md": ("project", "folder", "claude-md"),
    }
    got = {f: (m[2]["scope"], m[2]["load"], m[1]) for f, m in meta.items()}
    assert got == want
    assert report.memories_added == len(want)
    assert meta[".claude/CLAUDE.md"][0] == "CLAUDE.md (user)"
    assert meta["shop/.claude/rules/api.md"][2]["paths"] == ["src/api/**/*.ts"]
    tone = meta[".claude/shared/tone.md"][2]
    assert (tone["depth"], tone["how"]) == (1, "with the file that imports it (at launch, in full)")
    assert tone["imported_from"].endswith(".claude/CLAUDE.md:6")
    # the code block's @not/an/import.md is not an import
    assert [i["path"] for i in meta["shop/CLAUDE.md"][2]["imports"]] == ["docs/conventions.md"]
    assert meta[".claude/projects/-home-ana-shop/memory/MEMORY.md"][2]["cut"] is False
    assert "not memory" not in " ".join(report.notes)  # nothing of Claude Code's left out
    again = store.ingest([home])
    assert (again.memories_added, again.entries_added, again.sessions_added,
            again.errors) == (0, 0, 0, [])
    assert getattr(again, "memories_updated", 0) == 0


def test_the_clean_fixture_is_green_on_every_claude_signal(store: Store, home: Path) -> None:
    store.ingest([home])
    result = scan(store)
    consistent(result)
    for name in CLAUDE_SIGNALS:
        sig = result.signal(name)
        assert sig.status == "ok", (name, sig.explanation, sig.offending)


def test_a_project_folder_and_a_managed_policy(store: Store, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    policy = tmp_path / "etc" / "CLAUDE.md"
    policy.parent.mkdir()
    policy.write_text("Never push to main.\n")
    monkeypatch.setenv("LCA_TUI_CLAUDE_MANAGED", str(policy))
    home = tmp_path / "h" / ".claude"
    (home / "projects").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home.parent))
    store.ingest([home])
    (name, _, meta), = _meta(store).values()
    assert (name, meta["scope"], meta["load"]) == ("CLAUDE.md (managed)", "managed", "launch")


def _claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home = tmp_path / "ana"
    dot = home / ".claude"
    (dot / "projects").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("LCA_TUI_CLAUDE_MANAGED", str(tmp_path / "none"))
    project = home / "shop"
    project.mkdir()
    return dot, project


def test_index_past_the_start_up_cap_and_topic_files_linked_only_there(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dot, _ = _claude_home(tmp_path, monkeypatch)
    memory = dot / "projects" / "-srv-app" / "memory"
    memory.mkdir(parents=True)
    lines = ["- [early](early.md) loaded"] + [f"- note {i}" for i in range(2, 206)] + \
        ["- [late](late.md) never seen"]
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n")
    (memory / "early.md").write_text("Early topic.\n")
    (memory / "late.md").write_text("Late topic.\n")
    store.ingest([dot])
    meta = {Path(f).name: m for f, m in _meta(store).items()}
    index = meta["MEMORY.md"][2]
    assert (index["lines"], index["loaded_lines"], index["cut"]) == (206, 200, True)
    sig = scan(store).signal("claude_index_cut")
    assert sig.status == "warn" and sig.value == 6.0
    notes = [r.note for r in sig.offending]
    assert any(n.endswith("MEMORY.md:201: 6 of 206 lines past the start-up cap, never loaded "
                          "at start") for n in notes)
    assert any("MEMORY.md:206: topic file late.md is linked only past the cap" in n
               for n in notes)
    assert not any("early.md" in n for n in notes)


def test_the_byte_cap_cuts_before_200_lines(store: Store, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    dot, _ = _claude_home(tmp_path, monkeypatch)
    memory = dot / "projects" / "-srv-app" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("\n".join("x" * 999 for _ in range(30)) + "\n")
    store.ingest([dot])
    (_, _, meta), = _meta(store).values()
    assert (meta["lines"], meta["loaded_lines"], meta["cut"]) == (30, 25, True)


def test_imports_that_do_not_resolve_or_pass_five_hops(store: Store, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    dot, project = _claude_home(tmp_path, monkeypatch)
    (project / "CLAUDE.md").write_text("Read @docs/missing.md first.\nThen @hop1.md.\n")
    for i in range(1, 7):
        (project / f"hop{i}.md").write_text(f"Hop {i}: @hop{i + 1}.md\n" if i < 6 else
                                           "The end.\n")
    report = store.ingest([project])
    assert report.errors == []
    meta = {Path(f).name: m[2] for f, m in _meta(store).items()}
    assert [meta[f"hop{i}.md"]["depth"] for i in range(1, 7)] == [1, 2, 3, 4, 5, 6]
    assert meta["hop6.md"]["load"] == "never" and meta["hop5.md"]["load"] == "import"
    assert meta["hop5.md"]["how"] == "with the file that imports it (at launch, in full)"
    sig = scan(store).signal("claude_imports")
    assert sig.status == "warn"
    notes = sorted(r.note for r in sig.offending)
    assert len(notes) == 2
    assert notes[0].endswith("CLAUDE.md:1: @docs/missing.md does not resolve")
    assert notes[1].endswith("hop5.md:1: @hop6.md past the 5-hop limit")
    # the never-loaded file is also what loader_drift reports as not loadable
    assert scan(store).signal("loader_drift").status == "warn"


def test_a_rule_whose_paths_match_no_file(store: Store, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _, project = _claude_home(tmp_path, monkeypatch)
    rules = project / ".claude" / "rules"
    rules.mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print(1)\n")
    (rules / "python.md").write_text('---\npaths: ["src/**/*.{py,pyi}"]\n---\nUse ruff.\n')
    (rules / "go.md").write_text("---\npaths:\n  - \"**/*.go\"\n---\nUse gofmt.\n")
    store.ingest([project])
    sig = scan(store).signal("claude_rule_paths")
    assert sig.status == "warn"
    (row,) = sig.offending
    assert "go.md:1: paths **/*.go match no file under" in row.note
    (project / "main.go").write_text("package main\n")
    assert scan(store).signal("claude_rule_paths").status == "ok"


def test_the_always_loaded_set_against_the_window(store: Store, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    dot, project = _claude_home(tmp_path, monkeypatch)
    (dot / "CLAUDE.md").write_text("Short user note.\n")
    # 200,000-token window: 10 % is 20,000 tokens, 80,000 characters at 4 a token
    (project / "CLAUDE.md").write_text(("word " * 17_000) + "\n")  # 85,000 characters
    (project / "sub").mkdir()
    (project / "sub" / "CLAUDE.md").write_text("word " * 40_000)  # on demand: not counted
    store.ingest([dot, project])
    sig = scan(store).signal("claude_always_loaded")
    assert sig.status == "warn", sig.explanation
    assert 10 < sig.value < 11
    (row,) = sig.offending
    assert "shop/CLAUDE.md:1:" in row.note and "85,000 characters" in row.note
    assert "200,000-token window" in sig.explanation


def test_the_same_instruction_in_two_scopes_disagreeing(store: Store, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    dot, project = _claude_home(tmp_path, monkeypatch)
    (dot / "CLAUDE.md").write_text("# Me\n\nThe indentation width is 4 spaces.\n")
    (project / "CLAUDE.md").write_text("# Shop\n\nThe indentation width is 2 spaces.\n")
    store.ingest([dot, project])
    sig = scan(store).signal("claude_scope_conflicts")
    assert sig.status == "warn"
    (row,) = sig.offending
    assert "shop/CLAUDE.md:3 (project) vs" in row.note and ".claude/CLAUDE.md:3 (user)" in \
        row.note and row.note.endswith(": number")
    (project / "CLAUDE.md").write_text("# Shop\n\nThe indentation width is 4 spaces.\n")
    store.ingest([project])
    assert scan(store).signal("claude_scope_conflicts").status == "ok"


def test_signals_are_ok_on_a_store_without_claude_memory(store: Store) -> None:
    result = scan(store)
    for name in CLAUDE_SIGNALS:
        assert result.signal(name).status == "ok"


def test_the_memory_detail_says_where_and_how_it_loads(store: Store, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from screens.memory_view import head_text

    dot, _ = _claude_home(tmp_path, monkeypatch)
    memory = dot / "projects" / "-srv-app" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("".join(f"- note {i}\n" for i in range(1, 204)))
    (memory / "topic.md").write_text("A topic.\n")
    store.ingest([dot])
    by_name = {m.name: m.id for m in store.list_memories()}
    index = store.memory_detail(by_name["MEMORY.md (auto: -srv-app)"])
    assert index.loading["cut"] is True and index.to_json()["loading"]["loaded_lines"] == 200
    shown = head_text(index).plain
    assert ("Claude Code auto scope · loads at start, its first 200 lines (or 25,000 bytes) "
            "only · CUT: lines 201–203 never loaded at start") in shown
    topic = head_text(store.memory_detail(by_name["topic"])).plain
    assert "loads on demand, when Claude reads it (a topic file of auto memory)" in topic
    # the Health row of the cut names the file and the first line never loaded, and drills
    # to the memory
    sig = scan(store).signal("claude_index_cut")
    (view,) = store.health_rows(list(sig.offending))
    assert view.ref == RecordRef("memory", by_name["MEMORY.md (auto: -srv-app)"])
    assert sig.offending[0].note.startswith(f"{(memory / 'MEMORY.md').resolve()}:201:")


def test_memory_id_prints_how_it_loads(store: Store, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    _, project = _claude_home(tmp_path, monkeypatch)
    (project / "CLAUDE.md").write_text("Read @gone.md first.\n")
    store.ingest([project])
    (mid,) = [m.id for m in store.list_memories()]
    db = store.path if hasattr(store, "path") else None
    assert db is not None
    store.close()
    assert main(["--store", str(db), "memory", str(mid)]) == 0
    out = capsys.readouterr().out
    assert "loads: Claude Code project scope · loads at launch, in full · 1 @import not " \
           "followed" in out


def test_an_approved_memory_lands_in_a_bound_auto_memory_folder_in_claude_codes_layout(
        tmp_path: Path) -> None:
    from store.governance import approve, parse_proposal, submit
    from tests.conftest import make_store

    folder = tmp_path / ".claude" / "projects" / "-srv-app" / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- Build with `make build`.\n")
    store = make_store(tmp_path / "s.db", **{"memory.dir": str(folder)})
    try:
        store.ingest([folder])
        info = submit(store, parse_proposal({"op": "add", "type": "feedback", "content":
                                             "Squash merge feature branches.", "metadata": {
                                                 "name": "Squash merges",
                                                 "description": "how to merge"}}, "cli"))
        done = approve(store, info.id)
        assert done.verified
        topic = folder / "squash-merges.md"
        assert topic.is_file() and "Squash merge feature branches." in topic.read_text()
        assert (folder / "MEMORY.md").read_text() == (
            "- Build with `make build`.\n- [Squash merges](squash-merges.md) — how to merge\n")
        before = len(store.memories())
        again = store.ingest([folder])  # the index line is no change to propose
        assert (len(store.memories()), again.errors) == (before, [])
        assert not any("became proposals" in n for n in again.notes)
    finally:
        store.close()


def test_nested_claude_md_below_the_project_loads_on_demand_not_from_node_modules(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, project = _claude_home(tmp_path, monkeypatch)
    (project / "CLAUDE.md").write_text("Top.\n")
    for sub in ("api", "node_modules/left-pad", ".git/x"):
        (project / sub).mkdir(parents=True)
        (project / sub / "CLAUDE.md").write_text(f"In {sub}.\n")
    (project / "api" / "CLAUDE.local.md").write_text("Mine.\n")
    report = store.ingest([project])
    got = sorted((Path(f).relative_to(project.resolve()).as_posix(), m[2]["scope"],
                  m[2]["load"]) for f, m in _meta(store).items())
    assert got == [("CLAUDE.md", "project", "launch"), ("api/CLAUDE.local.md", "local", "folder"),
                   ("api/CLAUDE.md", "project", "folder")]
    assert store.ingest([project]).memories_added == 0 and report.errors == []
