"""Importing Agent Continuity Protocol directories (seeds/002_…)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from sqlalchemy import text

from store import Store
from store.ingest.acp import is_acp_dir, memory_sections

ACP = Path(__file__).resolve().parents[1] / "data" / "acp"
NAVIGATOR = ACP / "navigator"
DRIFTED = ACP / "drifted"


def _memories(store: Store) -> dict[str, tuple[str | None, str]]:
    return {m.name: (m.type, m.status) for m in store.memories()}


def _copy(tmp_path: Path, src: Path = NAVIGATOR) -> Path:
    target = tmp_path / src.name
    shutil.copytree(src, target)
    return target


def test_acp_directory_imports_by_the_protocol(store: Store) -> None:
    report = store.ingest([NAVIGATOR])
    assert report.errors == []
    assert any("soul hash verified" in n and "heartbeat 103" in n for n in report.notes)
    mems = {m.name: m for m in store.memories()}
    soul = mems["NavigatorClaw"]
    assert (soul.type, soul.evergreen, soul.loadable) == ("identity", True, True)
    assert soul.body == (NAVIGATOR / "SOUL.md").read_text("utf-8").strip("\n")
    assert mems["Operating instructions"].type == "procedure"
    curated = sorted(n for n, m in mems.items() if m.type == "reference")
    assert curated == ["Lessons learned", "MEMORY (preamble)", "Preferences",
                       "Relationship history", "Skills acquired"]
    assert mems["Preferences"].tags == ("acp", "curated")
    assert "three-line summary" in mems["Preferences"].body
    assert mems["Preferences"].source_file.endswith("MEMORY.md#preferences")
    sessions = {s.id: s for s in store.sessions()}
    assert set(sessions) == {"acp:navigatorclaw-001:2026-02-01",
                             "acp:navigatorclaw-001:2026-02-02"}
    day1 = sessions["acp:navigatorclaw-001:2026-02-01"]
    assert (day1.format, day1.agent, day1.surface, day1.title) == (
        "acp-journal", "navigatorclaw-001", "openclaw", "2026-02-01")
    entries = store.entries(day1.id)
    assert [e.kind for e in entries] == ["assistant"] * 4
    assert [e.ts for e in entries] == ["2026-02-01T09:30:00.000Z", "2026-02-01T09:30:00.000Z",
                                       "2026-02-01T11:05:00.000Z", "2026-02-01T16:40:00.000Z"]
    assert entries[0].content.startswith("## 09:30 — Session start\nWoke up")
    assert entries[1].meta["section"] == "09:30 — Session start"
    day2 = store.entries("acp:navigatorclaw-001:2026-02-02")
    assert day2[-1].content.startswith("A note without a time")
    assert day2[-1].ts == "2026-02-02T10:20:00.000Z"


def test_importing_twice_adds_nothing(store: Store) -> None:
    first = store.ingest([ACP])
    assert (first.sessions_added, first.entries_added, first.memories_added) == (2, 7, 10)
    again = store.ingest([ACP])
    assert (again.sessions_added, again.entries_added, again.memories_added,
            again.memories_updated) == (0, 0, 0, 0)


def test_soul_hash_mismatch_is_reported_and_everything_lands(store: Store) -> None:
    state = json.loads((DRIFTED / "state.json").read_text("utf-8"))
    actual = hashlib.sha256((DRIFTED / "SOUL.md").read_bytes()).hexdigest()
    assert state["soulHash"] != f"sha256:{actual}"
    report = store.ingest([DRIFTED])
    assert len(report.errors) == 1
    error = report.errors[0]
    assert error.path == str(DRIFTED / "state.json")
    assert "does not match SOUL.md" in error.reason and actual[:12] in error.reason
    assert _memories(store) == {"ReconLobster": ("identity", "active"),
                                "Operating instructions": ("procedure", "active"),
                                "Handover habits": ("reference", "active")}
    with store.read() as conn:
        counts = conn.exec_driver_sql(
            "SELECT counts, target_ids FROM audit_event WHERE action = 'import-acp'").one()
    assert json.loads(counts[0])["soul_hash_mismatch"] == 1
    assert json.loads(counts[1]) == ["reconlobster-7"]


def test_bare_hex_hash_verifies_and_an_abbreviated_one_cannot(store: Store,
                                                              tmp_path: Path) -> None:
    agent = _copy(tmp_path)
    state = json.loads((agent / "state.json").read_text("utf-8"))
    state["soulHash"] = state["soulHash"].removeprefix("sha256:").upper()
    (agent / "state.json").write_text(json.dumps(state), "utf-8")
    assert store.ingest([agent]).errors == []
    state["soulHash"] = "sha256:a3f2c1..."
    (agent / "state.json").write_text(json.dumps(state), "utf-8")
    report = store.ingest([agent])
    assert [e.path for e in report.errors] == [str(agent / "state.json")]
    assert "cannot be verified" in report.errors[0].reason


def test_pruned_and_edited_memory_sections(store: Store, tmp_path: Path) -> None:
    """An edited section updates its memory; a pruned one expires; journals only grow."""
    agent = _copy(tmp_path)
    store.ingest([agent])
    memory = agent / "MEMORY.md"
    raw = memory.read_text("utf-8")
    head, _, rest = raw.partition("## Skills acquired")
    rest = rest.split("## Relationship history", 1)[1]
    edited = head.replace("three-line summary", "two-line summary")
    memory.write_text(edited + "## Relationship history" + rest, "utf-8")
    with (agent / "journal" / "2026-02-02.md").open("a", encoding="utf-8") as fh:
        fh.write("\n## 17:10 — Wrap-up\nHeartbeat stays at 103 until tomorrow.\n")
    report = store.ingest([agent])
    assert (report.memories_added, report.memories_updated, report.entries_added) == (0, 1, 1)
    mems = {m.name: m for m in store.memories()}
    assert "two-line summary" in mems["Preferences"].body
    assert (mems["Skills acquired"].status, mems["Skills acquired"].valid_to is not None) == (
        "expired", True)
    assert any("1 MEMORY.md sections no longer in the file" in n for n in report.notes)
    assert store.entries("acp:navigatorclaw-001:2026-02-02")[-1].ts == \
        "2026-02-02T17:10:00.000Z"


def test_bad_inputs_are_reported_and_the_rest_lands(store: Store, tmp_path: Path) -> None:
    agent = _copy(tmp_path)
    (agent / "state.json").write_text('{"agentId": "navigatorclaw-001",\n "heartbeat": }',
                                      "utf-8")
    os.symlink(agent / "missing.md", agent / "journal" / "2026-02-03.md")
    (agent / "AGENTS.md").write_bytes(b"# Operating instructions\n\xff\xfe broken\n")
    report = store.ingest([agent])
    reasons = {(Path(e.path).name, e.line): e.reason for e in report.errors}
    assert "invalid JSON" in reasons[("state.json", 2)]
    assert reasons[("2026-02-03.md", None)] == "dangling symlink"
    assert "not UTF-8" in reasons[("AGENTS.md", 2)]
    assert report.entries_added == 7 and report.memories_added == 7
    sessions = {s.id for s in store.sessions()}
    assert "acp:navigator:2026-02-01" in sessions  # no agent id: the folder names it


def test_detection_prefers_acp_but_not_for_mindstone_memory_dirs(tmp_path: Path) -> None:
    assert is_acp_dir(NAVIGATOR) and is_acp_dir(DRIFTED)
    assert not is_acp_dir(NAVIGATOR / "journal")
    mindstone = tmp_path / "memory"
    mindstone.mkdir()
    (mindstone / "MEMORY.md").write_text("# Index\n", "utf-8")
    (mindstone / "SOUL.md").write_text("# Me\n", "utf-8")
    (mindstone / "feedback_x.md").write_text("---\nname: x\ntype: feedback\n---\nbody\n",
                                             "utf-8")
    assert not is_acp_dir(mindstone)
    (mindstone / "feedback_x.md").unlink()
    assert is_acp_dir(mindstone)  # ACP-Minimal: SOUL.md + MEMORY.md


def test_memory_sections_split_on_level_two_headings() -> None:
    raw = "# MEMORY\n\nintro line\n\n## A\none\n\n## A\ntwo\n### sub\nthree\n"
    assert memory_sections(raw) == [("preamble", "MEMORY (preamble)", "intro line"),
                                    ("a", "A", "one"), ("a-2", "A", "two\n### sub\nthree")]


def test_journal_entries_are_in_file_order(store: Store) -> None:
    store.ingest([NAVIGATOR])
    with store.read() as conn:
        rows = conn.execute(text(
            "SELECT source_line FROM entry WHERE session_id = :s ORDER BY seq"),
            {"s": "acp:navigatorclaw-001:2026-02-01"}).all()
    assert [r[0] for r in rows] == [3, 6, 8, 12]


DEMO_MEMORY = Path(__file__).resolve().parents[2] / "assets" / "demo" / "memory"


def test_mindstone_memory_dir_with_soul_and_agents_is_not_acp(store: Store,
                                                              tmp_path: Path) -> None:
    """SOUL.md + AGENTS.md beside MindStone front-matter files: a memory directory, every
    file imported (the LOG.md archive entries as checkpoints)."""
    folder = _copy(tmp_path, DEMO_MEMORY)
    (folder / "SOUL.md").write_text("# Who I am\n\nA careful deployer.\n", "utf-8")
    (folder / "AGENTS.md").write_text("# How I work\n\nSmall commits.\n", "utf-8")
    assert not is_acp_dir(folder)
    report = store.ingest([folder])
    sources = {Path(m.source_file or "").name for m in store.memories()}
    assert len(sources) == 15 + 2 and {"SOUL.md", "AGENTS.md"} <= sources
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM checkpoint").scalar_one() == 7
    assert report.memories_added == 17


def test_acp_dir_imports_its_other_markdown_files_as_memory_files(store: Store,
                                                                  tmp_path: Path) -> None:
    """An ACP folder (state.json) with memory files beside it: they are imported through
    the memory-directory path, and one without front matter is reported, never dropped."""
    folder = _copy(tmp_path)
    (folder / "feedback_small-prs.md").write_text(
        "---\nname: Small PRs\ndescription: keep them small\ntype: feedback\n---\nYes.\n",
        "utf-8")
    (folder / "notes.md").write_text("loose notes, no front matter\n", "utf-8")
    assert is_acp_dir(folder)
    report = store.ingest([folder])
    memories = {m.name: m for m in store.memories()}
    assert memories["Small PRs"].type == "feedback" and memories["Small PRs"].loadable
    notes = [m for m in memories.values() if (m.source_file or "").endswith("notes.md")]
    assert len(notes) == 1 and not notes[0].loadable
    assert any(e.path.endswith("notes.md") for e in report.errors)
    assert store.ingest([folder]).memories_added == 0


def test_a_memory_expired_by_the_gate_stays_expired_on_reimport(store: Store,
                                                                tmp_path: Path) -> None:
    """Issue 30 review: re-importing MEMORY.md brought back (as active) a memory an applied
    ``expire`` proposal expired, because its section is still in the file. The gate's expiry
    stays; a section pruned and then restored in the file still comes back."""
    agent = _copy(tmp_path)
    store.ingest([agent])
    mems = {m.name: m for m in store.memories()}
    target = mems["Preferences"]
    assert target.id is not None and target.status == "active"
    info = store.propose({"op": "expire", "target": target.id}, auto_apply=False)
    assert store.approve(info.id, actor="dana").status == "applied"
    assert store.memory(target.id).status == "expired"
    memory = agent / "MEMORY.md"
    raw = memory.read_text("utf-8")
    head, _, rest = raw.partition("## Skills acquired")
    memory.write_text(head + "## Relationship history" + rest.split(
        "## Relationship history", 1)[1], "utf-8")
    store.ingest([agent])  # the skills section pruned by the file: expired by the import
    assert _memories(store)["Skills acquired"][1] == "expired"
    memory.write_text(raw, "utf-8")
    store.ingest([agent])  # both sections in the file again
    now = _memories(store)
    assert now["Skills acquired"][1] == "active"  # the file's own pruning is undone
    assert now["Preferences"][1] == "expired"  # the gate's expiry is not
