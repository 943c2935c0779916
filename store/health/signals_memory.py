"""Memory signals: memories the agent's loader cannot read, the always-loaded critical set
against its budget, active memories with no resolvable evidence, supersession integrity, and
proposals left pending.

The critical set is read as stored (``memory.critical``, active and loadable), never from this
process's settings; the budget is the setting ``health.critical_budget_chars``.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select

from store.core.models import Entry, Evidence, Memory
from store.core.timeutil import to_iso
from store.health.records import Row, SignalResult
from store.governance import find_groups, integrity, list_proposals
from store.core.vocab import plural
from store.health.registry import ScanContext, columns, grade, result, signal
from store.recall.terms import experiential

EN, EV, ME = columns(Entry), columns(Evidence), columns(Memory)


@signal("loader_drift", "memory files the agent's loader cannot read as its schema says")
def loader_drift(ctx: ScanContext) -> SignalResult:
    found = ctx.conn.execute(
        select(ME.id, ME.critical, ME.sensitivity,
               ME.load_error)
        .where(ME.loadable == 0).order_by(ME.critical.desc(),
                                                   ME.id)).all()
    critical = sum(1 for r in found if r[1])
    rows = [Row("memory", int(r[0]), ("CRITICAL, never loaded: " if r[1] else "never loaded: ")
                + ("(secret)" if r[2] == "secret" else (r[3] or "no reason recorded")))
            for r in found]
    n = len(rows)
    status = "fail" if critical else ("warn" if n else "ok")
    if n:
        verb = "is" if n == 1 else "are"
        explanation = (f"{plural(n, 'memory', 'memories')} cannot be read by the agent's loader "
                       f"and {verb} never loaded")
        if critical:
            explanation += (f", {critical:,} of them critical: rules the agent believes it "
                            "follows are not injected")
    else:
        explanation = "every memory reads as the loader's schema says"
    # graded by rule (no thresholds): which memories are not loadable decides, not how many
    return result(ctx, "loader_drift", status, float(n), f"{n} ({critical} crit.)"
                  if critical else str(n), None, None,
                  "warn on any memory not loadable; fail when a critical one is among them",
                  explanation, rows, detail={"not_loadable": n, "critical": critical})


@signal("critical_budget", "characters of the always-loaded critical memories against the "
        "budget, and which ones a budget cut drops")
def critical_budget(ctx: ScanContext) -> SignalResult:
    # what governance's budget check counts: body and invariant
    chars = func.length(ME.body) + func.coalesce(func.length(ME.invariant), 0)
    found = ctx.conn.execute(
        select(ME.id, chars, ME.hits, ME.prevented,
               ME.last_applied, ME.created)
        .where(ME.critical == 1, ME.status == "active",
               ME.loadable == 1)).all()
    budget = int(ctx.setting("health.critical_budget_chars"))
    warn = round(budget * float(ctx.setting("health.critical_budget_warn_percent")) / 100)
    unreadable = [int(r[0]) for r in found if _count(r[2]) is None or _count(r[3]) is None]

    def weight(r: Any) -> float:
        return experiential(_count(r[2]) or 0, _count(r[3]) or 0)

    # heaviest first: experiential weight, then most recently applied, then newest, then id
    ranked = sorted(found, key=lambda r: (-weight(r), _desc(r[4]), _desc(r[5]), int(r[0])))
    total = sum(int(r[1]) for r in found)
    left = budget
    dropped: list[Row] = []
    for r in ranked:
        size = int(r[1])
        if size <= left:
            left -= size
        else:
            odd = " (its hits or prevented count is not a number: weighed as 0)" \
                if int(r[0]) in unreadable else ""
            dropped.append(Row("memory", int(r[0]), f"{size:,} chars, weight {weight(r):.2f}: "
                               f"does not fit in what is left of the budget{odd}"))
    status = grade(float(total), float(warn), float(budget))
    if dropped:
        verb = "holds" if len(found) == 1 else "hold"
        explanation = (f"{plural(len(found), 'critical memory', 'critical memories')} {verb} "
                       f"{total:,} characters against a budget of {budget:,}: a cut by weight "
                       f"drops {plural(len(dropped), 'memory', 'memories')} (the lightest, "
                       "never alphabetically)")
    else:
        explanation = (f"{plural(len(found), 'critical memory', 'critical memories')} hold "
                       f"{total:,} of a {budget:,}-character budget: all of them load")
    return result(ctx, "critical_budget", status, float(total), f"{total:,} ch", float(warn),
                  float(budget), f"warn > {warn:,}, fail > {budget:,} characters",
                  explanation, dropped, detail={"critical": len(found), "chars": total,
                                                "budget": budget, "dropped": len(dropped),
                                                "unreadable_counters": unreadable})


def _count(value: Any) -> int | None:
    """A stored counter as a number; None when the column holds something else (SQLite
    stores what it is given: ``'lots'`` in ``hits`` must not stop the signal)."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return None


def _desc(stamp: Any) -> str:
    """A key sorting ISO timestamps newest first (missing last)."""
    if not stamp:
        return "\uffff"
    return "".join(chr(0xFFFF - min(ord(c), 0xFFFF)) for c in str(stamp))


@signal("evidence_orphans", "active memories with no resolvable evidence")
def evidence_orphans(ctx: ScanContext) -> SignalResult:
    from store.governance.apply import APPROVAL_NOTE
    from store.governance.models import Proposal

    approved = {int(i) for (i,) in ctx.conn.execute(
        select(columns(Proposal).id).where(columns(Proposal).status.in_(
            ("approved", "applied"))))} if "proposal" in ctx.tables else set()
    found = ctx.conn.execute(
        select(ME.id, EV.entry_id, EV.file_path,
               EN.id, EV.note)
        .select_from(Memory)
        .join(Evidence, EV.memory_id == ME.id, isouter=True)
        .join(Entry, EN.id == EV.entry_id, isouter=True)
        .where(ME.status == "active").order_by(ME.id)).all()
    resolved: dict[int, bool] = {}
    why: dict[int, str] = {}
    exists: dict[str, bool] = {}
    for memory_id, entry_id, path, entry_found, note in found:
        mid = int(memory_id)
        ok = False
        by_approval = APPROVAL_NOTE.match(note or "") if entry_id is None and not path else None
        if by_approval:  # the approval of the person who supplied the text (its proposal)
            ok = int(by_approval.group(1)) in approved
            why.setdefault(mid, f"its approval (proposal {by_approval.group(1)}) is not "
                           "recorded as approved")
        elif entry_id is not None:
            ok = entry_found is not None
            why.setdefault(mid, "its evidence names an entry that is gone")
        elif path:
            if path not in exists:
                exists[path] = os.path.exists(path)
            ok = exists[path]
            why.setdefault(mid, "its evidence file is gone")
        else:
            why.setdefault(mid, "no evidence recorded")
        resolved[mid] = resolved.get(mid, False) or ok
    rows = [Row("memory", mid, why[mid]) for mid, ok in resolved.items() if not ok]
    n = len(rows)
    verb = "has" if n == 1 else "have"
    explanation = (f"{plural(n, 'active memory', 'active memories')} of {len(resolved):,} "
                   f"{verb} no evidence that still resolves (an entry, a file or an approval): "
                   "nothing shows "
                   "where they came from" if n else
                   f"every one of {len(resolved):,} active memories has resolvable evidence "
                   "(a source span, a file or the approval that supplied its text)")
    return result(ctx, "evidence_orphans", grade(n, 0, None), float(n), str(n), 0.0, None,
                  "warn > 0", explanation, rows)


@signal("supersession_integrity", "supersession cycles, dangling pointers, forks, "
        "superseded memories still active")
def supersession_integrity(ctx: ScanContext) -> SignalResult:
    """Governance's integrity check (links and pointer columns), one row per memory."""
    problems = integrity(ctx.store)
    notes: dict[int, list[str]] = {}
    for p in problems:
        ids = list(p.memory_ids) if p.kind == "cycle" else list(p.memory_ids[:1])
        for mid in ids:
            notes.setdefault(int(mid), []).append(f"{p.kind.replace('_', ' ')}: {p.detail}")
    rows = [Row("memory", mid, "; ".join(dict.fromkeys(what)))
            for mid, what in sorted(notes.items())]
    n = len(rows)
    kinds = sorted({p.kind.replace("_", " ") for p in problems})
    explanation = (f"{plural(len(problems), 'supersession problem')} ({', '.join(kinds)}) "
                   f"involving {plural(n, 'memory', 'memories')}: their chains cannot be "
                   "trusted" if problems else "supersession chains are whole: no cycle, "
                   "dangling link, fork or superseded memory still active")
    return result(ctx, "supersession_integrity", grade(n, None, 0), float(n), str(n), None,
                  0.0, "fail > 0", explanation, rows,
                  detail={"by_kind": {k: sum(1 for p in problems
                                             if p.kind.replace("_", " ") == k) for k in kinds}})


@signal("stale_proposals", "proposals pending longer than the setting allows")
def stale_proposals(ctx: ScanContext) -> SignalResult:
    days = int(ctx.setting("health.stale_proposal_days"))
    rule = f"warn on any proposal pending > {days} days"
    if "proposal" not in ctx.tables:
        return result(ctx, "stale_proposals", "n/a", None, "n/a", 0.0, None, rule,
                      "this store has no proposal table: pending proposals cannot be counted")
    cutoff = to_iso(ctx.now - timedelta(days=days))
    pending = list_proposals(ctx.store, status="pending")
    stale = sorted((p for p in pending if p.created < cutoff), key=lambda p: (p.created, p.id))
    rows = [Row("proposal", p.id, f"{p.op or p.kind or 'proposal'} pending since "
                f"{p.created[:10]} ({p.origin})") for p in stale]
    n = len(rows)
    explanation = (f"{plural(n, 'proposal')} of {len(pending):,} pending for longer than {days} "
                   "days: nobody has approved or rejected them" if n else
                   f"no proposal pending longer than {days} days ({len(pending):,} pending)")
    return result(ctx, "stale_proposals", grade(n, 0, None), float(n), str(n), 0.0, None,
                  rule, explanation, rows, detail={"pending": len(pending)})


@signal("memory_duplicates", "active memories that repeat another (the near-duplicate "
        "sweep's groups; duplicate_ratio counts index rows)")
def memory_duplicates(ctx: ScanContext) -> SignalResult:
    rule = "warn on any active memory that repeats another"
    if "memory" not in ctx.tables:
        return result(ctx, "memory_duplicates", "n/a", None, "n/a", 0.0, None, rule,
                      "this store has no memory table")
    groups = find_groups(ctx.store, ctx.conn)
    rows = [Row("memory", mid, f"repeats memory {g.keep}: {g.why.get(mid, 'the same thing')}")
            for g in groups for mid in g.repeats]
    n = len(rows)
    explanation = (f"{plural(n, 'active memory', 'active memories')} repeat another, in "
                   f"{plural(len(groups), 'group')}: each is injected as often as the one it "
                   "repeats — `lca-tui consolidate --sweep` proposes one merge a group"
                   if n else "no active memory repeats another (same text, one holding "
                   "another, vectors at the duplicate similarity or the same evidence)")
    return result(ctx, "memory_duplicates", grade(n, 0, None), float(n), str(n), 0.0, None,
                  rule, explanation, rows,
                  detail={"groups": [{"keep": g.keep, "members": g.members} for g in groups]})
