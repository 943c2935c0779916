"""The bound memory directory after an erasure or redaction: the probe that reads it.

An erased memory's file must be gone, a redacted one's must read as the redacted memory, and no
file of the directory may still hold the erased text (a text scope: the matcher; a session,
entry or memory: the erased texts themselves). Links are never followed: a link out of the
directory is reported, not read. When the directory lies in a git repository (MindStone
directories often do), its history keeps every committed version of a file: the commits whose
changes hold the text are named, and the directory is never called clean while they exist.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from store.core.vocab import plural
from store.privacy.scope import Matcher
from store.privacy.sets import Closure

MAX_TEXTS = 2000
MIN_TEXT = 8
GIT_TEXTS = 10
GIT_TIMEOUT_S = 20.0


def _texts(c: Closure) -> list[str]:
    out = [t.strip() for t in c.texts if len(t.strip()) >= MIN_TEXT]
    return list(dict.fromkeys(out))[:MAX_TEXTS]


def holds(data: str, c: Closure, matcher: Matcher | None, texts: list[str]) -> bool:
    if matcher is not None:
        return matcher.holds(data)
    return any(t in data for t in texts)


def name_holds(name: str, matcher: Matcher) -> bool:
    """Whether a file name holds a text scope's text, as written or as a slug writes it
    (``-`` and ``_`` for spaces)."""
    return matcher.holds(name) or matcher.holds(name.replace("-", " ").replace("_", " "))


def repository(folder: Path) -> Path | None:
    """The git work tree holding ``folder``, or None."""
    for p in (folder, *folder.parents):
        if (p / ".git").exists():
            return p
    return None


def git_commits(folder: Path, needles: list[str]) -> tuple[list[str], str | None]:
    """Short ids of the commits (any ref) whose changes add or remove one of ``needles``,
    and a reason when the history could not be searched."""
    git = shutil.which("git")
    if git is None:
        return [], "git is not installed: its history was not searched"
    found: list[str] = []
    for needle in needles[:GIT_TEXTS]:
        probe = needle.splitlines()[0][:200] if needle.strip() else ""
        if not probe.strip():
            continue
        try:
            out = subprocess.run([git, "-C", str(folder), "log", "--all", "--format=%h",
                                  "-S", probe, "--", "."], capture_output=True, text=True,
                                 timeout=GIT_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return found, f"git log failed: {exc}"
        if out.returncode != 0:
            return found, f"git log failed: {' '.join(out.stderr.split())[:200]}"
        found += [h for h in out.stdout.split() if h not in found]
    return found, None


def links_out(folder: Path) -> list[str]:
    """Names of the directory's symlinks that point outside it (never followed)."""
    out: list[str] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        p = folder / name
        if p.is_symlink():
            target = Path(os.path.realpath(p))
            if target.parent != folder.resolve() and folder.resolve() not in target.parents:
                out.append(name)
    return out


def probe(c: Closure) -> tuple[bool, str]:
    """(passed, detail): see the module docstring. Details name files, never content."""
    if c.bound_dir is None:
        return True, "no memory directory is bound"
    folder = Path(c.bound_dir)
    matcher = Matcher(c.scope) if c.scope.is_text else None
    texts = _texts(c)
    left = [p for p, d in c.files.items() if d is None and (os.path.lexists(p))]
    stale = []
    for p, d in c.files.items():
        if d is None:
            continue
        try:
            same = not os.path.islink(p) and Path(p).read_text(encoding="utf-8") == d
        except OSError:
            same = False
        if not same:
            stale.append(p)
    holding: list[str] = []
    read = 0
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        return False, f"{folder} cannot be read: {exc.strerror}"
    named = [n for n in names if matcher is not None and name_holds(n, matcher)]
    for name in names:
        entry = folder / name
        if entry.is_symlink() or not entry.is_file():
            continue
        try:
            data = entry.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        read += 1
        if holds(data, c, matcher, texts):
            holding.append(name)
    parts = [f"{plural(len(c.files), 'file')} of the closure "
             f"({sum(1 for d in c.files.values() if d is None)} deleted, "
             f"{sum(1 for d in c.files.values() if d is not None)} rewritten"
             f"{f', {len(c.renamed)} of them a rename' if c.renamed else ''}): "
             f"{len(left)} still present, {len(stale)} not rewritten; "
             f"{plural(read, 'file')} read, {len(holding)} "
             f"{plural(len(holding), 'holds', 'hold', counted=False)} it"
             + (f" ({', '.join(holding[:5])}{' …' if len(holding) > 5 else ''})"
                if holding else "")
             + (f"; {len(named)} named by it (not named here: the name holds the text)"
                if named else "")]
    outside = links_out(folder)
    if outside:
        parts.append(f"{plural(len(outside), 'link')} out of the directory not followed: "
                     + ", ".join(outside[:5]))
    ok = not left and not stale and not holding and not named
    repo = repository(folder)
    if repo is not None:
        needles = [c.scope.value] if c.scope.kind == "match" else (
            list(matcher.found) if matcher is not None else texts)
        if not needles:
            parts.append(f"a git repository ({repo}): nothing to search its history for")
            ok = False
        else:
            commits, why = git_commits(folder, needles)
            if why is not None:
                parts.append(f"a git repository ({repo}): {why}")
                ok = False
            elif commits:
                parts.append(f"a git repository ({repo}): its history keeps the erased bytes "
                             f"in {len(commits)} commits: {', '.join(commits[:10])}"
                             f"{' …' if len(commits) > 10 else ''} (rewrite the history, "
                             "e.g. git filter-repo, and expire the reflog)")
                ok = False
            else:
                parts.append(f"a git repository ({repo}): no commit's changes hold it")
    return ok, "; ".join(parts)
