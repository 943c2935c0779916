"""``lca-tui hooks install|uninstall|status`` on Claude Code's settings.json: idempotent,
other hooks untouched, a backup first, and install + uninstall leaves the file as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lca_tui.cli import main
from store.harness import settings_file as sf

OTHERS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "~/bin/check-bash.sh", "timeout": 5}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "other-memory-plugin"}]}],
    },
}


def _cli(*args: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out


def _settings(project: Path) -> Path:
    return project / ".claude" / "settings.json"


def test_install_then_uninstall_keeps_other_hooks_and_restores_the_bytes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _settings(tmp_path)
    path.parent.mkdir()
    original = json.dumps(OTHERS, indent=4).encode() + b"\n"  # not our formatting
    path.write_bytes(original)
    store = str(tmp_path / "store.db")
    _cli("hooks", "install", "--project", str(tmp_path), "--store", store, capsys=capsys)
    installed = json.loads(path.read_text())
    assert installed["model"] == "opus" and installed["permissions"] == OTHERS["permissions"]
    assert installed["hooks"]["PreToolUse"] == OTHERS["hooks"]["PreToolUse"]
    prompt = installed["hooks"]["UserPromptSubmit"]
    assert prompt[0] == OTHERS["hooks"]["UserPromptSubmit"][0] and len(prompt) == 2
    ours = prompt[1]["hooks"][0]
    assert sf.is_ours(ours["command"])
    assert ours["command"].split()[-7:] == ["hook", "UserPromptSubmit", "--store", store, "||",
                                           "exit", "1"]
    assert set(installed["hooks"]) == {"PreToolUse", *sf.EVENTS}
    assert path.with_name("settings.json.lca-tui.bak").read_bytes() == original

    again = _cli("hooks", "install", "--project", str(tmp_path), "--store", store,
                 capsys=capsys)
    assert "nothing to change" in again and json.loads(path.read_text()) == installed

    status = json.loads(_cli("hooks", "status", "--project", str(tmp_path), "--store", store,
                             "--json", capsys=capsys))
    assert status["settings"]["installed"] and status["daemon"] is None
    assert status["hook_failures"]["status"] == "ok"

    _cli("hooks", "uninstall", "--project", str(tmp_path), capsys=capsys)
    assert json.loads(path.read_bytes()) == OTHERS
    assert path.read_bytes() == original  # byte-identical: it held nothing of ours before
    assert not path.with_name("settings.json.lca-tui.orig").exists()


def test_uninstall_is_json_equal_when_the_file_changed_meanwhile(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _settings(tmp_path)
    path.parent.mkdir()
    path.write_text(json.dumps(OTHERS))
    _cli("hooks", "install", "--project", str(tmp_path), capsys=capsys)
    data = json.loads(path.read_text())
    data["hooks"]["Notification"] = [{"hooks": [{"type": "command", "command": "notify"}]}]
    path.write_text(json.dumps(data))  # the user added a hook after installing ours
    _cli("hooks", "uninstall", "--project", str(tmp_path), capsys=capsys)
    expected = json.loads(json.dumps(OTHERS))
    expected["hooks"]["Notification"] = data["hooks"]["Notification"]
    assert json.loads(path.read_text()) == expected


def test_install_into_no_file_and_uninstall_removes_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _settings(tmp_path)
    dry = json.loads(_cli("hooks", "install", "--project", str(tmp_path), "--dry-run",
                          "--json", capsys=capsys))
    assert dry["dry_run"] and dry["written"] == [] and not path.exists()
    assert len(dry["changes"]) == len(sf.EVENTS)
    _cli("hooks", "install", "--project", str(tmp_path), capsys=capsys)
    assert set(json.loads(path.read_text())["hooks"]) == set(sf.EVENTS)
    _cli("hooks", "uninstall", "--project", str(tmp_path), capsys=capsys)
    assert not path.exists()
    again = _cli("hooks", "uninstall", "--project", str(tmp_path), capsys=capsys)
    assert "no lca-tui hooks" in again


def test_a_moved_executable_is_updated_in_place_and_duplicates_dropped(tmp_path: Path) -> None:
    path = _settings(tmp_path)
    path.parent.mkdir()
    old = "/old/venv/bin/lca-tui hook PreCompact"
    path.write_text(json.dumps({"hooks": {"PreCompact": [
        {"matcher": "auto", "hooks": [{"type": "command", "command": old},
                                      {"type": "command", "command": "echo keep"}]},
        {"hooks": [{"type": "command", "command": old + " --store /x"}]}]}}))
    plan = sf.plan_install(path, None, ["/new/bin/lca-tui"])
    groups = plan.data["hooks"]["PreCompact"]
    assert groups == [{"matcher": "auto", "hooks": [
        {"type": "command", "command": "/new/bin/lca-tui hook PreCompact || exit 1",
         "timeout": 300},
        {"type": "command", "command": "echo keep"}]}]
    assert any("duplicate" in c for c in plan.changes)


def test_invalid_settings_are_refused_untouched(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = _settings(tmp_path)
    path.parent.mkdir()
    path.write_text('{"hooks": [1, 2]}')
    assert main(["hooks", "install", "--project", str(tmp_path)]) == 2
    assert "not an object" in capsys.readouterr().err
    assert path.read_text() == '{"hooks": [1, 2]}'
    assert not path.with_name("settings.json.lca-tui.bak").exists()


def test_is_ours_recognises_only_lca_tui_hook_commands() -> None:
    assert sf.is_ours("/a/b/lca-tui hook Stop")
    assert sf.is_ours("'/path with space/lca-tui' hook UserPromptSubmit --store /s.db")
    assert sf.is_ours("/usr/bin/python3 -m lca_tui.cli hook SessionEnd")
    assert not sf.is_ours("lca-tui-other hook Stop")
    assert not sf.is_ours("echo lca-tui hooks")
    assert not sf.is_ours("my-hook lca-tui")
    assert not sf.is_ours(None)


@pytest.mark.parametrize("start", [{"hooks": {}}, {"hooks": {"UserPromptSubmit": []}},
                                   {"model": "opus", "hooks": {"Stop": [], "PreCompact": []}}])
def test_empty_hook_containers_survive_install_and_uninstall(
        tmp_path: Path, start: dict, capsys: pytest.CaptureFixture[str]) -> None:
    path = _settings(tmp_path)
    path.parent.mkdir()
    path.write_text(json.dumps(start))
    _cli("hooks", "install", "--project", str(tmp_path), capsys=capsys)
    data = json.loads(path.read_text())
    data["theme"] = "dark"  # edited meanwhile: the bytes cannot simply come back
    path.write_text(json.dumps(data))
    _cli("hooks", "uninstall", "--project", str(tmp_path), capsys=capsys)
    assert json.loads(path.read_text()) == {**start, "theme": "dark"}


def test_a_symlinked_settings_file_is_written_through_and_stays_a_link(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    original = json.dumps(OTHERS).encode()
    real.write_bytes(original)
    path = _settings(tmp_path / "proj")
    path.parent.mkdir(parents=True)
    path.symlink_to(real)
    _cli("hooks", "install", "--project", str(tmp_path / "proj"), capsys=capsys)
    assert path.is_symlink() and path.resolve() == real
    assert set(json.loads(real.read_text())["hooks"]) == {"PreToolUse", *sf.EVENTS}
    _cli("hooks", "uninstall", "--project", str(tmp_path / "proj"), capsys=capsys)
    assert path.is_symlink() and real.read_bytes() == original
    assert sorted(p.name for p in dotfiles.iterdir()) == ["claude-settings.json"]


def test_a_project_folder_that_does_not_exist_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    typo = tmp_path / "typo" / "deep"
    assert main(["hooks", "install", "--project", str(typo)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "typo").exists()


def test_the_first_backup_is_kept_and_the_marker_is_not_called_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _cli("hooks", "install", "--project", str(tmp_path), capsys=capsys)
    assert "(backup" not in out  # no file before: nothing backed up (only the marker)
    path = _settings(tmp_path)
    _cli("hooks", "uninstall", "--project", str(tmp_path), capsys=capsys)
    original = json.dumps(OTHERS).encode()
    path.write_bytes(original)
    out = _cli("hooks", "install", "--project", str(tmp_path), capsys=capsys)
    backup = path.with_name("settings.json.lca-tui.bak")
    assert f"(backup {backup})" in out.replace("\n", "") and backup.read_bytes() == original
    _cli("hooks", "uninstall", "--project", str(tmp_path), capsys=capsys)
    assert backup.read_bytes() == original  # not overwritten by the installed version
