"""``lca-tui bench`` (a synthetic store's latency, throughput and storage figures) and
``lca-tui calibrate`` (the distribution of S on this store, for the similarity floor)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lca_tui.output import sql_int, add_json_flag, console, err_console, print_json, store_from


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bench", parents=parents,
                       help="build a synthetic store and print latency and storage figures "
                       "(it always builds its own store, --keep DIR keeps it; --store "
                       "postgresql://… builds it on that empty database and a SQLite file, "
                       "side by side)")
    p.add_argument("--chunks", type=sql_int, default=50_000, help="store size (default 50,000)")
    p.add_argument("--queries", type=sql_int, default=60, help="recalls to time (at least 50)")
    p.add_argument("--sample", type=sql_int, default=2000,
                   help="entries written through the normal write path with the embedder "
                   "(the throughput figure); the rest are bulk-written")
    p.add_argument("--embedder", choices=("auto", "model", "fallback"), default="model",
                   help="model (default): the real all-MiniLM-L6-v2; fallback: quick, "
                   "degraded")
    p.add_argument("--keep", metavar="DIR", help="build the store in DIR and keep it")
    p.add_argument("--hook-runs", type=sql_int, default=20, metavar="N",
                   help="UserPromptSubmit hooks timed end to end, cold and through the daemon "
                   "(default 20 each; 0 skips)")
    p.add_argument("--session", metavar="JSONL",
                   help="also import this real Claude Code transcript (and its subagents/) "
                   "into a fresh store with the embedder, and time it")
    p.add_argument("--cli", action="store_true",
                   help="time the command line instead: each row of issue 28's table "
                   "(--help, CMD --help, the listings, search and recall with and without "
                   "the daemon, the hook cold and warm) as a whole process, beside "
                   "`python -c pass` in the same run, on a copy of the demo store")
    p.add_argument("--cli-store", metavar="PATH",
                   help="with --cli: time on a copy of this store instead of a fresh demo "
                   "store (the file is copied; it is never written)")
    p.add_argument("--runs", type=sql_int, default=10, metavar="N",
                   help="with --cli: timed runs of each row (default 10)")
    p.add_argument("--sizes", metavar="N,N", default="50000,200000",
                   help="with --store URL: the store sizes measured, in chunks (default "
                   "50000,200000; the store grows from one to the next)")
    p.add_argument("--build-budget", type=float, metavar="SECONDS",
                   help="with --store URL: instead of the side-by-side run, grow the "
                   "PostgreSQL store in batches until SECONDS are spent, then print the "
                   "size reached and recall p50/p95 there")
    p.add_argument("--writer-entries", type=sql_int, default=200, metavar="N",
                   help="with --store URL: entries each of the two concurrent writers appends "
                   "(default 200; 0 skips)")
    p.add_argument("--app", action="store_true",
                   help="time the app instead, driven headless on the demo store and the "
                   "bench store: first paint, data on screen, screen switch, cursor move, "
                   "filter keystroke (with --keep DIR, a demo.db or bench.db already in DIR "
                   "is used as it is)")
    p.add_argument("--app-size", default="160x50", metavar="WxH",
                   help="the app's terminal size for --app (default 160x50)")
    p.add_argument("--app-opens", type=sql_int, default=3, metavar="N",
                   help="--app: times the app is opened on each store, each a process of "
                   "its own (default 3)")
    add_json_flag(p)
    p.set_defaults(func=run_bench_cmd)

    p = sub.add_parser("calibrate", parents=parents,
                       help="distribution of S on this store, to choose the similarity floor")
    p.add_argument("--limit", type=sql_int, default=200, help="user turns used as cues")
    add_json_flag(p)
    p.set_defaults(func=run_calibrate)


def run_bench_cmd(args: argparse.Namespace) -> int:
    from store import bench_load, run_bench

    if args.cli:
        return run_cli_bench(args)
    if args.app:
        return run_app_bench_cmd(args)
    if getattr(args, "store", None) and "://" in args.store:
        return run_side_by_side_cmd(args)
    if getattr(args, "store", None):
        raise ValueError("bench always builds its own synthetic store and never touches "
                         "another: --store is not accepted (use --keep DIR to build it in DIR "
                         "and keep it)")
    if args.build_budget is not None:
        raise ValueError("--build-budget grows a store on a server: give it with --store "
                         "postgresql://… (an empty database)")
    if args.queries < 50:
        raise ValueError("--queries must be at least 50 for meaningful percentiles")
    if args.chunks < 1:
        raise ValueError("--chunks must be positive")

    def progress(stage: str, done: int, total: int) -> None:
        if args.json:
            return
        if done == total or done % max(1, total // 10) == 0:
            err_console.print(f"{stage}: {done:,}/{total:,}", markup=False)

    if args.hook_runs < 0:
        raise ValueError("--hook-runs must be 0 or more")
    if args.session and not Path(args.session).is_file():
        raise ValueError(f"--session {args.session}: no such transcript file")
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    folder = keep or Path(tempfile.mkdtemp(prefix="lca-bench-"))
    try:
        load_before = bench_load()
        result = run_bench(args.chunks, args.queries, args.sample, args.embedder,
                           progress=progress, keep=folder)
        harness = _harness_figures(args, folder, progress)
        harness["load_average"] = {"before": load_before, "after": bench_load()}
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print_json({**result.to_json(), "harness": harness})
        return 0
    out = console()
    r = result
    out.print(f"store: {r.chunks:,} chunks ({r.method})", markup=False)
    out.print(f"embedder: {r.model}{' DEGRADED' if r.degraded else ''}", markup=False)
    out.print(f"recall latency over {r.queries} queries (query embedding and trace write "
              f"included): p50 {r.recall_ms['p50']} ms, p95 {r.recall_ms['p95']} ms, max "
              f"{r.recall_ms['max']} ms; CPU p50 {(r.recall_cpu_ms or {}).get('p50')} ms, "
              f"p95 {(r.recall_cpu_ms or {}).get('p95')} ms  (target p95 ≤ 10 ms at 50,000 "
              "chunks)", markup=False)
    out.print(f"  measured warm (store open as `serve` opens it, 4 connections kept, model "
              f"loaded, vectors in memory); the first recall "
              f"after opening the store took {r.first_recall_ms} ms, CPU "
              f"{r.first_recall_cpu_ms} ms (it maps the vector file beside the store; target "
              f"≤ 200 ms); with no vector file yet (every vector read from the store, the "
              f"file written) {r.first_recall_load_ms} ms, CPU {r.first_recall_load_cpu_ms} ms",
              markup=False)
    out.print(f"  of which query embedding: p50 {r.embed_query_ms['p50']} ms, p95 "
              f"{r.embed_query_ms['p95']} ms; items injected per recall: {r.injected_mean}",
              markup=False)
    out.print(f"ingest + embed (normal write path, {r.sample_chunks:,} chunks): "
              f"{r.ingest_per_s:,} chunks/s ({r.ingest_entries_per_s:,} entries/s); whole "
              f"build {r.build_s} s", markup=False)
    out.print(f"storage (main file after a WAL checkpoint, measured before the recalls): "
              f"{r.bytes_total:,} bytes, {r.bytes_per_1k_chunks:,.0f} bytes per "
              f"1,000 chunks; index {r.index_bytes:,} bytes / raw transcript "
              f"{r.raw_transcript_bytes:,} bytes = {r.index_to_raw}", markup=False)
    out.print(f"  the bench's {r.queries} recall traces, apart: {r.trace_bytes:,} bytes",
              markup=False)
    if r.health_scan_ms:
        h = r.health_scan_ms
        out.print(f"health scan (every signal, nothing stored): first {h['first']} ms, then "
                  f"p50 {h['p50']} ms (CPU {h['cpu_p50']} ms), max {h['max']} ms  (target ≤ 1 s "
                  "at 50,000 chunks); "
                  f"status {r.health_status}", markup=False)
    _print_harness(harness)
    return 0


# issue 28's targets for the command line on the demo store, in ms (wall, one process)
CLI_TARGETS = {"--help": 150, "CMD --help": 150, "stats": 400, "sessions": 400,
               "proposals": 400, "memories": 400, "audit": 400, "health --no-save": 400,
               "search, no daemon": None, "recall, no daemon": 800,
               "search, daemon": 150, "recall, daemon": 150, "health --no-save, daemon": 400,
               "approve, no daemon": 1200, "approve, daemon": 300,
               "hook UserPromptSubmit, cold": 450, "hook UserPromptSubmit, daemon": 30}


def run_cli_bench(args: argparse.Namespace) -> int:
    """``bench --cli``: every command-line row of issue 28 timed as a whole process."""

    from store import build_demo
    from store import bench_load, bench_time_rows

    if getattr(args, "store", None):
        raise ValueError("bench --cli times on a copy: give the store as --cli-store PATH")
    if args.runs < 2:
        raise ValueError("--runs must be at least 2")
    if args.cli_store and not Path(args.cli_store).is_file():
        raise ValueError(f"--cli-store {args.cli_store}: no such store file")
    folder = Path(tempfile.mkdtemp(prefix="lca-cli-bench-"))
    runtime = Path(tempfile.mkdtemp(prefix="lcab-"))  # the daemon's socket: a short path
    # Bytecode cached as an installed package has it: a machine whose environment sets
    # PYTHONDONTWRITEBYTECODE would otherwise compile every module of lca-tui in every run
    # (its own cache folder, filled by one untimed run of each row before it is timed).
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), LCA_EMBEDDER=args.embedder,
               PYTHONPYCACHEPREFIX=str(folder / "pycache"))
    env.pop("COLUMNS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    py = [sys.executable]
    cli = [*py, "-m", "lca_tui.cli"]
    progress = (None if args.json else
                lambda stage, done, total: err_console.print(f"{stage}: {done}/{total}",
                                                             markup=False))
    load_before = bench_load()
    try:
        store = folder / "store.db"
        if args.cli_store:
            for suffix in ("", "-wal"):
                src = Path(f"{args.cli_store}{suffix}")
                if src.exists():
                    shutil.copyfile(src, f"{store}{suffix}")
            which = f"a copy of {args.cli_store}"
        else:
            if progress:
                progress("building the demo store", 0, 1)
            build_demo(store)
            which = "a fresh demo store"
        st = ["--store", str(store)]
        rows = [("--help", [*cli, "--help"]), ("CMD --help", [*cli, "stats", "--help"])]
        rows += [(c, [*cli, c, *st]) for c in ("stats", "sessions", "proposals", "memories",
                                               "audit")]
        rows += [("health --no-save", [*cli, "health", "--no-save", *st])]
        cold = [("search, no daemon", [*cli, "search", "postgres", *st]),
                ("recall, no daemon", [*cli, "recall", "postgres", *st])]
        base = [*py, "-c", "pass"]
        _warm_up([*rows, *cold, ("", base)], env)
        results = bench_time_rows(rows + cold, base, args.runs, env,
                                          progress=progress)
        serve = subprocess.run([*cli, *st, "serve", "--json"], env=env, capture_output=True,
                               timeout=300)
        if serve.returncode != 0:
            raise ValueError(f"the daemon did not start: {serve.stderr[-300:]!r}")
        try:
            warm = [("search, daemon", [*cli, "search", "postgres", *st]),
                    ("recall, daemon", [*cli, "recall", "postgres", *st]),
                    ("health --no-save, daemon", [*cli, "health", "--no-save", *st])]
            _warm_up(warm, env)
            results += bench_time_rows(warm, base, args.runs, env, progress=progress)
        finally:
            subprocess.run([*cli, *st, "serve", "--stop"], env=env, capture_output=True,
                           timeout=60)
        results += _cli_approve_rows(folder, cli, base, env, args.runs, progress,
                                     args.embedder)
        hook = _cli_hook_rows(store, cli, folder, env, args.runs, progress)
        results += hook
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
    for r in results:
        r["target_ms"] = CLI_TARGETS.get(r["row"])
    doc = {"store": which, "runs": args.runs, "rows": results,
           "load_average": {"before": load_before, "after": bench_load()},
           "bytecode": "cached (one untimed run of each row first)"}
    if args.json:
        print_json(doc)
        return 0
    _print_cli_rows(doc)
    return 0


def _warm_up(rows: list[tuple[str, list[str]]], env: dict[str, str]) -> None:
    """Run each row once, untimed: its modules' bytecode is then cached for the timed runs."""
    for _label, command in rows:
        subprocess.run(command, env=env, capture_output=True, timeout=600)


def _cli_approve_rows(folder: Path, cli: list[str], base: list[str], env: dict[str, str],
                      runs: int, progress: Any, embedder: str) -> list[dict[str, Any]]:
    """``approve`` without and with the daemon, on a store of the bench's own (never the
    store timed above: an approve there would write into its bound memory directory): before
    each timed run a new proposal is submitted (untimed, not applied), then approved."""
    import random

    from store import TOPICS, Settings, open_store, synthetic_text
    from store import bench_time_rows

    topics = list(TOPICS)
    path = folder / "approve.db"
    settings = Settings.load({"embed.backend": embedder})
    open_store(path, settings).close()
    made = iter(range(10**6))

    def propose(_label: str) -> list[str]:
        n = next(made)
        s = open_store(path, settings)
        try:
            text = synthetic_text(random.Random(n), topics[n % len(topics)])  # no duplicate
            info = s.propose({"op": "add", "type": "feedback", "content": text,
                              "metadata": {"name": f"bench rule {n}"}}, auto_apply=False)
        finally:
            s.close()
        return [*cli, "approve", str(info.id), "--store", str(path)]

    rows = bench_time_rows([("approve, no daemon", [])], base, runs, env,
                                   before=propose, progress=progress)
    serve = subprocess.run([*cli, "--store", str(path), "serve", "--json"], env=env,
                           capture_output=True, timeout=300)
    if serve.returncode != 0:
        raise ValueError(f"the daemon did not start: {serve.stderr[-300:]!r}")
    try:
        rows += bench_time_rows([("approve, daemon", [])], base, runs, env,
                                        before=propose, progress=progress)
    finally:
        subprocess.run([*cli, "--store", str(path), "serve", "--stop"], env=env,
                       capture_output=True, timeout=60)
    return rows


def _cli_hook_rows(store: Path, cli: list[str], folder: Path, env: dict[str, str], runs: int,
                   progress: Any) -> list[dict[str, Any]]:
    """The UserPromptSubmit hook end to end, cold and through the daemon, as ``bench``
    times it (``store.harness.bench.hook_latency``), in the rows' shape (wall only: the
    hook's process is timed from its start to its output)."""
    from store import percentiles, synthetic_query, synthetic_text, TOPICS
    from store import bench_hook_latency, bench_wait_embedded
    from store import socket_path
    from lca_tui.commands.hooks import runner

    hook = runner() or cli
    sample = lambda rng: synthetic_text(rng, rng.choice(list(TOPICS)))  # noqa: E731
    before = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = env["XDG_RUNTIME_DIR"]
    try:
        sock = socket_path(store.resolve())
    finally:
        if before is None:
            os.environ.pop("XDG_RUNTIME_DIR")
        else:
            os.environ["XDG_RUNTIME_DIR"] = before
    cold = bench_hook_latency(store, hook, sample, synthetic_query, runs, folder,
                                      {**env, "LCA_NO_DAEMON": "1"}, seed=11,
                                      progress=progress, label="hook, cold", stop_first=True)
    subprocess.run([*cli, "--store", str(store), "serve", "--json"], env=env,
                   capture_output=True, timeout=300)
    try:
        def typing() -> None:
            time.sleep(TYPING_S)
            bench_wait_embedded(sock)

        warm = bench_hook_latency(store, hook, sample, synthetic_query, runs, folder,
                                          env, seed=12, progress=progress,
                                          label="hook, daemon", stop_first=True,
                                          settle=typing)
    finally:
        subprocess.run([*cli, "--store", str(store), "serve", "--stop"], env=env,
                       capture_output=True, timeout=60)
    return [{"row": label, "command": [*hook, "hook", "UserPromptSubmit"], "runs": runs,
             "wall_ms": percentiles(ms), "cpu_ms": None, "baseline_wall_ms": None,
             "baseline_cpu_ms": None, "exit_codes": [0]}
            for label, ms in (("hook UserPromptSubmit, cold", cold),
                              ("hook UserPromptSubmit, daemon", warm))]


def _print_cli_rows(doc: dict[str, Any]) -> None:
    from lca_tui.output import Listing, col

    out = console()
    out.print(f"the command line, each row {doc['runs']} whole processes on {doc['store']}, "
              "each run followed by `python -c pass` (its figures beside), bytecode "
              "cached; ms, p50 / p95; "
              f"load average before {doc['load_average']['before']}, after "
              f"{doc['load_average']['after']}", markup=False, soft_wrap=True)
    t = Listing(col("row", whole=True), col("target", whole=True, right=True),
                col("wall", whole=True, right=True), col("CPU", whole=True, right=True),
                col("python -c pass wall / CPU", whole=True, right=True),
                col("meets (wall p50)", whole=True))

    def pair(p: dict[str, float] | None) -> str:
        return "-" if not p else f"{p['p50']:.0f} / {p['p95']:.0f}"

    for r in doc["rows"]:
        target = r["target_ms"]
        meets = ("-" if target is None else
                 "yes" if r["wall_ms"]["p50"] <= target else "NO")
        if r["exit_codes"] != [0] and not (r["row"].startswith("health")
                                           and set(r["exit_codes"]) <= {0, 1}):
            meets += f" (exit {r['exit_codes']})"
        base = ("-" if r["baseline_wall_ms"] is None else
                f"{pair(r['baseline_wall_ms'])}  {pair(r['baseline_cpu_ms'])}")
        t.add_row(r["row"], "-" if target is None else f"≤ {target}", pair(r["wall_ms"]),
                  pair(r["cpu_ms"]), base, meets)
    t.print(out)
def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--sizes {text!r}: give chunk counts separated by commas, e.g. "
                         "50000,200000") from None
    if not sizes or min(sizes) < 1:
        raise ValueError(f"--sizes {text!r}: every size must be a positive chunk count")
    return sizes


def run_side_by_side_cmd(args: argparse.Namespace) -> int:
    """``bench --store URL``: the same synthetic store on SQLite and on the server."""
    from store import run_side_by_side

    from lca_tui.commands.store_copy import shown

    if args.queries < 50:
        raise ValueError("--queries must be at least 50 for meaningful percentiles")
    if args.build_budget is not None:
        return _build_budget_cmd(args, shown(args.store))
    if args.writer_entries < 0:
        raise ValueError("--writer-entries must be 0 or more")
    sizes = _sizes(args.sizes)

    def progress(stage: str, done: int, total: int) -> None:
        if not args.json and (done == total or done % max(1, total // 10) == 0):
            err_console.print(f"{stage}: {done:,}/{total:,}", markup=False)

    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    result = run_side_by_side(args.store, shown(args.store), sizes, args.queries,
                              min(args.sample, min(sizes)), args.embedder,
                              args.writer_entries, progress=progress, folder=keep)
    if args.json:
        print_json(result.to_json())
        return 0
    out = console()
    a, b = result.backends
    out.print(f"the same synthetic store on both backends ({result.method}); embedder "
              f"{result.embedder}; {result.queries} recall queries per size", markup=False)
    rows: list[tuple[str, str, str]] = []
    for sa, sb in zip(a.sizes, b.sizes):
        rows.append((f"recall p50 / p95 at {sa.chunks:,} chunks",
                     f"{sa.recall_ms['p50']} / {sa.recall_ms['p95']} ms",
                     f"{sb.recall_ms['p50']} / {sb.recall_ms['p95']} ms"))
        rows.append((f"build up to {sa.chunks:,} chunks", f"{sa.build_s} s", f"{sb.build_s} s"))
    if a.writers:
        rows.append((f"ingest, 2 writers × {a.writer_entries} entries",
                     f"{a.ingest_entries_per_s} entries/s", f"{b.ingest_entries_per_s} entries/s"))
        def found_once(f: Any) -> str:
            return ("yes" if f.entries_found_once else
                    f"NO ({f.entries_missing} missing, {f.entries_doubled} doubled)")

        rows.append(("every entry found once", found_once(a), found_once(b)))
    def erased(f: Any) -> str:
        if f.erase_error:
            return f"FAILED: {f.erase_error}"
        if not f.erase_entries:
            return "not run"
        verdict = "verified" if f.erase_passed else f"NOT verified ({', '.join(f.probes_failed)})"
        return f"{f.erase_ms:,.0f} ms, {verdict}, {f.probes_passed} probes passed"
    if a.erase_entries or b.erase_entries or a.erase_error or b.erase_error:
        rows.append((f"erase one session ({a.erase_entries:,} entries) + verification",
                     erased(a), erased(b)))
    from lca_tui.output import Listing, col

    listing = Listing(col("figure"), col(a.backend, whole=True), col(b.backend, whole=True))
    for row in rows:
        listing.add_row(*row)
    listing.print(out)
    return 0 if all(f.entries_found_once or not f.writers for f in (a, b)) else 1


def _build_budget_cmd(args: argparse.Namespace, where: str) -> int:
    """``bench --store URL --build-budget SECONDS``: the largest store built in the budget."""
    from store import run_build_budget

    if not args.json:
        err_console.print(f"growing the synthetic store on {where} for "
                          f"{args.build_budget:,.0f} s…", markup=False)
    last = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if not args.json and (now - last[0] >= 60 or "recall" in stage and done == total):
            last[0] = now
            err_console.print(f"{time.strftime('%H:%M:%S', time.gmtime())} {stage}: "
                              f"{done:,} chunks" if "bulk" in stage else
                              f"{stage}: {done:,}/{total:,}", markup=False)

    result = run_build_budget(args.store, where, args.build_budget, args.queries,
                              args.sample, args.embedder, progress=progress)
    if args.json:
        print_json(result.to_json())
        return 0
    from lca_tui.output import Listing, col

    size = "n/a" if result.database_bytes is None else f"{result.database_bytes / 1e9:.2f} GB"
    listing = Listing(col("figure"), col(result.backend, whole=True))
    listing.add_row("build budget", f"{result.budget_s:,.0f} s")
    listing.add_row("size reached", f"{result.chunks:,} chunks ({result.entries:,} entries)")
    listing.add_row("built in (the last batch finished)", f"{result.build_s:,.1f} s "
                    f"(sample {result.sample_s:,.1f} s, {result.batches:,} bulk batches)")
    listing.add_row("bulk rate over the last tenth", f"{result.chunks_per_s_last:,.1f} chunks/s")
    listing.add_row("database size on the server", size)
    listing.add_row(f"recall p50 / p95 / max at {result.chunks:,} chunks",
                    f"{result.recall_ms['p50']} / {result.recall_ms['p95']} / "
                    f"{result.recall_ms['max']} ms")
    listing.print(console())
    return 0


def run_app_bench_cmd(args: argparse.Namespace) -> int:
    """``bench --app``: the app's latencies on the demo store and the bench store
    (``lca_tui.app_bench``), each against issue 28's target."""
    import re

    from lca_tui.app_bench import TARGETS_MS, TARGETS_MS_LARGE, run_app_bench
    from store import Settings, bench_load, build_demo

    if not re.fullmatch(r"[1-9][0-9]{1,3}x[1-9][0-9]{1,3}", args.app_size):
        raise ValueError(f"--app-size {args.app_size!r}: give the terminal size as WxH, "
                         "e.g. 160x50")
    if args.app_opens < 1:
        raise ValueError("--app-opens must be at least 1")
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    folder = keep or Path(tempfile.mkdtemp(prefix="lca-bench-"))

    def progress(stage: str, done: int, total: int) -> None:
        if not args.json and (done == total or done % max(1, total // 10) == 0):
            err_console.print(f"{stage}: {done:,}/{total:,}", markup=False)

    env = dict(os.environ, LCA_EMBEDDER=args.embedder)
    results = []
    try:
        demo = folder / "demo.db"
        if not demo.exists():
            err_console.print(f"building the demo store in {demo}", markup=False)
            build_demo(demo, settings=Settings.load({"embed.backend": args.embedder}),
                       progress=progress)
        bench_db = folder / "bench.db"
        if not bench_db.exists():
            err_console.print(f"building the bench store ({args.chunks:,} chunks) in "
                              f"{bench_db}", markup=False)
            from store import run_bench

            run_bench(args.chunks, 50, args.sample, args.embedder, progress=progress,
                      keep=folder, health_scans=1)
        load_before = bench_load()
        for name, path, targets in (("demo", demo, TARGETS_MS),
                                    ("bench", bench_db, TARGETS_MS_LARGE)):
            err_console.print(f"app on the {name} store: {args.app_opens} opens",
                              markup=False)
            results.append({"name": name, "targets_ms": targets,
                            **run_app_bench(path, args.app_size, args.app_opens, env=env)})
        load_after = bench_load()
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print_json({"app": results, "load_average": {"before": load_before,
                                                     "after": load_after}})
        return 0
    out = console()
    for r in results:
        t = r["targets_ms"]
        rows = r["runs"][-1]["table"]
        out.print(f"app on the {r['name']} store ({Path(r['store']).name}, {r['size']}, "
                  f"{r['opens']} opens, each a process; ms from process start):",
                  markup=False)
        for label, key, target, cpu in (
                ("first paint", "first_paint_ms", t["first_paint"], "first_paint_cpu_ms"),
                ("data on screen (counts, latest sessions)", "data_ms", t["data"],
                 "data_cpu_ms"),
                ("  all of the start screen's data", "data_all_ms", None, "data_all_cpu_ms"),
                ("screen switch (revisit)", "switch_ms", t["switch_p95"], "switch"),
                ("screen switch (first visit, painted)", "switch_first_visit_ms", None,
                 "switch_first"),
                ("  its data on screen", "switch_first_data_ms", None, None),
                (f"cursor move (down, {rows['screen']} {rows['id']}, {rows['rows']} rows)",
                 "move_ms", t["move_p95"], "move"),
                ("/ filter keystroke (echo)", "filter_ms", t["filter_p95"], "filter"),
                ("  the filtered result (after the last key)", "filter_result_ms", None,
                 None)):
            p = r[key]
            line = f"  {label}: p50 {p['p50']} ms, p95 {p['p95']} ms"
            if cpu is not None:
                c = r[cpu] if cpu in r else _cpu(r, cpu)
                line += f" (CPU p50 {c['p50']} ms, p95 {c['p95']} ms)"
            if target is not None:
                bound = "p95" if key not in ("first_paint_ms", "data_ms") else "p50"
                line += f"  (target {bound} ≤ {target} ms: " \
                        f"{'met' if p[bound] <= target else 'MISSED'})"
            out.print(line, markup=False)
    out.print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}: the "
              "CPU is shared, wall figures scale with it; CPU time is the figure to read "
              "on a busy machine", markup=False)
    return 0


def _cpu(result: dict[str, Any], what: str) -> dict[str, float]:
    from store import percentiles

    return percentiles([x for run in result["runs"] for x in run["cpu_ms"].get(what, [])])


# Seconds between the end of an answer and the next prompt in the bench's warm flow: the
# least a user takes to read and type; the daemon reads Claude Code's post-Stop lines then.
TYPING_S = 1.0


def _harness_figures(args: argparse.Namespace, folder: Path, progress: Any) -> dict[str, Any]:
    """Embedding throughput, the hook end to end cold and through the daemon, and the
    optional real-session import (``store.harness.bench``)."""
    import random

    from store import (
        TOPICS,
        bench_embed_throughput,
        bench_hook_latency,
        bench_mixed_texts,
        bench_session_import,
        bench_statusline_latency,
        bench_wait_embedded,
        load_embedder,
        percentiles,
        synthetic_query,
        synthetic_text,
    )

    out: dict[str, Any] = {}
    texts = bench_mixed_texts(random.Random(5), synthetic_text, list(TOPICS), 400)
    grouped = load_embedder(args.embedder)
    padded = load_embedder(args.embedder, batch_size=32, batch_tokens=10**9)
    out["embedding"] = {"model": grouped.name, "degraded": bool(grouped.degraded),
                        **bench_embed_throughput(grouped, padded, texts)}
    if args.hook_runs:
        from lca_tui.commands.hooks import runner
        from store import socket_path
        from lca_tui.commands.statusline import command as statusline_command

        store = folder / "bench.db"
        cli = [sys.executable, "-m", "lca_tui.cli"]
        hook = runner() or cli  # what `hooks install` writes into settings.json
        env = dict(os.environ, LCA_EMBEDDER=args.embedder)
        runtime = Path(tempfile.mkdtemp(prefix="lcab-"))  # the daemon's socket, short path
        env["XDG_RUNTIME_DIR"] = str(runtime)
        before = os.environ.get("XDG_RUNTIME_DIR")
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        try:
            sock = socket_path(store.resolve())
        finally:
            if before is None:
                os.environ.pop("XDG_RUNTIME_DIR")
            else:
                os.environ["XDG_RUNTIME_DIR"] = before
        sample = lambda rng: synthetic_text(rng, rng.choice(list(TOPICS)))  # noqa: E731
        runs = args.hook_runs
        try:
            cold = bench_hook_latency(store, hook, sample, synthetic_query, runs,
                                      folder, {**env, "LCA_NO_DAEMON": "1"}, seed=11,
                                      progress=progress, label="hook, cold",
                                      stop_first=True)
            no_daemon = {**env, "LCA_NO_DAEMON": "1"}
            status_cmd = statusline_command(str(store))  # what `statusline --command` prints
            status_cold = bench_statusline_latency(store, status_cmd, runs, no_daemon,
                                                   _bench_session(folder))
            mcp_cold = mcp_recall_latency(store, cli, synthetic_query, runs, no_daemon)
            serve = subprocess.run([*cli, "--store", str(store), "serve", "--json"],
                                   env=env, capture_output=True, timeout=300)
            if serve.returncode != 0:
                raise ValueError(f"the daemon did not start: {serve.stderr[-300:]!r}")
            try:
                def typing() -> None:  # the user types the next prompt: ~1 s at least
                    time.sleep(TYPING_S)
                    bench_wait_embedded(sock)

                warm = bench_hook_latency(
                    store, hook, sample, synthetic_query, runs, folder, env, seed=12,
                    progress=progress, label="hook, daemon", stop_first=True, settle=typing)
                importing = bench_hook_latency(
                    store, hook, sample, synthetic_query, runs, folder, env, seed=13,
                    progress=progress, label="hook, daemon, importing",
                    settle=lambda: bench_wait_embedded(sock))
                bench_wait_embedded(sock)
                status_warm = bench_statusline_latency(store, status_cmd, runs, env,
                                                       _bench_session(folder))
                mcp_warm = mcp_recall_latency(store, cli, synthetic_query, runs, env)
            finally:
                subprocess.run([*cli, "--store", str(store), "serve", "--stop"],
                               env=env, capture_output=True, timeout=60)
        finally:
            shutil.rmtree(runtime, ignore_errors=True)
        out["hook_command"] = hook
        out["hook_cold_ms"] = percentiles(cold)
        out["hook_daemon_ms"] = percentiles(warm)
        out["hook_daemon_importing_ms"] = percentiles(importing)
        out["hook_runs"] = runs
        out["statusline_command"] = status_cmd
        out["statusline_cold_ms"] = percentiles(status_cold)
        out["statusline_daemon_ms"] = percentiles(status_warm)
        out["mcp_recall_cold_ms"] = {**percentiles(mcp_cold[1]),
                                     "first": round(mcp_cold[0], 1), "via": mcp_cold[2]}
        out["mcp_recall_daemon_ms"] = {**percentiles(mcp_warm[1]),
                                       "first": round(mcp_warm[0], 1), "via": mcp_warm[2]}
    if args.session:
        out["session_import"] = bench_session_import(
            Path(args.session), folder, args.embedder, progress)
    return out


def _bench_session(folder: Path) -> str:
    """A session of the bench store with context snapshots (the hooks' runs made them), for
    the status line to show; the newest one."""
    from store import open_store

    with open_store(folder / "bench.db") as s:
        sessions = s.sessions(limit=1)
    return sessions[0].id if sessions else "none"


def mcp_recall_latency(store: Path, cli: list[str], queries: Any, runs: int,
                       env: dict[str, str]) -> tuple[float, list[float], str]:
    """The MCP ``recall`` tool's round trip as an agent sees it: one ``lca-tui mcp``
    started over stdio with the SDK's client, then ``runs`` calls timed from request to
    result. Returns (the first call's ms, which loads what the process needs; the next
    ``runs`` calls' ms; how they were answered: daemon or in-process)."""
    import asyncio
    import random
    from datetime import timedelta

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    rng = random.Random(21)

    async def drive() -> tuple[float, list[float], str]:
        params = StdioServerParameters(command=cli[0], args=[*cli[1:], "--store", str(store),
                                                             "mcp"], env=env)
        with open(os.devnull, "w") as quiet:
            return await timed(params, quiet)

    async def timed(params: Any, quiet: Any) -> tuple[float, list[float], str]:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write,
                                     read_timeout_seconds=timedelta(seconds=120)) as cs:
                await cs.initialize()
                times: list[float] = []
                via = "?"
                for _ in range(runs + 1):
                    started = time.perf_counter()
                    result = await cs.call_tool("recall", {"query": queries(rng)})
                    times.append((time.perf_counter() - started) * 1000)
                    if result.isError:
                        raise RuntimeError(f"the MCP recall failed: {result.content}")
                    data = result.structuredContent or {}
                    via = str(data.get("via", via))
                return times[0], times[1:], via

    return asyncio.run(drive())


def _print_harness(h: dict[str, Any]) -> None:
    out = console()
    e = h["embedding"]
    out.print(f"embedding ({e['model']}{' DEGRADED' if e['degraded'] else ''}, {e['texts']} "
              f"texts of mixed length, {e['tokens']:,} tokens): "
              f"{e['grouped_tokens_per_s']:,} tokens/s grouped by length; "
              f"{e['arrival_order_tokens_per_s']:,} tokens/s in arrival order, 32 a batch "
              f"(per CPU-second: {e['grouped_tokens_per_cpu_s']:,} vs "
              f"{e['arrival_order_tokens_per_cpu_s']:,})", markup=False)
    if "hook_cold_ms" in h:
        c, d, i = h["hook_cold_ms"], h["hook_daemon_ms"], h["hook_daemon_importing_ms"]
        out.print(f"UserPromptSubmit hook as installed (sh -c '… "
                  f"{' '.join(h['hook_command'][1:2])} {Path(h['hook_command'][-1]).name} … "
                  "|| exit 1'), process start to output, "
                  f"{h['hook_runs']} runs each, after a Stop hook stored the turn, Claude "
                  f"Code's post-Stop lines and {TYPING_S:g} s of typing: cold p50 "
                  f"{c['p50']} ms, p95 {c['p95']} ms; through the daemon p50 {d['p50']} ms, "
                  f"p95 {d['p95']} ms  (paper's reference: 450 ms median; warm target "
                  f"< 50 ms); through the daemon importing the turn itself (no Stop hook): "
                  f"p50 {i['p50']} ms, p95 {i['p95']} ms", markup=False)
    if "statusline_cold_ms" in h:
        c, d = h["statusline_cold_ms"], h["statusline_daemon_ms"]
        out.print(f"status line (`python -S …/status_client.py statusline`, what `lca-tui "
                  f"statusline --command` prints, through sh -c, process start to exit, "
                  f"{h['hook_runs']} runs each): cold p50 {c['p50']} ms, p95 {c['p95']} ms; "
                  f"through the daemon p50 {d['p50']} ms, p95 {d['p95']} ms  (warm target "
                  "p95 ≤ 50 ms)", markup=False)
        c, d = h["mcp_recall_cold_ms"], h["mcp_recall_daemon_ms"]
        out.print(f"MCP recall round trip (SDK stdio client to `lca-tui mcp`, request to "
                  f"result, {h['hook_runs']} calls after a first): no daemon ({c['via']}) "
                  f"p50 {c['p50']} ms, p95 {c['p95']} ms, first call {c['first']} ms; "
                  f"through the daemon ({d['via']}) p50 {d['p50']} ms, p95 {d['p95']} ms, "
                  f"first call {d['first']} ms", markup=False)
    if "session_import" in h:
        s = h["session_import"]
        out.print(f"real session {s['path']}: {s['entries']:,} entries, {s['chunks']:,} chunks "
                  f"({s['chunks_embedded']:,} embedded, {s['chunks_fts_only']:,} FTS only, "
                  f"{s['tokens_embedded']:,} tokens) imported and embedded in {s['import_s']} s "
                  f"({s['tokens_per_s']:,} tokens/s; model load {s['model_load_s']} s)",
                  markup=False)
    la = h["load_average"]
    out.print(f"load average (1, 5, 15 min) before {la['before']}, after {la['after']}: the "
              "CPU is shared, figures scale with it", markup=False)


def run_calibrate(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        result = store.calibrate(args.limit)
    if args.json:
        print_json(result.as_json())
        return 0
    out = console()
    out.print(f"model {result.model}{' (DEGRADED)' if result.degraded else ''}; "
              f"{result.cues} user turns with an answer used as cues; answer in the pool "
              f"for {result.answers_in_pool}", markup=False)
    for name, p in (("answer_S", result.answer_S), ("answer_cos", result.answer_cos),
                    ("other_S", result.other_S)):
        out.print(f"{name:>10}: " + ", ".join(f"{k} {v}" for k, v in p.items()), markup=False)
    out.print(f"suggested floor {result.suggested_floor} (p25 of answers' S, rounded down); "
              f"{result.others_above_floor} of other candidates clear it; current floor "
              f"{result.current_floor}", markup=False)
    return 0
