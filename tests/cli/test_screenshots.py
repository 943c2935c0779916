"""``lca-tui screenshots DIR``: an SVG of every screen on the demo store, and the pictures
committed under ``docs/screenshots/`` (shown by the README and docs/app.md) still being what the
app draws — compared as pytest-textual-snapshot compares, without Rich's per-picture id."""

from __future__ import annotations

from pathlib import Path

import pytest

from lca_tui.screenshots import file_names, normalise, shoot

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def test_the_committed_screenshots_are_what_the_app_draws(tmp_path: Path) -> None:
    shots = shoot(tmp_path / "now")
    names = [s.name for s in shots]
    assert names == sorted(file_names())
    assert sorted(p.name for p in COMMITTED.glob("*.svg")) == names
    for shot in shots:
        text = shot.path.read_text(encoding="utf-8")
        assert text.startswith("<svg") and "lca-tui" in text
    stale = [n for n in names if normalise((COMMITTED / n).read_text(encoding="utf-8"))
             != normalise((tmp_path / "now" / n).read_text(encoding="utf-8"))]
    assert not stale, (f"docs/screenshots/ no longer matches the app: {', '.join(stale)}; run "
                       "`lca-tui screenshots docs/screenshots` and look at the diff")


def test_normalise_takes_out_only_the_picture_id() -> None:
    a = '<style>.terminal-123456-r1 { fill: #fff }</style><text class="terminal-123456-r1">x'
    b = '<style>.terminal-987-r1 { fill: #fff }</style><text class="terminal-987-r1">x'
    assert normalise(a) == normalise(b)
    assert normalise(a) != normalise(b.replace(">x", ">y"))


@pytest.mark.parametrize(("argv", "says"), [
    (["--size", "10x5"], "--size 10x5: give columns x rows"),
    (["--size", "wide"], "--size wide: give columns x rows"),
])
def test_a_bad_size_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                argv: list[str], says: str) -> None:
    from lca_tui.cli import main

    assert main(["screenshots", str(tmp_path / "out"), *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"lca-tui: {says}"), err
    assert not (tmp_path / "out").exists()


def test_dir_that_is_a_file_is_refused(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    target = tmp_path / "a-file"
    target.write_text("keep me", encoding="utf-8")
    assert main(["screenshots", str(target)]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") == "keep me"
