"""``lca-tui hooks install|uninstall|status``: lca-tui's entries in Claude Code's
``settings.json`` (``store.harness.settings_file``), and how the hooks have been doing."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lca_tui.output import (
    add_json_flag,
    console,
    print_file_plan,
    print_json,
    store_from,
    table,
)


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("hooks", parents=parents,
                       help="wire lca-tui into Claude Code's settings.json (install, "
                       "uninstall, status)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb, text in (("install", "add lca-tui's hooks (idempotent; other hooks untouched; "
                                   "a backup first)"),
                       ("uninstall", "remove lca-tui's hooks, and nothing else"),
                       ("status", "which hooks are installed, the daemon, recent hook runs "
                                  "and failures")):
        v = verbs.add_parser(verb, parents=parents, help=text, description=text)
        where = v.add_mutually_exclusive_group()
        where.add_argument("--project", metavar="DIR",
                           help="the project's .claude/settings.json (default: the current "
                           "directory's)")
        where.add_argument("--user", action="store_true",
                           help="the user's ~/.claude/settings.json")
        if verb != "status":
            v.add_argument("--dry-run", action="store_true",
                           help="show what would change and write nothing")
        add_json_flag(v)
        v.set_defaults(func=run)


def runner() -> list[str] | None:
    """How Claude Code should run ``lca-tui hook``: this interpreter without ``site`` on
    ``lca_tui/hook_client.py`` (a hook the daemon answers then starts in ~10 ms rather than
    ~60; it sets ``site`` up itself when it needs more). None (the console script) when
    there is no interpreter path to name."""
    import sys

    from lca_tui import hook_client

    if not sys.executable:
        return None
    return [sys.executable, "-S", str(Path(hook_client.__file__).resolve())]


def run(args: argparse.Namespace) -> int:
    from store import resolve_store
    from store import (
        HookSettingsError,
        apply_hooks_plan,
        hooks_plugin_enabled,
        hooks_settings_path,
        plan_hooks_install,
        plan_hooks_uninstall,
    )

    if args.project is not None and not Path(args.project).expanduser().is_dir():
        raise ValueError(f"the project folder {args.project} does not exist (or is not a "
                         "folder): give an existing project's folder; nothing was written")
    path = hooks_settings_path(args.project, args.user)
    if args.verb == "status":
        return _status(args, path)
    try:
        if args.verb == "install":
            plan = plan_hooks_install(path, resolve_store(getattr(args, "store", None)),
                                      runner())
        else:
            plan = plan_hooks_uninstall(path)
    except HookSettingsError as exc:
        raise ValueError(str(exc)) from exc
    written = [] if args.dry_run else apply_hooks_plan(plan)
    plugin = hooks_plugin_enabled(args.project) if args.verb == "install" else []
    if args.json:
        print_json({**plan.to_json(), "dry_run": args.dry_run,
                    "written": [str(p) for p in written],
                    "plugin_enabled_in": [str(p) for p in plugin]})
        return 0
    out = console()
    for where in plugin:
        out.print(f"note: the lca-tui plugin is enabled in {where}; its hooks stand aside while "
                  "these are installed (they never both run)", markup=False, soft_wrap=True)
    print_file_plan(plan, path, written, args.dry_run,
                    "lca-tui's hooks are installed" if args.verb == "install"
                    else "no lca-tui hooks")
    return 0


def _daemon_state(store_path: Any) -> dict[str, Any]:
    """``daemon_probe`` for the store's daemon; ``unavailable`` when no folder can hold its
    socket (hooks then work in-process)."""
    from store import UnsafeDirectory, daemon_probe, socket_path

    try:
        return daemon_probe(socket_path(store_path))
    except UnsafeDirectory as exc:
        return {"state": "unavailable", "pid": None, "status": None, "error": str(exc)}


def _store_part(args: argparse.Namespace, store_path: Any) -> dict[str, Any]:
    """The hook runs and failures the store holds, the failures logged for it, and why the
    store could not be read when it cannot (a missing store is not created here)."""
    from store import logged_hook_failures

    from store import on_server

    if not on_server(store_path) and not Path(store_path).exists():
        return {"error": None, "note": f"no store at {store_path} yet (a hook creates it on "
                "its first run)", "signal": logged_hook_failures(store_path), "runs": [],
                "waiting": None}
    try:
        with store_from(args) as store:
            signal = store.health_signal("hook_failures")
            runs = store.hook_runs(10)
            waiting = store.waiting()
    except Exception as exc:  # an unopenable store: what was logged for it is what matters
        return {"error": f"the store cannot be opened: {str(exc).splitlines()[0]}",
                "note": None, "signal": logged_hook_failures(store_path), "runs": [],
                "waiting": None}
    recent = [{"id": r.id, "ts": r.ts, "event": r.event, "status": r.status, "via": r.via,
               "duration_ms": r.duration_ms, "entries_added": r.entries_added,
               "injected": r.injected, "error": r.error} for r in runs]
    return {"error": None, "note": None, "signal": signal, "runs": recent, "waiting": waiting}


def _status(args: argparse.Namespace, path: Any) -> int:
    from store import describe_daemon, hooks_status, resolve_store, store_name, when

    wired = hooks_status(path)
    store_path = resolve_store(getattr(args, "store", None))
    daemon = _daemon_state(store_path)
    part = _store_part(args, store_path)
    signal, recent, waiting = part["signal"], part["runs"], part["waiting"]
    if args.json:
        print_json({"settings": wired, "store": store_name(store_path),
                    "store_error": part["error"],
                    "store_note": part["note"],
                    "daemon": daemon["status"], "daemon_state": daemon["state"],
                    "daemon_pid": daemon["pid"], "daemon_error": daemon["error"],
                    "waiting": waiting, "hook_failures": signal.to_json(),
                    "recent_runs": recent})
        return 1 if part["error"] else 0
    out = console()
    if wired.get("error"):
        out.print(f"{path}: {wired['error']}", markup=False)
    elif wired["installed"]:
        out.print(f"{path}: lca-tui hooks installed for {', '.join(wired['events'])}",
                  markup=False)
    else:
        have = ", ".join(wired["events"]) or "none"
        out.print(f"{path}: lca-tui hooks for {have}; missing {', '.join(wired['missing'])} "
                  "(`lca-tui hooks install`)", markup=False)
    state = describe_daemon(daemon) + (f": {daemon['error']}" if daemon["state"] == "unavailable"
                                else "")
    out.print(f"daemon: {state}" + ("" if waiting is None else
                                     f"; {waiting:,} entries wait for embedding"),
              markup=False)
    if part["error"] or part["note"]:
        out.print(f"store {store_name(store_path)}: {part['error'] or part['note']}",
                  markup=False)
    out.print(f"hook_failures: {signal.status.upper()} — {signal.explanation}", markup=False)
    if recent:
        t = table("id", "time", "event", "status", "via", "ms", "added", "injected", "error",
                  title="latest hook runs")
        for r in recent:
            t.add_row(str(r["id"]), when(r["ts"], with_seconds=True), r["event"], r["status"],
                      r["via"],
                      "" if r["duration_ms"] is None else f"{r['duration_ms']:.0f}",
                      str(r["entries_added"]), str(r["injected"]), r["error"] or "")
        out.print(t)
    elif signal.offending and part["error"]:
        for row in signal.offending[:10]:  # "time event (via): error", as Health lists them
            out.print(f"  {row.note}", markup=False)
    return 1 if part["error"] else 0
