"""``lca-tui health`` (every health signal; exit 1 at or above ``--fail-on``, for cron and CI)
and ``lca-tui compact-duplicates`` (the one shared duplicate-compaction pass)."""

from __future__ import annotations

import argparse
from contextlib import closing
from typing import Any

from lca_tui.output import (
    add_json_flag,
    console,
    err_console,
    fail,
    print_json,
    require_store,
    store_from,
    store_path,
    store_url,
    table,
)
from screens.registry import screen_for

FIX_NAMES = ("compact-duplicates", "reembed", "index-lag")
STYLE = {"fail": "bold red", "warn": "yellow", "unknown": "magenta", "ok": "green"}


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("health", parents=parents,
                       help="health signals: what silently stopped working (exit 1 at or "
                       "above --fail-on)")
    p.add_argument("--fail-on", choices=("warn", "fail"), default="fail",
                   help="exit 1 when any signal is at or above this level (default fail; "
                   "unknown ranks as warn)")
    p.add_argument("--show", metavar="SIGNAL", action="append", default=[],
                   help="also list this signal's offending rows (repeatable)")
    p.add_argument("--no-save", action="store_true",
                   help="do not store this scan (by default every scan is stored, for trends)")
    p.add_argument("--fix", choices=FIX_NAMES,
                   help="preview a fix (compact-duplicates, reembed, index-lag); with --yes "
                   "run it on exactly what the preview listed, then scan again")
    p.add_argument("--yes", action="store_true",
                   help="with --fix: act on the plan printed (refused if the store changed "
                   "since); without it the plan is printed and the exit is 1")
    p.add_argument("--dry-run", action="store_true",
                   help="with --fix: print the plan only (exit 0)")
    add_json_flag(p)
    p.set_defaults(func=run_health)

    p = sub.add_parser("compact-duplicates", parents=parents,
                       help="keep one index row per source and span, re-point every reference, "
                       "record an audit event")
    p.add_argument("--yes", action="store_true",
                   help="act on the plan printed (refused if the store changed since); "
                   "without it the plan is printed and the exit is 1")
    p.add_argument("--dry-run", action="store_true", help="print the plan only (exit 0)")
    add_json_flag(p)
    p.set_defaults(func=run_compact)


def _progress(args: argparse.Namespace) -> Any:
    def progress(stage: str, done: int, total: int) -> None:
        if not args.json and (done == total or done % max(1, total // 10) == 0):
            err_console.print(f"{stage}: {done:,}/{total:,}", markup=False)
    return progress


def _logged_hint(args: argparse.Namespace) -> str:
    """What the hook failure log kept for a store path that has no store (yet): a hook that
    could not open it there is the likeliest reason to ask."""
    from store import logged_failures, plural

    logged = logged_failures(store_url(args) or store_path(args))  # a server: its URL
    if not logged:
        return ""
    last = str(logged[-1].get("error") or "no reason recorded")
    return (f"; the hook failure log holds {plural(len(logged), 'failure')} for this path, "
            f"the last: {last}")


def _unopenable(args: argparse.Namespace, exc: Exception) -> int:
    """A store that exists but cannot be opened: the error, with the ``hook_failures``
    signal from the failure log (hooks that could not open it either logged there); with
    ``--json``, one document holding both. Exit 2."""
    from store import logged_hook_failures

    found = logged_hook_failures(store_url(args) or store_path(args))
    if args.json:
        print_json({"store": str(store_path(args)), "status": "error", "error": str(exc),
                    "signals": [found.to_json()]})
    return fail(f"{exc}" + (f"; hook_failures: {found.explanation}" if found.value else ""))


def run_health(args: argparse.Namespace) -> int:
    from store import StoreError

    # --show names are checked before any work; a daemon that answers checks them itself (an
    # unknown one: it refuses, and the check here says so): the registry imports every
    # signal module, which this process is then spared
    warm = not args.fix and (store_url(args) is not None or store_path(args).exists())
    if args.show and not warm:
        _check_signals(args.show)
    if (args.dry_run or args.yes) and not args.fix:
        if args.show:
            _check_signals(args.show)
        raise ValueError(f"{'--dry-run' if args.dry_run else '--yes'} goes with --fix")
    if args.dry_run and args.yes:
        raise ValueError("--dry-run and --yes: choose one (--dry-run acts on nothing)")
    require_store(args, "health", _logged_hint(args))
    answered = _through_daemon(args) if warm else None
    if answered is None and args.show and warm:
        _check_signals(args.show)
    if answered is not None:
        from store import scan_from_json, view_from_json

        return _report(args, scan_from_json(answered["result"]), None,
                       {name: [view_from_json(v) for v in answered["shown"][name]]
                        for name in args.show})
    from lca_tui.output import open_from  # looked up now (a test replaces it)

    try:
        opened = open_from(args)
    except StoreError as exc:  # unopenable: the hook failures logged for it still show
        return _unopenable(args, exc)
    with closing(opened) as store:
        plan = fixed = None
        if args.fix:
            done = _preview_then_fix(args, store, args.fix, "applying a health fix")
            if isinstance(done, int):
                return done
            plan, fixed = done
        result = store.health(save="never" if args.no_save else "always")
        shown = {name: store.health_rows(result.signal(name).offending) for name in args.show}
    return _report(args, result, fixed, shown, plan)


def _check_signals(names: list[str]) -> None:
    """An unknown signal name is a clear error (``ValueError``, naming every signal)."""
    from store import signal_spec

    for name in names:
        signal_spec(name)


def _through_daemon(args: argparse.Namespace) -> dict[str, Any] | None:
    """The scan as ``lca-tui serve`` answers it (its signal modules imported, the model
    loaded), or None when no daemon serves this store or it cannot apply this run's --set.
    ``--fix`` always runs here (it writes, with its progress on this terminal)."""
    from lca_tui.warm import ask

    return ask(args, {"op": "health", "no_save": bool(args.no_save),
                      "show": list(dict.fromkeys(args.show))})


def _report(args: argparse.Namespace, result: Any, fixed: Any, shown: dict[str, Any],
            plan: Any = None) -> int:
    """Print the scan (and the fix, the shown rows); the exit code by ``--fail-on``."""
    from store import plural

    level = args.fail_on
    exit_code = 1 if result.at_or_above(level) else 0
    if args.json:
        data = result.to_json()
        if plan is not None:
            data["plan"] = plan.to_json()
        if fixed is not None:
            data["fix"] = fixed.to_json()
        for sig in data["signals"]:
            if sig["name"] in shown:
                sig["rows"] = [{"kind": v.row.kind, "id": v.row.id, "label": v.label,
                                "note": v.row.note, "screen": _screen(v)}
                               for v in shown[sig["name"]]]
        print_json(data)
        return exit_code
    if fixed is not None:
        _print_lines(f"{args.fix}:", fixed.lines)
    _print_scan(result)
    for name, views in shown.items():
        sig = result.signal(name)
        out = console()
        more = sig.offending_total - len(views)
        out.print(f"\n{name}: {plural(sig.offending_total, 'offending row')}"
                  + (f" (first {len(views):,} shown)" if more > 0 else ""), markup=False)
        t = table("row", "what", "note")
        for v in views:
            t.add_row(f"{v.row.kind} {v.row.id}", v.label, v.row.note)
        out.print(t)
    counts = result.counts()
    console().print(f"{counts['fail']} fail, {counts['warn']} warn, {counts['unknown']} "
                    f"unknown, {counts['ok']} ok"
                    + (f", {counts['n/a']} n/a" if counts["n/a"] else "")
                    + f" (scan {result.duration_ms:.0f} ms"
                    + (f", stored as scan {result.id}" if result.id else ", not stored")
                    + f"); exit {exit_code} at --fail-on {level}", markup=False,
                    soft_wrap=True)
    return exit_code


def _screen(view: Any) -> str | None:
    """The mode of the screen that shows ``view``'s row (the registry's ``opens``)."""
    spec = screen_for(view.ref.kind) if view.ref is not None else None
    return spec.mode if spec is not None else None


def _print_scan(result: Any) -> None:
    from store import when

    t = table("status", "signal", "value", "thresholds", "explanation",
              title=f"health at {when(result.scanned_at, with_seconds=True)}")
    for s in result.signals:
        t.add_row(s.status.upper(), s.name, s.display, s.rule,
                  s.explanation + (f"  [fix: {s.fix}]" if s.fix else ""),
                  style=STYLE.get(s.status))
    console().print(t)


def _print_lines(head: str, lines: list[str]) -> None:
    out = console()
    out.print(head, markup=False)
    for line in lines:
        out.print(f"  - {line}", markup=False)


def _preview_then_fix(args: argparse.Namespace, store: Any, fix: str,
                      action: str) -> int | tuple[Any, Any]:
    """The one way a fix runs from the command line, as ``erase`` and ``redact`` do: the
    plan printed; ``--dry-run`` stops there (exit 0), no ``--yes`` too (exit 1, nothing
    changed); ``--yes`` acts on exactly that plan (``PlanStale`` if the store moved). Returns
    the exit code when it stops, else ``(plan, what the fix did or None)``."""
    if not args.dry_run:  # refused by name before the preview is worked out
        store.refuse_if_read_only(action)
    plan = store.health_fix_plan(fix)
    if args.dry_run:
        if args.json:
            print_json(plan.to_json())
        else:
            _print_lines(f"{fix} would:", plan.lines)
        return 0
    if not args.yes and plan.reason != "nothing to do":
        # the preview, and a non-zero exit a cron job notices; nothing is changed
        if args.json:
            print_json({"plan": plan.to_json(), "applied": False})
        else:
            _print_lines(f"{fix} would:", plan.lines)
        return fail(f"{fix} was not run: pass --yes to run it on exactly this "
                    "plan (refused if the store changes before it runs)", code=1)
    if not args.json:
        _print_lines(f"{fix} will:", plan.lines)
    fixed = None
    if plan.reason != "nothing to do":
        fixed = store.health_fix(fix, _progress(args), previewed=plan, exact=True)
    return plan, fixed


def run_compact(args: argparse.Namespace) -> int:
    """``compact-duplicates``: ``health --fix compact-duplicates`` without the scan after it
    (the same preview, the same ``--yes``, the same refusal of a stale plan)."""
    if args.dry_run and args.yes:
        raise ValueError("--dry-run and --yes: choose one (--dry-run acts on nothing)")
    require_store(args, "compact-duplicates")
    with store_from(args) as store:
        done = _preview_then_fix(args, store, "compact-duplicates", "compacting duplicates")
    if isinstance(done, int):
        return done
    plan, fixed = done
    if args.json:
        print_json({"plan": plan.to_json(), "fix": fixed.to_json() if fixed else None})
    elif fixed is not None:
        _print_lines("compact-duplicates:", fixed.lines)
    return 0
