"""Determinism injected, not patched: a store is given its embedder (``embedder=``) and the
timer its recalls measure latency with (``timer=``), the in-process CLI its settings
(``lca_tui.cli.main(argv, settings=…)``), so tests need no process-wide patch of a module's
``time`` or of ``$LCA_EMBEDDER``."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from lca_tui.cli import main
from store import open_store
from store.core.embed import HashEmbedder, ModelEmbedder
from store.core.settings import Settings
from store.recall.run import recall
from store.recall.traces import get_trace
from tests.helpers_recall import NOW, add_entries
from tests.helpers_shell import FALLBACK, FixedLatency


def test_a_recalls_latency_is_measured_with_the_stores_timer(tmp_path: Path) -> None:
    with open_store(tmp_path / "t.db", Settings.load(), timer=FixedLatency()) as store:
        add_entries(store, "s1", [("user", "deploy the service with helm")])
        first = recall(store, "deploy with helm", now=NOW)
        second = recall(store, "deploy with helm", now=NOW)
        for result in (first, second):
            assert result.trace.latency_ms == pytest.approx(12.5)
            assert get_trace(store, int(result.trace_id or 0)).latency_ms == pytest.approx(12.5)


def test_without_a_timer_the_latency_is_the_real_one(tmp_path: Path) -> None:
    with open_store(tmp_path / "r.db", Settings.load()) as store:
        add_entries(store, "s1", [("user", "deploy the service with helm")])
        latency = recall(store, "deploy with helm", now=NOW).trace.latency_ms
        assert latency is not None and latency > 0 and latency != pytest.approx(12.5)


def test_the_given_embedder_is_used_whatever_the_settings_say(tmp_path: Path) -> None:
    given = HashEmbedder("given by the test")
    settings = Settings.load({"embed.backend": "model"})
    with open_store(tmp_path / "e.db", settings, embedder=given) as store:
        assert store.embedder is given
        add_entries(store, "s1", [("user", "deploy the service with helm")])
        assert recall(store, "deploy with helm", now=NOW).trace.degraded


def test_the_tests_stores_are_given_their_embedder_not_the_environment(
        tmp_path: Path) -> None:
    """``make_store`` (and the ``store`` fixture) injects the fallback embedder: with neither
    ``$LCA_EMBEDDER`` nor the user's config file choosing it, such a store is deterministic
    still, and holds its embedder before any use; a test asking for the real model is given
    none (its settings choose)."""
    from tests.conftest import make_store

    with no_user_config(tmp_path):
        with make_store(tmp_path / "given.db") as store:
            assert store.embedder_loaded and isinstance(store.embedder, HashEmbedder)
            assert store.settings.source("embed.backend") == "default"
        with make_store(tmp_path / "real.db", **{"embed.backend": "model"}) as store:
            assert not store.embedder_loaded


@contextmanager
def no_user_config(tmp_path: Path) -> Iterator[None]:
    """The test's user without a config file (nothing of theirs chooses the embedder: the
    default ``auto`` would load the model), for the block; the file is put back after."""
    config = tmp_path / "xdg_config_home" / "lca-tui" / "config.toml"
    text = config.read_text(encoding="utf-8")
    config.unlink()
    try:
        yield
    finally:
        config.write_text(text, encoding="utf-8")


def _backend(capsys: pytest.CaptureFixture[str], argv: list[str],
             settings: Mapping[str, object] | None = None) -> str:
    """``embed.backend`` (its value and where it came from) as ``config --json`` shows it."""
    assert main(argv + ["config", "--json"], settings=settings) == 0
    shown = json.loads(capsys.readouterr().out)["settings"]["embed.backend"]
    return f"{shown['value']} ({shown['source']})"


def test_the_in_process_cli_is_given_its_settings_by_its_caller(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``main(argv, settings=…)`` runs the command with the caller's settings, as ``--set``
    before the command would (a ``--set`` in ``argv`` wins over them), with nothing in the
    environment or the config file: a recall through it never loads the model."""
    from tests.conftest import make_store

    path = tmp_path / "s.db"
    with make_store(path) as store:
        add_entries(store, "s1", [("user", "deploy the service with helm")])
    loads = ModelEmbedder.loads
    with no_user_config(tmp_path):
        assert _backend(capsys, ["--store", str(path)]) == "auto (default)"
        assert _backend(capsys, ["--store", str(path)],
                        settings=FALLBACK) == "fallback (command line)"
        assert _backend(capsys, ["--store", str(path), "--set", "embed.backend=model"],
                        settings=FALLBACK) == "model (command line)"
        assert main(["--store", str(path), "recall", "deploy with helm", "--json"],
                    settings=FALLBACK) == 0
        done = json.loads(capsys.readouterr().out)
    assert ModelEmbedder.loads == loads
    assert done["degraded"] is True and done["items"], done
