"""``lca-tui stress``: the store under concurrent load, measured.

The scenario (issue 17): on one scratch store (the demo, built fresh), for a bounded time,
at once and each in its own process —

- a **harness** appending one entry at a time through the API (``Store.append_entries``),
- an **ingest writer** growing a Claude Code transcript and importing it again and again,
- the **CLI** running ``lca-tui recall`` and ``lca-tui search`` one after the other,
- a **reindex** of the whole store, started a quarter of the way in,

while the **app** is open (headless, Textual's ``run_test``, in this process) and keys are
pressed in it. Printed: harness writes per second sustained, every error any of them met
(a "store is busy" among them), entries lost (acknowledged by the API or written to the
transcript, yet not in the store at the end) and the app's input latency p50 / p95.

Each actor is this module run as ``python -m lca_tui.stress ROLE STORE SECONDS SETTINGS``; it
prints one JSON document of what it did.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from store import percentiles

ROLES = ("harness", "ingest", "cli", "reindex")
HARNESS_SESSION = "stress-harness"
INGEST_SESSION = "stress-ingest"
APP_KEYS = ("1", "2", "3", "4", "5", "6", "7", "8", "down", "up")
_WORDS = ("store", "recall", "context", "window", "memory", "checkpoint", "session", "agent",
          "prune", "summary", "token", "index", "vector", "trace", "harness", "lock")


@dataclass
class StressResult:
    seconds: float
    harness_writes: int
    harness_writes_per_s: float
    harness_write_ms_p50: float | None
    harness_write_ms_p95: float | None
    ingest_lines: int
    ingest_runs: int
    cli_runs: int
    reindex_s: float | None
    errors: list[str] = field(default_factory=list)
    entries_lost: int = 0
    app_keys: int = 0
    app_latency_ms_p50: float | None = None
    app_latency_ms_p95: float | None = None
    actors: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _text(i: int) -> str:
    words = " ".join(_WORDS[(i * 7 + k) % len(_WORDS)] for k in range(12))
    return f"stress turn {i}: {words}"


def _open(store_path: str, overrides: dict[str, Any], writer: str) -> Any:
    from store import open_store
    from store import Settings
    from store import CODE_VERSION

    # The stress actors are lca-tui's own code under other names: they record its version.
    return open_store(store_path, Settings.load(overrides), writer=writer,
                      writer_version=CODE_VERSION)


# -- actors (each in its own process) ---------------------------------------------------------
def _harness(store_path: str, seconds: float, overrides: dict[str, Any]) -> dict[str, Any]:
    from store import now_iso
    from store import NewEntry, NewSession

    store = _open(store_path, overrides, "stress-harness")
    session = NewSession(id=HARNESS_SESSION, format="harness", agent="stress-harness")
    acked, errors, latencies = 0, [], []
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        entry = NewEntry(kind="assistant" if i % 2 else "user", content=_text(i),
                         source_key="stress:harness", line_id=f"turn-{i}", ts=now_iso())
        t0 = time.perf_counter()
        try:
            acked += len(store.append_entries(session, [entry]))
            latencies.append((time.perf_counter() - t0) * 1000)
        except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
            errors.append(f"harness: {type(exc).__name__}: {exc}"[:300])
        i += 1
    store.close()
    return {"attempted": i, "acked": acked, "errors": errors, "latencies": latencies}


def _claude_line(n: int) -> str:
    kind = "user" if n % 2 == 0 else "assistant"
    message: dict[str, Any] = {"role": kind, "content": _text(n)}
    if kind == "assistant":
        message.update(id=f"msg-{n}", model="stress",
                       usage={"input_tokens": 1000 + n, "output_tokens": 10})
    return json.dumps({"type": kind, "sessionId": INGEST_SESSION, "uuid": str(uuid.uuid4()),
                       "timestamp": "2026-01-01T00:00:00Z", "message": message}) + "\n"


def _ingest(store_path: str, seconds: float, overrides: dict[str, Any]) -> dict[str, Any]:
    store = _open(store_path, overrides, "stress-ingest")
    folder = Path(store_path).parent / "stress-ingest"
    folder.mkdir(exist_ok=True)
    transcript = folder / "session.jsonl"
    lines = runs = 0
    errors: list[str] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with transcript.open("a") as fh:
            for _ in range(20):
                fh.write(_claude_line(lines))
                lines += 1
        try:
            report = store.ingest([folder])
            errors += [f"ingest: {e.path}:{e.line}: {e.reason}" for e in report.errors]
            runs += 1
        except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
            errors.append(f"ingest: {type(exc).__name__}: {exc}"[:300])
    try:
        store.ingest([folder])  # whatever the last loop left
    except Exception as exc:  # noqa: BLE001
        errors.append(f"ingest (final): {type(exc).__name__}: {exc}"[:300])
    store.close()
    return {"lines": lines, "runs": runs, "errors": errors}


def _cli(store_path: str, seconds: float, overrides: dict[str, Any]) -> dict[str, Any]:
    sets = [a for k, v in overrides.items() for a in ("--set", f"{k}={v}")]
    commands = (["recall", "stress turn memory recall"], ["search", "checkpoint window"])
    runs = 0
    errors: list[str] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        args = commands[runs % len(commands)]
        done = subprocess.run([sys.executable, "-m", "lca_tui.cli", "--store", store_path,
                               *sets, *args, "--json"], capture_output=True, text=True,
                              timeout=max(60.0, seconds * 2), check=False)
        runs += 1
        if done.returncode != 0:
            errors.append(f"cli {args[0]}: exit {done.returncode}: "
                          f"{done.stderr.strip().splitlines()[-1:]}"[:300])
    return {"runs": runs, "errors": errors}


def _reindex(store_path: str, seconds: float, overrides: dict[str, Any]) -> dict[str, Any]:
    time.sleep(seconds / 4)
    store = _open(store_path, overrides, "stress-reindex")
    t0 = time.perf_counter()
    errors: list[str] = []
    took = None
    try:
        store.reindex()
        took = round(time.perf_counter() - t0, 2)
    except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
        errors.append(f"reindex: {type(exc).__name__}: {exc}"[:300])
    store.close()
    return {"seconds": took, "errors": errors}


ACTORS = {"harness": _harness, "ingest": _ingest, "cli": _cli, "reindex": _reindex}


# -- the app, in this process -------------------------------------------------------------
async def _app_latency(store_path: Path, seconds: float, overrides: dict[str, Any]
                       ) -> tuple[list[float], list[str]]:
    """Press keys in the open app for ``seconds``; each key's time until the app is idle."""
    from lca_tui.app import make_app
    from store import Settings

    app = make_app(store_path, Settings.load(overrides), refresh_seconds=1.0)
    latencies: list[float] = []
    errors: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            key = APP_KEYS[i % len(APP_KEYS)]
            t0 = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            latencies.append((time.perf_counter() - t0) * 1000)
            i += 1
            await asyncio.sleep(0.25)  # a person presses a few keys a second
    if app.return_code not in (None, 0):
        errors.append(f"app: exited with {app.return_code}")
    return latencies, errors


# -- the scenario ---------------------------------------------------------------------------
def _count(store_path: Path, overrides: dict[str, Any], session_id: str) -> int:
    from store import NotFound

    store = _open(str(store_path), overrides, "stress-check")
    try:
        return store.session(session_id).entries
    except NotFound:
        return 0  # the session was never written
    finally:
        store.close()


def run_stress(folder: Path, seconds: float, overrides: dict[str, Any],
               progress: Any = None) -> StressResult:
    """Build a scratch demo store in ``folder``, run the scenario for ``seconds``, check."""
    from store import Settings
    from store import build_demo

    store_path = folder / "stress.db"
    if progress:
        progress("building the demo store")
    build_demo(store_path, settings=Settings.load(overrides))
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    procs = {role: subprocess.Popen(
        [sys.executable, "-m", "lca_tui.stress", role, str(store_path), str(seconds),
         json.dumps(overrides)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env) for role in ROLES}
    if progress:
        progress(f"running for {seconds:g} s: harness, ingest, CLI, reindex, app")
    latencies, app_errors = asyncio.run(_app_latency(store_path, seconds, overrides))
    actors: dict[str, Any] = {}
    errors: list[str] = list(app_errors)
    for role, proc in procs.items():
        try:
            out, err = proc.communicate(timeout=seconds * 4 + 300)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            errors.append(f"{role}: did not finish in time (killed)")
        try:
            actors[role] = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        except ValueError:
            actors[role] = {}
        if proc.returncode != 0:
            errors.append(f"{role}: exit {proc.returncode}: "
                          f"{(err.strip().splitlines() or [''])[-1]}"[:300])
        errors += actors[role].get("errors", [])
    harness = actors.get("harness", {})
    ingest = actors.get("ingest", {})
    stored_harness = _count(store_path, overrides, HARNESS_SESSION)
    stored_ingest = _count(store_path, overrides, INGEST_SESSION)
    lost = max(0, int(harness.get("acked", 0)) - stored_harness) + max(
        0, int(ingest.get("lines", 0)) - stored_ingest)
    writes = int(harness.get("acked", 0))
    write_ms = harness.get("latencies", [])
    for a in actors.values():
        a.pop("latencies", None)
    return StressResult(
        seconds=seconds, harness_writes=writes,
        harness_writes_per_s=round(writes / seconds, 1) if seconds else 0.0,
        harness_write_ms_p50=percentiles(write_ms).get("p50"),
        harness_write_ms_p95=percentiles(write_ms).get("p95"),
        ingest_lines=int(ingest.get("lines", 0)), ingest_runs=int(ingest.get("runs", 0)),
        cli_runs=int(actors.get("cli", {}).get("runs", 0)),
        reindex_s=actors.get("reindex", {}).get("seconds"), errors=errors, entries_lost=lost,
        app_keys=len(latencies), app_latency_ms_p50=percentiles(latencies).get("p50"),
        app_latency_ms_p95=percentiles(latencies).get("p95"), actors=actors)


def scratch_folder(given: str | None) -> tuple[Path, tempfile.TemporaryDirectory[str] | None]:
    if given:
        path = Path(given).expanduser()
        path.mkdir(parents=True, exist_ok=True)
        return path, None
    holder = tempfile.TemporaryDirectory(prefix="lca-stress-")
    return Path(holder.name), holder


def main(argv: list[str]) -> int:
    role, store_path, seconds, overrides = argv[0], argv[1], float(argv[2]), json.loads(argv[3])
    result = ACTORS[role](store_path, seconds, overrides)
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
