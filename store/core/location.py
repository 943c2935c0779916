"""Where the store lives by default, in the standard library alone: a hook answered by the
daemon must find the store's socket without importing SQLAlchemy."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def default_store_path() -> Path:
    """``$LCA_STORE``, else ``$XDG_DATA_HOME/lca-tui/store.db`` (``~/.local/share/...``)."""
    explicit = os.environ.get("LCA_STORE")
    if explicit:
        return Path(explicit).expanduser()
    return default_folder() / "store.db"


def default_folder() -> Path:
    """Where lca-tui keeps its own files: ``$XDG_DATA_HOME/lca-tui`` (created on demand)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "lca-tui"


def blocking_file(path: Path) -> Path | None:
    """The nearest ancestor of ``path`` that exists but is not a folder (``/etc/passwd`` for
    ``/etc/passwd/x/store.db``), or None: no folder can be made under it."""
    for parent in path.parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else parent
    return None


def not_a_folder(path: Path) -> str | None:
    """A one-line reason why no store file can be made at ``path`` because an ancestor is a
    file, or None."""
    blocker = blocking_file(path)
    if blocker is None:
        return None
    return (f"cannot use {path}: {blocker} is a file, not a folder, so nothing can be created "
            "under it; name a store file in a folder (--store or $LCA_STORE)")


# -- a store on a PostgreSQL server ------------------------------------------------------------
URL_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")


def is_url(location: object) -> bool:
    """Does ``location`` name a PostgreSQL server (``postgresql://...``) rather than a file?"""
    return isinstance(location, str) and location.strip().lower().startswith(URL_SCHEMES)


def mask_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (user, host, port, database and options
    kept): how a URL is shown in stats, errors, logs and traces. A URL without a password
    is shown as it is; its password comes from PGPASSWORD, ~/.pgpass or a service file."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://***"
    netloc = parts.netloc
    if "@" in netloc:
        creds, host = netloc.rsplit("@", 1)
        if ":" in creds:
            creds = creds.split(":", 1)[0] + ":***"
        netloc = f"{creds}@{host}"
    query = "&".join("password=***" if q.lower().startswith("password=") else q
                     for q in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def default_location() -> str | Path:
    """``$LCA_STORE`` (a path, or a ``postgresql://`` URL kept as it is), else the
    ``store.url`` setting is read by the caller, else the default file."""
    explicit = os.environ.get("LCA_STORE")
    if explicit and is_url(explicit):
        return explicit.strip()
    return default_store_path()


def store_location(path: Path | str | None, configured_url: str) -> str | Path:
    """What a store named ``path`` (None: the default) is: a server's URL (a ``str``; from
    ``path``, ``$LCA_STORE``, else the ``store.url`` setting, ``configured_url``), or a
    file (a ``Path``). Raises ``StoreError`` for a name that is neither: a URL made into a
    file path, or this machine's folder for a server store's own files."""
    import re

    from store.core.errors import StoreError

    location = str(path) if path else default_location()
    if not path and not is_url(location) and "LCA_STORE" not in os.environ \
            and configured_url.strip():
        location = configured_url.strip()
    if is_url(location):
        return str(location)
    if re.search(r"postgres(ql)?(\+psycopg)?:/", str(location), re.IGNORECASE):
        # a URL that went through a path (its "//" collapsed): never a file named so
        raise StoreError(f"{mask_url(str(location))} looks like a PostgreSQL URL "
                         "made into a file path; name the server as "
                         "postgresql://user@host:port/db")
    file = Path(location).expanduser()
    if file.suffix == ".pg" and file.parent.name == "postgresql":
        # this machine's folder for a server store's own files, never a store file
        raise StoreError(f"{file} is where this machine keeps a server store's "
                         "own files, not a store: name the server by its "
                         "postgresql:// URL")
    return file


def local_anchor(url: str) -> Path:
    """Where this machine keeps its own files for a store on a server (undo journals, the
    daemon's socket, hook failure logs): ``<default folder>/postgresql/<host>-<port>-<db>``,
    a name made from the masked URL, so no password reaches a file name."""
    import hashlib
    import re
    from urllib.parse import urlsplit

    masked = mask_url(url)
    parts = urlsplit(masked)
    host = parts.hostname or "local"
    db = parts.path.lstrip("/") or "postgres"
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{host}-{parts.port or 5432}-{db}")[:80]
    digest = hashlib.sha256(masked.encode()).hexdigest()[:8]
    return default_folder() / "postgresql" / f"{name}-{digest}.pg"


def refused(path: Path, read_only: bool) -> str | None:
    """Why the store file ``path`` is refused before it is opened, or None: read-only, it must
    be an existing, non-empty file (never created); else it must not be a folder, nor lie in
    one (``not_a_folder``), nor in a folder that does not exist, lca-tui's own excepted
    (``db.ensure_file`` creates that one). What ``StoreBase`` and ``ensure_file`` raise, and
    what ``would_open`` tells beforehand."""
    if read_only:
        if not path.is_file() or path.stat().st_size == 0:
            return (f"no store at {path}: --read-only opens an existing store only, it never "
                    "creates one")
        return None
    blocked = not_a_folder(path)
    if blocked:
        return blocked
    if not path.parent.is_dir() and path.parent.resolve() != default_folder().resolve():
        return (f"the folder {path.parent} does not exist: create it first, or name a store "
                "in an existing folder")
    if path.is_dir():
        return f"{path} is a directory, not a store file: name a file with --store"
    return None


def would_open(path: Path | str | None, settings: Any) -> bool:
    """Whether the store ``path`` names (as ``StoreBase`` names it, with these settings)
    passes the checks made before a store is opened (``refused``), told without changing
    anything. A run that will embed begins the model's load early only then
    (``embed.load_early``). A server: yes (only connecting can tell). It may still fail to
    open for other reasons (not a store, a newer one, locked)."""
    try:
        location = store_location(path, str(settings["store.url"]))
        return isinstance(location, str) or \
            refused(location, bool(settings["store.read_only"])) is None
    except Exception:  # noqa: BLE001 - any doubt (a name too long, no access): no
        return False
