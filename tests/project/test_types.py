"""store/ type-checks clean (STYLE.md: mypy on store/ at least)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_store_type_checks() -> None:
    out = subprocess.run([sys.executable, "-m", "mypy", "store"], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr
