"""`lca-tui --help`: the command line is built without importing the store's machinery (the
importers, SQLAlchemy, NumPy, Textual); the format names it offers are the importers' own."""

from __future__ import annotations

import json
import subprocess
import sys


def test_building_the_parser_imports_no_store_machinery() -> None:
    code = ("import sys, json; from lca_tui.cli import build_parser; build_parser(); "
            "print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    loaded = set(json.loads(out.stdout))
    heavy = {m for m in loaded if m.split(".")[0] in ("sqlalchemy", "sqlmodel", "numpy",
                                                      "textual", "fastembed", "onnxruntime",
                                                      "pandas")}
    assert heavy == set(), sorted(heavy)[:10]
    assert not any(m.startswith("store.ingest") for m in loaded)


def test_the_format_names_are_the_registry_s() -> None:
    from store import FORMAT_NAMES
    from store.ingest import formats

    assert tuple(formats()) == FORMAT_NAMES
