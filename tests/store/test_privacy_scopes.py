"""Privacy scopes: text scopes match content, never metadata; redaction never rewrites metadata;
every column of the schema is classified as content or metadata."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from store import Store
from store.privacy.api import preview, run, scope_from
from store.privacy.content import METADATA, is_content
from store.privacy.tables import relational_tables

from tests.helpers_privacy import _entries_with, _open


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
