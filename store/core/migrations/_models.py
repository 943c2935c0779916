"""Imports every capability's SQLModel classes (each ``store/**/models.py``), so that
``SQLModel.metadata`` holds the whole schema when a new store is created on PostgreSQL
(``create_all``). Found by file name, as the migrations are: core names no capability. Not a
migration: its name does not start with ``m`` and a number."""

from __future__ import annotations

import importlib
from pathlib import Path

_STORE = Path(__file__).resolve().parents[2]

for _file in sorted(_STORE.rglob("models.py")):
    importlib.import_module(".".join(("store", *_file.relative_to(_STORE).with_suffix("").parts)))
