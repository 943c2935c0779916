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

from store.core.location import default_store_path, is_url, mask_url

SOCKET_PATH_MAX = 107  # sun_path is 108 bytes with its terminating NUL

StoreRef = Path | str
"""A store as the harness names it: a file's absolute path, or a ``postgresql://`` URL as it
was given (its password, if any, kept: it opens the store; ``store_name`` is what is shown)."""


class UnsafeDirectory(RuntimeError):
    """A folder for the socket that another user could reach."""


def resolve_store(explicit: str | Path | None) -> StoreRef:
    """The store a command means: ``--store``, else ``$LCA_STORE``, else the ``store.url``
    setting, else the default file. A file as an absolute path (the daemon and its clients
    must agree on it); a PostgreSQL server as its URL (``postgresql://…``, kept as given)."""
    if explicit:
        return _resolved(explicit)
    given = os.environ.get("LCA_STORE")
    if given:
        return _resolved(given)
    url = _url_setting()
    return url if url else default_store_path().resolve()


def _resolved(given: str | Path) -> StoreRef:
    if is_url(given):
        return str(given).strip()
    return Path(given).expanduser().resolve()


def _url_setting() -> str | None:
    """The ``store.url`` setting of the settings file (read only when neither ``--store``
    nor ``$LCA_STORE`` names the store; no file, no cost)."""
    from store.core.settings import config_path

    if not config_path().is_file():
        return None
    from store.core.settings import Settings

    url = str(Settings.load()["store.url"]).strip()
    return url or None


def on_server(store: StoreRef) -> bool:
    """Is ``store`` a PostgreSQL server's URL (rather than a file)?"""
    return is_url(store)


def store_name(store: StoreRef) -> str:
    """How a store is named outside the process that opens it — in messages, logs, the
    daemon's requests and replies: a file's absolute path, a URL with its password masked."""
    return mask_url(str(store).strip()) if is_url(store) else str(store)


def server_identity(url: str) -> str:
    """A server store's URL without any password (in the user part or a ``password=``
    option): what names its daemon. The same store reached with the password in the URL or
    from ``PGPASSWORD`` / ``~/.pgpass`` is one daemon; another user or database is another.
    ``lca_tui/hook_client.py`` computes the same (its ``_server_identity``)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url.strip())
    except ValueError:  # not a URL one can connect to: opening it says why
        return "postgresql://?"
    netloc = parts.netloc
    if "@" in netloc:
        creds, host = netloc.rsplit("@", 1)
        netloc = creds.split(":", 1)[0] + "@" + host
    query = "&".join(q for q in parts.query.split("&")
                     if q and not q.lower().startswith("password="))
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def written_store(store: StoreRef | str) -> str:
    """How a store is written into another program's configuration (Claude Code's hooks, an
    MCP client's server entry): a file's absolute path; a server's URL as given, unless it
    holds a password — then ``ValueError``: a configuration file never keeps one (the
    password comes from ``PGPASSWORD``, ``~/.pgpass`` or a service file, as libpq finds it)."""
    if not is_url(store):
        return str(Path(store).expanduser().resolve())
    url = str(store).strip()
    if mask_url(url) != url:
        raise ValueError(f"{mask_url(url)} holds a password, which would be written into the "
                         "configuration file in clear: name the server without it (the "
                         "password then comes from PGPASSWORD, ~/.pgpass or a service file); "
                         "nothing was written")
    return url


def store_key(store: StoreRef) -> str:
    """A short stable name for a store (its socket's, lock's and log's file names): from a
    file's absolute path, or from a server URL without its password (``server_identity``),
    so no credential reaches a file name, or a hash that could be tried against it."""
    name = server_identity(str(store)) if is_url(store) else str(store)
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]


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


def socket_path(store: StoreRef) -> Path:
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


def daemon_log(store: StoreRef) -> Path:
    """The daemon's own log (what it prints while detached)."""
    return state_dir() / f"serve-{store_key(store)}.log"
