"""Is an export folder complete? Its ``manifest.json`` lists every other file with its size
and sha256; a file missing, or of another size or hash, makes the export incomplete. Used by
``exports`` (the status) and by the importer (which refuses such a file, reporting it).

May import: nothing of the store (the standard library only).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
EXPORT_FORMAT = "lca-export"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_files(folder: Path, manifest: dict[str, Any]) -> dict[str, str]:
    """The files ``manifest["files"]`` lists that are missing or incomplete: relative path →
    why (missing; a size or sha256 other than the manifest records). The manifest does not
    list itself."""
    listed = manifest.get("files")
    bad: dict[str, str] = {}
    for item in listed if isinstance(listed, list) else []:
        rel = item.get("path") if isinstance(item, dict) else None
        if not isinstance(rel, str) or rel == MANIFEST:
            continue
        path = folder / rel
        size, sha = item.get("bytes"), item.get("sha256")
        if folder.resolve() not in path.resolve().parents:
            bad[rel] = "outside the export folder: not read"
        elif not path.is_file():
            bad[rel] = (f"listed in {MANIFEST} but missing: the export is incomplete "
                        "(not fully written or copied)")
        elif isinstance(size, int) and not isinstance(size, bool) and \
                path.stat().st_size != size:
            bad[rel] = (f"{path.stat().st_size} bytes where {MANIFEST} lists {size}: "
                        "incomplete (truncated, or still being copied) or changed")
        elif isinstance(sha, str) and sha256_of(path) != sha:
            bad[rel] = f"its sha256 is not the one {MANIFEST} lists: changed or corrupt"
    return bad


def folder_problem(folder: Path) -> str | None:
    """Why the export in ``folder`` is not complete (no readable manifest, or a file it lists
    missing or changed), or None."""
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return f"{MANIFEST} is missing from {folder}: the export is incomplete"
    except (OSError, ValueError) as exc:
        return f"{MANIFEST} is not readable ({type(exc).__name__}): the export is incomplete"
    if not isinstance(manifest, dict) or manifest.get("format") != EXPORT_FORMAT:
        return f"{MANIFEST} is not an lca-tui export manifest"
    bad = check_files(folder, manifest)
    if bad:
        rel, why = next(iter(bad.items()))
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        return f"{rel}: {why}{more}"
    return None
