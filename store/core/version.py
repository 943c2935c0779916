"""The running code's identity, stamped on every row it writes."""

from __future__ import annotations

from importlib import metadata

WRITER = "lca-tui"


def code_version() -> str:
    """The installed distribution's version (falls back to the source tree's)."""
    try:
        return metadata.version("lca-tui")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "0.1.0"


CODE_VERSION = code_version()

# What a row records when its writer is another program that named no version of its own.
UNKNOWN_VERSION = "unknown"
