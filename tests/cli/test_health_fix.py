"""``lca-tui health --fix``: a preview first, as ``erase`` / ``redact`` do. Without ``--yes`` the
plan is printed (what the fix will touch), nothing changes and the exit is 1 (a cron job
notices); with ``--yes`` the fix acts on exactly what that preview listed, and refuses (exit 2,
nothing changed) when the store moved between the preview and the act; ``--json`` carries the
plan. The store's ``exact`` mode is held for a rebuild fix (``index-lag``) too."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sqlmodel import col, select

from lca_tui.cli import main
from store import PlanStale, Store
from store.core.db import orm
from store.core.index import drop_chunks_of
from store.core.models import Entry
from store.health import fixes, incidents

from tests.conftest import make_store
from tests.helpers_health import add_session

FIX = ["health", "--no-save", "--fix", "compact-duplicates"]


@pytest.fixture
def dupes(tmp_path: Path) -> tuple[Path, int]:
    """A store whose session ``s1`` a second writer indexed again: its rows are duplicates."""
    path = tmp_path / "store.db"
    s = make_store(path)
    try:
        add_session(s, "s1")
        added = incidents.reindex_again(s, incidents.sources_of(s, "s1", memories=False),
                                        ("nightly.sh", "1.0"))
    finally:
        s.close()
    assert added
    return path, len(added)


def _chunks(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM chunk").fetchone()[0])


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_without_yes_the_plan_is_printed_nothing_changes_and_the_exit_is_1(
        dupes: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    path, added = dupes
    before = _chunks(path)
    code, out, err = _run(capsys, *FIX, "--store", str(path))
    assert code == 1, err
    assert out.startswith("compact-duplicates would:")
    assert f"remove {added:,} of " in " ".join(out.split()), out
    assert err.strip().splitlines() == [
        "lca-tui: compact-duplicates was not run: pass --yes to run it on exactly this plan "
        "(refused if the store changes before it runs)"]
    assert _chunks(path) == before
    # --json: the plan, and that nothing was applied
    code, out, _ = _run(capsys, *FIX, "--json", "--store", str(path))
    doc = json.loads(out)
    assert code == 1 and doc["applied"] is False
    assert doc["plan"]["fix"] == "compact-duplicates" and doc["plan"]["possible"] is True
    assert doc["plan"]["counts"]["rows_removed"] == added
    assert _chunks(path) == before


def test_with_yes_it_acts_on_exactly_the_plan_it_printed(
        dupes: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    path, added = dupes
    before = _chunks(path)
    code, out, err = _run(capsys, *FIX, "--yes", "--json", "--store", str(path))
    doc = json.loads(out)
    assert code in (0, 1), err  # the scan's verdict after the fix
    assert doc["plan"]["counts"]["rows_removed"] == added
    assert doc["fix"]["counts"]["rows_removed"] == added
    assert doc["fix"]["counts"]["previewed_gone"] == doc["fix"]["counts"]["new_since_preview"] == 0
    assert _chunks(path) == before - added
    assert next(s for s in doc["signals"] if s["name"] == "duplicate_ratio")["value"] == 0
    # the text form says the plan before what was done
    code, out, _ = _run(capsys, *FIX, "--yes", "--store", str(path))
    assert out.index("compact-duplicates will:") < out.index("health at")


def test_a_store_changed_between_the_preview_and_the_act_is_refused(
        dupes: tuple[Path, int], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer indexes again while the preview is on screen: the act refuses, nothing is
    removed (not even the rows the preview did list)."""
    path, _ = dupes

    def preview_then_a_writer(store: Store, fix: str) -> object:
        plan = fixes.plan(store, fix)
        incidents.reindex_again(store, incidents.sources_of(store, "s1", memories=False),
                                ("cron.sh", "2.0"))
        return plan

    monkeypatch.setattr(Store, "health_fix_plan", preview_then_a_writer)
    before = _chunks(path)
    code, out, err = _run(capsys, *FIX, "--yes", "--store", str(path))
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "the store changed since the preview" in lines[0], err
    assert "new)" in lines[0] and "nothing changed" in lines[0]
    added_meanwhile = _chunks(path) - before
    assert added_meanwhile > 0  # the writer's rows are there, and every earlier one too


def test_compact_duplicates_previews_and_acts_as_health_fix_does(
        dupes: tuple[Path, int], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``lca-tui compact-duplicates`` is the same fix through the same preview: without
    ``--yes`` the plan and exit 1, nothing removed; ``--dry-run`` the plan, exit 0; ``--yes``
    acts on exactly that plan; a store moved since the preview is refused (exit 2)."""
    path, added = dupes
    before = _chunks(path)
    code, out, err = _run(capsys, "compact-duplicates", "--store", str(path))
    assert code == 1 and out.startswith("compact-duplicates would:"), (out, err)
    assert "pass --yes to run it on exactly this plan" in err
    code, out, _ = _run(capsys, "compact-duplicates", "--dry-run", "--json", "--store", str(path))
    assert code == 0 and json.loads(out)["counts"]["rows_removed"] == added
    assert _chunks(path) == before

    def preview_then_a_writer(store: Store, fix: str) -> object:
        plan = fixes.plan(store, fix)
        incidents.reindex_again(store, incidents.sources_of(store, "s1", memories=False),
                                ("cron.sh", "2.0"))
        return plan

    with monkeypatch.context() as m:
        m.setattr(Store, "health_fix_plan", preview_then_a_writer)
        code, out, err = _run(capsys, "compact-duplicates", "--yes", "--store", str(path))
    assert code == 2 and "the store changed since the preview" in err, (out, err)
    moved = _chunks(path)
    assert moved > before  # the writer's rows landed; nothing was removed
    code, out, err = _run(capsys, "compact-duplicates", "--yes", "--json", "--store", str(path))
    doc = json.loads(out)
    assert code == 0, err
    assert doc["fix"]["counts"]["rows_removed"] == doc["plan"]["counts"]["rows_removed"] > added
    assert _chunks(path) == moved - doc["fix"]["counts"]["rows_removed"]


def test_dry_run_and_yes_do_not_go_together(dupes: tuple[Path, int],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = dupes
    code, _, err = _run(capsys, *FIX, "--dry-run", "--yes", "--store", str(path))
    assert code == 2 and "--dry-run and --yes" in err
    code, _, err = _run(capsys, "health", "--yes", "--store", str(path))
    assert code == 2 and "--yes goes with --fix" in err


def test_an_exact_rebuild_refuses_when_a_target_appeared_since_its_plan(
        tmp_path: Path) -> None:
    """``index-lag`` with ``exact``: a source that lost its chunks after the preview makes the
    fix refuse, and the source the preview listed is not indexed either; without ``exact``
    (the app) it indexes what was listed and says what waits."""
    s = make_store(tmp_path / "s.db")
    try:
        add_session(s, "s1")
        with s.read() as conn, orm(conn) as o:
            first, second = o.exec(select(Entry.id).where(col(Entry.session_id) == "s1")
                                   .order_by(col(Entry.id)).limit(2)).all()
        with s.write() as conn:
            drop_chunks_of(conn, "entry", first)
        plan = s.health_fix_plan("index-lag")
        assert plan.counts["sources"] == 1
        with s.write() as conn:
            drop_chunks_of(conn, "entry", second)
        with pytest.raises(PlanStale, match="0 previewed targets no longer the same, 1 target new"):
            s.health_fix("index-lag", previewed=plan, exact=True)
        assert s.health_fix_plan("index-lag").counts["sources"] == 2  # nothing was indexed
        done = s.health_fix("index-lag", previewed=plan)
        assert done.counts["sources"] == 1 and done.counts["new_since_preview"] == 1
    finally:
        s.close()
