"""store/ and its callers (lca_tui/, screens/, widgets/) type-check clean: STYLE.md asks for
mypy on store/ at least; the facade's claim that mypy checks every call of a Store method
holds only if the callers are checked too (``make lint`` runs both)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_store_type_checks() -> None:
    out = subprocess.run([sys.executable, "-m", "mypy", "store"], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_stores_callers_type_check() -> None:
    out = subprocess.run([sys.executable, "-m", "mypy", "lca_tui", "screens", "widgets"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
