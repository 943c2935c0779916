"""The harness example (``docs/api.md``, shown again in the README) runs as written, and what it
writes records its own writer and writer_version in every table it writes (session, entry,
chunk, snapshot, checkpoint, recall trace, candidates and feedback, audit event) — not lca-
tui's."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from sqlalchemy import Connection, func, inspect
from sqlalchemy import select as sa_select
from sqlmodel import SQLModel, select

import store as store_pkg
from store.core.db import orm
from store.core.models import Entry
from store.core.settings import Settings
from store.core.version import CODE_VERSION
from tests.conftest import make_store, store_target

ROOT = Path(__file__).resolve().parents[2]
API_DOC = ROOT / "docs" / "api.md"
HEADING = "## Use from Python (harness API)"
README = ROOT / "README.md"
README_HEADING = "## Use from Python (harness example)"


def python_block(path: Path, heading: str) -> str:
    """The first ``python`` code block under ``heading`` in ``path``."""
    text = path.read_text("utf-8")
    assert heading in text, f"{path.name} has no {heading!r} section"
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, f"the {heading!r} section of {path.name} has no python code block"
    return match.group(1)


def readme_example() -> str:
    """The harness example of ``docs/api.md`` (the one this file runs)."""
    return python_block(API_DOC, HEADING)


def test_the_readme_shows_the_example_that_runs() -> None:
    assert python_block(README, README_HEADING) == readme_example()


EXAMPLE_STORE = '"agent-store.db"'  # what the example opens: a SQLite file in the cwd


def test_readme_harness_example_records_its_writer(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str],
                                                   backend: str) -> None:
    monkeypatch.chdir(tmp_path)
    source = readme_example()
    assert source.count(EXAMPLE_STORE) == 1, "the example no longer opens agent-store.db"
    if backend == "postgres":  # the same example, opening the test's database instead
        target = store_target(tmp_path / "agent-store.db")
        source = source.replace(EXAMPLE_STORE, repr(str(target)))
    namespace: dict[str, object] = {}
    exec(compile(source, "docs/api.md:harness-example", "exec"), namespace)
    out = capsys.readouterr().out
    assert "2 entries;" in out

    used = namespace["store"]
    writer, version = used.writer, used.writer_version  # type: ignore[attr-defined]
    assert writer != Settings.load()["store.writer"] and version != CODE_VERSION
    if backend == "postgres":
        assert used.opened_as == target  # type: ignore[attr-defined]
        path = tmp_path / "agent-store.db"  # make_store opens that database again
    else:
        path = Path(used.path).resolve()  # type: ignore[attr-defined]
        assert path.parent == tmp_path.resolve()

    store = make_store(path)
    try:
        with store.read() as conn:
            who = writers_by_table(conn)
            assert conn.execute(select(func.count()).select_from(Entry)).scalar_one() == 2
    finally:
        store.close()
    # every table the example writes, named: a missing one means the example stopped
    # writing it (or the sweep below stopped seeing it)
    written = {"session", "entry", "chunk", "context_snapshot", "checkpoint", "recall_trace",
               "recall_candidate", "recall_feedback", "audit_event"}
    assert written <= set(who), f"not written: {sorted(written - set(who))}"
    for table_name, seen in sorted(who.items()):
        assert seen == {(writer, version)}, f"{table_name} rows record {seen}"


def writers_by_table(conn: Connection) -> dict[str, set[tuple[str, str]]]:
    """{table: the (writer, writer_version) pairs its rows record} for every non-empty table
    with writer columns (every capability's models imported, so none is missed)."""
    for info in pkgutil.walk_packages([str(Path(store_pkg.__file__).parent)], "store."):
        if info.name.endswith(".models"):
            importlib.import_module(info.name)
    present = set(inspect(conn).get_table_names())
    out: dict[str, set[tuple[str, str]]] = {}
    for name, t in sorted(SQLModel.metadata.tables.items()):
        if name in present and {"writer", "writer_version"} <= set(t.c.keys()):
            pairs = {(r[0], r[1]) for r in conn.execute(
                sa_select(t.c.writer, t.c.writer_version).distinct())}
            if pairs:
                out[name] = pairs
    return out


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
