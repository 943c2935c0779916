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


def _runtime_bases() -> list[Path]:
    """Where the socket's folder may go, in order: ``$XDG_RUNTIME_DIR/lca-tui``, then a
    per-user folder in the system's temporary directory."""
    import tempfile  # only here: it costs a hook several milliseconds

    base = os.environ.get("XDG_RUNTIME_DIR")
    tmp = Path(tempfile.gettempdir()) / f"lca-tui-{os.getuid()}"
    return [Path(base) / "lca-tui", tmp] if base else [tmp]


def runtime_dir() -> Path:
    """``$XDG_RUNTIME_DIR/lca-tui`` (owner-only); without that variable, a per-user folder
    in the system's temporary directory, checked the same way."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base:
        return _private_dir(Path(base) / "lca-tui")
    return _private_dir(_runtime_bases()[0])


def socket_path(store: Path) -> Path:
    """The daemon's socket for ``store`` (one daemon per store): in ``$XDG_RUNTIME_DIR``,
    or, when that folder cannot be used (not a folder, not ours, not writable, a stale
    ``/run/user/UID``) or makes the path too long for a Unix socket, in the per-user folder
    in the temporary directory. The daemon and its clients decide alike, so they meet.
    Raises ``UnsafeDirectory`` (one line saying why) when neither can be used."""
    name = f"{store_key(store)}.sock"
    problems: list[str] = []
    for base in _runtime_bases():
        try:
            folder = _private_dir(base)
        except UnsafeDirectory as exc:
            problems.append(str(exc))
            continue
        except OSError as exc:
            problems.append(f"{base}: {exc.strerror or exc}")
            continue
        path = folder / name
        if len(os.fsencode(path)) > SOCKET_PATH_MAX:
            problems.append(f"{path} is longer than a Unix socket allows ({SOCKET_PATH_MAX} "
                            "bytes)")
            continue
        return path
    raise UnsafeDirectory("no folder for the daemon's socket: " + "; ".join(problems))


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
