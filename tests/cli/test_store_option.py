"""``--store``: a store in a folder that does not exist or an empty argument is refused in one
line; the default location is created on demand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


from tests.helpers_ui import _fails, _one_error_line, _run


def test_store_in_a_missing_folder_is_refused(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "typo" / "store.db"
    _one_error_line(*_run(["sessions", "--store", str(target)], capsys),
                    str(target.parent), "does not exist")
    assert not target.parent.exists()


def test_default_store_location_is_created_on_demand(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("LCA_STORE")
    code, out, _ = _run(["sessions", "--json"], capsys)
    assert code == 0 and json.loads(out) == []
    assert (tmp_path / "xdg_data_home" / "lca-tui" / "store.db").is_file()


def test_empty_store_argument_is_an_error(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _fails(["stats", "--store", ""], capsys, "--store is empty")
    _fails(["--store", "", "sessions"], capsys, "--store is empty")


@pytest.mark.parametrize("how", ["store", "deeper", "demo", "default-folder"])
def test_a_store_under_a_file_is_one_clear_line(tmp_path: Path, how: str,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from lca_tui.cli import main

    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    args = {"store": ["--store", str(blocker / "x.db"), "stats"],
            "deeper": ["--store", str(blocker / "a" / "b.db"), "stats"],
            "demo": ["demo", "--no-open", "--store", str(blocker / "x.db")],
            "default-folder": ["stats"]}[how]
    if how == "default-folder":
        monkeypatch.delenv("LCA_STORE", raising=False)
        monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    assert main(args) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "File exists" not in err
    assert f"{blocker} is a file, not a folder" in err
