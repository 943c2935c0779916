"""The model loads on a thread of its own while the main thread imports the store and the
recall path (``recall`` and ``search`` with no daemon, the hook run without one). Two threads
importing NumPy at once can see it half-initialised — ``ImportError: cannot import name
'__cpu_features__' from partially initialized module`` — which failed ``lca-tui recall`` with
a traceback and degraded the loading thread to the fallback embedder in 2 of 3 runs on a
quiet machine. So NumPy is imported before such a thread starts: each test starts one in a
fresh interpreter (where NumPy is not imported yet) and records whether NumPy was whole when
it did."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Records, for every thread started, its name and whether NumPy was imported at that moment.
_RECORD = """
import json, sys, threading
started = []
_start = threading.Thread.start
def start(self):
    started.append([self.name, 'numpy' in sys.modules])
    _start(self)
threading.Thread.start = start
"""


def _run(body: str) -> dict[str, object]:
    code = (_RECORD + body
            + "\nprint(json.dumps({'started': started, 'numpy_first': numpy_first}))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_recall_without_a_daemon_imports_numpy_before_the_loading_thread() -> None:
    """``recall`` / ``search`` with no daemon, and the hook in-process, begin the model's
    load before they import the store (``model_meanwhile``, ``embed.load_early``)."""
    out = _run("""
import argparse
from lca_tui.commands.recall import run_recall
from lca_tui.output import model_meanwhile
from store.core import embed
numpy_first = 'numpy' in sys.modules
with model_meanwhile(argparse.Namespace(overrides=["embed.backend=fallback"])):
    assert embed.take_early(("fallback", 0, 64, 2048)) is not None
""")
    assert out["numpy_first"] is False  # the command's module alone does not import NumPy
    assert out["started"] == [["load-embedder-early", True]]


@pytest.mark.parametrize("loaded", [False, True], ids=["cold", "embedder-given"])
def test_the_hook_imports_numpy_before_its_embedding_thread(loaded: bool) -> None:
    """Cold (the model loads on the thread), or with an embedder already given (the fallback's
    first ``embed`` imports NumPy on the thread too)."""
    out = _run(f"""
from store.core.embed import HashEmbedder
from store.core.secrets import DEFAULT
from store.harness.hook import embed_early
numpy_first = 'numpy' in sys.modules
class Store:
    embedder_loaded = {loaded}
    embedder = HashEmbedder("a test")
    def detector(self):
        return DEFAULT
vector, ms = embed_early(Store(), {{"prompt": "why did the deploy fail"}}).result(timeout=60)
assert len(vector) == 384
""")
    assert out["numpy_first"] is False
    assert out["started"] == [["hook-query-embedding", True]]
