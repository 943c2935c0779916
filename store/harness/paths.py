"""Where the harness keeps its files: the daemon's socket (owner-only, in
``$XDG_RUNTIME_DIR``), its log and the hook failure log (in ``$XDG_STATE_HOME``).

Standard library only: a hook answered by the daemon imports this and ``client`` and nothing
heavier.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from store.core.location import default_store_path

SOCKET_PATH_MAX = 107  # sun_path is 108 bytes with its terminating NUL


class UnsafeDirectory(RuntimeError):
    """A folder for the socket that another user could reach."""


def resolve_store(explicit: str | Path | None) -> Path:
    """The store a command means: ``--store``, else ``$LCA_STORE``, else the default, as an
    absolute path (the daemon and its clients must agree on it)."""
    path = Path(explicit).expanduser() if explicit else default_store_path()
    return path.resolve()


def store_key(store: Path) -> str:
    """A short stable name for a store, from its absolute path."""
    return hashlib.sha256(str(store).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _private_dir(path: Path) -> Path:
    """``path`` created owner-only (0700), refused if someone else owns it or can enter it."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeDirectory(f"{path} is not a directory")
    if info.st_uid != os.getuid():
        raise UnsafeDirectory(f"{path} belongs to another user: refusing to use it")
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def runtime_dir() -> Path:
    """``$XDG_RUNTIME_DIR/lca-tui`` (owner-only); without that variable, a per-user folder
    in the system's temporary directory, checked the same way."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base:
        return _private_dir(Path(base) / "lca-tui")
    import tempfile  # only here: it costs a hook several milliseconds

    return _private_dir(Path(tempfile.gettempdir()) / f"lca-tui-{os.getuid()}")


def socket_path(store: Path) -> Path:
    """The daemon's socket for ``store`` (one daemon per store)."""
    path = runtime_dir() / f"{store_key(store)}.sock"
    if len(os.fsencode(path)) > SOCKET_PATH_MAX:
        raise UnsafeDirectory(f"the socket path {path} is longer than a Unix socket allows "
                              f"({SOCKET_PATH_MAX} bytes): set XDG_RUNTIME_DIR to a shorter "
                              "folder")
    return path


def state_dir() -> Path:
    """``$XDG_STATE_HOME/lca-tui`` (``~/.local/state/lca-tui``), owner-only."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return _private_dir(Path(base) / "lca-tui")


def failure_log() -> Path:
    """Where hook failures go when the store itself cannot be opened."""
    return state_dir() / "hook-failures.log"


def daemon_log(store: Path) -> Path:
    """The daemon's own log (what it prints while detached)."""
    return state_dir() / f"serve-{store_key(store)}.log"
