"""``lca-tui erase`` / ``redact`` act on exactly the closure they printed: when the store
changes while the person reads it (a hook writes one more matching turn before they type the
word), the command refuses with one line and changes nothing; unchanged, it goes ahead."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from store import NewEntry, NewSession
from tests.conftest import make_store
from tests.helpers_privacy import _cli

WORD = "wombat-7731"


def _write(path: Path, turns: range) -> None:
    with make_store(path) as store:
        store.append_entries(NewSession(id="s-erase", format="harness"),
                             [NewEntry("user", f"turn {i} names {WORD}", "s-erase",
                                       line_id=f"t{i}") for i in turns])


class _Person(io.StringIO):
    """A terminal whose person types ``word``; ``meanwhile`` runs while they read."""

    def __init__(self, word: str, meanwhile: Callable[[], None]) -> None:
        super().__init__()
        self.word, self.meanwhile = word, meanwhile

    def isatty(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:
        self.meanwhile()
        return f"{self.word}\n"


def _state(path: Path) -> tuple[int, int, int]:
    """Entries holding the word, entries in the store, tombstones."""
    with make_store(path) as store:
        holding = len(store.search(WORD, limit=50, mode="fts"))
        return holding, sum(s.entries for s in store.sessions()), len(store.tombstones())


@pytest.mark.parametrize("action", ["erase", "redact"])
def test_a_store_changed_after_the_preview_is_refused_in_one_line(
        action: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "store.db"
    _write(path, range(2))
    monkeypatch.setattr("sys.stdin", _Person(action, lambda: _write(path, range(2, 3))))
    code, out, err = _cli(capsys, "--store", str(path), action, "--match", WORD)
    assert code == 2
    assert "entry" in out  # the closure was printed before the prompt
    refusal = err.rsplit("cancels): ", 1)[-1]
    assert refusal.count("\n") == 1 and refusal.startswith("lca-tui: "), err
    assert "the store changed since the preview" in refusal and "nothing changed" in refusal
    assert _state(path) == (3, 3, 0)  # all three turns as they were, no tombstone


@pytest.mark.parametrize("action", ["erase", "redact"])
def test_an_unchanged_store_is_changed_as_the_closure_said(
        action: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "store.db"
    _write(path, range(2))
    monkeypatch.setattr("sys.stdin", _Person(action, lambda: None))
    code, out, err = _cli(capsys, "--store", str(path), action, "--match", WORD)
    assert code == 0, err
    assert "verification passed" in out
    entries = 0 if action == "erase" else 2  # a redaction keeps the entries in their place
    assert _state(path) == (0, entries, 1)


def test_a_cancelled_confirmation_changes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "store.db"
    _write(path, range(2))
    monkeypatch.setattr("sys.stdin", _Person("no", lambda: None))
    code, _out, err = _cli(capsys, "--store", str(path), "erase", "--match", WORD)
    assert code == 1 and "cancelled: nothing was changed" in err
    assert _state(path) == (2, 2, 0)

