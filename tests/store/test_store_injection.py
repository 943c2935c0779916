"""Determinism injected, not patched: a store is given its embedder (``embedder=``) and the
timer its recalls measure latency with (``timer=``), so tests need no process-wide patch of a
module's ``time`` or of ``$LCA_EMBEDDER``."""

from __future__ import annotations

from pathlib import Path

import pytest

from store import open_store
from store.core.embed import HashEmbedder
from store.core.settings import Settings
from store.recall.run import recall
from store.recall.traces import get_trace
from tests.helpers_recall import NOW, add_entries
from tests.helpers_shell import FixedLatency


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
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``make_store`` (and the ``store`` fixture) injects the fallback embedder: with
    ``$LCA_EMBEDDER`` gone, such a store is deterministic still, and holds its embedder before
    any use; a test asking for the real model is given none (its settings choose)."""
    from tests.conftest import make_store

    monkeypatch.delenv("LCA_EMBEDDER")
    with make_store(tmp_path / "given.db") as store:
        assert store.embedder_loaded and isinstance(store.embedder, HashEmbedder)
        assert store.settings.source("embed.backend") == "default"
    with make_store(tmp_path / "real.db", **{"embed.backend": "model"}) as store:
        assert not store.embedder_loaded
