"""The harness figures of ``lca-tui bench``: the ``UserPromptSubmit`` hook end to end (a new
process per prompt, from its start to its output) cold and through the daemon, embedding
throughput in tokens per second, and a real session imported and embedded.

The hook is timed as Claude Code runs it: ``COMMAND hook UserPromptSubmit --store STORE`` with
the hook JSON on stdin, after a line was appended to a growing transcript (each call imports
what is new, then recalls). The command is handed in by the caller (the CLI), so this module
never imports the application.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from store.core.vocab import Progress



def _line(session: str, kind: str, text: str, cwd: str) -> bytes:
    obj: dict[str, Any] = {"type": kind, "sessionId": session, "uuid": str(uuid.uuid4()),
                           "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                           "cwd": cwd, "message": {"role": kind, "content": text}}
    if kind == "assistant":
        obj["message"]["content"] = [{"type": "text", "text": text}]
    return (json.dumps(obj) + "\n").encode("utf-8")


def after_stop(session: str, cwd: str) -> bytes:
    """What Claude Code appends to the transcript after its Stop hook ran (as in the real
    session ``ae4a77f8``): the hooks' summary, the turn's duration, a file snapshot."""
    ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    common = {"sessionId": session, "cwd": cwd, "isSidechain": False, "userType": "external",
              "version": "2.1.39", "timestamp": ts}
    lines = [
        {**common, "type": "system", "subtype": "stop_hook_summary", "hookCount": 1,
         "hookInfos": [{"command": "lca-tui hook Stop"}], "hookErrors": [],
         "preventedContinuation": False, "stopReason": "", "hasOutput": False,
         "level": "suggestion", "uuid": str(uuid.uuid4())},
        {**common, "type": "system", "subtype": "turn_duration", "durationMs": 41_830,
         "uuid": str(uuid.uuid4()), "isMeta": False},
        {"type": "file-history-snapshot", "messageId": str(uuid.uuid4()),
         "snapshot": {"trackedFileBackups": {}, "timestamp": ts}, "isSnapshotUpdate": False}]
    return "".join(json.dumps(o) + "\n" for o in lines).encode("utf-8")


def hook_latency(store: Path, command: list[str], texts: Callable[[random.Random], str],
                 queries: Callable[[random.Random], str], runs: int, folder: Path,
                 env: dict[str, str], seed: int = 11, progress: Progress | None = None,
                 label: str = "hook", stop_first: bool = False,
                 settle: Callable[[], None] | None = None) -> list[float]:
    """Milliseconds from process start to its exit, for ``runs`` UserPromptSubmit hooks,
    each after a user and an assistant line were appended to the session's transcript.

    ``stop_first``: as Claude Code runs the hooks ``hooks install`` sets up, a ``Stop`` hook
    (not timed) stores the turn when the answer ends, then Claude Code appends its
    post-Stop lines (``after_stop``); ``settle`` (not timed) stands for the user typing the
    next prompt. Without it, every timed hook also imports the turn. Each hook runs as
    Claude Code runs the command ``hooks install`` writes for ``command``: through ``sh -c``,
    with its ``|| exit 1``."""
    from store.harness.settings_file import hook_command

    def argv(event: str) -> list[str]:
        return ["sh", "-c", hook_command(event, store, command)]

    rng = random.Random(seed)
    session = str(uuid.UUID(int=rng.getrandbits(128)))
    transcript = folder / f"{session}.jsonl"
    base = {"session_id": session, "transcript_path": str(transcript), "cwd": str(folder)}
    times: list[float] = []
    for i in range(runs):
        with transcript.open("ab") as fh:
            fh.write(_line(session, "user", texts(rng), str(folder)))
            fh.write(_line(session, "assistant", texts(rng), str(folder)))
        if stop_first:
            stop = json.dumps({**base, "hook_event_name": "Stop", "stop_hook_active": False})
            done = subprocess.run(argv("Stop"),
                                  input=stop.encode("utf-8"), capture_output=True, env=env,
                                  timeout=300)
            if done.returncode != 0:
                raise RuntimeError(f"the Stop hook exited {done.returncode}: "
                                   f"{done.stderr[-300:]!r}")
            with transcript.open("ab") as fh:
                fh.write(after_stop(session, str(folder)))
        if settle is not None:
            settle()
        payload = json.dumps({**base, "hook_event_name": "UserPromptSubmit",
                              "permission_mode": "default", "prompt": queries(rng)})
        started = time.perf_counter()
        done = subprocess.run(argv("UserPromptSubmit"),
                              input=payload.encode("utf-8"), capture_output=True, env=env,
                              timeout=300)
        times.append((time.perf_counter() - started) * 1000)
        if done.returncode != 0:
            raise RuntimeError(f"the hook exited {done.returncode}: {done.stderr[-300:]!r}")
        if progress:
            progress(label, i + 1, runs)
    return times


def wait_embedded(sock: Path, limit: float = 60.0) -> None:
    """Until the daemon on ``sock`` has nothing waiting for embedding (or ``limit`` s)."""
    from store.harness import client

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            status = client.request(sock, {"op": "status"}, timeout=10)
        except (client.NotRunning, client.DaemonError):
            return
        if not status.get("waiting"):
            return
        time.sleep(0.05)


def mixed_texts(rng: random.Random, make: Callable[[random.Random, str, int], str],
                topics: list[str], n: int) -> list[str]:
    """Texts of a real session's spread of lengths: most short, a tail up to a full window."""
    out = []
    for _ in range(n):
        words = int(min(180, max(3, rng.lognormvariate(3.3, 0.9))))
        out.append(make(rng, rng.choice(topics), words))
    return out


def embed_throughput(grouped: Any, padded: Any, texts: list[str]) -> dict[str, Any]:
    """Tokens per second embedding ``texts``: with ``grouped`` (lca-tui's embedder: batches
    of like lengths), and with ``padded`` in arrival order, 32 texts a batch padded to their
    longest (an embedder whose token budget never splits a batch: how lca-tui embedded
    before). Wall-clock and CPU-time rates both: the CPU is shared."""
    from store.core.chunker import count_tokens

    tokens = sum(count_tokens(t) for t in texts)
    out: dict[str, Any] = {"texts": len(texts), "tokens": tokens}
    for name, embedder, step in (("grouped", grouped, len(texts)),
                                 ("arrival_order", padded, 32)):
        embedder.embed(texts[:8])  # warm
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(0, len(texts), step):
            embedder.embed(texts[i:i + step])
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        out[f"{name}_tokens_per_s"] = round(tokens / wall)
        out[f"{name}_tokens_per_cpu_s"] = round(tokens / max(cpu, 1e-9))
    return out


def session_import(path: Path, folder: Path, embedder: str,
                   progress: Progress | None = None) -> dict[str, Any]:
    """A real transcript (and its ``<session>/subagents/``) imported and embedded into a
    fresh store: seconds, chunks, tokens embedded, tokens per second."""
    from store.facade import open_store
    from store.core.settings import Settings

    store = open_store(folder / "session.db", Settings.load({"embed.backend": embedder}))
    try:
        t0 = time.perf_counter()
        store.load_embedder(progress)
        loaded = time.perf_counter() - t0
        paths = [path]
        workers = path.parent / path.stem / "subagents"
        if workers.is_dir():
            paths.append(workers)
        t1 = time.perf_counter()
        report = store.ingest(paths, progress=progress)
        seconds = time.perf_counter() - t1
        with store.read() as conn:
            # raw SQL: a bench measurement over the whole chunk table, not a record read
            chunks, lexical, tokens = conn.exec_driver_sql(
                "SELECT COUNT(*), COALESCE(SUM(lexical_only), 0), COALESCE(SUM(CASE WHEN "
                "lexical_only = 0 THEN tokens ELSE 0 END), 0) FROM chunk").one()
        return {"path": str(path), "entries": report.entries_added, "chunks": int(chunks),
                "chunks_embedded": int(chunks) - int(lexical), "chunks_fts_only": int(lexical),
                "tokens_embedded": int(tokens), "model_load_s": round(loaded, 2),
                "import_s": round(seconds, 2),
                "tokens_per_s": round(int(tokens) / max(seconds, 1e-9)),
                "model": store.embedder.name}
    finally:
        store.close()


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages: the CPU is shared, figures depend on it."""
    return [round(x, 2) for x in os.getloadavg()]


def statusline_latency(store: Path, command: list[str], runs: int, env: dict[str, str],
                       session: str) -> list[float]:
    """Milliseconds from process start to exit for ``runs`` status lines, each run as Claude
    Code runs a ``statusLine`` command (through ``sh -c``, its JSON on stdin); ``command``
    is the whole command (``lca-tui statusline --command``'s words)."""
    import shlex

    argv = ["sh", "-c", shlex.join(command)]
    payload = json.dumps({"session_id": session, "hook_event_name": "Status",
                          "model": {"id": "bench", "display_name": "bench"},
                          "workspace": {"current_dir": str(store.parent)}}).encode("utf-8")
    times: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(argv, input=payload, capture_output=True, env=env, timeout=60)
        times.append((time.perf_counter() - started) * 1000)
        if done.returncode != 0 or not done.stdout.startswith(b"lca ") or \
                done.stdout.startswith(b"lca ?"):
            raise RuntimeError(f"the status line failed: {done.stdout[-200:]!r} "
                               f"{done.stderr[-300:]!r}")
    return times


def time_process(command: list[str], env: dict[str, str], stdin: bytes | None = None,
                 timeout: float = 600.0) -> tuple[float, float, int]:
    """One whole process: (wall seconds from start to exit, its CPU seconds — user + system,
    its own and its children's, from ``wait4`` — and its exit code). Output is discarded."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdin=subprocess.PIPE if stdin is not None
                            else subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    if stdin is not None and proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(stdin)
        proc.stdin.close()
    deadline = started + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.002)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def time_rows(rows: list[tuple[str, list[str]]], baseline: list[str], runs: int,
              env: dict[str, str], before: Callable[[str], list[str] | None] | None = None,
              progress: Progress | None = None) -> list[dict[str, Any]]:
    """Each row's command run ``runs`` times as a whole process, each run followed by a run of
    ``baseline`` (``python -c pass``) so that both see the same load; per row the wall and
    CPU p50 / p95 in ms, the baseline's beside them, and the exit codes seen.
    ``before(label)`` runs (untimed) before each timed run (a proposal to approve, say); a
    list it returns is the command to time this once (the new proposal's id in it)."""
    from store.core.vocab import percentiles

    out = []
    for i, (label, command) in enumerate(rows):
        walls, cpus, base_walls, base_cpus, codes = [], [], [], [], set()
        for _ in range(runs):
            command = (before(label) if before else None) or command
            wall, cpu, code = time_process(command, env)
            walls.append(wall * 1000)
            cpus.append(cpu * 1000)
            codes.add(code)
            bwall, bcpu, _ = time_process(baseline, env)
            base_walls.append(bwall * 1000)
            base_cpus.append(bcpu * 1000)
        out.append({"row": label, "command": command, "runs": runs,
                    "wall_ms": percentiles(walls), "cpu_ms": percentiles(cpus),
                    "baseline_wall_ms": percentiles(base_walls),
                    "baseline_cpu_ms": percentiles(base_cpus), "exit_codes": sorted(codes)})
        if progress:
            progress("timing the command line", i + 1, len(rows))
    return out
