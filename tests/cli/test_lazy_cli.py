"""The lazy command line: `lca-tui --help` imports no command module, `lca-tui CMD
…` imports CMD's module only; every command's help is what the full parser (every module
registered) prints; the command index is current; and the import sets of `--help`,
`CMD --help` and `lca-tui stats` hold no heavy library they do not use."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lca_tui import cli
from lca_tui.commands._index import COMMANDS

HEAVY = ("sqlalchemy", "sqlmodel", "numpy", "textual", "fastembed", "onnxruntime", "pandas")

_PROBE = ("import sys, json, io, contextlib\n"
          "from lca_tui.cli import main\n"
          "buf = io.StringIO()\n"
          "with contextlib.redirect_stdout(buf):\n"
          "    try:\n"
          "        code = main(sys.argv[1:])\n"
          "    except SystemExit as exc:\n"
          "        code = exc.code\n"
          "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n")


def _loaded(*words: str) -> tuple[int, set[str]]:
    """Exit code and every module imported by a fresh process running `lca-tui WORDS`."""
    out = subprocess.run([sys.executable, "-c", _PROBE, *words], capture_output=True,
                         text=True, timeout=120, check=True)
    doc = json.loads(out.stdout.splitlines()[-1])
    return doc["code"], set(doc["modules"])


def _tops(modules: set[str], names: tuple[str, ...] = HEAVY) -> set[str]:
    return {m for m in modules if m.split(".")[0] in names}


def _commands_imported(modules: set[str]) -> set[str]:
    return {m.split(".")[2] for m in modules
            if m.startswith("lca_tui.commands.") and m != "lca_tui.commands._index"}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every parser below ``parser``, by its command words ("hooks install")."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found[name] = child
                found.update({f"{name} {k}": v for k, v in _subparsers(child).items()})
    return found


def test_the_index_is_current() -> None:
    text = Path(cli.__file__).with_name("commands").joinpath("_index.py").read_text("utf-8")
    assert text == cli.write_index(), ("lca_tui/commands/_index.py is stale: run "
                                       "`python -m lca_tui.cli --write-index`")


def test_every_command_is_in_the_index_with_its_module() -> None:
    full = _subparsers(cli.build_parser(full=True))
    top = {name for name in full if " " not in name}
    assert set(COMMANDS) == top
    for name, (module, _help) in COMMANDS.items():
        assert full[name].get_default("command_module") == module, name


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_commands_help_is_the_full_parsers(command: str) -> None:
    """What `lca-tui CMD --help` (and every `CMD VERB --help`) prints is what the parser with
    every module registered prints: nothing is lost by building only CMD's parser."""
    full = _subparsers(cli.build_parser(full=True))
    lazy = _subparsers(cli.build_parser(command))
    mine = sorted(k for k in full if k.split(" ")[0] == command)
    assert mine and [k for k in mine if k not in lazy] == []
    for key in mine:
        assert lazy[key].format_help() == full[key].format_help(), key
        assert lazy[key].prog == full[key].prog


def test_the_top_help_lists_every_command_with_its_help() -> None:
    full = cli.build_parser(full=True).format_help()
    assert cli.build_parser().format_help() == full
    assert cli.build_parser("stats").format_help() == full
    for name, (_module, help_text) in COMMANDS.items():
        assert name in full and help_text.split(" ")[0] in full


def test_an_unknown_command_is_refused_with_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["no-such-command"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'no-such-command'" in err and "'stats'" in err


def test_abbreviated_options_before_the_command_work_as_argparse_allows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--sto PATH`` / ``--act NAME`` / ``--se NAME=VALUE``: the command word is found after
    the abbreviated option's value, as the full parser would read it."""
    from tests.conftest import make_store

    make_store(tmp_path / "s.db").close()
    db = str(tmp_path / "s.db")
    assert cli.main(["--sto", db, "stats"]) == 0
    assert cli.main(["--act", "bob", "--store", db, "stats"]) == 0
    assert cli.main(["--store", db, "--se", "search.limit=2", "search", "postgres"]) == 0
    capsys.readouterr()


def test_help_imports_no_command_and_no_store() -> None:
    code, loaded = _loaded("--help")
    assert code == 0
    assert _tops(loaded, HEAVY + ("rich", "store", "screens", "widgets")) == set()
    assert _commands_imported(loaded) == set()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_commands_help_imports_its_module_only(command: str) -> None:
    code, loaded = _loaded(command, "--help")
    assert code == 0
    assert _tops(loaded) == set(), sorted(_tops(loaded))[:10]
    assert _commands_imported(loaded) <= {COMMANDS[command][0]}
    assert not any(m.startswith(("store.ingest", "store.governance", "store.health",
                                 "store.recall", "store.privacy")) for m in loaded)


@pytest.mark.parametrize("command", ["stats", "sessions", "proposals", "memories", "audit"])
def test_listings_import_neither_the_orm_nor_the_model_nor_the_app(tmp_path: Path,
                                                                  command: str) -> None:
    """`lca-tui stats` (and the other listings) on a current store file: read with the bare
    DB-API (``store.open_listings``), so neither SQLAlchemy, SQLModel nor pydantic is
    imported; nor the embedding model, NumPy, pandas or the app — the embedder `stats`
    reports is probed, not loaded, and the sqlite-vec extension is loaded by its path."""
    from tests.conftest import make_store

    make_store(tmp_path / "s.db").close()
    code, loaded = _loaded(command, "--store", str(tmp_path / "s.db"),
                           "--set", "embed.backend=auto")  # the model, were it loaded
    assert code == 0
    assert _tops(loaded, ("sqlalchemy", "sqlmodel", "pydantic", "fastembed", "onnxruntime",
                          "textual", "pandas", "numpy", "tokenizers")) == set()
    assert _commands_imported(loaded) == {COMMANDS[command][0]}
    # a current store: no migration module imported to find that out
    assert not any(m.startswith("store.core.migrations") for m in loaded)


def test_a_listing_on_a_store_to_migrate_opens_the_store(tmp_path: Path) -> None:
    """A store one migration behind is not read by the lean path: the ``Store`` opens it (and
    migrates it), as before."""
    import sqlite3

    from tests.conftest import make_store

    make_store(tmp_path / "s.db").close()
    with sqlite3.connect(tmp_path / "s.db") as conn:
        newest = conn.execute("SELECT MAX(version) FROM schema_migration").fetchone()[0]
        conn.execute("DELETE FROM schema_migration WHERE version = ?", (newest,))
    code, loaded = _loaded("stats", "--store", str(tmp_path / "s.db"))
    assert code == 0 and "sqlalchemy" in _tops(loaded)
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("SELECT MAX(version) FROM schema_migration").fetchone()[0] == newest


def test_health_in_process_loads_neither_the_model_nor_the_importers(tmp_path: Path) -> None:
    """`lca-tui health` with no daemon: the scan's own libraries (SQLAlchemy, NumPy) and no
    more — not pandas (its import was 0.15 s of the command: the signals count their few
    rows themselves), the embedder in use is probed, not loaded, and no importer, demo or
    conformance module is imported to find the tables that record their writer."""
    from tests.conftest import make_store

    make_store(tmp_path / "s.db").close()
    code, loaded = _loaded("health", "--no-save", "--store", str(tmp_path / "s.db"),
                           "--set", "embed.backend=auto")  # the model, were it loaded
    assert code in (0, 1)
    assert "sqlalchemy" in _tops(loaded, ("sqlalchemy",)) and _tops(loaded, ("pandas",)) == set()
    assert _tops(loaded, ("fastembed", "onnxruntime", "tokenizers", "textual")) == set()
    assert not any(m.startswith(("store.ingest", "store.demo", "store.conformance",
                                 "store.privacy")) for m in loaded)
    assert _commands_imported(loaded) == {"health"}


def test_recall_in_process_imports_neither_pandas_nor_the_app(tmp_path: Path) -> None:
    from tests.conftest import make_store

    make_store(tmp_path / "s.db").close()
    code, loaded = _loaded("recall", "anything", "--store", str(tmp_path / "s.db"))
    assert code == 0
    assert "numpy" in _tops(loaded, ("numpy",))
    assert _tops(loaded, ("pandas", "textual")) == set()
    assert _commands_imported(loaded) == {"recall"}


def test_the_vector_extension_is_sqlite_vecs_own() -> None:
    import sqlite_vec

    from store.core.db import vec_extension

    assert vec_extension() == sqlite_vec.loadable_path()


@pytest.mark.model
def test_stats_reports_the_model_it_would_load(tmp_path: Path) -> None:
    """The embedder line of `stats` is the same whether the model was loaded or probed."""
    from tests.conftest import make_store

    s = make_store(tmp_path / "s.db", **{"embed.backend": "auto"})
    try:
        probed = s.stats().embedder
        assert not s.embedder_loaded
        s.load_embedder()
        assert s.stats().embedder == probed
    finally:
        s.close()
