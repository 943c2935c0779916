"""One local time format in the CLI's tables, ISO-8601 in its JSON."""

from __future__ import annotations

import json

import pytest

from store import Store

from tests.helpers_ui import SESSIONS, _run, _store_with_worker


def test_one_time_format_and_iso_in_json(store: Store, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_worker(store)
    monkeypatch.setenv("COLUMNS", "200")
    _, out, _ = _run(["entries", SESSIONS[0][:8], "--store", str(store.path)], capsys)
    assert "#0 2026-03-01 10:00:00 user" in out and "T10:00:00" not in out
    _, out, _ = _run(["entries", SESSIONS[0][:8], "--json", "--store", str(store.path)], capsys)
    assert json.loads(out)[0]["ts"] == "2026-03-01T10:00:00Z"


def test_tombstones_and_flags_print_the_one_local_format(
        store: Store, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`tombstones` printed the stored ISO-8601 (`2026-12-01T20:25:22.241Z`); it prints
    local `YYYY-MM-DD HH:MM:SS` like every other table, and JSON keeps ISO."""
    import re

    from store import when

    _store_with_worker(store)
    monkeypatch.setenv("COLUMNS", "200")
    st = ["--store", str(store.path)]
    code, _, err = _run(["erase", "--session", SESSIONS[2], "--yes", *st], capsys)
    assert code == 0, err
    _, out, _ = _run(["tombstones", "--json", *st], capsys)
    ts = json.loads(out)["tombstones"][0]["ts"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", ts)
    _, out, _ = _run(["tombstones", *st], capsys)
    assert when(ts, with_seconds=True) in out and ts not in out and ts[:19] not in out
    assert re.search(r"\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\b", out)


def test_the_health_title_prints_the_one_local_format(
        store: Store, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`health`'s title printed the stored ISO-8601 (`health at 2026-12-01T20:25:22.241Z`)."""
    import re

    _store_with_worker(store)
    monkeypatch.setenv("COLUMNS", "200")
    _, out, _ = _run(["health", "--no-save", "--store", str(store.path)], capsys)
    assert re.search(r"health at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\b", out), out[:300]
    assert not re.search(r"health at \S*T\d\d:", out)


def test_short_lists_use_the_one_format_with_the_year() -> None:
    """The screens' event lists (Privacy's tombstones) said `12-01 20:25:22`."""
    from widgets.fmt import short_when

    assert short_when("2026-12-01T20:25:22.241Z") == when_s("2026-12-01T20:25:22.241Z")


def test_a_proposal_head_does_not_call_local_time_utc() -> None:
    """The proposal detail printed a local time followed by `UTC`."""
    from datetime import UTC, datetime

    from screens.proposal_view import head_text
    from store.governance.records import ProposalInfo, ProposalSummary

    s = ProposalSummary(1, "add", "feedback", "pending", "cli", (), "2026-12-01T18:54:00Z",
                        "n", ())
    info = ProposalInfo(s, "x", {}, None, (), None, 0, s.created, None, None, None, None, None,
                        (), (), (), ())
    plain = head_text(info, datetime(2026, 12, 1, 19, 0, tzinfo=UTC)).plain
    assert when_s(s.created)[:16] in plain and "UTC" not in plain


def when_s(ts: str) -> str:
    from store import when

    return when(ts, with_seconds=True)
