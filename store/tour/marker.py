"""The demo's marker: one token in the store (``store_meta`` ``demo.token``) and the same in
the demo data folder beside it. A store is the demo's own file, the one the tour runs on, only
when the two match (a copy of the file elsewhere, or another store, is not)."""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from sqlmodel import col, select

from store.core.db import orm
from store.core.models import StoreMeta

if TYPE_CHECKING:
    from store.core.base import StoreBase

MARKER_KEY = "demo.token"
MARKER_FILE = "demo-token"


def demo_data_dir(path: Path) -> Path:
    """The folder of the demo's own data files beside the demo store at ``path``."""
    return path.with_name(path.name + ".demo-data")


def write_marker(store: StoreBase, data_dir: Path) -> None:
    """Write the demo's marker: one token in the store and in its data folder."""
    token = secrets.token_hex(16)
    with store.write() as conn, orm(conn) as s:
        s.add(StoreMeta(key=MARKER_KEY, value=token))
        s.flush()
    (data_dir / MARKER_FILE).write_text(token + "\n", encoding="utf-8")


def demo_refusal(store: StoreBase) -> str | None:
    """Why ``store`` is not the demo's own file, in one line; None when it is (its marker
    token matches the one in the demo data folder beside it)."""
    with store.read() as conn:
        row = conn.execute(select(StoreMeta.value).where(
            col(StoreMeta.key) == MARKER_KEY)).first()
    name = store.path.name
    if row is None:
        return f"{name} was not built by `lca-tui demo` (it holds no demo marker)"
    marker = demo_data_dir(store.path) / MARKER_FILE
    try:
        token = marker.read_text(encoding="utf-8").strip()
    except OSError:
        return (f"{name} has no demo data folder beside it ({marker.parent.name} with its "
                f"{MARKER_FILE}): it is not the demo's own file")
    if not hmac.compare_digest(token, str(row[0])):
        return (f"the marker in {marker.parent.name} is not {name}'s: this file is not the one "
                "the demo built there")
    return None
