"""Export files outside the store that hold an erased scope: deleted when asked, else kept
on the tombstone's list, so that they can be deleted later — after the records that named
them are gone (``lca-tui erase --exports-of-tombstone ID``).

The list is kept in ``store_meta`` under ``privacy.exports_of_tombstone.<id>`` (a JSON list of
file paths, no content): an erasure by session, entry or memory deletes the export items that
mapped those records to files, so without it the files could no longer be found. Only the
files that hold the scope are listed and deleted, never the rest of an export; an export
record loses the deleted files from its list, and goes when none of its files is left.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import delete
from sqlmodel import col, select

from store.core.db import orm
from store.core.errors import NotFound
from store.core.models import StoreMeta
from store.export.models import Export
from store.privacy.models import Tombstone
from store.privacy.sets import ExportHit

if TYPE_CHECKING:
    from store.core.base import StoreBase as Store

PREFIX = "privacy.exports_of_tombstone."


def _key(tombstone_id: int) -> str:
    return f"{PREFIX}{int(tombstone_id)}"


def remember(store: Store, tombstone_id: int, hits: list[ExportHit]) -> None:
    """Keep the export files still holding the scope on the tombstone's list."""
    listed = {str(e.export_id): e.files for e in hits if e.files}
    with store.write() as conn, orm(conn) as s:
        row = s.get(StoreMeta, _key(tombstone_id))
        if not listed:
            if row is not None:
                s.delete(row)
                s.flush()
            return
        value = json.dumps(listed, sort_keys=True)
        if row is None:
            s.add(StoreMeta(key=_key(tombstone_id), value=value))
        else:
            row.value = value
            s.add(row)
        s.flush()


def pending(store: Store, tombstone_id: int) -> list[ExportHit]:
    """The export files a tombstone's erasure left (each still on disk or not)."""
    with store.read() as conn, orm(conn) as s:
        if s.get(Tombstone, int(tombstone_id)) is None:
            raise NotFound(f"no tombstone {tombstone_id}: `lca-tui tombstones` lists them")
        row = s.get(StoreMeta, _key(tombstone_id))
        listed = json.loads(row.value) if row is not None else {}
        folders = {int(e.id or 0): e.path for e in s.exec(select(Export)).all()}
    return [ExportHit(int(eid), folders.get(int(eid), ""), [str(f) for f in files])
            for eid, files in sorted(listed.items())]


def delete_files(store: Store, hits: list[ExportHit]) -> tuple[list[str], list[str]]:
    """Remove the named files (only those); drop them from their export's list, and the
    export's record when none of its files is left. Returns (removed, failed)."""
    removed, failed = [], []
    for hit in hits:
        for path in hit.files:
            try:
                os.unlink(path)
                removed.append(path)
            except FileNotFoundError:
                removed.append(path)
            except OSError:
                failed.append(path)
    gone = set(removed)
    emptied: list[int] = []
    with store.write() as conn, orm(conn) as s:
        for hit in hits:
            export = s.get(Export, hit.export_id)
            if export is None:
                continue
            try:
                listed = [str(f) for f in json.loads(export.files or "[]")]
            except ValueError:
                listed = []
            folder = Path(export.path)
            left = [f for f in listed if str(folder / f) not in gone and (folder / f).exists()]
            if left:
                export.files = json.dumps(left)
                s.add(export)
            else:
                emptied.append(hit.export_id)
        s.flush()
        if emptied:
            conn.execute(delete(Export).where(col(Export.id).in_(emptied)))
        if removed or failed:
            store.audit_in(conn, "delete-exports", "export", sorted({h.export_id for h in hits}),
                           {"files": len(removed), "failed": len(failed),
                         "exports_dropped": len(emptied)})
    return removed, failed


def delete_for_tombstone(store: Store, tombstone_id: int) -> tuple[list[str], list[str]]:
    """Delete the export files an earlier erasure left (``pending``); the list keeps only
    the files that could not be removed."""
    hits = pending(store, tombstone_id)
    removed, failed = delete_files(store, hits)
    remember(store, tombstone_id, [ExportHit(h.export_id, h.path,
                                             [f for f in h.files if f in failed])
                                   for h in hits])
    return removed, failed
