"""The README's harness example runs as written, and what it writes records its own writer
and writer_version (entries, snapshot, checkpoint, recall trace) — not lca-tui's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlmodel import select

from store.context.models import ContextSnapshot
from store.core.db import orm
from store.core.models import Checkpoint, Entry
from store.core.settings import Settings
from store.core.version import CODE_VERSION
from store.recall.models import RecallCandidate, RecallTrace
from tests.conftest import make_store

README = Path(__file__).parent.parent / "README.md"
HEADING = "## Use from Python (harness API)"


def readme_example() -> str:
    """The first ``python`` code block under the harness API heading."""
    text = README.read_text("utf-8")
    assert HEADING in text, f"README.md has no {HEADING!r} section"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "the harness API section has no python code block"
    return match.group(1)


def test_readme_harness_example_records_its_writer(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(readme_example(), "README.md:harness-example", "exec"), namespace)
    out = capsys.readouterr().out
    assert "2 entries;" in out

    used = namespace["store"]
    writer, version = used.writer, used.writer_version  # type: ignore[attr-defined]
    assert writer != Settings.load()["store.writer"] and version != CODE_VERSION
    path = Path(used.path).resolve()  # type: ignore[attr-defined]
    assert path.parent == tmp_path.resolve()

    store = make_store(path)
    try:
        with store.read() as conn, orm(conn) as s:
            who = {
                "entries": {(e.writer, e.writer_version) for e in s.exec(select(Entry))},
                "snapshot": {(r.writer, r.writer_version)
                             for r in s.exec(select(ContextSnapshot))},
                "checkpoint": {(r.writer, r.writer_version) for r in s.exec(select(Checkpoint))},
                "trace": {(r.writer, r.writer_version) for r in s.exec(select(RecallTrace))},
                "candidates": {(r.writer, r.writer_version)
                               for r in s.exec(select(RecallCandidate))},
            }
            assert len(s.exec(select(Entry)).all()) == 2
    finally:
        store.close()
    for what, seen in who.items():
        assert seen == {(writer, version)}, f"{what} rows record {seen}"


def test_a_store_opened_without_a_writer_records_lca_tui(tmp_path: Path) -> None:
    """The default is lca-tui's own name and code version (the case the README overrides)."""
    store = make_store(tmp_path / "plain.db")
    try:
        assert (store.writer, store.writer_version) == (Settings.load()["store.writer"],
                                                        CODE_VERSION)
    finally:
        store.close()


@pytest.mark.parametrize(("writer", "given", "expected"), [
    ("my-harness", None, "unknown"),
    ("my-harness", "", "unknown"),
    ("my-harness", "2.4.1", "2.4.1"),
    ("lca-tui", None, CODE_VERSION),
    ("lca-tui:hook", "", CODE_VERSION),
    ("lca-tuition", None, "unknown"),
])
def test_a_writer_without_a_version_never_claims_lca_tuis(tmp_path: Path, writer: str,
                                                          given: str | None,
                                                          expected: str) -> None:
    """Another program naming no version records "unknown", not lca-tui's code version; so do
    its rows."""
    from store import open_store

    store = open_store(tmp_path / "w.db", Settings.load({}), writer=writer,
                       writer_version=given)
    try:
        assert (store.writer, store.writer_version) == (writer, expected)
        from store.core.writes import NewEntry, NewSession

        store.append_entries(NewSession(id="s", format="x"), [NewEntry("user", "hi", "s")])
        with store.read() as conn, orm(conn) as s:
            assert {(e.writer, e.writer_version) for e in s.exec(select(Entry))} == {
                (writer, expected)}
    finally:
        store.close()
