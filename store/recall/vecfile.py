"""The vector copy's file beside a SQLite store: ``<store>-vectors``, memory-mapped.

A warm process's first recall used to read every vector out of sqlite-vec's ``chunk_vec``
(≈ 0.36 s of CPU for the scan alone at 50,000 vectors, ≈ 0.9 s with the rest). The copy the
recall builds (``pool.VectorCache``) is written to this file once, and the next process that
opens the store maps it instead: a few pages read, the vectors faulted in by the first matrix
product.

Layout (little-endian, ``HEADER`` bytes of header so the matrix is page-aligned)::

    b"LCAVEC1\\n" + JSON {model, dim, rows, stamp, ids_at, sens_at, matrix_at} padded
    ids     int64[rows]   chunk ids, ascending
    sens    int8[rows]    each chunk's source sensitivity (index into SENSITIVITIES)
    matrix  float32[rows, dim]  the vectors, exactly the bytes chunk_vec holds

When it is used: only when the stamp it was written at — (chunks, highest chunk id, latest
audit event that was not feedback), the same stamp the in-memory copy is kept by — is the
store's now, or the store has only gained chunks since (no audit event in between: the new
ones are read from ``chunk_vec`` and added, as in a running process), and when a sample of
its vectors (first, last and 14 between) are byte for byte the ones ``chunk_vec`` holds (a
store replaced by another at the same path with the same counts is not mistaken for it).
Chunk ids are never reused (``AUTOINCREMENT``), so an equal (count, highest id) is the same
set of chunks; an erasure, a redaction and a reindex each leave an audit event. Anything
else: the file is not read, the vectors are loaded from ``chunk_vec`` and the file is written
again (to a temporary name, renamed over it only if the store did not change meanwhile).

Privacy: the file holds vector bytes of the store's chunks. An erasure deletes it
(``pool.drop_cache``, with the in-memory copy), and the erasure's raw-bytes probe searches
every ``<store>-vectors*`` file for the erased chunks' vectors (``erased_rows``): a file a
racing process wrote from before the erasure fails the verification until it is gone.
A read-only store never writes one; ``recall.vector_file = false`` turns the file off.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

MAGIC = b"LCAVEC1\n"
HEADER = 4096
SAMPLES = 16
SUFFIX = "-vectors"


def path_for(store_path: Path) -> Path:
    return Path(f"{store_path}{SUFFIX}")


def files_beside(store_path: Path) -> list[Path]:
    """The vector file and any temporary one a writer left (killed mid-write)."""
    folder, name = store_path.parent, store_path.name + SUFFIX
    try:
        return sorted(p for p in folder.iterdir() if p.name.startswith(name))
    except OSError:
        return []


def remove(store_path: Path) -> list[Path]:
    """Delete the vector file(s) beside ``store_path`` (an erasure asks it); the ones removed."""
    gone = []
    for p in files_beside(store_path):
        with contextlib.suppress(OSError):
            p.unlink()
            gone.append(p)
    return gone


@dataclass
class Mapped:
    """A vector file as mapped: its stamp and model, and arrays viewing the map."""

    stamp: tuple[int, int, int]
    model: str
    hashes: dict[int, str]
    ids: np.ndarray
    sens: np.ndarray
    matrix: np.ndarray


def _align(n: int, to: int = 64) -> int:
    return (n + to - 1) // to * to


def read(path: Path) -> Mapped | None:
    """The file mapped read-only, or None when there is none or it is not one of ours."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < HEADER:
                return None
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        head = bytes(mm[:HEADER])
        if not head.startswith(MAGIC):
            return None
        meta = json.loads(head[len(MAGIC):].split(b"\0", 1)[0])
        rows, dim = int(meta["rows"]), int(meta["dim"])
        ids_at, sens_at, matrix_at = (int(meta["ids_at"]), int(meta["sens_at"]),
                                      int(meta["matrix_at"]))
        if rows < 0 or dim <= 0 or matrix_at + rows * dim * 4 != size:
            return None
        stamp = tuple(int(x) for x in meta["stamp"])
        if len(stamp) != 3:
            return None
        ids = np.frombuffer(mm, dtype="<i8", count=rows, offset=ids_at)
        sens = np.frombuffer(mm, dtype=np.int8, count=rows, offset=sens_at)
        matrix = np.frombuffer(mm, dtype="<f4", count=rows * dim,
                               offset=matrix_at).reshape(rows, dim)
    except (ValueError, KeyError, TypeError):
        return None
    hashes = {int(k): str(v) for k, v in dict(meta.get("hashes") or {}).items()}
    return Mapped((stamp[0], stamp[1], stamp[2]), str(meta["model"]), hashes, ids, sens,
                  matrix)


def write(path: Path, stamp: tuple[int, int, int], model: str, ids: np.ndarray,
          sens: np.ndarray, matrix: np.ndarray, hashes: dict[int, str],
          still: Callable[[], bool] | None = None) -> bool:
    """Write the file to a temporary name, flushed to disk, and rename it over ``path``, only
    if ``still()`` (the store's stamp is still the one written) holds just before; False if
    not written. ``hashes``: the sampled chunks' content hashes (``sample_rows``)."""
    rows, dim = matrix.shape
    ids_at = HEADER
    sens_at = _align(ids_at + 8 * rows)
    matrix_at = _align(sens_at + rows, HEADER)
    meta = json.dumps({"model": model, "dim": int(dim), "rows": int(rows),
                       "stamp": list(stamp), "ids_at": ids_at, "sens_at": sens_at,
                       "matrix_at": matrix_at,
                       "hashes": {str(k): v for k, v in hashes.items()}}).encode()
    if len(MAGIC) + len(meta) >= HEADER:
        return False
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write((MAGIC + meta).ljust(HEADER, b"\0"))
            f.write(np.ascontiguousarray(ids, dtype="<i8").tobytes())
            f.write(b"\0" * (sens_at - ids_at - 8 * rows))
            f.write(np.ascontiguousarray(sens, dtype=np.int8).tobytes())
            f.write(b"\0" * (matrix_at - sens_at - rows))
            f.write(np.ascontiguousarray(matrix, dtype="<f4").data.cast("B"))
            f.flush()
            os.fsync(f.fileno())  # on disk before the rename: never a header over no data
        if still is not None and not still():
            tmp.unlink(missing_ok=True)
            return False
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False


def sample_rows(rows: int) -> list[int]:
    """The rows whose vectors are checked against ``chunk_vec``: first, last and between."""
    if rows <= SAMPLES:
        return list(range(rows))
    return sorted({round(i * (rows - 1) / (SAMPLES - 1)) for i in range(SAMPLES)})


def sampled_ids(ids: np.ndarray) -> list[int]:
    return [int(ids[j]) for j in sample_rows(len(ids))]


def agrees(hashes_now: dict[int, str], m: Mapped) -> bool:
    """Is ``m`` a copy of this store: the content hashes its header keeps for the sampled
    chunks (``sampled_ids``) those the store has now (``hashes_now``, read by the caller)?
    A store replaced by another at the same path, with the same counts, differs there."""
    want = sampled_ids(m.ids)
    return bool(want) and set(m.hashes) == set(want) and \
        all(hashes_now.get(i) == m.hashes[i] for i in want)


def erased_rows(store_path: Path, chunk_ids: set[int], vectors: np.ndarray
                ) -> tuple[int, list[str]]:
    """(how many rows of the vector files beside the store still hold a removed chunk's
    vector, the files searched): a row of one of ours counts when its chunk id is among
    ``chunk_ids`` and its bytes are one of ``vectors`` (a remaining chunk with the same text
    may rightly have the same vector; a redacted chunk's new vector is not its old one); a
    file that is not one of ours (a temporary one cut short) is searched as raw bytes."""
    wanted = {np.asarray(v, dtype="<f4").tobytes() for v in vectors}
    found, names = 0, []
    for p in files_beside(store_path):
        names.append(p.name)
        m = read(p)
        if m is not None:
            rows = np.flatnonzero(np.isin(m.ids, np.fromiter(chunk_ids, dtype=np.int64)))
            found += sum(1 for j in rows if m.matrix[j].tobytes() in wanted)
            continue
        try:
            data = p.read_bytes()
        except OSError:
            continue
        found += sum(1 for w in wanted if w and w in data)
    return found, names
