"""Files shipped in the ``assets`` package (tokenizer, demo data, stylesheets)."""

from __future__ import annotations

from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent / "assets"


def asset_root() -> Path:
    """The installed ``assets`` folder."""
    try:
        import assets

        return Path(assets.__file__).resolve().parent
    except ImportError:  # pragma: no cover - source tree without install
        return _ROOT


def asset_path(*parts: str) -> Path:
    return asset_root().joinpath(*parts)
