"""Keys and themes of your own: every binding has an id; the settings file's ``[keys]`` table
remaps a binding by id (a remapped key works, the old one no longer does); an id no binding has
is refused naming the file; ``app.theme`` / ``--theme`` choose the light or the dark theme."""

from __future__ import annotations

from pathlib import Path

import pytest

from lca_tui.app import make_app
from lca_tui.keymap import bindings
from store import Settings, SettingsError

from tests.conftest import with_user_config
from tests.helpers_shell import FIXED_NOW, load_count, load_log, wait_until


def test_every_binding_has_an_id() -> None:
    found = bindings()
    assert len(found) > 50
    assert [(where, b.key) for where, b in found if not b.id] == []


async def test_a_key_remapped_in_the_settings_file_works(demo_path: Path,
                                                         tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(with_user_config('[keys]\nmode-health = "f5"\nquit = "ctrl+q"\n'),
                      encoding="utf-8")
    settings = Settings.load(path=config)
    app = make_app(demo_path, settings, now=FIXED_NOW, mode="overview")
    async with app.run_test(message_hook=load_log(app), size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: load_count(app.screen) >= 1, what="Overview")
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.current_mode == "health", what="f5 opens Health")
        await pilot.press("q")  # no longer quit: remapped to ctrl+q
        await pilot.pause()
        assert app.is_running
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, what="ctrl+q quits")


def test_an_unknown_binding_id_is_refused_naming_the_file(demo_path: Path,
                                                          tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[keys]\nquitt = "ctrl+q"\n', encoding="utf-8")
    with pytest.raises(SettingsError, match=rf"{config}: keys.quitt: no key binding has the "
                                            "id 'quitt'"):
        make_app(demo_path, Settings.load(path=config), now=FIXED_NOW)


def test_a_key_must_be_a_string(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[keys]\nquit = 3\n', encoding="utf-8")
    with pytest.raises(SettingsError, match="keys.quit must name the key"):
        Settings.load(path=config)


def test_the_light_and_the_dark_theme(demo_path: Path) -> None:
    assert make_app(demo_path, now=FIXED_NOW).theme == "textual-dark"
    light = make_app(demo_path, Settings.load({"app.theme": "light"}), now=FIXED_NOW)
    assert light.theme == "textual-light"
    with pytest.raises(SettingsError, match="app.theme must be one of dark, light"):
        Settings.load({"app.theme": "pink"})


def test_theme_option_reaches_the_settings() -> None:
    from lca_tui.cli import build_parser
    from lca_tui.output import settings_from

    args = build_parser().parse_args(["--theme", "light", "--read-only"])
    settings = settings_from(args)
    assert settings["app.theme"] == "light" and settings["store.read_only"] is True


def test_every_binding_id_is_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "settings.md").read_text(encoding="utf-8")
    missing = sorted({b.id for _, b in bindings() if b.id and f"| `{b.id}` |" not in doc})
    assert missing == []
