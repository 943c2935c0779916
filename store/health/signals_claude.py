"""Claude Code's loading rules as health signals (loader drift in Claude Code's terms).

They read the ``claude_code`` metadata ``store.ingest.claude_memory`` stores with each memory
imported from Claude Code's own memory files (scope, how it loads, its ``@imports``, its
``paths``), never this process's guesses:

- ``claude_index_cut``: lines of a ``MEMORY.md`` past the start-up cap (200 lines or 25 KB),
  which are never loaded at start, and the topic files only those lines link to;
- ``claude_imports``: an ``@path`` that does not resolve, or that passes the 5-hop limit;
- ``claude_rule_paths``: a rules file whose ``paths`` globs match no file of its project (it
  never loads);
- ``claude_always_loaded``: the files loaded at launch in full, per project, against the
  model's window (``context.window_tokens``);
- ``claude_scope_conflicts``: the same instruction in two scopes saying different things, by
  the contradiction check's own text cues (``store.governance.text``: negation, numbers,
  dates, ``X is Y`` values) on sentences about the same subject.

Each offending row is a memory, its note the file and line (the Health screen drills to it).
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

from sqlalchemy import select

from store.core.models import Memory
from store.governance import text as tx
from store.health.records import Row, SignalResult
from store.core.vocab import plural
from store.health.registry import ScanContext, columns, result, signal

ME = columns(Memory)
META_KEY = "claude_code"  # the key store.ingest.claude_memory stores the loading rules under


def loading(front_matter: str | None) -> dict[str, Any] | None:
    """A memory's ``claude_code`` metadata (None for a memory not from Claude Code)."""
    try:
        data = json.loads(front_matter or "{}")
    except ValueError:
        return None
    meta = data.get(META_KEY) if isinstance(data, dict) else None
    return meta if isinstance(meta, dict) else None


CHARS_PER_TOKEN = 4
"""Characters per token for the always-loaded estimate (an estimate, not a tokenizer: the
signal says so)."""
WARN_PERCENT, FAIL_PERCENT = 10.0, 50.0
"""The always-loaded set warns past 10 % of the window and fails past half of it: the rest of
the window is the session's."""
_FILES_CHECKED = 200_000


def _claude(ctx: ScanContext) -> list[tuple[int, str, str, str, dict[str, Any]]]:
    """(id, name, source file, body, metadata) of every active Claude Code memory (cached
    for the scan)."""
    if "claude" not in ctx.cache:
        rows = ctx.conn.execute(
            select(ME.id, ME.name, ME.source_file, ME.body, ME.front_matter)
            .where(ME.front_matter.like(f'%"{META_KEY}"%'), ME.status == "active")
            .order_by(ME.id)).all()
        out = []
        for r in rows:
            meta = loading(r[4])
            if meta is not None:
                out.append((int(r[0]), r[1], r[2] or "", r[3] or "", meta))
        ctx.cache["claude"] = out
    return ctx.cache["claude"]  # type: ignore[no-any-return]


def _none(ctx: ScanContext, name: str, rule: str, what: str) -> SignalResult:
    return result(ctx, name, "ok", 0.0, "0", None, None, rule,
                  f"no Claude Code memory imported: {what}", [])


@signal("claude_index_cut", "lines of a Claude Code MEMORY.md past its start-up cap, never "
        "loaded at start, and the topic files only they link to")
def claude_index_cut(ctx: ScanContext) -> SignalResult:
    rule = "warn on any MEMORY.md longer than its start-up cap (200 lines or 25 KB)"
    mems = _claude(ctx)
    by_file = {src: mid for mid, _, src, _, _ in mems}
    rows: list[Row] = []
    lost_lines = 0
    for mid, _, src, _, meta in mems:
        if meta.get("load") != "cut" or not meta.get("cut"):
            continue
        loaded, total = int(meta.get("loaded_lines", 0)), int(meta.get("lines", 0))
        lost_lines += total - loaded
        rows.append(Row("memory", mid, f"{src}:{loaded + 1}: {total - loaded} of {total} "
                        f"lines past the start-up cap, never loaded at start"))
        links: dict[str, list[int]] = {}
        for line, target in meta.get("links", []):
            links.setdefault(str(target), []).append(int(line))
        for target, lines in sorted(links.items()):
            if min(lines) <= loaded:
                continue
            topic = str((Path(src).parent / target).resolve())
            if topic in by_file:
                rows.append(Row("memory", by_file[topic], f"{src}:{min(lines)}: topic file "
                                f"{target} is linked only past the cap: Claude never learns "
                                "it exists"))
    if not mems:
        return _none(ctx, "claude_index_cut", rule, "nothing to cut")
    n = sum(1 for r in rows if "past the start-up cap" in r.note)
    explanation = (f"{plural(n, 'MEMORY.md index', 'MEMORY.md indexes')} cut at start: "
                   f"{lost_lines:,} lines never loaded, {len(rows) - n} topic files reachable "
                   "only from them" if n else
                   "every MEMORY.md fits its start-up cap (200 lines, 25 KB)")
    return result(ctx, "claude_index_cut", "warn" if n else "ok", float(lost_lines),
                  f"{lost_lines} lines", None, None, rule, explanation, rows,
                  detail={"indexes_cut": n, "lines_never_loaded": lost_lines})


@signal("claude_imports", "@imports of Claude Code memory files that do not resolve or pass "
        "the 5-hop limit")
def claude_imports(ctx: ScanContext) -> SignalResult:
    rule = "warn on any @import that does not resolve or passes the 5-hop limit"
    mems = _claude(ctx)
    rows = [Row("memory", mid, f"{src}:{imp['line']}: @{imp['path']} {imp['problem']}")
            for mid, _, src, _, meta in mems for imp in meta.get("imports", [])
            if imp.get("problem")]
    if not mems:
        return _none(ctx, "claude_imports", rule, "no imports")
    n = len(rows)
    return result(ctx, "claude_imports", "warn" if n else "ok", float(n), str(n), None, None,
                  rule, f"{plural(n, '@import')} Claude Code cannot follow: their text never "
                  "loads" if n else "every @import resolves within 5 hops", rows)


def _expand(pattern: str) -> list[str]:
    """``src/**/*.{ts,tsx}`` → both patterns (pathlib has no braces)."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",")
            for x in _expand(pattern[:m.start()] + alt + pattern[m.end():])]


def _matches(root: Path, globs: list[str]) -> bool:
    seen = 0
    for g in globs:
        for pattern in _expand(g.lstrip("/")):
            for p in root.glob(pattern):
                seen += 1
                if p.is_file() and ".git" not in p.relative_to(root).parts:
                    return True
                if seen > _FILES_CHECKED:
                    return True  # too many to look through: not called dead
    return False


@signal("claude_rule_paths", "Claude Code rules whose paths globs match no file of their "
        "project: they never load")
def claude_rule_paths(ctx: ScanContext) -> SignalResult:
    rule = "warn on any project rule whose paths match no file of the project"
    mems = _claude(ctx)
    rows: list[Row] = []
    checked = 0
    for mid, _, src, _, meta in mems:
        globs, root = meta.get("paths"), meta.get("project_root")
        if not globs or not root or not Path(root).is_dir():
            continue  # a user rule (no project) or a project no longer on this machine
        checked += 1
        if not _matches(Path(root), [str(g) for g in globs]):
            rows.append(Row("memory", mid, f"{src}:1: paths {', '.join(map(str, globs))} "
                            f"match no file under {root}"))
    if not mems:
        return _none(ctx, "claude_rule_paths", rule, "no rules")
    n = len(rows)
    return result(ctx, "claude_rule_paths", "warn" if n else "ok", float(n), str(n), None, None,
                  rule, f"{plural(n, 'rule')} of {checked:,} with paths never "
                  f"{plural(n, 'loads', 'load', counted=False)}: no file of the project "
                  "matches" if n else
                  f"every rule with paths matches a file of its project ({checked:,} checked)",
                  rows, detail={"rules_checked": checked})


def _slug(root: str) -> str:
    """Claude Code's folder name for a project under ``~/.claude/projects``."""
    return re.sub(r"[^A-Za-z0-9]", "-", root)


def _launch_chars(body: str, meta: dict[str, Any]) -> int:
    if meta.get("load") == "cut":
        return len("\n".join(body.split("\n")[:int(meta.get("loaded_lines", 0))]))
    return len(body)


@signal("claude_always_loaded", "characters Claude Code loads at launch for each project "
        "(CLAUDE.md files, rules without paths, imports, the cut MEMORY.md) against the "
        "model's window")
def claude_always_loaded(ctx: ScanContext) -> SignalResult:
    window = int(ctx.setting("context.window_tokens"))
    warn_t, fail_t = window * WARN_PERCENT / 100, window * FAIL_PERCENT / 100
    rule = (f"≈ tokens at {CHARS_PER_TOKEN} characters a token (an estimate, not a "
            f"tokenizer); warn past {WARN_PERCENT:g} % of the {window:,}-token window, fail "
            f"past {FAIL_PERCENT:g} %")
    mems = _claude(ctx)
    if not mems:
        return _none(ctx, "claude_always_loaded", rule, "nothing loads at launch")
    at_launch = [(mid, src, _launch_chars(body, meta), meta) for mid, _, src, body, meta in mems
                 if meta.get("load") in ("launch", "cut") or (
                     meta.get("load") == "import" and "at launch" in str(meta.get("how")))]
    everywhere = [m for m in at_launch if m[3].get("scope") in ("user", "managed")
                  and not m[3].get("agent")]
    projects = sorted({str(m[3]["project_root"]) for m in at_launch
                       if m[3].get("project_root")})
    sets: dict[str, list[Any]] = {"(no project)": everywhere}
    for root in projects:
        sets[root] = everywhere + [m for m in at_launch if not m[3].get("agent") and (
            m[3].get("project_root") == root or m[3].get("project") == _slug(root))]
    rows: list[Row] = []
    worst_tokens = 0.0
    for root, members in sets.items():
        tokens = sum(m[2] for m in members) / CHARS_PER_TOKEN
        worst_tokens = max(worst_tokens, tokens)
        if tokens > warn_t and members:
            biggest = max(members, key=lambda m: m[2])
            rows.append(Row("memory", biggest[0], f"{biggest[1]}:1: {root}: ≈{tokens:,.0f} "
                            f"tokens at launch ({100 * tokens / window:.1f} % of the window); "
                            f"its largest file, {biggest[2]:,} characters"))
    status = "fail" if worst_tokens > fail_t else ("warn" if worst_tokens > warn_t else "ok")
    share = 100 * worst_tokens / window if window else 0.0
    return result(ctx, "claude_always_loaded", status, round(share, 2), f"{share:.1f} %",
                  WARN_PERCENT, FAIL_PERCENT, rule,
                  f"the largest always-loaded set is ≈{worst_tokens:,.0f} tokens, {share:.1f} % "
                  f"of the {window:,}-token window ({len(sets)} sets: user-wide and "
                  f"{plural(len(projects), 'project')})", rows,
                  detail={"tokens": round(worst_tokens), "window": window})


@signal("claude_scope_conflicts", "the same instruction in two Claude Code scopes saying "
        "different things (the contradiction check's text cues)")
def claude_scope_conflicts(ctx: ScanContext) -> SignalResult:
    rule = ("warn on two memories of different scopes that load together with sentences on "
            "the same subject the contradiction check's cues set apart (a heuristic, not a "
            "verdict)")
    mems = _claude(ctx)
    if not mems:
        return _none(ctx, "claude_scope_conflicts", rule, "nothing to compare")
    said = {mid: [(s, body[:s.start].count("\n") + 1) for s in tx.sentences(body, min_words=2)]
            for mid, _, _, body, _ in mems}
    rows: list[Row] = []
    for a, b in itertools.combinations(mems, 2):
        sa, sb = a[4].get("scope"), b[4].get("scope")
        if sa == sb or not _together(a[4], b[4]):
            continue
        hit = _conflict(said[a[0]], said[b[0]])
        if hit is not None:
            (line_a, line_b, kind) = hit
            rows.append(Row("memory", b[0], f"{b[2]}:{line_b} ({sb}) vs {a[2]}:{line_a} ({sa}): "
                            f"{kind}"))
    n = len(rows)
    return result(ctx, "claude_scope_conflicts", "warn" if n else "ok", float(n), str(n), None,
                  None, rule, f"{plural(n, 'pair')} of scopes may disagree" if n else
                  "no two scopes disagree by the contradiction check's cues", rows)


def _together(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two memories can be in one session: a user-wide or managed one meets any; two
    project ones only in the same project."""
    ra = a.get("project_root") or a.get("project")
    rb = b.get("project_root") or b.get("project")
    if not ra or not rb:
        return True
    return bool(ra == rb or _slug(str(ra)) == rb or _slug(str(rb)) == ra)


def _conflict(mine: list[Any], theirs: list[Any]) -> tuple[int, int, str] | None:
    for (a, la), (b, lb) in itertools.product(mine, theirs):
        if tx.jaccard(a.text, b.text) < 0.5 and not tx.same_subject(a.text, b.text):
            continue
        cues = tx.cues(a.text, b.text)
        if cues:
            return la, lb, str(cues[0]["kind"])
    return None
